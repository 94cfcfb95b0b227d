"""`vidbench analyze errors RUN`: tag every wrong answer of a finished multiple-choice run with
one of MMWorld's seven error types (MMWorld paper, section 4.3 and appendix E; analyze/taxonomy.py).

The paper's authors had the models explain themselves and grouped the mistakes by hand; here an
LLM judge reads each wrong answer (the question, the options, the correct answer, the model's
reply and the option it was read as; with `--with-frames` also the frames the model saw) and
names the error type with a one-sentence reason.

The run is read from RUN/run.json and RUN/samples.jsonl; questions, options and gold answers come
from the run's own task loading its data, so any multiple-choice task works (mmworld,
mmworld-synth-*, 4dbench-qa). A wrong answer is a sample row whose outcome is `wrong`; rows
counted neither right nor wrong (no answer, no verdict) are counted apart. Every judgment goes
through the judge plumbing into RUN/store.sqlite: never requested twice, a reply naming no type
asked again up to `attempts`, then recorded as `unparsed` and counted; a failed call is recorded
as `error` and asked again by the next run. Results: RUN/errors.jsonl (one line per wrong
answer) and RUN/errors.json (the counts).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypedDict

from vidbench.analyze.taxonomy import BY_CODE, CODES, definitions_text, error_code
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import Json, write_json, write_jsonl
from vidbench.core.messages import Message, Part, TextPart
from vidbench.core.records import Sample
from vidbench.core.requests import GenerationConfig
from vidbench.media.cache import FrameCache
from vidbench.media.frames import load_frames
from vidbench.models.registry import ModelChoice
from vidbench.report.results_dir import RESULTS_FILE, ResultsDir
from vidbench.report.schema import SampleRow
from vidbench.runner.data_identity import fingerprints
from vidbench.runner.model_calls import DEFAULT_ATTEMPTS, ask_judge
from vidbench.runner.run_config import RunConfig
from vidbench.runner.store import Store
from vidbench.scoring.model_call import CallResult, ModelCall, find_json
from vidbench.scoring.prompt_files import PromptFile, load_prompt
from vidbench.tasks.base import Task
from vidbench.tasks.data import OWN_DATA, load_samples

PROMPT_FILE = "error_type.v1.txt"
ERROR_GENERATION = GenerationConfig(temperature=0.0, max_tokens=512)
_NAMED = re.compile(r"error[ _]?type\W+([A-Za-z][A-Za-z -]+)", re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z]+")
# what may stand between a type named in prose and its reason: markdown, quotes, a "Reason:"
_BEFORE_REASON = re.compile(r"^[\W_]*(?:reason\b[\W_]*)?", re.IGNORECASE)


def _named_code(text: str) -> str | None:
    """The error type a JSON reply's `error_type` names: the whole text (code or name, any
    case), else its first run of words that is one ("Visual Perception Error (VPE)",
    "VPE - Visual Perception Error"), a lone word only in capitals (so "he", "re" are words)."""
    words = _WORD.findall(text)
    spans = (
        " ".join(words[i:j])
        for i in range(len(words))
        for j in range(len(words), i, -1)
        if j - i > 1 or words[i].isupper()
    )
    return error_code(text) or next((code for span in spans if (code := error_code(span))), None)


def parse_error_type(reply: str) -> tuple[str, str] | None:
    """(code, reason) from a judge reply: `{"error_type": ..., "reason": ...}` anywhere in it,
    else an "error type: X" line (the reason: what follows it); None when no known type is
    named."""
    value = find_json(reply)
    if isinstance(value, dict):
        named = value.get("error_type")
        if isinstance(named, list) and len(named) == 1:  # ["VPE"]
            named = named[0]
        code = _named_code(named) if isinstance(named, str) else None
        if code is not None:
            reason = value.get("reason")
            return code, (reason if isinstance(reason, str) else "").strip()
    for match in _NAMED.finditer(reply):
        words = match.group(1).split()
        for n in range(len(words), 0, -1):  # the longest name that is a type: "Reasoning Error"
            code = error_code(" ".join(words[:n]))
            if code is not None:
                after = reply[match.start(1) + len(" ".join(words[:n])) :]
                return code, _BEFORE_REASON.sub("", after.strip()).rstrip(" .\n")
    return None


class ErrorLine(TypedDict):
    """One wrong answer in RUN/errors.jsonl: its error type (None: not tagged) and why."""

    id: str
    status: str  # the judgment's CallStatus, or "media" (its frames could not be read)
    error_type: str | None  # a code of analyze/taxonomy.py
    error_name: str | None
    reason: str | None
    gold: str | None
    parsed: str | None
    raw_output: str | None
    judge_reply: str | None
    attempts: int
    error: str | None


class ErrorSummary(TypedDict):
    """RUN/errors.json: the counts of a run's error types."""

    run: str
    task: str
    model: str
    judge: Mapping[str, Json]  # the judge's identity
    wrong: int
    tagged: int
    counts: dict[str, int]  # by error type code, every code listed
    unparsed: int
    judge_errors: int
    media_errors: int
    not_scored: int
    missing_samples: list[str]
    changed_samples: list[str]  # wrong answers whose sample changed since the run
    usage: dict[str, int]


@dataclass
class RunInput:
    """A finished run's wrong answers with their samples."""

    path: Path
    config: RunConfig
    task: Task
    model: str  # the label of the run's row
    wrong: list[tuple[Sample, SampleRow]] = field(default_factory=list)
    not_scored: int = 0  # samples counted neither right nor wrong (no answer, no verdict)
    missing: list[str] = field(default_factory=list)  # wrong answers whose sample is gone
    changed: list[str] = field(default_factory=list)  # ... or is not what was answered


def read_run(path: Path) -> RunInput:
    """The run's config, task (built from the config) and wrong answers; ConfigError for what
    is not a finished multiple-choice run."""
    config = RunConfig.load(path)
    directory = ResultsDir(path)
    rows = directory.read_samples()
    task = config.open_task()
    results = directory.read_results() if directory.file(RESULTS_FILE).is_file() else None
    run = RunInput(path, config, task, (results.model if results else None) or config.model)
    # the data the run scored: results.json's full path (run.json's name is relative to the
    # folder the run was started in, not this one)
    given = results.data if results and results.data and config.data != OWN_DATA else None
    loaded = load_samples(task, given or config.data)
    if any(s.kind != "mcq" for s in loaded.items):
        raise ConfigError(f"{path}: {config.task} is not a multiple-choice task")
    by_id = {s.id: s for s in loaded.items}
    for row in rows:
        if row.status == "data":  # a record the loader rejected: never answered
            continue
        if row.outcome.kind == "unscored":
            run.not_scored += 1
            continue
        if row.outcome.kind == "correct":
            continue
        sample = by_id.get(row.id)
        if sample is None:
            run.missing.append(row.id)
        else:
            run.wrong.append((sample, row))
    _set_apart_changed(run)
    return run


def _set_apart_changed(run: RunInput) -> None:
    """Set apart the wrong answers whose sample is not what the model answered: its question,
    options, videos or window changed since (runner/data_identity's fingerprint, against the
    one the run kept in its store), or its gold did (the answer may be right now). The judge
    never sees them; they are counted."""
    if not run.wrong:
        return
    with Store(run.path) as store:
        store.stage_run_rows(fingerprints(sample for sample, _ in run.wrong))
        changed = set(store.changed_run_rows(shown=len(run.wrong))[2])
    changed |= {s.id for s, row in run.wrong if row.gold is not None and row.gold != s.answer}
    run.changed = [s.id for s, _ in run.wrong if s.id in changed]
    run.wrong = [(s, row) for s, row in run.wrong if s.id not in changed]


def _frame_parts(sample: Sample, task: Task, cache: FrameCache) -> tuple[Part, ...]:
    """The frames the model saw, each labelled with its video file's hash (store keys tell
    images apart by label, and the run's labels name only view and frame)."""
    frames = load_frames(sample.media, task.frame_spec, cache)
    hashes = {view: cache.video_digest(Path(p)) for view, p in sample.media.videos.items()}
    return tuple(
        replace(f.image, label=f"{hashes.get(f.view, '')} {f.image.label}") for f in frames
    )


def error_prompt() -> PromptFile:
    return load_prompt("vidbench.analyze", PROMPT_FILE, "analyze")


def error_call(
    sample: Sample, row: SampleRow, task: Task, frames: tuple[Part, ...] = ()
) -> ModelCall[tuple[str, str]]:
    template = error_prompt()
    labels = task.choices(sample)
    options = "\n".join(f"({k}) {v}" for k, v in zip(labels, sample.options, strict=False))
    text = template.render(
        definitions=definitions_text(),
        question=sample.question or "(not available)",
        options=options or "(not available)",
        gold=f"({sample.answer}) "
        + dict(zip(labels, sample.options, strict=False)).get(sample.answer or "", ""),
        reply=row.raw_output or "(empty)",
        parsed=f"({row.parsed})" if row.parsed else "none (no option recognised)",
        frames_note="The images above are the frames the model saw.\n" if frames else "",
    )
    message = Message("user", (*frames, TextPart(text)))
    return ModelCall(
        f"{sample.id}:error-type", (message,), template.version, parse_error_type, ERROR_GENERATION
    )


def _line(
    sample: Sample,
    row: SampleRow,
    verdict: CallResult[tuple[str, str]] | None,
    error: str | None,
) -> ErrorLine:
    tagged = verdict.value if verdict is not None else None
    code, reason = tagged if tagged is not None else (None, None)
    return {
        "id": sample.id,
        "status": verdict.status if verdict is not None else "media",
        "error_type": code,
        "error_name": BY_CODE[code].name if code else None,
        "reason": reason,
        "gold": sample.answer,
        "parsed": row.parsed,
        "raw_output": row.raw_output,
        "judge_reply": verdict.reply if verdict is not None else None,
        "attempts": verdict.attempts if verdict is not None else 0,
        "error": error or (verdict.error if verdict is not None else None),
    }


def tag_errors(
    run: RunInput,
    judge: ModelChoice,
    *,
    attempts: int = DEFAULT_ATTEMPTS,
    with_frames: bool = False,
    show_progress: bool = False,
) -> ErrorSummary:
    """Tag the run's wrong answers; write RUN/errors.jsonl and RUN/errors.json; the summary."""
    cache = FrameCache(Path(run.config.cache_dir) if run.config.cache_dir else None)
    calls: list[ModelCall[tuple[str, str]]] = []
    media_errors: dict[str, str] = {}
    for sample, row in run.wrong:
        try:
            frames = _frame_parts(sample, run.task, cache) if with_frames else ()
        except DataError as e:  # MediaError too: this answer is not tagged, the rest are
            media_errors[sample.id] = str(e)
            continue
        calls.append(error_call(sample, row, run.task, frames))
    with Store(run.path) as store:
        verdicts, identity = ask_judge(judge, calls, store, attempts, show_progress)
        usage = store.call_usage_by_version().get(error_prompt().version, {})
    lines = [
        _line(sample, row, verdicts.get(f"{sample.id}:error-type"), media_errors.get(sample.id))
        for sample, row in run.wrong
    ]
    write_jsonl(run.path / "errors.jsonl", lines)
    summary = summarise(run, lines, identity, usage)
    write_json(run.path / "errors.json", summary)
    return summary


def summarise(
    run: RunInput, lines: list[ErrorLine], judge: Mapping[str, Json], usage: dict[str, int]
) -> ErrorSummary:
    statuses = Counter(line["status"] for line in lines)
    counts = Counter(code for line in lines if (code := line["error_type"]))
    return {
        "run": str(run.path),
        "task": run.config.task,
        "model": run.model,
        "judge": judge,
        # with the wrong answers whose sample is gone or changed
        "wrong": len(lines) + len(run.missing) + len(run.changed),
        "tagged": statuses.get("ok", 0),
        "counts": {code: counts.get(code, 0) for code in CODES},
        "unparsed": statuses.get("unparsed", 0),
        "judge_errors": statuses.get("error", 0) + statuses.get("missing", 0),
        "media_errors": statuses.get("media", 0),
        "not_scored": run.not_scored,
        "missing_samples": run.missing,
        "changed_samples": run.changed,
        "usage": usage,
    }
