"""Is a question answerable from the model's input? Its evidence checked against what Blender
measured (render.json "visibility", written by the worker).

A part is visible in an input frame when Blender's rays see at least MIN_SEEN grid pixels of it
and at least MIN_SHARE of its silhouette (the pixels it would cover alone). A piece of evidence
is shown when its part is visible in some input frame of its window (of the first input view
only, for "as seen in the first video"); a question is kept when all its pieces are shown, and
dropped otherwise, with the first piece that is not as the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vidbench.benchmarks.fourd.synthetic.evidence import EPS, Evidence
from vidbench.benchmarks.fourd.synthetic.scene import Part, frame_times

MIN_SEEN = 3  # grid pixels
MIN_SHARE = 0.25  # of the part's silhouette


@dataclass(frozen=True)
class Verdict:
    """Whether a question is kept; why not; the smallest best share of a piece of evidence."""

    kept: bool
    reason: str = ""
    least_visible: float = 0.0


def share(seen: int, silhouette: int) -> float:
    """The visible part of a silhouette, 0 when the part is not visible by the rule above."""
    if seen < MIN_SEEN or silhouette <= 0 or seen < MIN_SHARE * silhouette:
        return 0.0
    return min(1.0, seen / silhouette)


def _index(parts: Sequence[Part], part: Part) -> int:
    return next(i for i, p in enumerate(parts) if p is part)  # identical parts are distinct


def best_share(evidence: Evidence, parts: Sequence[Part], visibility: dict, frames: int) -> float:
    """The best visible share of the evidence's part over the input frames of its window; -1 when
    no input frame falls in the window."""
    times = frame_times(frames)
    lo, hi = evidence.window
    slots = [k for k, f in enumerate(visibility["frames"]) if lo - EPS <= times[f] <= hi + EPS]
    if not slots:
        return -1.0
    views = visibility["counts"][:1] if evidence.first_view else visibility["counts"]
    i = _index(parts, evidence.part)
    return max(share(*per_frame[k][i]) for per_frame in views for k in slots)


def judge(
    evidence: Sequence[Evidence], parts: Sequence[Part], visibility: dict, frames: int
) -> Verdict:
    """Kept when every piece of evidence is shown in the input frames."""
    least = 1.0
    for piece in evidence:
        best = best_share(piece, parts, visibility, frames)
        where = " in the first input view" if piece.first_view else ""
        if best < 0:
            return Verdict(False, f"{piece.role}: no input frame at that moment")
        if best == 0.0:
            return Verdict(False, f"{piece.role} not visible{where}")
        least = min(least, best)
    return Verdict(True, least_visible=round(least, 3))
