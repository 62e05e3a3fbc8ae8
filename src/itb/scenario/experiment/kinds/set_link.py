"""`[[set]]`: a change of an emulated link's rate, delay or loss at a date."""

from __future__ import annotations

from itb.scenario.experiment.events import SetLink
from itb.scenario.experiment.kinds.context import Context
from itb.scenario.experiment.sections import SetSpec


def resolve(sections: list[SetSpec], ctx: Context) -> list[SetLink]:
    events = []
    for i, s in enumerate(sections):
        where = f"set[{i}]"
        link = ctx.links.get(s.link)
        if link is None or not link.emulated:
            emulated = sorted(n for n, lk in ctx.links.items() if lk.emulated)
            ctx.fail(
                f"{where}.link",
                f"unknown or not emulated link {s.link!r}; emulated links: "
                f"{', '.join(emulated) or 'none'}",
            )
        given = "rate" in s.model_fields_set
        if not (given or s.delay is not None or s.loss is not None):
            ctx.fail(where, "nothing to change: give rate, delay or loss")
        events.append(
            SetLink(
                id=ctx.new_id(s.id, f"set{i + 1}", f"{where}.id"),
                at_us=ctx.date(s.at, f"{where}.at"),
                link=s.link,
                direction=s.direction,
                rate_bps=s.rate,
                rate_given=given,
                delay_us=s.delay,
                loss=s.loss,
            )
        )
    return events
