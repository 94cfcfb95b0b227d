"""Table 2 of the 4D-Bench paper: its columns, their order, and how each is reported.

The first six are means over objects x 100; GPT-Appearance and GPT-Action are means of the 0..5
judge scores over the objects that got one, GPT-Eval the mean of those two numbers. Under the
coco protocol BLEU@4 and METEOR are corpus statistics instead of means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

COLUMNS = (
    "CIDEr", "BLEU@4", "METEOR", "ROUGE", "BERT", "SBERT",
    "GPT-Appearance", "GPT-Action", "GPT-Eval",
)  # fmt: skip
# Column -> the per-object field it averages.
FIELD = {
    "CIDEr": "cider",
    "BLEU@4": "bleu_4",
    "METEOR": "meteor",
    "ROUGE": "rouge_l",
    "BERT": "bert_f1",
    "SBERT": "sbert",
    "GPT-Appearance": "gpt_appearance",
    "GPT-Action": "gpt_action",
}
JUDGE_COLUMNS = ("GPT-Appearance", "GPT-Action", "GPT-Eval")
# What the mean of a column's per-object values is multiplied by for the table.
SCALE = {c: (1.0 if c in JUDGE_COLUMNS else 100.0) for c in COLUMNS}


def column_values(rows: Sequence[Mapping[str, float | None]]) -> dict[str, list[float]]:
    """Per-object values of each averaged column, from each object's metrics (objects without a
    value are left out)."""
    values: dict[str, list[float]] = {c: [] for c in COLUMNS}
    for row in rows:
        for column, name in FIELD.items():
            value = row.get(name)
            if value is not None:
                values[column].append(float(value))
    return values


def derived(reported: Mapping[str, float | None]) -> dict[str, float | None]:
    """GPT-Eval from the two reported judge columns (None unless both exist)."""
    a, b = reported.get("GPT-Appearance"), reported.get("GPT-Action")
    return {"GPT-Eval": None if a is None or b is None else (a + b) / 2}


def corpus_overrides(corpus: Mapping[str, float]) -> dict[str, float]:
    """Columns reported as corpus statistics (coco protocol), scaled."""
    names = {"BLEU@4": "bleu_4", "METEOR": "meteor"}
    return {c: corpus[n] * SCALE[c] for c, n in names.items() if n in corpus}


def columns(
    rows: Sequence[Mapping[str, float | None]], corpus: Mapping[str, float] | None = None
) -> dict[str, float | None]:
    """The table's numbers, in its order."""
    values = column_values(rows)
    reported: dict[str, float | None] = {
        c: float(np.mean(values[c])) * SCALE[c] if values[c] else None for c in FIELD
    }
    reported.update(corpus_overrides(corpus or {}))
    reported.update(derived(reported))
    return {c: reported[c] for c in COLUMNS}
