"""4D-Bench (4D-Bench paper): multi-view videos of animated 3D objects; multiple-choice QA in
five subtasks and captioning. README.md holds the protocol facts the code cites."""

from vidbench.benchmark import Benchmark
from vidbench.benchmarks.fourd.review import REVIEW
from vidbench.benchmarks.fourd.variants import TASKS, VARIANT_FAMILIES
from vidbench.cli_options import Commands
from vidbench.extras import lazy
from vidbench.report.figures import FigureSpec

BENCHMARK = Benchmark(
    name="4dbench",
    title="4D-Bench",
    tasks=TASKS,
    validate=lazy("vidbench.benchmarks.fourd.validate", "validate"),
    variant_families=VARIANT_FAMILIES,
    sample_groups=("subtask",),
    parts=(
        REVIEW,
        Commands(lazy("vidbench.benchmarks.fourd.commands", "register")),
        # the probe suite's accuracy against each knob a sweep varies (docs/probe-suite.md)
        FigureSpec("probe knobs", lazy("vidbench.benchmarks.fourd.probe.figures", "knob_figures")),
    ),
)
