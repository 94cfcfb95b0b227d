"""MMWorld's vocabulary: disciplines, question types, annotation flags, subsets, and the parsing
of one question's fields (options, gold label, flags). Pure functions; no file access.

Names follow the paper's tables: the data's discipline "Sports & Arts" is Table 3's
"Art & Sports" column. Every parser raises DataError with what is wrong; the loader adds the
file and the record.
"""

from __future__ import annotations

import json
import re

from pydantic import JsonValue

from vidbench.core.errors import DataError

# Table 3 (and Table 5) columns in the paper's order; "Average" is the micro average over all
# questions (it matches Table 6's per-seed numbers, not the mean of the seven columns).
DISCIPLINES = (
    "Art & Sports",
    "Business",
    "Science",
    "Health & Medicine",
    "Embodied Tasks",
    "Tech & Engineering",
    "Game",
)
AVERAGE = "Average"

# Table 4's facets in its order, then the seventh question type of the data.
FACETS = (
    "Explanation",
    "Counterfactual Thinking",
    "Future Prediction",
    "Domain Expertise",
    "Attribution Understanding",
    "Temporal Understanding",
    "Procedure Understanding",
)

# Annotation flag field -> column name. The official script reports `requires_visual` under the
# name `requires_video`; the column keeps the data's meaning.
FLAGS = {
    "requires_audio": "Requires Audio",
    "requires_domain_knowledge": "Requires Domain Knowledge",
    "requires_visual": "Requires Visual",
    "question_only": "Question Only",
}

# Human-annotated main set, Synthetic Subset I (audio-only QA), Synthetic Subset II (visual-only).
SUBSETS = ("main", "audio", "visual")


def _key(text: str) -> str:
    """Lowercase, '&' as 'and', single spaces: the form names are compared in."""
    return " ".join(text.lower().replace("&", " and ").replace("_", " ").split())


_DISCIPLINE_ALIASES = {_key(d): d for d in DISCIPLINES} | {
    _key("Sports & Arts"): "Art & Sports",
    _key("Arts & Sports"): "Art & Sports",
    _key("Sports & Art"): "Art & Sports",
    _key("Tech & Eng"): "Tech & Engineering",
    _key("Technology & Engineering"): "Tech & Engineering",
    _key("Games"): "Game",
    _key("Embodied Task"): "Embodied Tasks",
    _key("Health and Medicine"): "Health & Medicine",
}
_FACET_ALIASES = {_key(f): f for f in FACETS} | {
    _key("Counterfactual"): "Counterfactual Thinking",
    _key("Future"): "Future Prediction",
    _key("Domain Knowledge"): "Domain Expertise",
    _key("Attribution"): "Attribution Understanding",
    _key("Temporal"): "Temporal Understanding",
    _key("Procedure"): "Procedure Understanding",
    _key("Procedural Understanding"): "Procedure Understanding",
}
_SUBSET_ALIASES = {
    "main": "main",
    "human": "main",
    "human annotated": "main",
    "audio": "audio",
    "audio only": "audio",
    "synthetic i": "audio",
    "synthetic 1": "audio",
    "synthetic audio": "audio",
    "visual": "visual",
    "visual only": "visual",
    "synthetic ii": "visual",
    "synthetic 2": "visual",
    "synthetic visual": "visual",
}


def discipline(value: object) -> str:
    name = _DISCIPLINE_ALIASES.get(_key(value)) if isinstance(value, str) else None
    if name is None:
        raise DataError(f"unknown discipline {value!r} (expected one of {', '.join(DISCIPLINES)})")
    return name


def facet(value: object) -> str:
    name = _FACET_ALIASES.get(_key(value)) if isinstance(value, str) else None
    if name is None:
        raise DataError(f"unknown question type {value!r} (expected one of {', '.join(FACETS)})")
    return name


def subset(value: object) -> str:
    """`subset` field -> main | audio | visual (an absent field is the main set)."""
    if value is None or value == "":
        return "main"
    name = _SUBSET_ALIASES.get(_key(value).replace("-", " ")) if isinstance(value, str) else None
    if name is None:
        raise DataError(f"unknown subset {value!r} (expected main, audio or visual)")
    return name


_TRUE = {"true", "yes", "1", "y", "t"}
_FALSE = {"false", "no", "0", "n", "f", ""}


def flag(name: str, value: object) -> bool | None:
    """A boolean annotation; CSV text and 0/1 are accepted, None means not annotated."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise DataError(f"{name} must be true or false, got {value!r}")


_LABEL = re.compile(r"^[a-z]$")


def label(value: object) -> str:
    """'a', 'A', '(a)', 'a.' -> 'a'."""
    text = value.strip().strip("().: ").lower() if isinstance(value, str) else ""
    if not _LABEL.match(text):
        raise DataError(f"bad option label {value!r} (expected a letter such as a, b, c, d)")
    return text


def options(record: dict[str, JsonValue]) -> dict[str, str]:
    """The options as {label: text} in file order, from `options` (an object, or that object as
    a JSON string, as CSV exports hold it) or from `option_a`.. / `a`.. fields of a row export."""
    raw = record.get("options")
    if isinstance(raw, str) and raw.strip().startswith("{"):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as e:
            raise DataError(f"options is not a JSON object ({e.msg})") from e
    if raw is None:
        raw = {  # empty cells of a CSV export are options the question does not have
            k.removeprefix("option_"): v
            for k, v in record.items()
            if _is_option_field(k) and v not in (None, "")
        }
    if not isinstance(raw, dict) or not raw:
        raise DataError("the question has no options")
    found: dict[str, str] = {}
    for key, text in raw.items():
        name = label(key)
        if name in found:
            raise DataError(f"option {name!r} is given twice")
        if not isinstance(text, str) or not text.strip():
            raise DataError(f"option {name!r} has no text")
        found[name] = text
    return found


def _is_option_field(key: str) -> bool:
    return bool(re.fullmatch(r"option_[a-zA-Z]", key))


def transcript(value: object) -> str | None:
    """A transcript as text: a string, a list of strings, or segments {start, end, text}
    (rendered one per line as "[12.0s-15.5s] text")."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, list):
        lines = []
        for segment in value:
            if isinstance(segment, str):
                lines.append(segment.strip())
            elif isinstance(segment, dict) and isinstance(segment.get("text"), str):
                start, end = segment.get("start"), segment.get("end")
                stamp = f"[{start:.1f}s-{end:.1f}s] " if _numbers(start, end) else ""
                lines.append(stamp + segment["text"].strip())
            else:
                raise DataError("transcript segments must be strings or {start, end, text}")
        return "\n".join(line for line in lines if line) or None
    raise DataError(f"transcript must be text or a list of segments, got {type(value).__name__}")


def _numbers(*values: object) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
