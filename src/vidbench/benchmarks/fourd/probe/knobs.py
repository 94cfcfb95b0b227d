"""The probe's difficulty knobs: what `synth 4d --renderer blender` varies, and what each
question records so accuracy can be grouped by it.

Every knob but ``input_views`` takes one value or a list; with a list, object i takes the
list's value i mod its length, so one dataset can hold a whole sweep of a knob (the objects of
each value are spread evenly). ``input_views`` decides which videos the model is shown (views-K),
so it is one value per dataset: a sweep over it is several datasets, each run with
`4dbench-qa:views-K`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from vidbench.benchmarks.fourd.synthetic.scene import COLOURS, MAX_AMPLITUDE, SHAPES
from vidbench.core.errors import ConfigError

MAX_PARTS = len(COLOURS)  # every part but the counted ones has a colour/shape of its own
MAX_COUNTED = 4
MAX_JITTER = 2.0  # beyond that, neighbouring cameras of the ring could swap places
MAX_SPEED = 4.0  # a 48-frame event then lasts about one frame
SAME_COLOUR_LOOKALIKES = len(SHAPES) - 1


@dataclass(frozen=True)
class ObjectKnobs:
    """The knob values of one object (and of each of its questions)."""

    parts: int = 6  # parts of the object, occluders and look-alikes included
    occluders: int = 0  # parts placed between a counted part and an input camera
    lookalikes: int = 0  # same shape other colour, then same colour other shape, in turn
    motion_size: float = 1.0  # x the default distance, jump height and change of size
    motion_speed: float = 1.0  # x the default speed: events last 1 / speed as long
    camera_jitter: float = 1.0  # x the paper's random offsets of the camera ring
    input_views: int = 3  # views the model is shown: 3 is the official 1, 8, 16

    def check(self) -> None:
        """ConfigError naming the knob whose value cannot be built."""
        if not 2 <= self.parts <= MAX_PARTS:
            raise ConfigError(f"--parts must be 2..{MAX_PARTS}, got {self.parts}")
        for name in ("occluders", "lookalikes"):
            if getattr(self, name) < 0:
                raise ConfigError(f"--{name} must be 0 or more, got {getattr(self, name)}")
        if self.occluders + self.lookalikes + 1 > self.parts:
            raise ConfigError(
                f"--parts {self.parts} leaves no room for a counted part beside "
                f"{self.occluders} occluders and {self.lookalikes} look-alikes"
            )
        if self.lookalikes > 2 * SAME_COLOUR_LOOKALIKES:
            raise ConfigError(
                f"--lookalikes must be at most {2 * SAME_COLOUR_LOOKALIKES} (there are "
                f"{len(SHAPES)} shapes), got {self.lookalikes}"
            )
        size, speed, jitter = self.motion_size, self.motion_speed, self.camera_jitter
        if not 0.0 < size <= MAX_AMPLITUDE:
            raise ConfigError(f"--motion-size must be in (0, {MAX_AMPLITUDE}], got {size}")
        if not 1.0 <= speed <= MAX_SPEED:
            raise ConfigError(f"--motion-speed must be in 1..{MAX_SPEED}, got {speed}")
        if not 0.0 <= jitter <= MAX_JITTER:
            raise ConfigError(f"--camera-jitter must be in 0..{MAX_JITTER}, got {jitter}")
        if not 1 <= self.input_views <= 24:
            raise ConfigError(f"--input-views must be 1..24, got {self.input_views}")

    def to_json(self) -> dict[str, float | int]:
        return asdict(self)


KNOB_NAMES: tuple[str, ...] = tuple(f.name for f in fields(ObjectKnobs))


@dataclass(frozen=True)
class Knobs:
    """The knobs of a dataset: a tuple of values per knob (one value: every object has it)."""

    parts: tuple[int, ...] = (ObjectKnobs.parts,)
    occluders: tuple[int, ...] = (ObjectKnobs.occluders,)
    lookalikes: tuple[int, ...] = (ObjectKnobs.lookalikes,)
    motion_size: tuple[float, ...] = (ObjectKnobs.motion_size,)
    motion_speed: tuple[float, ...] = (ObjectKnobs.motion_speed,)
    camera_jitter: tuple[float, ...] = (ObjectKnobs.camera_jitter,)
    input_views: int = ObjectKnobs.input_views

    def __post_init__(self) -> None:
        for name in KNOB_NAMES:
            if name != "input_views" and not getattr(self, name):
                raise ConfigError(f"--{name.replace('_', '-')} needs at least one value")
        for index in range(self.period()):
            self.of(index).check()

    def period(self) -> int:
        """Objects after which the combination of values repeats."""
        from math import lcm

        return lcm(*(len(getattr(self, n)) for n in KNOB_NAMES if n != "input_views"))

    def of(self, index: int) -> ObjectKnobs:
        """The values of object ``index``."""
        values = {
            n: getattr(self, n)[index % len(getattr(self, n))]
            for n in KNOB_NAMES
            if n != "input_views"
        }
        return ObjectKnobs(**values, input_views=self.input_views)

    def to_json(self) -> dict[str, object]:
        return {n: list(v) if isinstance(v := getattr(self, n), tuple) else v for n in KNOB_NAMES}
