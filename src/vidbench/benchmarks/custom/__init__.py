"""Declared benchmarks: a folder with benchmark.toml and its rows is a benchmark
(docs/custom-benchmarks.md). `custom:DIR` names its task, `vidbench validate custom DIR` checks
it; each folder's `Benchmark` value is built from its file (declared.py). README.md holds the
facts the parsers and the examples cite."""

from vidbench.benchmark import Benchmark
from vidbench.benchmarks.custom.review import REVIEW
from vidbench.cli_options import Commands
from vidbench.export.source import FolderExport
from vidbench.extras import lazy

BENCHMARK = Benchmark(
    name="custom",
    title="Declared benchmark (benchmark.toml)",
    tasks={},  # each folder's task comes from its own file: custom:DIR
    validate=lazy("vidbench.benchmarks.custom.validate", "validate"),
    variant_families={
        "custom:DIR": "the benchmark declared in DIR/benchmark.toml; variants :frames-N, "
        ":linspace|interval|keyframes, :extract|letter|videomme|option-text "
        "(docs/custom-benchmarks.md)",
    },
    # a declared benchmark's samples are grouped by its first `groups` field (each score's first)
    declared=lazy("vidbench.benchmarks.custom.declared", "resolve_declared"),
    parts=(
        REVIEW,  # the decisions on an audit's flagged items, as its decisions file
        Commands(lazy("vidbench.benchmarks.custom.commands", "register")),  # predictions
        FolderExport(
            declares=lazy("vidbench.benchmarks.custom.export", "declares"),
            source=lazy("vidbench.benchmarks.custom.export", "export_source"),
        ),
    ),
)
