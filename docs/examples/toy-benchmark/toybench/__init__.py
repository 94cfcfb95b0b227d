"""Toy: which shape is in the clip. A benchmark for vidbench in a package of its own.

vidbench finds it through one entry point (pyproject.toml: `vidbench.benchmarks`, `toy =
"toybench:BENCHMARK"`). Building the value imports nothing heavy: the validator and the commands
are named with `lazy`, imported only when used.
"""

from toybench.review import REVIEW
from toybench.task import SPEC, frame_modifier, make_task
from vidbench import Benchmark, Commands, TaskEntry, lazy

BENCHMARK = Benchmark(
    name="toy",  # vidbench validate toy DATA
    title="Toy",
    tasks={"toy-qa": TaskEntry(make_task, SPEC, frame_modifier, ("frames-N",))},
    validate=lazy("toybench.loader", "validate"),
    variant_families={"frames-N": "N >= 1 frames per view"},
    sample_groups=("shape",),  # the HTML report groups samples by this field
    parts=(REVIEW, Commands(lazy("toybench.commands", "register"))),
)
