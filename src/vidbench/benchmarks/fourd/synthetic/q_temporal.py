"""Temporal Relationship questions: the order of events that happen at well separated times."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from vidbench.benchmarks.fourd.synthetic.drafting import (
    FRONT_NOTE,
    Draft,
    NoQuestion,
    choose_template,
    pick,
)
from vidbench.benchmarks.fourd.synthetic.evidence import events
from vidbench.benchmarks.fourd.synthetic.phrases import event_phrase, lookalikes, short_verb
from vidbench.benchmarks.fourd.synthetic.q_action import behaviour_draft
from vidbench.benchmarks.fourd.synthetic.scene import Part, Scene, label


def _slot(p: Part) -> int:
    assert p.behaviour.slot is not None
    return p.behaviour.slot


def _fake_events(parts: list[Part], rng: np.random.Generator, k: int) -> list[str]:
    """Events that never happen: a real part doing something it does not do."""
    cands = [(p, b, w) for p in parts for b, w in lookalikes(p) if b.kind != "still"]
    chosen = pick(rng, cands, [w for _, _, w in cands], k=k)
    return [f"{label(p)} {short_verb(b)}" for p, b, _ in chosen]


def _note(q: str, texts: list[str]) -> str:
    return f"{q} {FRONT_NOTE}" if any(" moves " in f" {t} " for t in texts) else q


def temporal_question(scene: Scene, rng: np.random.Generator) -> Draft:
    """A question about which event comes before or after which."""
    parts = list(scene.parts)
    active = [p for p in parts if p.behaviour.kind != "still"]

    def extreme(first: bool) -> Draft:
        slots = sorted({_slot(e) for e in active})
        target = slots[0] if first else slots[-1]
        (gold,) = pick(rng, [e for e in active if _slot(e) == target])
        others = [e for e in active if _slot(e) != target]
        real = pick(rng, others, k=min(3, len(others)))
        wrong = [event_phrase(e) for e in real]
        wrong += _fake_events(parts, rng, 3 - len(wrong))
        q = "Which of these happens first?" if first else "Which of these happens last?"
        return Draft(
            _note(q, [event_phrase(gold), *wrong]),
            event_phrase(gold),
            tuple(wrong),
            evidence=events([gold, *real], "event"),
        )

    def relative(after: bool) -> Draft:
        pairs = [
            (a, b)
            for a in active
            for b in active
            if (_slot(b) > _slot(a) if after else _slot(b) < _slot(a))
        ]
        if not pairs:
            raise NoQuestion("no ordered pair")
        ((a, b),) = pick(rng, pairs)
        word = "after" if after else "before"
        q = f"What does {label(b)} do {word} {event_phrase(a)}?"
        draft = behaviour_draft(q, b, rng, allow_still=False)
        return replace(draft, evidence=events([a, b], "event"))

    def right_after() -> Draft:
        starts = [a for a in active if any(_slot(e) > _slot(a) for e in active)]
        if not starts:
            raise NoQuestion("nothing follows")
        (a,) = pick(rng, starts)
        nxt = min(_slot(e) for e in active if _slot(e) > _slot(a))
        (gold,) = pick(rng, [e for e in active if _slot(e) == nxt])
        before = [e for e in active if _slot(e) < _slot(a)]
        real = pick(rng, before, k=min(2, len(before)))
        wrong = [event_phrase(e) for e in real]
        wrong += _fake_events([p for p in parts if p is not a], rng, 3 - len(wrong))
        q = f"What happens next, right after {event_phrase(a)}?"
        return Draft(
            _note(q, [event_phrase(gold), *wrong]),
            event_phrase(gold),
            tuple(wrong),
            evidence=events([a, gold, *real], "event"),
        )

    def order() -> Draft:
        by_slot: dict[int, list[Part]] = {}
        for e in active:
            by_slot.setdefault(_slot(e), []).append(e)
        if len(by_slot) < 3:
            raise NoQuestion("fewer than three separate events")
        slots = sorted(int(s) for s in pick(rng, sorted(by_slot), k=3))
        chosen = [pick(rng, by_slot[s])[0] for s in slots]
        texts = [event_phrase(e) for e in chosen]
        perms = [p for p in itertools.permutations(range(3)) if p != (0, 1, 2)]
        wrong = [", then ".join(texts[i] for i in p) for p in pick(rng, perms, k=3)]
        gold = ", then ".join(texts)
        q = "In which order do these events happen?"
        return Draft(_note(q, texts), gold, tuple(wrong), evidence=events(chosen, "event"))

    templates: list[tuple[float, Callable[[], Draft]]] = [
        (1.5, lambda: extreme(True)),
        (1.0, lambda: extreme(False)),
        (1.5, lambda: relative(True)),
        (1.0, lambda: relative(False)),
        (1.5, right_after),
        (2.0, order),
    ]
    return choose_template(rng, templates)
