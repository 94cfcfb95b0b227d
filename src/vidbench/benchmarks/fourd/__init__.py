"""4D-Bench (4D-Bench paper): multi-view videos of animated 3D objects; multiple-choice QA in
five subtasks and captioning. README.md holds the protocol facts the code cites."""

from vidbench.benchmark import Benchmark, lazy
from vidbench.benchmarks.fourd.review import REVIEW
from vidbench.benchmarks.fourd.variants import TASKS, VARIANT_FAMILIES

BENCHMARK = Benchmark(
    name="4dbench",
    title="4D-Bench",
    tasks=TASKS,
    validate=lazy("vidbench.benchmarks.fourd.validate", "validate"),
    variant_families=VARIANT_FAMILIES,
    review=REVIEW,
    commands=lazy("vidbench.benchmarks.fourd.commands", "register"),
    sample_groups=("subtask",),
)
