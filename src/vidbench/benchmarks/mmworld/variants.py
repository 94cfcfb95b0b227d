"""MMWorld task names and modifiers: `mmworld[:MOD+MOD...]` (also mmworld-synth-audio/-visual).

Frame modifiers (FrameSpec): `keyframes` (the paper's keyframe input for API models),
`frames-N`, `shuffled` / `shuffled-SEED` (appendix B.5: the sampled frames in a seeded random
order, seed 0 by default). `reduced` (appendix B.5: 1/5 of the frames, rounded, at least one,
over the same span) is applied to the final FrameSpec, after `--frames`.
Task modifiers: scoring `rule` | `judge-all` (default) | `judge-fallback`; `official` (the
script's parser and verdict rule); `api-prompt` (the script's GPT-4o prompt); `subtitles` (the
transcript as subtitles); `judge-processed` (the judge sees the official post-processed answer, as
the script did for open models, instead of the raw reply).

Official frames: uniform sampling for open models (8 frames, np.linspace), keyframes for API
models (8 in the script for GPT-4V/4o, 10 in the paper for GPT-4V and Gemini): e.g.
`mmworld:keyframes+frames-10+api-prompt`.
"""

from __future__ import annotations

from vidbench.core.errors import ConfigError
from vidbench.core.requests import GenerationConfig
from vidbench.media.spec import CLIP_MAX_SIDE, FrameSpec
from vidbench.tasks.base import Task
from vidbench.tasks.registry import TaskEntry, TaskRequest

DEFAULT_SPEC = FrameSpec(views=(0,), frames=8, sampler="linspace", max_side=CLIP_MAX_SIDE)
SUBSET_OF_TASK = {
    "mmworld": "main",
    "mmworld-synth-audio": "audio",
    "mmworld-synth-visual": "visual",
}
VARIANTS = (
    "keyframes",
    "frames-N",
    "shuffled",
    "shuffled-SEED",
    "reduced",
    "rule",
    "judge-all",
    "judge-fallback",
    "official",
    "api-prompt",
    "subtitles",
    "judge-processed",
)


def reduced_frames(n: int) -> int:
    """Appendix B.5's "1/5 of the frames": n / 5 rounded half up, at least 1 (8 -> 2, 10 -> 2,
    32 -> 6)."""
    return max(1, (2 * n + 5) // 10)


def frame_modifier(spec: FrameSpec, modifier: str) -> FrameSpec | None:
    if modifier == "keyframes":
        return spec.with_(sampler="keyframes")
    if modifier == "shuffled":
        return spec.with_(shuffle_seed=0)
    kind, _, number = modifier.partition("-")
    if kind == "frames" and number.isdigit():
        return spec.with_(frames=int(number))
    if kind == "shuffled" and number.isdigit():
        return spec.with_(shuffle_seed=int(number))
    return None


def make(request: TaskRequest) -> Task:
    from vidbench.benchmarks.mmworld.task import SCORING_MODES, MMWorld, MMWorldOptions

    name, spec = request.name, request.spec
    settings: dict[str, object] = {"subset": SUBSET_OF_TASK[request.base]}
    flags = {
        "official": ("protocol", "official"),
        "api-prompt": ("prompt", "api"),
        "subtitles": ("subtitles", True),
        "judge-processed": ("judge_input", "processed"),
    }
    for modifier in request.modifiers:
        if modifier in SCORING_MODES:
            if "scoring" in settings:
                raise ConfigError(f"{name}: give one scoring mode ({', '.join(SCORING_MODES)})")
            settings["scoring"] = modifier
        elif modifier in flags:
            key, value = flags[modifier]
            settings[key] = value
        elif modifier == "reduced":
            spec = spec.with_(frames=reduced_frames(spec.frames))
        else:
            raise ConfigError(
                f"{name}: unknown task variant {modifier!r}; known: {', '.join(VARIANTS)}"
            )
    options = MMWorldOptions(**settings)  # type: ignore[arg-type]
    generation = GenerationConfig(temperature=0.0, max_tokens=256)
    return MMWorld(name, spec, generation, options, request.base)


# keyframes, frames-N, shuffled, reduced; scoring rule | judge-all | judge-fallback, official,
# api-prompt, subtitles, judge-processed; e.g. mmworld:keyframes+frames-10+api-prompt,
# mmworld-synth-audio:subtitles+rule.
TASKS: dict[str, TaskEntry] = {
    name: TaskEntry(make, DEFAULT_SPEC, frame_modifier, VARIANTS) for name in SUBSET_OF_TASK
}
VARIANT_FAMILIES = {"shuffled-SEED": "the sampled frames in a seeded random order"}
