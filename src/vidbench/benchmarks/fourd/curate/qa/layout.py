"""The kept questions in the official 4d_qa.json layout, with the gold letter balanced.

Generators tend to put the answer first, and a per-question random shuffle still leaves the
letters uneven in a small set; a random-choice or position-biased model must not gain from
that. So within each subtask the kept questions (in id order) get their gold positions from a
seeded shuffle of A, B, C, D repeated: each letter is gold ceil or floor of n/4 times. The
distractors keep their order around it. The same seed and the same kept set give the same file.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from vidbench.benchmarks.fourd.curate.qa.candidates import LETTERS, SUBTASKS, Candidate


def gold_positions(n: int, seed: int, subtask: str) -> list[str]:
    """n gold letters, each letter used n//4 or n//4 + 1 times, in a seeded order."""
    letters = [LETTERS[i % 4] for i in range(n)]
    rng = random.Random(f"{seed}/{subtask}")
    extra = letters[n - n % 4 :]
    rng.shuffle(extra)  # which letters get the remainder is seeded too
    letters = letters[: n - n % 4] + extra
    rng.shuffle(letters)
    return letters


def placed(candidate: Candidate, gold: str) -> list[str]:
    """The option texts in A..D order with the gold answer at `gold`."""
    others = [t for k, t in candidate.options.items() if k != candidate.answer]
    texts = list(others)
    texts.insert(LETTERS.index(gold), candidate.options[candidate.answer])
    return texts


def qa_records(kept: Sequence[Candidate], seed: int) -> dict[str, dict[str, Any]]:
    """id -> the official record (Question, Options "(A) ...", Answer index 1..4, Category),
    subtasks in Table 1's order, ids sorted within each."""
    records: dict[str, dict[str, Any]] = {}
    for subtask in SUBTASKS:
        mine = sorted((c for c in kept if c.subtask == subtask), key=lambda c: c.id)
        for candidate, gold in zip(mine, gold_positions(len(mine), seed, subtask), strict=True):
            texts = placed(candidate, gold)
            records[candidate.id] = {
                "Question": candidate.question,
                "Options": [f"({letter}) {t}" for letter, t in zip(LETTERS, texts, strict=True)],
                "Answer index": LETTERS.index(gold) + 1,
                "Category": subtask,
            }
    return records


def letter_balance(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Gold letters per subtask and overall: {"Overall": {"A": 3, ...}, subtask: {...}}."""
    balance: dict[str, Counter[str]] = {"Overall": Counter()}
    for record in records.values():
        letter = LETTERS[record["Answer index"] - 1]
        balance.setdefault(record["Category"], Counter())[letter] += 1
        balance["Overall"][letter] += 1
    return {name: {x: counts[x] for x in LETTERS} for name, counts in balance.items()}


def queue_record(
    candidate: Candidate, record: dict[str, Any], provenance: dict[str, Any]
) -> dict[str, Any]:
    """One line of review_queue.jsonl, as `vidbench annotate import queue` reads it
    (annotate/items.check_candidate)."""
    return {"id": candidate.id, "uid": candidate.uid, **record, "provenance": provenance}
