"""A declared benchmark in the review app (annotate/adapters.py): the items an audit of it
flagged, read from the project's data folder (the benchmark's folder, holding benchmark.toml),
and the reviewers' decisions written back as its decisions file (decisions.py): every decision
already in the file the benchmark reads, then the new ones, each fixed gold written as the row
writes its own answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pydantic import JsonValue

from vidbench.annotate.adapters import Audited, AuditFixer, Decision, ReviewAdapter
from vidbench.annotate.items import Exported
from vidbench.annotate.paths import child, file_name
from vidbench.benchmarks.custom import decisions, fields, loader, names, paths
from vidbench.benchmarks.custom.spec import SPEC_FILE, Spec, read_spec
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import json_lines, write_jsonl
from vidbench.core.records import Sample


def _spec(data: Path) -> Spec:
    if not (data / SPEC_FILE).is_file():
        raise ConfigError(
            f"{data}: this project's data folder holds no {SPEC_FILE}; an audit of a declared "
            "benchmark is reviewed in a project on the benchmark's folder (vidbench annotate "
            "init PROJECT --data DIR)"
        )
    return read_spec(data)


def _check_same(task: str, data: Path, spec: Spec) -> None:
    """The audited benchmark is the project's (its folder, or a copy with the same name)."""
    audited = names.split_name(task).folder.expanduser()
    if audited.resolve() == data.resolve() or not (audited / SPEC_FILE).is_file():
        return  # the same folder; or one that moved: the items' ids and golds say the rest
    other = read_spec(audited).name
    if other != spec.name:
        raise ConfigError(
            f"the audit is of the benchmark {other!r} ({audited}); this project's data is "
            f"{spec.name!r} ({data}): is it another project's audit?"
        )


def _videos(sample: Sample, root: Path, seen: dict[Path, str | None]) -> tuple[str, ...]:
    """The sample's videos relative to the data folder `root` (resolved; the app serves
    nothing outside it); `seen`: the videos of the samples before (questions share their
    videos: each is resolved once, not once a question)."""
    found = []
    for _, path in sorted(sample.media.videos.items()):
        if path not in seen:
            try:
                seen[path] = str(path.resolve().relative_to(root))
            except ValueError:
                seen[path] = None
        if (relative := seen[path]) is not None:
            found.append(relative)
    return tuple(found)


def _group(sample: Sample, spec: Spec) -> str | None:
    if not spec.groups:
        return None
    try:
        values = fields.group_values(sample.metadata, spec.groups[:1])
    except DataError:
        return None
    first = values[spec.groups[0]][0]
    return None if first == fields.NO_GROUP else first


def audited_items(data: Path, task: str) -> dict[str, Audited]:
    """The benchmark's rows in the project's data folder, as the audit queue shows them."""
    spec = _spec(data)
    _check_same(task, data, spec)
    out, root = {}, data.resolve()
    seen: dict[Path, str | None] = {}  # each video resolved once
    for sample in loader.load(spec, data).items:
        out[sample.id] = Audited(
            id=sample.id,
            question=sample.question or "",
            options=sample.options,
            gold=sample.answer if spec.multiple_choice else None,
            references=sample.references,
            videos=_videos(sample, root, seen),
            task=_group(sample, spec),
        )
    return out


def _kept_records(spec: Spec, data: Path) -> list[JsonValue]:
    """The decisions the benchmark reads now, as written (bad lines are the loader's problems
    and are not carried over)."""
    path = decisions.decisions_path(spec, data)
    if path is None or not path.is_file():
        return []
    kept: list[JsonValue] = []
    for line in json_lines(path):
        try:
            decisions.check(line.value)
        except DataError:
            continue
        kept.append(line.value)
    return kept


def _record(decision: Decision, sample: Sample, spec: Spec) -> dict[str, JsonValue]:
    assert spec.answer is not None
    record: dict[str, JsonValue] = {"id": decision.id, "decision": decision.decision}
    if decision.decision == "fix":
        assert decision.gold is not None
        record["answer"] = decisions.answer_as_written(sample.metadata, spec, decision.gold)
    was = paths.lookup(sample.metadata, spec.answer)
    if was is not paths.MISSING:
        record["was"] = was
    return record | {
        "flags": list(decision.flags),
        "reason": decision.reason,
        "by": decision.by,
        "at": decision.at,
    }


def write_decisions(data: Path, made: Sequence[Decision], exports: Path) -> Exported:
    """EXPORTS/<name>-decisions.jsonl: the decisions the benchmark reads now (its `decisions`
    file), then these in the order they were made, each line once: the file is a log of the
    review rounds, which the loader applies in order (decisions.fold), so a keep in a later
    round keeps an earlier fix. The rows are read as their files have them (no decision
    applied): a dropped row can be decided again, and writing the same decisions twice gives
    the same file."""
    spec = _spec(data)
    samples = {s.id: s for s in loader.load(replace(spec, decisions=None), data).items}
    exports.mkdir(parents=True, exist_ok=True)
    out = Exported(child(exports, file_name(f"{spec.name}-decisions", ".jsonl")))
    records = _kept_records(spec, data)
    for decision in sorted(made, key=lambda d: d.at):
        sample = samples.get(decision.id)
        if sample is None:
            out.left_out.append(f"{decision.id}: no such row in {data} now")
            continue
        try:
            record = _record(decision, sample, spec)
        except DataError as e:
            out.left_out.append(f"{decision.id}: {e}")
            continue
        if record not in records:
            records.append(record)
    out.written = len(records)
    write_jsonl(out.path, records)
    if not records:  # an empty decisions file changes nothing: no advice to copy it in
        out.then = "no decision is submitted yet: nothing for the benchmark to apply"
        return out
    named = decisions.decisions_path(spec, data)
    target = named or data / "decisions.jsonl"
    out.then = f"the benchmark applies it once it is its decisions file: cp {out.path} {target}" + (
        "" if named else f' and add decisions = "decisions.jsonl" to {data / SPEC_FILE}'
    )
    return out


REVIEW = ReviewAdapter(
    benchmark="custom",
    audit=AuditFixer(
        "declared benchmarks (custom:DIR, a benchmark.toml)",
        names.is_declared,
        audited_items,
        write_decisions,
    ),
)
