"""vidbench: evaluate multimodal LLMs on video and 4D object understanding.

Every name a benchmark or a model backend in a package of its own uses, and what runs an
evaluation from Python, is exported here (docs/reference/api.md documents each):

    from vidbench import Benchmark, Task, TaskEntry, launch, RunRequest

Each name's module is imported when the name is first used, so `import vidbench` (and every
`vidbench.*` module, which imports this package first) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> the module that defines it (one place, so the API page and this package agree)
_EXPORTS = {
    # a benchmark's value and what registers beside it
    "Benchmark": "vidbench.benchmark",
    "BenchmarkPart": "vidbench.benchmark",
    "Validator": "vidbench.benchmark",
    "lazy": "vidbench.extras",
    "Commands": "vidbench.cli_options",
    "CommandGroups": "vidbench.cli_options",
    "CURATE_HELP": "vidbench.cli_options",
    "ReviewAdapter": "vidbench.annotate.adapters",
    "Importer": "vidbench.annotate.adapters",
    "Exporter": "vidbench.annotate.adapters",
    "Imported": "vidbench.annotate.items",
    "Exported": "vidbench.annotate.items",
    "add_item": "vidbench.annotate.items",
    "transaction": "vidbench.annotate.db",
    "FigureSpec": "vidbench.report.figures",
    # tasks: names, loading, prompts, scoring, tables
    "Task": "vidbench.tasks.base",
    "TaskEntry": "vidbench.tasks.registry",
    "TaskRequest": "vidbench.tasks.registry",
    "no_other_modifiers": "vidbench.tasks.registry",
    "Table": "vidbench.tasks.table",
    "ResultsTally": "vidbench.tasks.tally",
    "ColumnTally": "vidbench.tasks.tally",
    "Loaded": "vidbench.tasks.problems",
    "Problem": "vidbench.tasks.problems",
    "Sample": "vidbench.core.records",
    "MediaRef": "vidbench.core.records",
    "Message": "vidbench.core.messages",
    "TextPart": "vidbench.core.messages",
    "ImagePart": "vidbench.core.messages",
    "FrameSpec": "vidbench.media.spec",
    "Frame": "vidbench.media.frame",
    "GenerationConfig": "vidbench.core.requests",
    "extract_choice": "vidbench.scoring.choices",
    "ModelCall": "vidbench.scoring.model_call",
    "CallResult": "vidbench.scoring.model_call",
    "SampleScore": "vidbench.scoring.outcome",
    # model backends
    "Model": "vidbench.models.base",
    "Request": "vidbench.core.requests",
    "Response": "vidbench.core.requests",
    "ModelOptions": "vidbench.models.registry",
    "reject_extra": "vidbench.models.registry",
    "load_model": "vidbench.models.registry",
    # errors
    "ConfigError": "vidbench.core.errors",
    "DataError": "vidbench.core.errors",
    # running
    "get_task": "vidbench.registry",
    "launch": "vidbench.runner.launch",
    "RunRequest": "vidbench.runner.launch",
    "RunConfig": "vidbench.runner.run_config",
    "Run": "vidbench.runner.run",
    "ResultsDir": "vidbench.report.results_dir",
}

# modules exported whole: outcome.graded, outcome.unscored, ...
_MODULES = {"outcome": "vidbench.scoring.outcome"}

__all__ = ["__version__", *_EXPORTS, *_MODULES]


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        value = importlib.import_module(_MODULES[name])
    elif name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
    else:
        raise AttributeError(f"module 'vidbench' has no attribute {name!r}")
    globals()[name] = value  # once: later uses do not come back here
    return value


if TYPE_CHECKING:  # what a type checker and an editor see; at run time __getattr__ imports
    from vidbench.annotate.adapters import Exporter, Importer, ReviewAdapter
    from vidbench.annotate.db import transaction
    from vidbench.annotate.items import Exported, Imported, add_item
    from vidbench.benchmark import Benchmark, BenchmarkPart, Validator
    from vidbench.cli_options import CURATE_HELP, CommandGroups, Commands
    from vidbench.core.errors import ConfigError, DataError
    from vidbench.core.messages import ImagePart, Message, TextPart
    from vidbench.core.records import MediaRef, Sample
    from vidbench.core.requests import GenerationConfig, Request, Response
    from vidbench.extras import lazy
    from vidbench.media.frame import Frame
    from vidbench.media.spec import FrameSpec
    from vidbench.models.base import Model
    from vidbench.models.registry import ModelOptions, load_model, reject_extra
    from vidbench.registry import get_task
    from vidbench.report.figures import FigureSpec
    from vidbench.report.results_dir import ResultsDir
    from vidbench.runner.launch import RunRequest, launch
    from vidbench.runner.run import Run
    from vidbench.runner.run_config import RunConfig
    from vidbench.scoring import outcome
    from vidbench.scoring.choices import extract_choice
    from vidbench.scoring.model_call import CallResult, ModelCall
    from vidbench.scoring.outcome import SampleScore
    from vidbench.tasks.base import Task
    from vidbench.tasks.problems import Loaded, Problem
    from vidbench.tasks.registry import TaskEntry, TaskRequest, no_other_modifiers
    from vidbench.tasks.table import Table
    from vidbench.tasks.tally import ColumnTally, ResultsTally
