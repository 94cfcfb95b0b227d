"""4D-Bench (4D-Bench paper): multi-view videos of animated 3D objects; multiple-choice QA in
five subtasks and captioning. README.md holds the protocol facts the code cites."""

from vidbench.benchmark import Benchmark, lazy_commands, lazy_figure, lazy_validator
from vidbench.benchmarks.fourd.review import REVIEW
from vidbench.benchmarks.fourd.variants import TASKS, VARIANT_FAMILIES
from vidbench.report.figures import FigureSpec

BENCHMARK = Benchmark(
    name="4dbench",
    title="4D-Bench",
    tasks=TASKS,
    validate=lazy_validator("vidbench.benchmarks.fourd.validate"),
    variant_families=VARIANT_FAMILIES,
    review=REVIEW,
    commands=lazy_commands("vidbench.benchmarks.fourd.commands"),
    sample_groups=("subtask",),
    # the probe suite's accuracy against each knob a sweep varies (docs/probe-suite.md)
    figures=(
        FigureSpec(
            "probe knobs", lazy_figure("vidbench.benchmarks.fourd.probe.figures", "knob_figures")
        ),
    ),
)
