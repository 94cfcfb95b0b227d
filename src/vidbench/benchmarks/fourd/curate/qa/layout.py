"""The kept questions in the official 4d_qa.json layout, with the gold letter balanced.

Generators tend to put the answer first, and a per-question random shuffle still leaves the
letters uneven in a small set; a random-choice or position-biased model must not gain from
that. So the kept questions, in file order (Table 1's subtasks, ids sorted within each), take
their gold letters in turn from a seeded order of A, B, C, D repeated: every run of consecutive
questions, so each subtask and the whole set, has each letter gold n//4 or n//4 + 1 times. The
distractors keep their order around it. The same seed and the same kept set give the same file.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import TypedDict

from vidbench.benchmarks.fourd.curate.qa.candidates import (
    LETTERS,
    SUBTASKS,
    BlindAnswer,
    Candidate,
    Validation,
)
from vidbench.benchmarks.fourd.loader import QARecord


def gold_cycle(seed: int) -> list[str]:
    """The seeded order in which gold letters are handed out, one after another."""
    letters = list(LETTERS)
    random.Random(f"fourd-qa-gold/{seed}").shuffle(letters)
    return letters


def placed(candidate: Candidate, gold: str) -> list[str]:
    """The option texts in A..D order with the gold answer at `gold`."""
    others = [t for k, t in candidate.options.items() if k != candidate.answer]
    texts = list(others)
    texts.insert(LETTERS.index(gold), candidate.options[candidate.answer])
    return texts


def qa_records(kept: Sequence[Candidate], seed: int) -> dict[str, QARecord]:
    """id -> the official record (Question, Options "(A) ...", Answer index 1..4, Category),
    subtasks in Table 1's order, ids sorted within each."""
    records: dict[str, QARecord] = {}
    cycle = gold_cycle(seed)
    ordered = sorted(kept, key=lambda c: (list(SUBTASKS).index(c.subtask), c.id))
    for n, candidate in enumerate(ordered):
        gold = cycle[n % 4]
        texts = placed(candidate, gold)
        records[candidate.id] = {
            "Question": candidate.question,
            "Options": [f"({letter}) {t}" for letter, t in zip(LETTERS, texts, strict=True)],
            "Answer index": LETTERS.index(gold) + 1,
            "Category": candidate.subtask,
        }
    return records


def letter_balance(records: dict[str, QARecord]) -> dict[str, dict[str, int]]:
    """Gold letters per subtask and overall: {"Overall": {"A": 3, ...}, subtask: {...}}."""
    balance: dict[str, Counter[str]] = {"Overall": Counter()}
    for record in records.values():
        letter = LETTERS[record["Answer index"] - 1]
        balance.setdefault(record["Category"], Counter())[letter] += 1
        balance["Overall"][letter] += 1
    return {name: {x: counts[x] for x in LETTERS} for name, counts in balance.items()}


class Provenance(TypedDict):
    """Where a queued question came from: the models, the validator's verdict, the blind
    answers."""

    machine_generated: bool
    generator: str
    validator: str
    validation: Validation
    blind: dict[str, BlindAnswer]


# One line of review_queue.jsonl: the question's id and object, its record, its provenance.
QueueRecord = TypedDict(
    "QueueRecord",
    {
        "id": str, "uid": str, "Question": str, "Options": list[str], "Answer index": int,
        "Category": str, "provenance": Provenance,
    },
)  # fmt: skip


def queue_record(candidate: Candidate, record: QARecord, provenance: Provenance) -> QueueRecord:
    """One line of review_queue.jsonl, as `vidbench annotate import queue` reads it
    (benchmarks/fourd/review/items.check_candidate)."""
    return {
        "id": candidate.id,
        "uid": candidate.uid,
        "Question": record["Question"],
        "Options": record["Options"],
        "Answer index": record["Answer index"],
        "Category": record["Category"],
        "provenance": provenance,
    }
