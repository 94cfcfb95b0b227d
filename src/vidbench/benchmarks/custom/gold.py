"""A multiple-choice row's options and gold letter, resolved the same way whatever the file type.

Options keep their positions: with one field per option (`a0..a4`), option k is the k-th field,
empty or not. Empty fields at the end are fewer options; an empty one before a non-empty one is a
problem, or, with `empty_options = "drop"`, dropped after the answer has been resolved against the
positions as written (so `answer = 3` is still the fourth field).

The answer is read from its text alone (a JSON number and a CSV cell of the same digits read
alike): as a letter ("B", "(b)"), an index (digits, counted from `index_base`) or the text of one
option ("train", "B. train"). `answer_format` says which; with `auto`, every reading that names an
option is taken, and a value that names two different options (the index 1 and the option "1")
is a problem that says so instead of a guess.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vidbench.benchmarks.custom import paths
from vidbench.core.errors import DataError
from vidbench.core.files import not_text
from vidbench.scoring.choices import option_letters

_PREFIX = re.compile(r"^\s*\(?([A-Za-z])\s*[\.\):]\s*")
_LABEL = re.compile(r"^\s*\(?([A-Za-z])\)?\s*[\.\):]?\s*$")
MOST_OPTIONS = 26  # labelled A to Z


@dataclass(frozen=True)
class Choices:
    """A row's options as the prompt shows them, and where each stood in the row."""

    texts: tuple[str, ...]
    positions: tuple[int, ...]  # the row's option k is texts[positions.index(k)]
    written: int  # options as written, trailing empty ones left out


def _text(value: Any, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise DataError(f"{what} must be text, got {value!r}")
    return str(value).strip()


def decoded(value: Any, what: str) -> Any:
    """A list or object written as JSON text (a CSV cell), decoded; anything else as it is."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            found = json.loads(value)
        except json.JSONDecodeError as e:
            raise DataError(f"{what}: JSON text that does not parse ({e.msg})") from None
        return utf8_only(found, what)
    return value


def utf8_only(value: Any, what: str) -> Any:
    """`value`, decoded from JSON text; DataError when it holds half a character (a "\\ud800"
    escape), as a rows file of JSON does (records.read_records): no Parquet export nor store
    could hold it."""
    bad = not_text(json.dumps(value, ensure_ascii=False))
    if bad is not None:
        raise DataError(f"{what}: not UTF-8 text in its JSON ({bad})")
    return value


def _keyed(options: Mapping[str, Any]) -> list[str]:
    """{"A": ..., "B": ...} / {"a": ...} / {"1": ...} / {"option_a": ...}, in label order."""
    slots: dict[int, Any] = {}
    for key, value in options.items():
        label = re.sub(r"^(option|choice)[_ ]?", "", str(key).strip(), flags=re.IGNORECASE)
        if label.isdigit():
            slots[int(label)] = value
        elif len(label) == 1 and label.isalpha():
            slots[ord(label.upper()) - ord("A")] = value
        else:
            raise DataError(f"option key {key!r} is not a letter or a number")
    return [_option(slots[k], f"option {k}") for k in sorted(slots)]


def _option(value: Any, what: str) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        raise DataError(
            f"{what} is a record ({', '.join(map(str, value))}), not text: name its text field "
            'with a path, e.g. options = "choices[].text"'
        )
    return _text(value, what)


def _written(row: Mapping[str, Any], names: Sequence[str]) -> list[str]:
    """The row's option texts as written, position by position ("" for an empty one)."""
    if len(names) > 1:
        return [_option(_value(row, name), f"option {name!r}") for name in names]
    [name] = names
    value = _value(row, name)
    if value in (None, ""):
        raise DataError(f"no options: {paths.missing_part(row, name)} is missing or empty")
    value = decoded(value, "options")
    if isinstance(value, dict):
        return _keyed(value)
    if isinstance(value, list):
        return [_option(v, f"option {n + 1} of {name!r}") for n, v in enumerate(value)]
    raise DataError(f"options {name!r} must be a list or an object, got {value!r}")


def _value(row: Mapping[str, Any], name: str) -> Any:
    value = paths.lookup(row, name)
    return None if value is paths.MISSING else value


def _without_prefixes(texts: list[str]) -> list[str]:
    """["A. red", "B. blue"] -> ["red", "blue"]: prefixes are dropped only when every option
    carries its own letter, in order (empty options aside)."""
    letters = option_letters(len(texts))
    matches = [_PREFIX.match(t) if t else None for t in texts]
    if any(
        t and (m is None or m.group(1).upper() != letters[n])
        for n, (t, m) in enumerate(zip(texts, matches, strict=True))
    ):
        return texts
    return [t[m.end() :].strip() if m else t for t, m in zip(texts, matches, strict=True)]


def _readings(value: Any, texts: Sequence[str], index_base: int) -> dict[str, int]:
    """Each reading of the answer that names an option: reading -> its position."""
    text = str(value).strip()
    letters = option_letters(len(texts))
    found: dict[str, int] = {}
    label = _LABEL.match(text)
    if label and label.group(1).upper() in letters:
        found["letter"] = letters.index(label.group(1).upper())
    if text.isdigit() and 0 <= int(text) - index_base < len(texts):
        found["index"] = int(text) - index_base
    if text:
        for same in (str.__eq__, lambda a, b: a.lower() == b.lower()):
            matches = [n for n, option in enumerate(texts) if option and same(option, text)]
            if len(matches) == 1:
                found["text"] = matches[0]
                break
        else:
            prefixed = _PREFIX.match(text)  # "B. its text"
            if prefixed and prefixed.group(1).upper() in letters:
                n = letters.index(prefixed.group(1).upper())
                if texts[n].lower() == text[prefixed.end() :].strip().lower():
                    found["text"] = n
    return found


def has_gold(value: Any) -> bool:
    return value is not None and value != "" and value != []


def answer_position(value: Any, texts: Sequence[str], index_base: int, form: str) -> int:
    """The position of the option the answer names (see the module's docstring)."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise DataError(f"the answer must be a letter, an index or an option's text, got {value!r}")
    found = _readings(value, texts, index_base)
    shown = repr(str(value).strip())  # read from its text: a JSON 1 and a CSV "1" alike
    if form != "auto":
        found = {form: found[form]} if form in found else {}
    if len(set(found.values())) == 1:
        return next(iter(found.values()))
    letters = option_letters(len(texts))
    if found:
        named = "; ".join(
            f"as {'an' if r == 'index' else 'a' if r == 'letter' else 'the'} {r} it is "
            f"{letters[n]} ({texts[n]!r})"
            for r, n in found.items()
        )
        raise DataError(
            f"ambiguous answer {shown}: {named}; say which with answer_format = "
            f"{' or '.join(repr(r) for r in found)}"
        )
    last = len(texts) - 1 + index_base
    wanted = {
        "auto": f"a letter {letters[0]}-{letters[-1]}, an index {index_base}-{last} "
        f"(index_base = {index_base}) or the text of one option",
        "letter": f"a letter {letters[0]}-{letters[-1]}",
        "index": f"an index {index_base}-{last} (index_base = {index_base})",
        "text": "the text of one option",
    }
    raise DataError(f"answer {shown} is not {wanted[form]} (answer_format = {form!r})")


def reading_of(value: Any, texts: Sequence[str], index_base: int) -> str | None:
    """How a resolved answer was written: letter, index or text (None: not one of them)."""
    found = _readings(value, texts, index_base)
    return next(iter(found)) if len(set(found.values())) == 1 else None


def choices_of(row: Mapping[str, Any], names: Sequence[str], empty: str) -> Choices:
    """The row's options: positional, trailing empty ones left out; an empty one before a
    non-empty one is a DataError, or (empty = "drop") left out of `texts`."""
    written = _written(row, names)
    while written and not written[-1]:
        written.pop()
    if len(written) > MOST_OPTIONS:
        raise DataError(f"{len(written)} options; at most {MOST_OPTIONS} are labelled (A to Z)")
    written = _without_prefixes(written) if written else written
    gaps = [n for n, text in enumerate(written) if not text]
    if gaps and empty != "drop":
        where = names[gaps[0]] if len(names) > 1 else f"option {gaps[0] + 1}"
        raise DataError(
            f"{where!r} is empty, before options that are not: the options after it would shift "
            '(say empty_options = "drop" when empty options are left out, the answer being '
            "read before they are)"
        )
    kept = tuple(n for n, text in enumerate(written) if text)
    if len(kept) < 2:
        raise DataError(f"{len(kept)} option(s); a multiple-choice question needs 2 or more")
    return Choices(tuple(written[n] for n in kept), kept, len(written))


def gold_letter(
    row: Mapping[str, Any], choices: Choices, answer: str, index_base: int, form: str
) -> str | None:
    """The gold letter among the kept options, None when the row has no answer."""
    value = _value(row, answer)
    if not has_gold(value):
        return None
    written = [""] * choices.written
    for position, text in zip(choices.positions, choices.texts, strict=True):
        written[position] = text
    position = answer_position(value, written, index_base, form)
    if position not in choices.positions:
        raise DataError(f"answer {str(value)!r} names option {position + 1}, which is empty")
    return option_letters(len(choices.texts))[choices.positions.index(position)]
