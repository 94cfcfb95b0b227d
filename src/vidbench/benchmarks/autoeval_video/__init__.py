"""AutoEval-Video (AutoEval-Video paper): open-ended video QA judged by an LLM following
per-instance rules. README.md holds the protocol facts the code cites."""

from vidbench.benchmark import Benchmark, lazy_commands, lazy_validator
from vidbench.benchmarks.autoeval_video.review import REVIEW
from vidbench.benchmarks.autoeval_video.task import TASKS, VARIANT_FAMILIES

BENCHMARK = Benchmark(
    name="autoeval-video",
    title="AutoEval-Video",
    tasks=TASKS,
    validate=lazy_validator("vidbench.benchmarks.autoeval_video.validate"),
    variant_families=VARIANT_FAMILIES,
    review=REVIEW,
    commands=lazy_commands("vidbench.benchmarks.autoeval_video.commands"),
    sample_groups=("dimension", "category"),
)
