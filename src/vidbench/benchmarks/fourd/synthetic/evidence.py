"""What a question's answer rests on: which parts must be seen, at which moments, from which
view. The question generators attach it to their drafts; the Blender probe (fourd/probe) keeps a
question only when Blender shows every piece of it in the model's input frames.

A piece of evidence is one part and a window of scene time: the part must be visible in at least
one input frame whose time lies in the window (and, for "as seen in the first video", in the
first input view). A question's pieces must all be seen.
"""

from __future__ import annotations

from dataclasses import dataclass

from vidbench.benchmarks.fourd.synthetic.scene import SLOTS, Part

EPS = 1e-6
WHOLE = (0.0, 1.0)
START = (0.0, SLOTS[0][0])  # before the first event: the state at the start of the video
END = (SLOTS[-1][1], 1.0)  # after the last event: the state at the end of the video


@dataclass(frozen=True)
class Evidence:
    """``part`` seen at some time in ``window`` (inclusive); ``role`` names what the question
    needs it for (in drop reasons); ``first_view``: only the first input view counts."""

    part: Part
    window: tuple[float, float]
    role: str
    first_view: bool = False


def presence(part: Part) -> tuple[float, float]:
    """When the part exists: appearing parts from their instant, disappearing ones until it."""
    kind, instant = part.behaviour.kind, part.behaviour.instant
    if kind == "appear":
        return (instant, 1.0)
    if kind == "disappear":
        return (0.0, instant - EPS)
    return WHOLE


def seen(
    part: Part, role: str, window: tuple[float, float] = WHOLE, first_view: bool = False
) -> Evidence:
    """The part seen at some time in ``window`` while it exists."""
    lo, hi = presence(part)
    return Evidence(part, (max(lo, window[0]), min(hi, window[1])), role, first_view)


def event(part: Part, role: str) -> tuple[Evidence, ...]:
    """What shows a part's behaviour: before and after a move or a change of size or colour,
    before and in the middle of a jump or an orbit (after one it is back where it was), after an
    appearance, before a disappearance; anywhere for a still part."""
    b = part.behaviour
    t0, t1 = b.window
    quarter = (t1 - t0) / 4
    before = (0.0, t0)
    if b.kind == "still":
        return (seen(part, role),)
    if b.kind in ("move", "grow", "shrink"):
        return (seen(part, role, before), seen(part, role, (t0 + quarter, 1.0)))
    if b.kind in ("jump", "orbit"):
        return (seen(part, role, before), seen(part, role, (t0 + quarter, t1 - quarter)))
    if b.kind == "recolour":
        return (seen(part, role, (0.0, b.instant - EPS)), seen(part, role, (b.instant, 1.0)))
    return (seen(part, role),)  # appear, disappear: while it exists


def events(parts: list[Part], role: str) -> tuple[Evidence, ...]:
    return tuple(e for p in parts for e in event(p, role))
