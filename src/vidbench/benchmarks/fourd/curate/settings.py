"""What `curate 4d render` renders with: every setting that changes the videos is recorded in
each object's render.json, and an object rendered with other settings is rendered again."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from vidbench.benchmarks.fourd.curate.cameras import FILL
from vidbench.benchmarks.fourd.curate.motion import MotionSettings
from vidbench.core.errors import ConfigError

ENGINES = ("cycles", "eevee")
DEVICES = ("cpu", "gpu")


@dataclass(frozen=True)
class RenderSettings:
    """Views, frames, image size and renderer of `curate 4d render` (defaults: the paper's
    24 views and up to 125 frames; Cycles on the CPU with few samples)."""

    views: int = 24
    size: int = 512
    max_frames: int = 125
    fps: int = 24
    seed: int = 0
    engine: str = "cycles"
    device: str = "cpu"
    samples: int = 16
    denoise: bool = False
    threads: int = 0  # render threads per object (0: Blender's choice)
    fill: float = FILL  # of the frame the object's bounding sphere spans (cameras.framed)
    motion: MotionSettings = field(default_factory=MotionSettings)

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ConfigError(f"render engine must be one of {', '.join(ENGINES)}: {self.engine!r}")
        if self.device not in DEVICES:
            raise ConfigError(f"render device must be one of {', '.join(DEVICES)}: {self.device!r}")
        for name in ("views", "size", "max_frames", "fps", "samples"):
            if getattr(self, name) < 1:
                raise ConfigError(f"render {name} must be 1 or more, got {getattr(self, name)}")
        if not 0 < self.fill <= 1:
            raise ConfigError(f"render fill must be in (0, 1], got {self.fill}")
        if self.max_frames < 2:
            raise ConfigError(
                "render max_frames must be 2 or more (motion is a change between frames)"
            )

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> RenderSettings:
        return cls(**{**data, "motion": MotionSettings(**data["motion"])})

    def identity(self) -> dict:
        """The settings that change the videos (not the thread count)."""
        data = self.to_json()
        data.pop("threads")
        return data
