"""Five differently worded, scene-true captions per object (stand-ins for human annotations)."""

from __future__ import annotations

from vidbench.benchmarks.fourd.synthetic.phrases import cap, verbs
from vidbench.benchmarks.fourd.synthetic.scene import Part, Scene

_NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _name(p: Part) -> str:
    return f"the {p.colour} {p.shape}"


def _listing(parts: list[Part]) -> str:
    """ "a red sphere, an orange cube and a blue cone"."""
    items = [f"{'an' if p.colour[0] in 'aeiou' else 'a'} {p.colour} {p.shape}" for p in parts]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _groups(scene: Scene) -> list[list[Part]]:
    """Active parts grouped by time slot, earliest first."""
    slots: dict[int, list[Part]] = {}
    for p in scene.parts:
        if p.behaviour.slot is not None:
            slots.setdefault(p.behaviour.slot, []).append(p)
    return [slots[s] for s in sorted(slots)]


def _group(parts: list[Part], variant: int) -> str:
    """What the parts of one slot do, e.g. "the red sphere jumps while the blue cube grows"."""
    clauses = [f"{_name(p)} {verbs(p.behaviour)[variant % 3]}" for p in parts]
    return " while ".join(clauses)


def _still(scene: Scene) -> list[Part]:
    return [p for p in scene.parts if p.behaviour.slot is None]


def _join_names(parts: list[Part]) -> str:
    names = [_name(p) for p in parts]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def captions(scene: Scene) -> list[str]:
    """Five captions describing the shapes, colours, motions and their order."""
    parts = list(scene.parts)
    groups = _groups(scene)
    still = _still(scene)
    count = _NUMBERS.get(len(parts), str(len(parts)))
    stays = "stay" if len(still) > 1 else "stays"

    # 1: enumerated sequence of sentences.
    steps = []
    for i, g in enumerate(groups):
        lead = "First, " if i == 0 else ("Finally, " if i == len(groups) - 1 else "Then ")
        steps.append(lead + _group(g, 0) + ".")
    c1 = f"A group of {count} simple shapes: {_listing(parts)}. " + " ".join(steps)
    if still:
        c1 += f" {cap(_join_names(still))} {stays} still the whole time."

    # 2: one sentence chained with "then".
    c2 = f"This 4D object is made of {_listing(parts)}. " + cap(
        ", then ".join(_group(g, 1) for g in groups)
    )
    c2 += (
        f", while {_join_names(still)} {'do' if len(still) > 1 else 'does'} not move."
        if still
        else "."
    )

    # 3: "before" / "after that" / "at the end".
    body = _group(groups[0], 2)
    for i, g in enumerate(groups[1:], start=1):
        body += ("; at the end, " if i == len(groups) - 1 else "; after that, ") + _group(g, 2)
    c3 = (
        f"{cap(count)} shapes sit together on a white background: {_listing(parts)}. "
        f"Over the course of the video, {body}."
    )

    # 4: earliest / in between / last.
    c4 = f"The scene shows {_listing(parts)}. The earliest change is that {_group(groups[0], 1)}"
    if len(groups) > 2:
        c4 += ". In between, " + " and then ".join(_group(g, 0) for g in groups[1:-1])
    c4 += f". The last change is that {_group(groups[-1], 0)}."
    if still:
        where = "they are" if len(still) > 1 else "it is"
        c4 += f" Meanwhile {_join_names(still)} {stays} where {where}."

    # 5: terse list in order.
    c5 = (
        f"{cap(_listing(parts))} against a white background. In order: "
        + "; ".join(_group(g, 2) for g in groups)
        + "."
    )
    return [c1, c2, c3, c4, c5]
