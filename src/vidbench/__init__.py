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
    # values a task or a backend keeps as JSON (Sample.metadata, Model.identity, Task.settings)
    "Json": "vidbench.core.files",
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


# What a type checker and an editor see; at run time __getattr__ imports. `NAME as NAME` marks
# each an explicit re-export: a plugin's `mypy --strict` (no implicit re-export) accepts
# `from vidbench import NAME` only so.
if TYPE_CHECKING:
    from vidbench.annotate.adapters import Exporter as Exporter
    from vidbench.annotate.adapters import Importer as Importer
    from vidbench.annotate.adapters import ReviewAdapter as ReviewAdapter
    from vidbench.annotate.db import transaction as transaction
    from vidbench.annotate.items import Exported as Exported
    from vidbench.annotate.items import Imported as Imported
    from vidbench.annotate.items import add_item as add_item
    from vidbench.benchmark import Benchmark as Benchmark
    from vidbench.benchmark import BenchmarkPart as BenchmarkPart
    from vidbench.benchmark import Validator as Validator
    from vidbench.cli_options import CURATE_HELP as CURATE_HELP
    from vidbench.cli_options import CommandGroups as CommandGroups
    from vidbench.cli_options import Commands as Commands
    from vidbench.core.errors import ConfigError as ConfigError
    from vidbench.core.errors import DataError as DataError
    from vidbench.core.files import Json as Json
    from vidbench.core.messages import ImagePart as ImagePart
    from vidbench.core.messages import Message as Message
    from vidbench.core.messages import TextPart as TextPart
    from vidbench.core.records import MediaRef as MediaRef
    from vidbench.core.records import Sample as Sample
    from vidbench.core.requests import GenerationConfig as GenerationConfig
    from vidbench.core.requests import Request as Request
    from vidbench.core.requests import Response as Response
    from vidbench.extras import lazy as lazy
    from vidbench.media.frame import Frame as Frame
    from vidbench.media.spec import FrameSpec as FrameSpec
    from vidbench.models.base import Model as Model
    from vidbench.models.registry import ModelOptions as ModelOptions
    from vidbench.models.registry import load_model as load_model
    from vidbench.models.registry import reject_extra as reject_extra
    from vidbench.registry import get_task as get_task
    from vidbench.report.figures import FigureSpec as FigureSpec
    from vidbench.report.results_dir import ResultsDir as ResultsDir
    from vidbench.runner.launch import RunRequest as RunRequest
    from vidbench.runner.launch import launch as launch
    from vidbench.runner.run import Run as Run
    from vidbench.runner.run_config import RunConfig as RunConfig
    from vidbench.scoring import outcome as outcome
    from vidbench.scoring.choices import extract_choice as extract_choice
    from vidbench.scoring.model_call import CallResult as CallResult
    from vidbench.scoring.model_call import ModelCall as ModelCall
    from vidbench.scoring.outcome import SampleScore as SampleScore
    from vidbench.tasks.base import Task as Task
    from vidbench.tasks.problems import Loaded as Loaded
    from vidbench.tasks.problems import Problem as Problem
    from vidbench.tasks.registry import TaskEntry as TaskEntry
    from vidbench.tasks.registry import TaskRequest as TaskRequest
    from vidbench.tasks.registry import no_other_modifiers as no_other_modifiers
    from vidbench.tasks.table import Table as Table
    from vidbench.tasks.tally import ColumnTally as ColumnTally
    from vidbench.tasks.tally import ResultsTally as ResultsTally
