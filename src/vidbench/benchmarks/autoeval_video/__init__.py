"""AutoEval-Video (AutoEval-Video paper): open-ended video QA judged by an LLM following
per-instance rules. README.md holds the protocol facts the code cites."""

from vidbench.benchmark import Benchmark
from vidbench.benchmarks.autoeval_video.review import REVIEW
from vidbench.benchmarks.autoeval_video.task import TASKS, VARIANT_FAMILIES
from vidbench.cli_options import Commands
from vidbench.extras import lazy

BENCHMARK = Benchmark(
    name="autoeval-video",
    title="AutoEval-Video",
    tasks=TASKS,
    validate=lazy("vidbench.benchmarks.autoeval_video.validate", "validate"),
    variant_families=VARIANT_FAMILIES,
    sample_groups=("dimension", "category"),
    parts=(REVIEW, Commands(lazy("vidbench.benchmarks.autoeval_video.commands", "register"))),
)
