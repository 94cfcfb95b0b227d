"""People's review decisions on a declared benchmark's rows: `decisions = "decisions.jsonl"` in
benchmark.toml names the file (relative to the data folder, as `answers` is). The review app's
audit queue writes it (`vidbench annotate export PROJECT audit`, from the items an audit flagged:
docs/audit.md); the rows files stay as they are and the loader applies the decisions:

    {"id": "q03", "decision": "fix", "answer": "B", "was": "D", "flags": ["gold"], ...}
    {"id": "q20", "decision": "drop", "reason": "answered without the video", ...}
    {"id": "q12", "decision": "keep", "flags": ["easy"], ...}

- `fix`: the row's gold answer becomes `answer`, written as the row writes its own (a letter, an
  index counted from `index_base`, or the option's text: `answer_as_written`) and read like it;
- `drop`: the row leaves the benchmark (it is not asked, scored or counted);
- `keep`: the row stays as it is (with the gold of an earlier fix); the audit shows the flags
  named in `flags` as reviewed, not open (`Task.reviewed`).

The lines on one id apply in order, one review round after another (`fold`): a fix sets the
gold and clears the flags the row was kept with (it is another item now), a drop takes the row
out, a keep brings it back as it was and adds its flags. Other fields (`was`, `reason`, `by`,
`at`) say who decided what and why. A line that is not a decision, a decision for an id no row
has, and a fixed answer that names no option of its row are problems naming the file and the
line; such a decision is not applied, the rest are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import JsonValue

from vidbench.benchmarks.custom import gold, paths
from vidbench.benchmarks.custom.spec import Spec
from vidbench.core.errors import DataError
from vidbench.core.files import json_lines
from vidbench.scoring.choices import option_letters
from vidbench.tasks.problems import Problem

KINDS = ("keep", "fix", "drop")


@dataclass(frozen=True)
class RowDecision:
    """What a row's decisions come to, in the order of their lines."""

    id: str
    where: str  # the line of its last fix ("line 3"), else of its last decision
    answer: JsonValue = None  # its last fix's gold, written as the row writes its own; None: none
    dropped: bool = False
    kept: frozenset[str] = frozenset()  # the flag kinds it was kept with since its last fix


def fold(
    earlier: RowDecision | None,
    key: str,
    decision: str,
    answer: JsonValue,
    flags: tuple[str, ...],
    where: str,
) -> RowDecision:
    """The row's decisions with one more line applied (see the module's docstring)."""
    if decision == "fix":
        return RowDecision(key, where, answer)
    if earlier is None:
        earlier = RowDecision(key, where)
    if decision == "drop":
        return replace(
            earlier, dropped=True, where=where if earlier.answer is None else earlier.where
        )
    return replace(earlier, dropped=False, kept=earlier.kept | frozenset(flags))


def decisions_path(spec: Spec, data: Path) -> Path | None:
    if spec.decisions is None:
        return None
    path = Path(spec.decisions)
    return path if path.is_absolute() else data / path


def check(value: JsonValue) -> tuple[str, str, JsonValue, tuple[str, ...]]:
    """(id, decision, answer, flags) of one line; DataError saying what is wrong."""
    if not isinstance(value, dict):
        raise DataError(f"not a decision (a JSON object): {value!r}"[:200])
    key, decision = value.get("id"), value.get("decision")
    if not isinstance(key, str) or not key.strip():
        raise DataError(f"'id' must be a row's id (text), got {key!r}")
    if decision not in KINDS:
        raise DataError(f"{key}: 'decision' must be one of {', '.join(KINDS)}, got {decision!r}")
    answer = value.get("answer")
    if decision == "fix" and (
        isinstance(answer, bool) or not isinstance(answer, str | int) or answer == ""
    ):
        raise DataError(f"{key}: a fix needs 'answer', the new gold answer, got {answer!r}")
    flags = value.get("flags", [])
    if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
        raise DataError(f"{key}: 'flags' must be a list of flag kinds, got {flags!r}")
    return key, decision, answer, tuple(str(f) for f in flags)


def read_decisions(path: Path) -> tuple[dict[str, RowDecision], list[Problem]]:
    """What the file's decisions come to by row id (its lines in order: `fold`), and the
    problems of its bad lines; a missing file is one problem."""
    if not path.is_file():
        return {}, [Problem("", path, "no decisions file here (decisions = ...)")]
    found: dict[str, RowDecision] = {}
    problems: list[Problem] = []
    try:
        for line in json_lines(path):
            where = f"line {line.number}"
            if line.error is not None:
                problems.append(Problem("", path, f"{where}: {line.error}"))
                continue
            try:
                key, decision, answer, flags = check(line.value)
            except DataError as e:
                problems.append(Problem("", path, f"{where}: {e}"))
                continue
            found[key] = fold(found.get(key), key, decision, answer, flags, where)
    except DataError as e:  # the file cannot be opened
        return {}, [Problem("", path, str(e))]
    return found, problems


def fixed_answer(fields: Mapping[str, object], spec: Spec, decision: RowDecision) -> JsonValue:
    """The fix's answer, checked against the row's options (DataError when it names none)."""
    if not spec.multiple_choice or spec.answer is None:
        raise DataError("a fix changes a multiple-choice gold; this benchmark is open-ended")
    choices = gold.choices_of(fields, spec.options, spec.empty_options)
    given = {spec.answer: decision.answer}  # a path is found as a name first (paths.lookup)
    gold.gold_letter(given, choices, spec.answer, spec.index_base, spec.answer_format)
    return decision.answer


def kept(decided: Mapping[str, RowDecision]) -> dict[str, frozenset[str]]:
    """Row id -> the flag kinds people reviewed and kept it with (since its last fix)."""
    return {k: d.kept for k, d in decided.items() if d.kept and not d.dropped}


def answer_as_written(fields: Mapping[str, object], spec: Spec, letter: str) -> JsonValue:
    """The option `letter` names, written as this row writes its gold answer: a letter, an index
    (counted from `index_base`, a number or text as the row's is) or the option's text; a row
    whose answer is none of them (or that has none) gets the benchmark's `answer_format`, a
    letter under `auto`. DataError when the result would not read back as `letter`."""
    assert spec.answer is not None
    choices = gold.choices_of(fields, spec.options, spec.empty_options)
    letters = option_letters(len(choices.texts))
    if letter not in letters:
        raise DataError(f"{letter!r} is not an option here ({letters[0]}-{letters[-1]})")
    k = letters.index(letter)
    written = [""] * choices.written
    for position, text in zip(choices.positions, choices.texts, strict=True):
        written[position] = text
    current = paths.lookup(fields, spec.answer)
    reading = None
    if gold.has_gold(current) and not isinstance(current, dict | list | bool):
        reading = gold.reading_of(current, written, spec.index_base)
    form = reading or (spec.answer_format if spec.answer_format != "auto" else "letter")
    value: JsonValue = letter
    if form == "index":
        number = choices.positions[k] + spec.index_base
        value = number if isinstance(current, int) or not gold.has_gold(current) else str(number)
    elif form == "text":
        value = choices.texts[k]
    position = gold.answer_position(value, written, spec.index_base, spec.answer_format)
    if choices.positions.index(position) != k:
        raise DataError(f"{letter} cannot be written as this row's answers are ({form})")
    return value
