"""The curation funnel: one funnel.json shape for every pipeline that builds a benchmark (`curate
4d render|motion|quality|qa`, `curate mmworld`): what each stage took in, kept and dropped (per
reason), in its own unit, per part (subset, subtask) where it has parts, with what its model
calls cost and every dropped record named.

OUT/funnel.json = {"schema_version": 1, "stages": {name: StageCount}, "usage": {stage: calls and
tokens}, "problems": [...], "details": {what only one pipeline reports}}. A stage records itself
when it ends (`record_stage`), so stages run by separate commands into one folder add up.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pydantic import JsonValue, TypeAdapter
from rich.table import Table

from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import read_json, write_json

FUNNEL_FILE = "funnel.json"
SCHEMA_VERSION = 1


@dataclass
class StageCount:
    """One stage: things in (`entered`), things kept, things dropped per reason, and each dropped
    one (`problems`, a record naming it). `unit` is what the stage counts (objects, videos,
    questions); `uncounted` holds what went wrong before there was anything to count (a reply no
    question was read from, a failed call); `pending`: entered but not decided (interrupted, or
    a call failed: the next run does them); `notes`: facts beside the counts (e.g. transcripts
    read from the cache); `parts`: the same counts per subset or subtask."""

    entered: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    problems: list[dict[str, JsonValue]] = field(default_factory=list)
    unit: str = "objects"
    uncounted: dict[str, int] = field(default_factory=dict)
    pending: int = 0
    notes: dict[str, int] = field(default_factory=dict)
    parts: dict[str, StageCount] = field(default_factory=dict)

    @classmethod
    def summed(cls, parts: dict[str, StageCount], unit: str) -> StageCount:
        """A stage whose counts are the sum of its parts (kept as `parts`)."""
        total = cls(unit=unit, parts=dict(parts))
        for part in parts.values():
            total.entered += part.entered
            total.kept += part.kept
            total.pending += part.pending
            for mine, theirs in (
                (total.dropped, part.dropped),
                (total.uncounted, part.uncounted),
                (total.notes, part.notes),
            ):
                for key, n in theirs.items():
                    mine[key] = mine.get(key, 0) + n
        total.dropped = dict(sorted(total.dropped.items()))
        return total


@dataclass
class Funnel:
    stages: dict[str, StageCount] = field(default_factory=dict)
    # stage -> calls, tokens (and cost), as the pipeline counts them
    usage: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    problems: list[dict[str, JsonValue]] = field(default_factory=list)  # records not stage-specific
    details: dict[str, object] = field(default_factory=dict)  # what only one pipeline reports

    def document(self) -> dict[str, JsonValue]:
        return {"schema_version": SCHEMA_VERSION, **asdict(self)}

    def write(self, folder: Path) -> Path:
        path = Path(folder) / FUNNEL_FILE
        write_json(path, self.document(), indent=1)
        return path

    @classmethod
    def read(cls, folder: Path) -> Funnel:
        """FOLDER/funnel.json, or an empty funnel when no stage has run there yet."""
        path = Path(folder) / FUNNEL_FILE
        if not path.is_file():
            return cls()
        try:
            return cls.from_document(read_json(path))
        except (DataError, ValueError) as e:  # not UTF-8, not JSON, not a funnel
            raise ConfigError(f"{path}: not a funnel file ({e})") from None

    @classmethod
    def from_document(cls, data: JsonValue) -> Funnel:
        """A funnel.json's content; ValueError when it is not one (or of a newer vidbench)."""
        if not isinstance(data, dict) or not isinstance(data.get("stages"), dict):
            raise ValueError("not a funnel (no stages)")
        version = data.get("schema_version", 0)
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise ValueError(f"written by a newer vidbench (schema {version})")
        known = {k: v for k, v in data.items() if k in ("stages", "usage", "problems", "details")}
        return FUNNEL.validate_python({k: v for k, v in known.items() if v is not None})


FUNNEL = TypeAdapter(Funnel)


def record_stage(folder: Path, name: str, count: StageCount, order: Sequence[str] = ()) -> Path:
    """Merge one stage's counts into FOLDER/funnel.json (stages in `order`, then the others)."""
    funnel = Funnel.read(folder)
    funnel.stages[name] = count
    ordered = [*(s for s in order if s in funnel.stages), *sorted(set(funnel.stages) - {*order})]
    funnel.stages = {s: funnel.stages[s] for s in ordered}
    return funnel.write(folder)


def refuse_other_pipeline(folder: Path, stages: Sequence[str], command: str) -> None:
    """ConfigError when FOLDER/funnel.json holds stages that are not among `stages`: another
    pipeline's output folder (`curate 4d` and `curate mmworld` given one --out), whose funnel
    and model calls this one would mix with its own or write over."""
    try:
        found = Funnel.read(folder).stages
    except ConfigError:  # not a funnel: the pipeline writes it anew, and says so
        return
    other = [name for name in found if name not in stages]
    if other:
        raise ConfigError(
            f"{command}: {Path(folder) / FUNNEL_FILE} holds the stages {', '.join(other)} of "
            "another pipeline: give another --out"
        )


def funnel_table(funnel: Funnel, title: str = "curation funnel") -> Table:
    """entered / kept / dropped (per reason) of every stage and part, each in its own unit, and
    the calls and tokens of every stage that asked a model."""
    table = Table(title=title)
    for column in ("stage", "counts", "entered", "kept", "dropped", "why"):
        table.add_column(
            column, justify="right" if column in ("entered", "kept", "dropped") else "left"
        )
    for name, stage in funnel.stages.items():
        table.add_row(name, *_row(stage))
        for part, count in stage.parts.items():
            table.add_row(f"  {name} · {part}", *_row(count))
    for name, usage in funnel.usage.items():
        table.add_row(
            f"calls · {name}",
            "requests",
            str(usage.get("requests", 0)),
            "",
            "",
            f"{usage.get('input_tokens', 0)} tokens in, {usage.get('output_tokens', 0)} out",
        )
    return table


def funnel_markdown(funnel: Funnel) -> str:
    """The funnel as a Markdown table (a dataset card, funnel.md files)."""
    lines = [
        "| stage | counts | entered | kept | dropped | why |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    for name, stage in funnel.stages.items():
        lines.append(f"| {name} | " + " | ".join(_row(stage)) + " |")
        for part, count in stage.parts.items():
            lines.append(f"| {name} · {part} | " + " | ".join(_row(count)) + " |")
    return "\n".join(lines) + "\n"


def _row(stage: StageCount) -> tuple[str, str, str, str, str]:
    notes = [", ".join(f"{reason} {n}" for reason, n in stage.dropped.items() if n)]
    if stage.uncounted:
        notes.append("not counted: " + ", ".join(f"{k} {n}" for k, n in stage.uncounted.items()))
    if stage.pending:
        notes.append(f"not done yet {stage.pending} (run it again)")
    if stage.notes:
        notes.append(", ".join(f"{k} {n}" for k, n in stage.notes.items()))
    why = "; ".join(n for n in notes if n) or "-"
    dropped = str(sum(stage.dropped.values()))
    return stage.unit, str(stage.entered), str(stage.kept), dropped, why
