"""The records of a run directory as typed, versioned models, and their one reader.

The engine writes them as JSON (docs/run-directory.md); whoever reads one back
(`itb report`, `--resume`, the tables) reads it through `read_record(path, Model)`,
which refuses, with `RunDirError` (exit 2) naming the file and the first field that is
wrong, anything else: not JSON, not the JSON shape of the record, a field missing or of
another type, a run of a format this ITB does not read (`meta.json`'s `format`, checked
before anything else: the layout of every file of the run depends on it).

Records keep the keys they do not know (`extra="allow"`): a newer writer of the same
format may add some. The resolved scenario is `itb.scenario`'s own models, which refuse
unknown fields: its hash covers exactly them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, RootModel, ValidationError

from itb import files
from itb.errors import ItbError, ScenarioError
from itb.scenario.experiment.events import Event, Experiment
from itb.scenario.testbed.model import Topology

FORMAT_VERSION = 1  # the layout of a run directory this ITB writes and reads


class RunDirError(ItbError):
    """A run directory, or one of its files, that cannot be read as ITB wrote it."""

    exit_code = 2


class Record(BaseModel):
    """A JSON record of the run directory. `WHAT` names it in errors; a record with a
    version says in which field (`VERSION_FIELD`) and which one this ITB reads."""

    model_config = ConfigDict(extra="allow")
    WHAT: ClassVar[str] = "a record of a run"
    VERSION_FIELD: ClassVar[str | None] = None
    VERSION: ClassVar[int] = FORMAT_VERSION
    # the version of a record without the field (written before it existed, the same
    # fields: read as that version); None: a missing version is refused
    VERSION_MISSING: ClassVar[int | None] = None

    @classmethod
    def other_version_hint(cls, data: dict) -> str:
        """What to do with a file of another version (said after the refusal)."""
        return ""


# --- meta.json -------------------------------------------------------------------------


class Versions(Record):
    itb: str | None = None
    python: str | None = None
    flow: str | None = None
    linkem: str | None = None
    iperf3: str | None = None
    ns3: str | None = None  # the ns3 package (a simulation's ns-3)
    numpy: str | None = None
    scipy: str | None = None
    pandas: str | None = None
    git_commit: str | None = None
    git_dirty: bool | None = None


class Cpu(Record):
    model: str | None = None
    cores: int | None = None
    kernel: str | None = None
    machine: str | None = None


class Stage(Record):
    stage: str
    seconds: float
    ok: bool


class CongestionControl(Record):
    name: str
    kernel_name: str
    source: str  # built-in, module, ours
    loaded_now: bool | None = None  # local runs; an SSH run says `kernel_lacks_it_on`


class Sysctls(Record):
    bdp_bytes: int
    hosts: dict[str, dict[str, str | None]]  # host → sysctl → value read back (None: not read)


class RepetitionDispatch(Record):
    repetition: int
    events: int
    p99_ms: float
    max_ms: float


class SkewOfEvent(Record):
    repetition: int
    id: str
    node: str | None = None
    skew_ms: float
    error_ms: float
    clock_uncertainty_ms: float


class StartSkew(Record):
    events: int
    p50_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    clock_uncertainty_max_ms: float | None = None
    definition: str | None = None
    per_event: list[SkewOfEvent] = []


class DispatchSummary(Record):
    """The dispatch error of the timed events over the run (engine.records.dispatch_summary)."""

    events: int
    p50_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    per_repetition: list[RepetitionDispatch] = []
    start_skew: StartSkew | None = None


class ManifestEntry(Record):
    path: str
    bytes: int


class RunInventory(Record):
    """Where an SSH run's hosts came from and what plays what (itb.backends.ssh.testbed.SshTestbed.inventory)."""

    source: str | None = None  # the inventory file
    placement: dict[str, str] = {}  # scenario host → inventory host
    emulator: str | None = None  # the inventory host running the link emulator
    provider: str | None = None  # EnOSlib's provider kind, when reserved through it


RunStatus = Literal["running", "complete", "incomplete"]
RepStatus = Literal["ok", "failed", "interrupted"]


class RunMeta(Record):
    """meta.json: what `engine.records.run_meta` writes when a run starts, and what the
    runner's stages add (docs/run-directory.md, "meta.json")."""

    WHAT: ClassVar[str] = "a run's description (meta.json)"
    VERSION_FIELD: ClassVar[str | None] = "format"

    @classmethod
    def other_version_hint(cls, data: dict) -> str:
        versions = data.get("versions")
        by = versions.get("itb") if isinstance(versions, dict) else None
        return (
            f"the run was written by ITB {by or '(version not recorded)'}: read it with "
            "that ITB, whose `itb report RUN` rebuilds the tables, metrics and report "
            "from the run's raw logs"
        )

    format: int
    scenario: str
    scenario_hash: str
    testbed_hash: str | None = None  # runs from before it was recorded
    source: str | None = None
    repetitions: int
    seed: int
    backend: str = "local"
    created: str | None = None
    resumed: list[str] = []
    versions: Versions | None = None
    cpu: Cpu | None = None
    status: RunStatus
    stages: list[Stage] = []
    warnings: list[str] = []
    congestion_controls: list[CongestionControl] = []
    sysctls: Sysctls | None = None
    hosts: dict[str, dict[str, Any]] = {}  # SSH hosts' facts: role, CPU, kernel, NIC
    inventory: RunInventory | None = None  # an SSH run's
    calibration: str | None = None  # the file of the run's quick calibration
    dispatch: DispatchSummary | None = None
    repetition_status: list[RepStatus | Literal["not run"]] = []
    files: list[ManifestEntry] = []


# --- rep-NNN/result.json ---------------------------------------------------------------


class ProcRecord(Record):
    """What happened to one process of the repetition (engine.outcome)."""

    node: str | None = None
    dispatched_ns: int | None = None
    spawned_ns: int | None = None
    pid: int | None = None
    ready_ns: int | None = None
    exited_ns: int | None = None
    rc: int | None = None
    stopped: bool | None = None
    cancelled_ns: int | None = None
    error: str | None = None


class NodeClock(Record):
    """A node's clock minus the engine's, as measured before the repetition."""

    offset_ns: int | None = None
    rtt_ns: int | None = None
    uncertainty_ns: int | None = None
    spread_ns: int | None = None
    samples: int | None = None
    same_clock: bool | None = None


class DispatchRecord(Record):
    """One timed event's dispatch: planned date, actual date, error (ns)."""

    id: str
    node: str | None = None
    kind: str | None = None
    at_ns: int
    t_ns: int
    error_ns: int
    spawn_ns: int | None = None
    clock_uncertainty_ns: int | None = None


class CommittedFile(Record):
    path: str
    bytes: int
    sha256: str


class ResultView(Record):
    """What the tables and the profile measures read of a result.json: the repetition's
    zero and reason, its processes, its nodes' clocks (every field optional: they are
    read from the repetitions `RepResult` accepted)."""

    WHAT: ClassVar[str] = "a repetition's result (result.json)"
    reason: str | None = None
    zero_ns: int | None = None
    procs: dict[str, ProcRecord] = {}
    clock: dict[str, NodeClock] = {}


class RepResult(ResultView):
    """rep-NNN/result.json, the repetition's commit marker (runner, engine.outcome.Outcome,
    rundir.commit): its status, why it failed, its dispatch records, its files."""

    repetition: int | None = None
    status: RepStatus
    environment: bool = False  # failed because the testbed broke: redone on resume
    failed_ns: int | None = None
    warnings: list[str] = []
    start_ns: int | None = None
    end_ns: int | None = None
    dispatch: list[DispatchRecord] = []
    files: list[CommittedFile] = []  # runs from before commit markers listed files: none
    cpu_steal: float | None = None  # the hypervisor's share of the CPU time (None: unknown)


# --- scenario.resolved.json, rep-NNN/events.json, logs read as records -----------------


class ResolvedScenario(Record):
    """scenario.resolved.json: the testbed and the experiment as resolved (what the hashes
    cover), in `itb.scenario`'s models."""

    WHAT: ClassVar[str] = "a resolved scenario (scenario.resolved.json)"
    topology: Topology
    experiment: Experiment


class RepEvents(RootModel[list[Event]]):
    """rep-NNN/events.json: the repetition's concrete events (background flows drawn)."""

    WHAT: ClassVar[str] = "a repetition's events (events.json)"


class EventView(Record):
    """One event of an events.json as the tables read it: its kind and id (the other
    fields by kind, as `RepEvents` checks them)."""

    kind: str
    id: str


class EventViews(RootModel[list[EventView]]):
    WHAT: ClassVar[str] = "a repetition's events (events.json)"


class EmulatorConfig(Record):
    """emulator/<link>/linkem.json, the link emulator's configuration: its log interval."""

    WHAT: ClassVar[str] = "a link emulator's configuration (linkem.json)"
    interval_us: int = 1000


# --- the reader ------------------------------------------------------------------------


def load_json(path: Path):
    """A JSON file of the run; `RunDirError` naming the file when it is not valid, not a
    regular file or larger than a results file may be (itb.files; a missing file raises
    FileNotFoundError: whether that is wrong is the caller's call)."""
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(path)
    try:
        return json.loads(files.read_bytes(path, "results").decode("utf-8"))
    except ScenarioError as e:
        raise RunDirError(f"{path}: {e.reason}") from None
    except json.JSONDecodeError as e:
        raise RunDirError(
            f"{path}: not valid JSON (line {e.lineno}, column {e.colno}: "
            f"{e.msg}); the file is damaged"
        ) from None
    except UnicodeDecodeError:
        raise RunDirError(f"{path}: not text; the file is damaged") from None
    except FileNotFoundError:
        raise
    except OSError as e:
        raise RunDirError(f"{path}: cannot be read ({e.strerror or e})") from None


def read_record(path: Path, model):
    """The record in `path` as `model` (a `Record`, or a root model of a list)."""
    return model_of(path, load_json(path), model)


def read_checked(path: Path, model):
    """The JSON in `path`, as parsed, once it holds a valid `model`: for a writer that
    goes on with the dict (the runner's meta.json on --resume)."""
    data = load_json(path)
    model_of(path, data, model)
    return data


def read_events(path: Path) -> list[dict]:
    """A repetition's events.json as written, each event checked to be an object with a
    kind and an id, for the tables (the whole record against the scenario's models is
    `RepEvents`, which `itb report` checks first)."""
    data = load_json(path)
    model_of(path, data, EventViews)
    return data


def model_of(path: Path, data, model):
    """`data` (read from `path`) as `model`: the version first, then the shape."""
    listed = issubclass(model, RootModel)
    if not isinstance(data, list if listed else dict):
        raise RunDirError(
            f"{path}: holds a JSON {_json_kind(data)}, where {model.WHAT} is a "
            f"JSON {'array' if listed else 'object'}; the file is damaged or was "
            "not written by ITB"
        )
    field = None if listed else model.VERSION_FIELD
    if field is not None and isinstance(data, dict):  # (a dict when not listed: checked above)
        got = data.get(field, model.VERSION_MISSING)
        if got is None:
            raise RunDirError(
                f"{path}: field {field}: missing (this ITB reads format {model.VERSION})"
            )
        if type(got) is not int or got != model.VERSION:
            hint = model.other_version_hint(data)
            raise RunDirError(
                f"{path}: field {field}: {_short(got)} is not a format this ITB "
                f"reads (it reads {model.VERSION})" + (f"; {hint}" if hint else "")
            )
    try:
        # strict: a number is not taken from a string, nor a flag from a number
        return model.model_validate_json(json.dumps(data), strict=True)
    except ValidationError as e:
        raise RunDirError(problem(path, e)) from None


def problem(path: Path, e: ValidationError) -> str:
    """`PATH: field a.b[2].c: reason` for the first error, and how many more there are."""
    first = e.errors(include_url=False)[0]
    if first["type"] == "missing":
        reason = "missing"
    else:
        msg = first["msg"]
        reason = f"{msg[:1].lower()}{msg[1:]}, got {_short(first.get('input'))}"
    more = e.error_count() - 1
    tail = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    where = _where(first["loc"])
    return f"{path}: {f'field {where}: ' if where else ''}{reason}{tail}"


def _where(loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _json_kind(data) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(data), "number"
    )


def _short(value, width: int = 60) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"
