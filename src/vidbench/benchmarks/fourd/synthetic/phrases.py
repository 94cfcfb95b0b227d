"""Wording shared by questions and captions: what a behaviour is called, and its look-alikes."""

from __future__ import annotations

from vidbench.benchmarks.fourd.synthetic.scene import COLOURS, Behaviour, Part, label

_MOVE_QA = {
    "left": "moves to the left",
    "right": "moves to the right",
    "up": "moves up",
    "down": "moves down",
    "towards": "moves towards the first video's camera",
    "away": "moves away from the first video's camera",
}
_OPPOSITE = {
    "left": "right",
    "right": "left",
    "up": "down",
    "down": "up",
    "towards": "away",
    "away": "towards",
}

# Caption wordings per behaviour (first entry = the one questions use). {c}: new colour.
_CAPTION_VERBS: dict[str, tuple[str, ...]] = {
    "move:left": ("moves to the left", "slides to the left", "shifts leftwards"),
    "move:right": ("moves to the right", "slides to the right", "shifts rightwards"),
    "move:up": ("moves up", "rises", "floats upwards"),
    "move:down": ("moves down", "sinks", "drops lower"),
    "move:towards": (
        "moves towards the front camera",
        "comes closer to the viewer",
        "moves forward",
    ),
    "move:away": ("moves away from the front camera", "recedes from the viewer", "moves backwards"),
    "orbit": (
        "circles around the centre",
        "travels once around the centre",
        "orbits the middle of the group",
    ),
    "jump": ("jumps up and down", "hops up and lands again", "bounces up once"),
    "grow": ("grows larger", "gets bigger", "expands"),
    "shrink": ("shrinks", "gets smaller", "contracts"),
    "recolour": ("turns {c}", "changes colour to {c}", "becomes {c}"),
    "appear": ("appears partway through", "pops into view", "shows up"),
    "disappear": ("disappears partway through", "vanishes", "disappears from view"),
    "still": ("stays still", "does not move", "remains in place"),
}
_SHORT = {
    "appear": "appears",
    "disappear": "disappears",
    "jump": "jumps",
    "orbit": "circles around the centre",
    "grow": "grows",
    "shrink": "shrinks",
}


def behaviour_key(b: Behaviour) -> str:
    """Key of a behaviour in the wording tables, e.g. "move:left" or "jump"."""
    return f"move:{b.direction}" if b.kind == "move" else b.kind


def verbs(b: Behaviour) -> tuple[str, ...]:
    """All wordings (third person, present tense) of a behaviour."""
    return tuple(v.format(c=b.new_colour) for v in _CAPTION_VERBS[behaviour_key(b)])


def action_phrase(b: Behaviour) -> str:
    """The canonical wording of a behaviour, as used in answer options."""
    if b.kind == "move" and b.direction is not None:
        return _MOVE_QA[b.direction]
    return verbs(b)[0]


def short_verb(b: Behaviour) -> str:
    """Short wording for events in temporal questions ("jumps", "turns blue", ...)."""
    if b.kind == "move" and b.direction is not None:
        return _MOVE_QA[b.direction]
    if b.kind == "recolour":
        return f"turns {b.new_colour}"
    return _SHORT.get(b.kind, action_phrase(b))


def event_phrase(part: Part) -> str:
    """A part's event, e.g. "the red sphere jumps"."""
    return f"{label(part)} {short_verb(part.behaviour)}"


def plural(shape: str) -> str:
    """Plural of a shape name."""
    return shape + "s"


def cap(text: str) -> str:
    """Capitalise the first letter only."""
    return text[:1].upper() + text[1:]


def _family(b: Behaviour) -> str:
    return {"grow": "size", "shrink": "size", "appear": "exist", "disappear": "exist"}.get(
        b.kind, b.kind
    )


def lookalikes(part: Part) -> list[tuple[Behaviour, float]]:
    """Behaviours the part does NOT do, unambiguously false, with a plausibility weight."""
    b = part.behaviour
    out: list[tuple[Behaviour, float]] = []
    for d in _MOVE_QA:
        if b.kind == "move" and d == b.direction:
            continue
        if b.kind == "jump" and d in ("up", "down"):
            continue  # a jump goes up and down: "moves up" would be arguable
        if b.kind == "orbit":
            continue  # an orbit moves left/right/towards/away on its way round
        weight = 4.0 if b.kind == "move" and d == _OPPOSITE.get(b.direction or "") else 1.0
        out.append((Behaviour("move", 0, direction=d), weight))
    for kind in ("orbit", "jump", "grow", "shrink", "appear", "disappear"):
        if kind == b.kind or (
            b.kind == "move" and b.direction in ("up", "down") and kind == "jump"
        ):
            continue
        same = _family(Behaviour(kind)) == _family(b)
        out.append((Behaviour(kind, 0), 3.0 if same else 1.0))
    spare = [c for c in COLOURS if c not in (part.colour, b.new_colour)]
    total = 3.0 if b.kind == "recolour" else 1.0
    out.extend((Behaviour("recolour", 0, new_colour=c), total / len(spare)) for c in spare)
    if b.kind not in ("still", "grow", "shrink", "recolour", "appear", "disappear"):
        out.append((Behaviour("still"), 1.0))
    return out
