"""MMWorld (MMWorld paper): multi-discipline, multi-faceted video QA. README.md holds the
protocol facts the code cites."""

from vidbench.benchmark import Benchmark
from vidbench.benchmarks.mmworld.review import REVIEW
from vidbench.benchmarks.mmworld.variants import TASKS, VARIANT_FAMILIES
from vidbench.cli_options import Commands
from vidbench.extras import lazy

BENCHMARK = Benchmark(
    name="mmworld",
    title="MMWorld",
    tasks=TASKS,
    validate=lazy("vidbench.benchmarks.mmworld.validate", "validate"),
    variant_families=VARIANT_FAMILIES,
    sample_groups=("discipline",),
    parts=(REVIEW, Commands(lazy("vidbench.benchmarks.mmworld.curate.commands", "register"))),
)
