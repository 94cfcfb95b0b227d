"""4D-Bench loaders for the official release layout (this benchmark's README.md).

QA:        <data>/4d_qa.json keyed "<uid>_<suffix>"
Captions:  <data>/human_annotations.csv (folder_name, caption_1..caption_5)
Videos:    <data>/4d_object_multi_view_videos/<uid>/view_{k}_rgb_white_bg.mp4, k = 0..23
`--data` may name such a data folder or the release root that holds both task folders.
Probe:     <data>/probe.jsonl, optional ({"id": "<uid>_<suffix>", "probe": {...}} per line, as
           `synth 4d --renderer blender` writes it): each question's knob fields, kept in its
           Sample's metadata["probe"] and so in samples.jsonl, never in the prompt.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

from pydantic import JsonValue

from vidbench.benchmarks.fourd.options import (
    LETTERS,
    find_options,
    find_question,
    missing_options,
)
from vidbench.benchmarks.fourd.references import read_references
from vidbench.core.errors import DataError
from vidbench.core.files import JsonMemberStream, iter_json_members, json_lines
from vidbench.core.records import MediaRef, Sample, repeated_records
from vidbench.tasks.problems import Loaded, Problem

VIEWS_PER_OBJECT = 24  # cameras on the ring around each object, view ids 0..23

QA_FILE = "4d_qa.json"
PROBE_FILE = "probe.jsonl"
CAPTION_FILE = "human_annotations.csv"
VIDEO_DIR = "4d_object_multi_view_videos"
RENDER_FILE = "render.json"  # <uid>/render.json: what `curate 4d render` or the probe rendered
# One question of 4d_qa.json as the release writes it (and vidbench's generators do): its options
# are "(A) ..." to "(D) ...", its answer index 1..4.
QARecord = TypedDict(
    "QARecord", {"Question": str, "Options": list[str], "Answer index": int, "Category": str}
)
RELEASE_FOLDERS = {
    QA_FILE: "4D_Object_Question_Answering/data",
    CAPTION_FILE: "4D_Object_Captioning/data",
}

# Table 1's columns, in its order, with the spellings a release or a suffix may use.
SUBTASKS = (
    "Object Counting",
    "Temporal Relationship",
    "Action",
    "Spatial Relationship",
    "Appearance",
)
_SUBTASK_ALIASES = {
    "object counting": "Object Counting",
    "object_counting": "Object Counting",
    "counting": "Object Counting",
    "temporal relationship": "Temporal Relationship",
    "temporal_relationship": "Temporal Relationship",
    "temporal": "Temporal Relationship",
    "action": "Action",
    "motion": "Action",
    "spatial relationship": "Spatial Relationship",
    "spatial_relationship": "Spatial Relationship",
    "spatial": "Spatial Relationship",
    "appearance": "Appearance",
}


def canonical_subtask(name: str) -> str | None:
    return _SUBTASK_ALIASES.get(name.strip().lower())


def view_path(data_dir: Path, uid: str, view: int) -> Path:
    return data_dir / VIDEO_DIR / uid / f"view_{view}_rgb_white_bg.mp4"


def media_for(data_dir: Path, uid: str) -> MediaRef:
    return MediaRef({k: view_path(data_dir, uid, k) for k in range(VIEWS_PER_OBJECT)})


def resolve_data_dir(path: Path, annotation_file: str) -> Path:
    """The folder holding `annotation_file`: `path` itself or its release sub-folder."""
    path = Path(path)
    for candidate in (path, path / RELEASE_FOLDERS[annotation_file]):
        if (candidate / annotation_file).is_file():
            return candidate
    raise DataError(
        f"{path}: no {annotation_file} here or in {RELEASE_FOLDERS[annotation_file]}/ "
        "(give the data folder or the release root)"
    )


def _repeated_ids(path: Path) -> tuple[dict[str, list[int]], dict[str, JsonValue], list[str]]:
    """The question ids that more than one readable record of 4d_qa.json has: each with the
    indices of its records and the last record (a repeated id keeps it, as json.load does),
    read without holding the records (`repeated_records`). Last: the file's own problems
    (around its records), found by the first pass."""
    first_pass = _qa_members(path)
    ids, last = repeated_records(_readable(first_pass), lambda: _readable(_qa_members(path)))
    return ids, last, first_pass.problems


def _readable(read: JsonMemberStream) -> Iterator[tuple[str, int, JsonValue]]:
    return ((str(m.key), m.index, m.value) for m in read.members if m.error is None)


def _qa_members(path: Path) -> JsonMemberStream:
    read = iter_json_members(path)
    if read.kind is not dict:
        raise DataError(f"{path}: expected a JSON object keyed '<uid>_<suffix>'")
    return read


# Objects whose MediaRef a stream keeps to share with their next questions: a few, not every
# object's (24 paths each: at 100,000 questions that would be 20,000 objects' paths held).
MEDIA_KEPT = 64


def _qa_sample(key: str, record: Any, data_dir: Path, media: dict[str, MediaRef]) -> Sample:
    """One QA record as a Sample; raises DataError(what is wrong) for a bad record. `media`:
    each object's MediaRef, shared by its questions (24 paths an object, not a question)."""
    if not isinstance(record, dict):
        raise DataError("record is not a JSON object")
    obj = record
    uid = key.split("_")[0]
    index = obj.get("Answer index")
    if isinstance(index, bool) or not isinstance(index, int):
        raise DataError(f"'Answer index' must be an integer 1..4, got {index!r}")
    if not 1 <= index <= 4:
        raise DataError(f"'Answer index' {index} is outside 1..4")
    category = obj.get("Category")
    subtask = canonical_subtask(category) if isinstance(category, str) else None
    if subtask is None:
        raise DataError(f"unknown Category {category!r} (expected one of {', '.join(SUBTASKS)})")
    rest = {k: v for k, v in obj.items() if k not in ("Answer index", "Category")}
    question = find_question(rest)
    options = find_options(rest)
    problem = missing_options(rest, question) if options is None else None
    if problem is not None:
        raise DataError(problem)
    if uid not in media:
        media[uid] = media_for(data_dir, uid)
    return Sample(
        id=key,
        benchmark="4dbench",
        kind="mcq",
        media=media[uid],
        question=question,
        options=options or (),
        answer=LETTERS[index - 1],
        metadata={"uid": uid, "subtask": subtask, "official_qa_text": str(rest)},
    )


def iter_qa(data: Path) -> Iterator[Sample | Problem]:
    """The QA samples of a release one at a time, in file order, each with its problems (a
    record that cannot be read, a bad record) in their place among them: what is held is a
    record and a chunk of the file (plus the records of ids that repeat, and 8 bytes a record
    to find those). The file's own problems (its end) and the repeated ids come first; the probe
    file's problems last. A repeated id keeps its last record, at its first record's place, as
    json.load does. DataError here, before any sample, when there is no 4d_qa.json or it holds
    no JSON object."""
    data_dir = resolve_data_dir(data, QA_FILE)
    _qa_members(data_dir / QA_FILE)  # what it holds, read now: a file of no use fails the call
    return _qa_items(data_dir, data_dir / QA_FILE)


def _qa_items(data_dir: Path, path: Path) -> Iterator[Sample | Problem]:
    repeated, last, file_problems = _repeated_ids(path)
    yield from (Problem("", path, problem) for problem in file_problems)
    for key, copies in repeated.items():
        yield Problem(
            key,
            path,
            f"duplicate question id: {len(copies)} copies (records {', '.join(map(str, copies))} "
            f"of the file); the last is used, as json.load does",
        )
    probe_fields, probe_problems = (
        read_probe_fields(data_dir / PROBE_FILE) if (data_dir / PROBE_FILE).is_file() else ({}, [])
    )
    media: dict[str, MediaRef] = {}
    for member in _qa_members(path).members:
        where = f"record {member.index} (line {member.line})"
        if member.note is not None:
            yield Problem(member.name(), path, f"{where}: {member.note}")
        if member.error is not None:
            yield Problem(member.name(), path, f"{where}: {member.error}; skipped")
            continue
        key, record = str(member.key), member.value
        if key in repeated:
            if member.index != repeated[key][0]:
                continue  # a later copy: its record is the first copy's sample
            record = last.pop(key)
        if len(media) >= MEDIA_KEPT:  # an object's questions stand together: the last ones do
            media.clear()
        try:
            sample = _qa_sample(key, record, data_dir, media)
        except DataError as e:
            yield Problem(key, path, str(e))
            continue
        if key in probe_fields:
            sample = dataclasses.replace(
                sample, metadata={**sample.metadata, "probe": probe_fields[key]}
            )
        yield sample
    yield from probe_problems


def load_qa(data: Path) -> Loaded[Sample]:
    """All QA samples of a release (`iter_qa`, all at once); bad records become problems,
    never a crash."""
    return Loaded.gathered(iter_qa(data))


def read_probe_fields(path: Path) -> tuple[dict[str, dict[str, JsonValue]], list[Problem]]:
    """Question id -> its probe fields; each unusable line (not UTF-8, not JSON, not such a
    record) a problem naming it, the others read."""
    fields: dict[str, dict[str, JsonValue]] = {}
    problems: list[Problem] = []
    try:
        lines = list(json_lines(path))
    except DataError as e:
        return {}, [Problem("", path, str(e))]
    for line in lines:
        record = line.value
        if line.error is not None:
            problems.append(Problem(f"line {line.number}", path, line.error))
            continue
        key = record.get("id") if isinstance(record, dict) else None
        probe = record.get("probe") if isinstance(record, dict) else None
        if isinstance(key, str) and isinstance(probe, dict):
            fields[key] = probe
        else:
            expected = 'expected {"id": "<uid>_<suffix>", "probe": {...}}'
            problems.append(Problem(f"line {line.number}", path, expected))
    return fields, problems


def load_captions(data: Path) -> Loaded[Sample]:
    """Caption samples (one per object, five references) from human_annotations.csv (the data
    folder's, or the CSV file given); every unusable row (not UTF-8, duplicate, empty caption) is
    a problem, the rest load."""
    data = Path(data)
    if data.is_file():
        data_dir, read = data.parent, read_references(data)
    else:
        data_dir = resolve_data_dir(data, CAPTION_FILE)
        read = read_references(data_dir / CAPTION_FILE)
    samples = [
        Sample(
            uid,
            "4dbench",
            "caption",
            media_for(data_dir, uid),
            references=refs,
            metadata={"uid": uid},
        )
        for uid, refs in read.items.items()
    ]
    return Loaded(samples, [issue.problem for issue in read.issues])
