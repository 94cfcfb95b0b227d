"""MMWorld (MMWorld paper): multi-discipline, multi-faceted video QA. README.md holds the
protocol facts the code cites."""

from vidbench.benchmark import Benchmark, lazy_commands, lazy_validator
from vidbench.benchmarks.mmworld.review import REVIEW
from vidbench.benchmarks.mmworld.variants import TASKS, VARIANT_FAMILIES

BENCHMARK = Benchmark(
    name="mmworld",
    title="MMWorld",
    tasks=TASKS,
    validate=lazy_validator("vidbench.benchmarks.mmworld.validate"),
    variant_families=VARIANT_FAMILIES,
    review=REVIEW,
    commands=lazy_commands("vidbench.benchmarks.mmworld.curate.commands"),
    sample_groups=("discipline",),
)
