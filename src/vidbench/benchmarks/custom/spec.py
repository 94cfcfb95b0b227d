"""benchmark.toml: a declared benchmark, read and checked key by key (docs/custom-benchmarks.md
is the reference of every key). A bad file stops the command at once with a ConfigError naming
the file and the key; nothing about the rows is read here.

spec_keys.py reads the keys one by one.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vidbench.benchmarks.custom import paths
from vidbench.benchmarks.custom.spec_keys import Keys, check_path, check_template
from vidbench.core.errors import ConfigError
from vidbench.media.spec import CLIP_MAX_SIDE, ORIGINAL_SIZE, FrameSpec

SPEC_FILE = "benchmark.toml"
KINDS = ("multiple-choice", "open-ended")
PARSERS = ("extract", "letter", "videomme", "option-text")  # multiple-choice replies
SCORINGS = ("exact", "contains", "regex", "judge")  # open-ended replies
UNPARSED = ("wrong", "drop")  # an unparsed multiple-choice reply: wrong, or left out
ANSWER_FORMATS = ("auto", "letter", "index", "text")  # how `answer` names the gold option
EMPTY_OPTIONS = ("problem", "drop")  # an empty option before a non-empty one
SAMPLERS = ("linspace", "interval", "keyframes")
ORDERS = ("view-first", "time-first")
ROW_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
FILE_FIELD = "_file"  # every row's file name without its suffix, for templates and groups
KEY_FIELD = "_key"  # the key of a JSON object of records
INDEX_FIELD = "_index"  # an exploded row's position in its record's list (from 0)
PARENT_FIELD = "_parent"  # an exploded row's record, without the list
# Fields of the per-sample records (samples.jsonl) that a group field may not be named as.
RECORD_FIELDS = frozenset(
    ("id", "status", "error", "status_detail", "gold", "parsed", "unparsed", "correct",
     "counted", "chance", "group", "verdict", "reason", "judge_reply", "verdict_absent",
     "raw_output", "prompt_hash", "frames")
)  # fmt: skip

DEFAULT_PROMPTS = {
    "multiple-choice": "{question}\n{options}\nAnswer with the option's letter from the given "
    "choices directly.",
    "open-ended": "{question}",
}
DEFAULT_MAX_TOKENS = {"multiple-choice": 64, "open-ended": 512}


@dataclass(frozen=True)
class RowSource:
    """One rows file (or glob) and how its rows name their videos."""

    path: str  # relative to the data folder, or absolute; may hold * and ? wildcards
    video: tuple[str, ...] = ()  # path templates over the row's fields, one per view
    videos: str | None = None  # or: the field holding the row's video path(s)
    set: dict[str, Any] = field(default_factory=dict)  # fields added to each of its rows


@dataclass(frozen=True)
class AnswersFile:
    """Gold answers kept apart from the rows (`answers = { file = ..., key = ... }`): a JSON
    object of id -> answer (or -> record), or rows whose `key` field holds the row's id."""

    path: str  # relative to the data folder, or absolute
    key: str | None  # the field of its rows holding the row id (None: an object keyed by id)


@dataclass(frozen=True)
class Spec:
    file: Path  # the benchmark.toml it was read from
    name: str
    title: str
    description: str
    license: str | None
    sources: tuple[RowSource, ...]
    id: str | None  # the field (or `{field}` template) of a row's id (default: see rows.py)
    explode: str | None  # a field holding a list of records: one row per element
    answers: AnswersFile | None  # gold answers in a file of their own, joined by row id
    decisions: str | None  # people's review decisions on rows (decisions.py), relative to data
    views: int  # videos per row
    start: str | None  # fields holding a window's start / end in seconds
    end: str | None
    window: str | None  # or: one field holding "start-end" (seconds)
    kind: str
    question: str
    options: tuple[str, ...]  # one field holding all options, or one field per option
    empty_options: str  # an empty option before a non-empty one: a problem, or dropped
    answer: str | None
    answer_format: str  # how `answer` names the gold option (auto, letter, index, text)
    index_base: int  # an answer given as a number counts options from this
    groups: tuple[str, ...]
    prompt: str
    system: str | None
    option_format: str
    frame_spec: FrameSpec
    max_tokens: int
    temperature: float
    parser: str
    unparsed: str
    scoring: str
    rubric: str | None  # the field holding a row's judging rule (open-ended, judge)
    judge_prompt: str | None  # the judge prompt template's text, from `judge_prompt = FILE`
    judge_prompt_file: str | None  # that FILE, relative to the benchmark's folder
    judge_attempts: int

    @property
    def multiple_choice(self) -> bool:
        return self.kind == "multiple-choice"

    @property
    def uses_judge(self) -> bool:
        return self.kind == "open-ended" and self.scoring == "judge"


def _id(keys: Keys) -> str | None:
    """A field path, or a template over several (`"{video}_{qid}"`)."""
    value = keys.text("id", None)
    if value is None:
        return None
    if "{" in value:
        return check_template(keys, "id", value)
    return check_path(keys, "id", value)


def _answers(keys: Keys) -> AnswersFile | None:
    raw = keys.get("answers", None)
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = {"file": raw}
    if not isinstance(raw, dict):
        raise keys.fail("answers", f"expected {{ file = FILE, key = FIELD }}, got {raw!r}")
    own = Keys(raw, keys.file, "answers.")
    path = own.text("file")
    if Path(path).suffix.lower() not in ROW_SUFFIXES:
        raise own.fail("file", f"{path!r}: answers are read from {', '.join(ROW_SUFFIXES)}")
    found = AnswersFile(path, own.path("key", None))
    own.done()
    return found


def _decisions(keys: Keys) -> str | None:
    path = keys.text("decisions", None)
    if path is not None and Path(path).suffix.lower() != ".jsonl":
        raise keys.fail("decisions", f"{path!r}: review decisions are a .jsonl file (decisions.py)")
    return path


def _sources(keys: Keys) -> tuple[RowSource, ...]:
    video = keys.texts("video", ())
    videos = keys.text("videos", None)
    raw = keys.get("rows")
    tables = [raw] if isinstance(raw, str) else raw
    if not isinstance(tables, list) or not tables:
        raise keys.fail("rows", "expected a file name, a list of them, or [[rows]] tables")
    sources = []
    for i, table in enumerate({"path": t} if isinstance(t, str) else t for t in tables):
        if not isinstance(table, dict):
            raise keys.fail("rows", f"entry {i + 1}: expected a file name or a table")
        own = Keys(table, keys.file, f"rows[{i + 1}].")
        path = own.text("path")
        if Path(path).suffix.lower() not in ROW_SUFFIXES:
            raise own.fail("path", f"{path!r}: rows are read from {', '.join(ROW_SUFFIXES)}")
        constants = own.get("set", {})
        if not isinstance(constants, dict):
            raise own.fail("set", f"expected a table of fields, got {constants!r}")
        own_video, own_videos = own.texts("video", None), own.text("videos", None)
        if own_video is None and own_videos is None:  # the top-level keys apply
            own_video, own_videos = video, videos
        source = RowSource(
            path,
            tuple(check_template(own, "video", t) for t in own_video or ()),
            own_videos and check_path(own, "videos", own_videos),
            dict(constants),
        )
        own.done()
        if bool(source.video) == bool(source.videos):
            raise keys.fail(
                "video",
                f"rows file {path!r}: give `video` (path templates) or `videos` (the field "
                "holding each row's video paths), one of them",
            )
        sources.append(source)
    return tuple(sources)


def _frames(keys: Keys, views: int) -> FrameSpec:
    max_side = keys.integer("max_side", CLIP_MAX_SIDE, ORIGINAL_SIZE)
    try:
        return FrameSpec(
            views=tuple(range(views)),
            frames=keys.integer("frames", 8, 1),
            sampler=keys.text("sampler", "linspace", SAMPLERS),
            order=keys.text("order", "view-first", ORDERS),
            max_side=None if max_side == ORIGINAL_SIZE else max_side,
        )
    except ConfigError as e:
        raise ConfigError(f"{keys.file}: {e}") from e


def _judge_prompt(keys: Keys, folder: Path) -> str | None:
    name = keys.text("judge_prompt", None)
    if name is None:
        return None
    path = folder / name
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise keys.fail("judge_prompt", f"cannot read {path} ({e})") from e


def _option_format(keys: Keys) -> str:
    """How `{options}` shows an option: a template over {letter}, {text} and {index} only."""
    template = check_template(
        keys, "option_format", keys.text("option_format", "({letter}) {text}")
    )
    unknown = sorted(set(paths.fields_of(template)) - {"letter", "text", "index"})
    if unknown:
        raise keys.fail(
            "option_format", f"{{{unknown[0]}}}: an option has {{letter}}, {{text}} and {{index}}"
        )
    return template


def parse_spec(raw: dict[str, Any], file: Path) -> Spec:
    keys = Keys(raw, file)
    name = keys.text("name")
    kind = keys.text("kind", "multiple-choice", KINDS)
    sources = _sources(keys)
    views = keys.integer("views", None, 1)
    templates = {len(s.video) for s in sources if s.video}
    if len(templates) > 1:
        raise keys.fail("video", f"the rows files give {sorted(templates)} video templates; "
                        "every row needs the same number of videos")  # fmt: skip
    if views is None:
        views = templates.pop() if len(templates) == 1 else 1
    elif templates - {views}:
        raise keys.fail("views", f"{views}, but `video` gives {sorted(templates)} template(s)")
    multiple_choice = kind == "multiple-choice"
    options = keys.paths("options", ("options",) if multiple_choice else ())
    answer = keys.path("answer", "answer" if multiple_choice else None)
    scoring = keys.text("scoring", "exact", SCORINGS)
    rubric = keys.path("rubric", None)
    spec = Spec(
        file=file,
        name=name,
        title=keys.text("title", name),
        description=keys.text("description", ""),
        license=keys.text("license", None),
        sources=sources,
        id=_id(keys),
        explode=keys.path("explode", None),
        answers=_answers(keys),
        decisions=_decisions(keys),
        views=views,
        start=keys.path("start", None),
        end=keys.path("end", None),
        window=keys.path("window", None),
        kind=kind,
        question=keys.path("question", "question"),
        options=options,
        empty_options=keys.text("empty_options", "problem", EMPTY_OPTIONS),
        answer=answer,
        answer_format=keys.text("answer_format", "auto", ANSWER_FORMATS),
        index_base=keys.integer("index_base", 0, 0),
        groups=keys.paths("groups", ()),
        prompt=check_template(keys, "prompt", keys.text("prompt", DEFAULT_PROMPTS[kind])),
        system=keys.text("system", None),
        option_format=_option_format(keys),
        frame_spec=_frames(keys, views),
        max_tokens=keys.integer("max_tokens", DEFAULT_MAX_TOKENS[kind], 1),
        temperature=keys.number("temperature", 0.0, 0.0),
        parser=keys.text("parser", "extract", PARSERS),
        unparsed=keys.text("unparsed", "wrong", UNPARSED),
        scoring=scoring,
        rubric=rubric,
        judge_prompt=_judge_prompt(keys, file.parent),
        judge_prompt_file=keys.text("judge_prompt", None),
        judge_attempts=keys.integer("judge_attempts", 3, 1),
    )
    keys.done()
    _check_kind(keys, spec)
    return spec


def _check_kind(keys: Keys, spec: Spec) -> None:
    clash = sorted(RECORD_FIELDS.intersection(spec.groups))
    if clash:
        raise keys.fail("groups", f"{clash[0]!r} is a field of vidbench's own sample records; "
                        "group by a field of another name")  # fmt: skip
    if spec.window is not None and (spec.start is not None or spec.end is not None):
        raise keys.fail("window", 'give `window` (one "start-end" field) or `start` and `end`')
    if spec.answers is not None and spec.answer is None:
        raise keys.fail("answers", "joined answers go to the field `answer` names; give `answer`")
    if spec.index_base not in (0, 1):
        raise keys.fail("index_base", f"0 or 1, got {spec.index_base}")
    if spec.multiple_choice:
        if not spec.options or spec.answer is None:
            raise keys.fail("options", "a multiple-choice benchmark needs `options` and `answer`")
        return
    if spec.scoring in ("exact", "contains", "regex") and spec.answer is None:
        raise keys.fail("answer", f"scoring {spec.scoring!r} compares replies with `answer`")
    if spec.scoring == "judge" and spec.answer is None and spec.rubric is None:
        raise keys.fail("rubric", "judge scoring needs a `rubric` field, an `answer`, or both")


def read_spec(folder: Path) -> Spec:
    """The benchmark declared in FOLDER/benchmark.toml; ConfigError naming file and key."""
    file = Path(folder) / SPEC_FILE
    if not file.is_file():
        raise ConfigError(
            f"{file}: no such file (a declared benchmark is a folder holding {SPEC_FILE}; "
            "docs/custom-benchmarks.md)"
        )
    try:
        raw = tomllib.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{file}: cannot read ({e})") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{file}: not valid TOML ({e})") from e
    return parse_spec(raw, file)
