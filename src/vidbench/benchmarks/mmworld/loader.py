"""MMWorld loader (this benchmark's README.md, MMWorld paper section 3).

Annotations: `<root>/mmworld.json`, a list of video records
    {video_id, video_url, discipline, subdiscipline, captions[], questions[], [subset],
     [transcript]}
each question {type, question, options{a..d}, answer, correct_answer_label,
requires_domain_knowledge, requires_audio, requires_visual, question_only, [id]}; or a
one-row-per-question export of the same fields (.json list, .jsonl or .csv; options as an object,
a JSON string or option_a.. columns). `--data` names the folder or the annotation file itself.
Videos: `<root>/<video_id>/<video_id>.mp4` (or .mkv/.webm/.mov/.avi/.m4v, any case), else
`<root>/<video_id>.mp4`, else the one video in `<root>/<video_id>/` (the official script globs
that folder). Human raters (optional): `<root>/human_raters.json` = {question id: [bool x 3]}.

A question's id is its own `id`/`question_id` when it has one, else `<video_id>#<index>` (index
within the video record, from 0; a row export may give `question_index`). Every bad record
becomes a Problem naming the question (or video) id; the rest loads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import (
    Any,
    NotRequired,  # pydantic reads these before 3.12
)

from pydantic import JsonValue, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from vidbench.benchmarks.mmworld import fields
from vidbench.core.errors import DataError
from vidbench.core.files import json_lines, json_members, not_text
from vidbench.core.records import MediaRef, Sample
from vidbench.tasks.csv_records import read_csv_records
from vidbench.tasks.problems import Loaded, Problem

ANNOTATION_FILE = "mmworld.json"
RATERS_FILE = "human_raters.json"
VIDEO_EXTENSIONS = (".mp4", ".mkv", ".webm", ".mov", ".avi", ".m4v")
_ANNOTATION_SUFFIXES = (".json", ".jsonl", ".csv")
_VIDEO_FIELDS = ("video_id", "discipline", "subdiscipline", "subset", "transcript")


class Meta(TypedDict):
    """What an MMWorld Sample's metadata holds (`_sample` writes it all; `meta` reads it back,
    requiring what scoring reads)."""

    video_id: str
    discipline: str
    facet: str | None
    flags: dict[str, bool | None]  # annotation flag -> set (None: not annotated)
    labels: tuple[str, ...]  # the option labels, sorted
    subdiscipline: NotRequired[str | None]
    subset: NotRequired[str]
    transcript: NotRequired[str | None]
    options_in_file: NotRequired[dict[str, str]]  # label -> text, in the file's order
    answer_text: NotRequired[JsonValue]
    raters: NotRequired[tuple[bool, bool, bool]]  # human raters who answered correctly


META = TypeAdapter(Meta)


def meta(sample: Sample) -> Meta:
    """The sample's MMWorld metadata, checked; DataError for a sample not loaded by `load`."""
    try:
        return META.validate_python(sample.metadata)
    except ValidationError as e:
        raise DataError(f"{sample.id}: not an MMWorld sample's metadata ({e})") from None


@dataclass
class _Video:
    video_id: str
    info: dict[str, JsonValue]  # the video-level fields
    where: str  # "record 3", "line 7": where the video first appears
    questions: list[tuple[int, Any]] = field(default_factory=list)
    empty: bool = False  # a video record whose questions list is missing or empty


def resolve(data: Path) -> tuple[Path, Path]:
    """(annotation file, video root) for `--data` naming a folder or a file."""
    data = Path(data)
    if data.is_file():
        return data, data.parent
    if not data.is_dir():
        raise DataError(f"{data}: no such file or folder")
    if (data / ANNOTATION_FILE).is_file():
        return data / ANNOTATION_FILE, data
    found = sorted(
        p
        for p in data.iterdir()
        if p.is_file() and p.suffix.lower() in _ANNOTATION_SUFFIXES and p.name != RATERS_FILE
    )
    if len(found) == 1:
        return found[0], data
    names = ", ".join(p.name for p in found) or "none"
    raise DataError(
        f"{data}: no {ANNOTATION_FILE}; give the annotation file itself (candidates here: {names})"
    )


def find_video(root: Path, video_id: str) -> Path | None:
    stem = Path(video_id).name
    folder = root / video_id
    for base in (folder / stem, root / video_id):
        for ext in VIDEO_EXTENSIONS:
            for suffix in (ext, ext.upper()):
                candidate = base.with_name(base.name + suffix)
                if candidate.is_file():
                    return candidate
    if folder.is_dir():
        videos = [p for p in folder.iterdir() if p.suffix.lower() in VIDEO_EXTENSIONS]
        if len(videos) == 1:
            return videos[0]
    return None


def _read_entries(path: Path) -> tuple[list[tuple[str, Any]], list[Problem]]:
    """(where, JSON object) for every record of a .json list, .jsonl or .csv file."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":  # line by line: one bad line (not JSON, not UTF-8) is one problem
        entries, problems = [], []
        for line in json_lines(path):
            if line.error is None:
                entries.append((f"line {line.number}", line.value))
            else:
                problems.append(Problem(f"line {line.number}", path, line.error))
        return entries, problems
    if suffix == ".csv":  # a byte that is not UTF-8 costs its row, named with the column
        try:
            text = path.read_bytes().decode("utf-8", errors="surrogateescape")
        except OSError as e:
            raise DataError(f"{path}: cannot read ({e.strerror or e})") from e
        records, problems = read_csv_records(text.removeprefix("\ufeff"), path, ("video_id",))
        entries = []
        for r in records:
            bad = [(column, why) for column, value in r.fields.items() if (why := not_text(value))]
            if bad:
                column, why = bad[0]
                problems.append(
                    Problem(f"line {r.line}", path, f"{column} is not UTF-8 ({why}); row skipped")
                )
            else:
                entries.append((f"line {r.line}", dict(r.fields)))
        return entries, problems
    read = json_members(path)  # record by record: a broken record costs itself, not the file
    if read.kind is not list:
        raise DataError(f"{path}: expected a JSON list of video records or question rows")
    entries, problems = [], [Problem("", path, problem) for problem in read.problems]
    for member in read.members:
        where = f"record {member.index}"
        if member.note is not None:
            problems.append(Problem(where, path, f"line {member.line}: {member.note}"))
        if member.error is None:
            entries.append((where, member.value))
        else:
            problems.append(
                Problem(where, path, f"line {member.line}: {member.error}; record skipped")
            )
    return entries, problems


def _group(path: Path) -> tuple[list[_Video], list[Problem]]:
    """Video records and question rows, grouped by video in file order."""
    entries, problems = _read_entries(path)
    videos: dict[str, _Video] = {}
    for where, entry in entries:
        video_id = entry.get("video_id") if isinstance(entry, dict) else None
        if not isinstance(video_id, str) or not video_id.strip():
            problems.append(Problem(where, path, "record has no video_id"))
            continue
        video_id = video_id.strip()
        info = {k: entry.get(k) for k in _VIDEO_FIELDS}
        video = videos.setdefault(video_id, _Video(video_id, info, where))
        if "questions" in entry:  # a video record
            questions = entry["questions"]
            if not isinstance(questions, list) or not questions:
                video.empty = True
                continue
            start = len(video.questions)
            video.questions.extend((start + i, q) for i, q in enumerate(questions))
            continue
        clash = [k for k in ("discipline", "subset") if info[k] != video.info[k]]
        if clash:
            problems.append(
                Problem(where, path, f"video {video_id}: {clash[0]} differs from {video.where}")
            )
            continue
        index = _int(entry.get("question_index"))
        video.questions.append((len(video.questions) if index is None else index, entry))
    return list(videos.values()), problems


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def question_id(video_id: str, index: int, question: Any) -> str:
    own = question.get("id", question.get("question_id")) if isinstance(question, dict) else None
    if isinstance(own, str | int) and not isinstance(own, bool) and str(own).strip():
        return str(own).strip()
    return f"{video_id}#{index}"


def _sample(qid: str, q: Any, video: _Video, media: Path, subset: str) -> Sample:
    """One question as a Sample; raises DataError(what is wrong)."""
    if not isinstance(q, dict):
        raise DataError("question is not a JSON object")
    question = q.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DataError("the question has no text")
    options = fields.options(q)
    if q.get("correct_answer_label") in (None, ""):
        raise DataError("no correct_answer_label")
    gold = fields.label(q["correct_answer_label"])
    if gold not in options:
        raise DataError(
            f"correct_answer_label {q['correct_answer_label']!r} is not among its options "
            f"({', '.join(options)})"
        )
    kind = q.get("type")
    facet = None if subset != "main" and kind in (None, "") else fields.facet(kind)
    labels = tuple(sorted(options))
    return Sample(
        id=qid,
        benchmark="mmworld",
        kind="mcq",
        media=MediaRef.single(media),
        question=question,
        options=tuple(options[label] for label in labels),
        answer=gold,
        metadata={
            "video_id": video.video_id,
            "discipline": fields.discipline(video.info["discipline"]),
            "subdiscipline": video.info.get("subdiscipline"),
            "facet": facet,
            "flags": {name: fields.flag(name, q.get(name)) for name in fields.FLAGS},
            "subset": subset,
            "transcript": fields.transcript(video.info.get("transcript")),
            "labels": labels,
            "options_in_file": options,  # file order, for the official prompt's dict text
            "answer_text": q.get("answer"),
        },
    )


def _video_problem(video: _Video, root: Path) -> tuple[Path | None, str | None]:
    """(the video file, None) or (None, what is wrong with the video record)."""
    try:
        fields.discipline(video.info["discipline"])
        fields.transcript(video.info.get("transcript"))
    except DataError as e:
        return None, str(e)
    if ".." in Path(video.video_id).parts or Path(video.video_id).is_absolute():
        return None, "video_id must be a relative name inside the data folder"
    path = find_video(root, video.video_id)
    if path is None:
        return None, (
            f"video not found (looked for {root / video.video_id / video.video_id}.mp4, "
            "other extensions and the folder's single video)"
        )
    return path, None


def load(data: Path, subset: str | None = "main") -> Loaded[Sample]:
    """The questions of one subset (main, audio, visual; None: all) with every problem."""
    path, root = resolve(data)
    videos, problems = _group(path)
    raters, rater_problems = read_raters(root)
    samples: dict[str, Sample] = {}
    seen: set[str] = set()
    for video in videos:
        try:
            video_subset = fields.subset(video.info.get("subset"))
        except DataError as e:
            problems.append(Problem(video.video_id, path, f"video {video.video_id}: {e}"))
            continue
        if subset is not None and video_subset != subset:
            continue
        if video.empty and not video.questions:
            problems.append(
                Problem(video.video_id, path, f"video {video.video_id} has no questions")
            )
            continue
        media, wrong = _video_problem(video, root)
        for index, q in video.questions:
            qid = question_id(video.video_id, index, q)
            if qid in seen:  # the last copy is used, as a dict by id keeps it
                problems.append(
                    Problem(
                        qid,
                        path,
                        f"video {video.video_id}: duplicate question id; the last copy is used",
                    )
                )
                samples.pop(qid, None)
            seen.add(qid)
            try:
                if media is None:
                    raise DataError(wrong)
                sample = _sample(qid, q, video, media, video_subset)
            except DataError as e:
                problems.append(Problem(qid, path, f"video {video.video_id}: {e}"))
                continue
            if qid in raters:
                sample.metadata["raters"] = raters[qid]
            samples[qid] = sample
    if subset is None:  # a full check (validate): rated questions the data does not have
        problems += rater_problems + [
            Problem(qid, root / RATERS_FILE, "rated question is not in the data")
            for qid in raters
            if qid not in seen
        ]
    else:
        problems += rater_problems
    return Loaded(list(samples.values()), problems)


def read_raters(root: Path) -> tuple[dict[str, tuple[bool, bool, bool]], list[Problem]]:
    """`human_raters.json`: question id -> three raters' correctness (absent file: none)."""
    path = root / RATERS_FILE
    if not path.is_file():
        return {}, []
    try:
        read = json_members(path)  # record by record: a broken entry costs itself only
    except DataError as e:
        return {}, [Problem("", path, f"cannot read human raters ({e})")]
    if read.kind is not dict:
        return {}, [Problem("", path, "expected an object: question id -> [true, false, true]")]
    raters, problems = {}, [Problem("", path, problem) for problem in read.problems]
    for member in read.members:
        qid, votes = member.name(), member.value
        if member.error is not None:
            problems.append(Problem(qid, path, f"line {member.line}: {member.error}"))
            continue
        try:
            if not isinstance(votes, list) or len(votes) != 3:
                raise DataError(f"expected three raters' results, got {votes!r}")
            a, b, c = (fields.flag("rater result", v) for v in votes)
            if a is None or b is None or c is None:
                raise DataError(f"rater results must be true or false, got {votes!r}")
            raters[qid] = (a, b, c)
        except DataError as e:
            problems.append(Problem(qid, path, str(e)))
    return raters, problems
