"""What a declared benchmark's row holds, read field by field: its options, its answer, its
videos, its window, its group values. Each reader raises DataError saying what is wrong with the
row; the loader turns that into a Problem naming the row and its file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vidbench.benchmarks.custom.spec import RowSource
from vidbench.core.errors import DataError
from vidbench.scoring.choices import option_letters

_PREFIX = re.compile(r"^\s*\(?([A-Za-z])\s*[\.\):]\s*")
_LABEL = re.compile(r"^\s*\(?([A-Za-z])\)?\s*[\.\):]?\s*$")


def render(template: str, row: Mapping[str, Any], what: str) -> str:
    """`template` with the row's `{field}`s filled in."""
    try:
        return template.format_map(row)
    except KeyError as e:
        raise DataError(f"{what} needs the field {e.args[0]!r}, which this row lacks") from None
    except (IndexError, AttributeError, ValueError, TypeError) as e:
        raise DataError(f"{what} cannot be filled from this row ({e})") from None


def _text(value: Any, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise DataError(f"{what} must be text, got {value!r}")
    return str(value).strip()


def _decoded(value: Any) -> Any:
    """A list or object written as JSON text (a CSV cell), decoded; anything else as it is."""
    if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError as e:
            raise DataError(f"options look like JSON but are not ({e.msg})") from None
    return value


def _keyed(options: Mapping[str, Any]) -> list[str]:
    """{"A": ..., "B": ...} / {"a": ...} / {"1": ...} / {"option_a": ...}, in label order."""
    slots = {}
    for key, value in options.items():
        label = re.sub(r"^(option|choice)[_ ]?", "", str(key).strip(), flags=re.IGNORECASE)
        if label.isdigit():
            slots[int(label)] = value
        elif len(label) == 1 and label.isalpha():
            slots[ord(label.upper()) - ord("A")] = value
        else:
            raise DataError(f"option key {key!r} is not a letter or a number")
    return [_text(slots[k], f"option {k}") for k in sorted(slots)]


def _without_prefixes(texts: list[str]) -> list[str]:
    """["A. red", "B. blue"] -> ["red", "blue"]: prefixes are dropped only when every option
    carries its own letter, in order."""
    matches = [_PREFIX.match(t) for t in texts]
    letters = "".join(m.group(1).upper() if m else "?" for m in matches)
    if letters != option_letters(len(texts)):
        return texts
    return [t[m.end() :].strip() for t, m in zip(texts, matches, strict=True) if m]


def options_of(row: Mapping[str, Any], fields: Sequence[str]) -> tuple[str, ...]:
    """The row's option texts in label order: one field holding a list, an object keyed by
    label or "A. ..." strings (or any of them as JSON text), or one field per option (empty
    ones skipped)."""
    if len(fields) > 1:
        texts = [_text(row[f], f"option {f!r}") for f in fields if row.get(f) not in (None, "")]
    else:
        [name] = fields
        if name not in row or row[name] in (None, ""):
            raise DataError(f"no options: the field {name!r} is missing or empty")
        value = _decoded(row[name])
        if isinstance(value, dict):
            texts = _keyed(value)
        elif isinstance(value, list):
            texts = [_text(v, f"an option of {name!r}") for v in value]
        else:
            raise DataError(f"options {name!r} must be a list or an object, got {value!r}")
    texts = _without_prefixes(texts)
    if len(texts) < 2:
        raise DataError(f"{len(texts)} option(s); a multiple-choice question needs 2 or more")
    if any(not t for t in texts):
        raise DataError("an option is empty")
    option_letters(len(texts))  # at most 26
    return tuple(texts)


def _as_index(value: Any, count: int, index_base: int) -> int | None:
    text = str(value).strip()
    if isinstance(value, bool) or not (isinstance(value, int) or text.isdigit()):
        return None
    index = int(text) - index_base
    return index if 0 <= index < count else None


def _as_text(text: str, options: Sequence[str], letters: str) -> int | None:
    for same in (str.__eq__, lambda a, b: a.lower() == b.lower()):
        found = [i for i, option in enumerate(options) if same(option, text)]
        if len(found) == 1:
            return found[0]
    prefixed = _PREFIX.match(text)  # "B. its text"
    if prefixed and prefixed.group(1).upper() in letters:
        index = letters.index(prefixed.group(1).upper())
        if options[index].lower() == text[prefixed.end() :].strip().lower():
            return index
    return None


def answer_letter(value: Any, options: Sequence[str], index_base: int, form: str = "auto") -> str:
    """The gold letter of an answer given as a letter ("B", "(b)"), an index (counted from
    `index_base`), the option's text, or "B. its text". `form` says which (`auto`: a letter
    first, then a JSON number as an index, then an option's text, then digits as an index, so
    that the answer "4" among the options "3", "4", "5" is the option "4")."""
    letters = option_letters(len(options))
    if value is None or value == "" or isinstance(value, bool):
        raise DataError(f"no answer (got {value!r})")
    text = str(value).strip()
    label = _LABEL.match(text)
    if form in ("auto", "letter") and label and label.group(1).upper() in letters:
        return label.group(1).upper()
    readings = {
        "index": lambda: _as_index(value, len(options), index_base),
        "text": lambda: _as_text(text, options, letters),
    }
    order = {"auto": ("text", "index"), "index": ("index",), "text": ("text",), "letter": ()}
    if form == "auto" and isinstance(value, int):
        order["auto"] = ("index", "text")
    for reading in order[form]:
        index = readings[reading]()
        if index is not None:
            return letters[index]
    last = len(options) - 1 + index_base
    wanted = {
        "auto": f"a letter {letters[0]}-{letters[-1]}, an index {index_base}-{last} "
        f"(index_base = {index_base}) or the text of one option",
        "letter": f"a letter {letters[0]}-{letters[-1]}",
        "index": f"an index {index_base}-{last} (index_base = {index_base})",
        "text": "the text of one option",
    }
    raise DataError(f"answer {value!r} is not {wanted[form]} (answer_format = {form!r})")


def references_of(value: Any) -> tuple[str, ...]:
    """An open-ended row's accepted answers: one text or a list of them."""
    values = _decoded(value) if isinstance(value, str) and value.startswith("[") else value
    if value is None or value == "":
        return ()
    items = values if isinstance(values, list) else [values]
    return tuple(_text(v, "an answer") for v in items)


def videos_of(row: Mapping[str, Any], source: RowSource, data: Path, views: int) -> dict[int, Path]:
    """The row's videos by view (0, 1, ...), from the path templates or the videos field,
    relative to the data folder; DataError when one is missing."""
    if source.video:
        paths = [render(t, row, f"the video template {t!r}") for t in source.video]
    else:
        assert source.videos is not None  # spec.py gives each rows file `video` or `videos`
        value = _decoded(row.get(source.videos))
        if value in (None, "", []):
            raise DataError(f"no video: the field {source.videos!r} is missing or empty")
        paths = [
            _text(v, f"a path in {source.videos!r}")
            for v in (value if isinstance(value, list) else [value])
        ]
    if len(paths) != views:
        raise DataError(f"{len(paths)} video(s), the benchmark declares views = {views}")
    found = {}
    for view, text in enumerate(paths):
        path = Path(text) if Path(text).is_absolute() else data / text
        if not path.is_file():
            raise DataError(f"missing video {path}")
        found[view] = path
    return found


def seconds(row: Mapping[str, Any], name: str | None) -> float | None:
    if name is None or row.get(name) in (None, ""):
        return None
    try:
        value = float(row[name])
    except (TypeError, ValueError):
        raise DataError(f"{name} must be a number of seconds, got {row[name]!r}") from None
    if value < 0:
        raise DataError(f"{name} must not be negative, got {value}")
    return value


def group_values(row: Mapping[str, Any], groups: Sequence[str]) -> dict[str, str]:
    """The row's value of each group field (its table columns)."""
    values = {}
    for name in groups:
        value = row.get(name)
        if value in (None, "") or isinstance(value, dict | list):
            raise DataError(f"no value for the group field {name!r} (got {value!r})")
        values[name] = str(value)
    return values
