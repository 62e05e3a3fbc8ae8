"""The fit of one algorithm's points (`itb study response-function`): log w = log c −
d·log p over the points the loss (not the link) limited, compared with the published c
and d, and the median decrease β against the one Linux applies (itb.cc.published)."""

from __future__ import annotations

import numpy as np
from scipy import stats as sps

from itb.cc.published import PUBLISHED
from itb.study.response_function.results import BETA_TOLERANCE, D_TOLERANCE, Event, Fit, Point


def fit_algorithm(cc: str, points: list[Point], events: list[Event]) -> Fit:
    pub = PUBLISHED[cc]
    fitted = [
        (p, w)
        for p in points
        if p.cc == cc and (w := p.window) and p.status == "ok" and not p.link_limited
    ]
    sel = [p for p, _ in fitted]
    windows = [w for _, w in fitted]
    out: dict = {"c": None, "d": None, "d_ci95": None, "r2": None, "d_ok": None}
    if len(sel) >= 3:
        x = np.log10([p.p_fit for p in sel])
        lr = sps.linregress(x, np.log10(windows))
        half = float(sps.t.ppf(0.975, len(sel) - 2) * lr.stderr)
        out.update(
            c=float(10**lr.intercept), d=float(-lr.slope), d_ci95=half, r2=float(lr.rvalue**2)
        )
        # judged only where Linux's implementation follows the published slope: the
        # points' median window at or above d_from (itb.cc.published)
        if pub.d is not None and float(np.median(windows)) >= pub.d_from:
            out["d_ok"] = abs(out["d"] - pub.d) <= D_TOLERANCE
    ev = [e for e in events if e.cc == cc and e.nominal is not None]
    if ev:
        # HighSpeed's and H-TCP's nominal decrease varies per event: compare event by event,
        # H-TCP's with the nearer of its two rules (RTT ratio, or 1/2 from its switch)
        nominals = [e.nearer_nominal for e in ev]
        error = float(np.median([e.beta - n for e, n in zip(ev, nominals)]))
        out.update(
            beta=float(np.median([e.beta for e in ev])),
            beta_nominal=float(np.median(nominals)),
            beta_error=error,
            beta_ok=abs(error) <= BETA_TOLERANCE,
        )
        if any(e.nominal_switch is not None for e in ev):
            out["switch_share"] = float(
                np.mean([n == e.nominal_switch != e.nominal for e, n in zip(ev, nominals)])
            )
    return Fit(
        cc=cc,
        n=len(sel),
        c_published=pub.c,
        d_published=pub.d,
        beta_published=pub.beta_text,
        source=pub.source,
        d_from=pub.d_from,
        w_min=min(windows, default=None),
        w_max=max(windows, default=None),
        rtt_ms=sel[0].rtt_ms if sel else None,
        events=len(ev),
        **out,
    )
