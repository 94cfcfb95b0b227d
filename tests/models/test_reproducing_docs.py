"""The commands of docs/reproducing-papers.md are commands vidbench takes: each `vidbench run`
line parses with the CLI's parser, its task and variants build with its frame and generation
options, and the settings it gives a local or OpenAI backend are settings that backend knows.
(They need GPUs, keys and the releases to run; this checks everything short of that.)"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from vidbench.cli import build_parser
from vidbench.models import hf_backend, openai_backend, vllm_backend
from vidbench.runner.commands import _run_request
from vidbench.runner.run_config import RunConfig

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reproducing-papers.md"
BLOCK = re.compile(r"```bash\n(.*?)```", re.S)
KNOWN_OPTIONS = {
    "hf": hf_backend.OPTIONS,
    "vllm": vllm_backend.OPTIONS,
    "openai": openai_backend.OPENAI_OPTIONS,
}


def commands() -> list[str]:
    found = []
    for block in BLOCK.findall(PAGE.read_text(encoding="utf-8")):
        variables = dict(re.findall(r'^(\w+)="([^"]*)"', block, re.M))
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("#", 1)[0] if line.lstrip().startswith("#") else line
            if "vidbench run" not in line:
                continue
            command = line[line.index("vidbench run") :]
            for name, value in variables.items():
                command = command.replace(f"${name}", value)
            found.append(re.sub(r"\$\w+", "/data/x", command))
    return found


def test_the_page_has_the_rows() -> None:
    assert len(commands()) >= 25


@pytest.mark.parametrize("command", commands())
def test_a_documented_command_is_one_vidbench_takes(command: str) -> None:
    args = build_parser().parse_args(shlex.split(command)[1:])
    request = _run_request(args)  # what `vidbench run` makes of its options
    config = RunConfig(
        task=args.task,
        data=args.data,
        model=args.model,
        out=args.out,
        frames=request.frames,
        generation=request.generation,
        model_options=request.model_options,
    )
    task = config.open_task()  # unknown tasks, variants or frame settings raise here
    assert task.name.startswith(args.task.split(":")[0])
    prefix = args.model.partition(":")[0]
    if prefix in KNOWN_OPTIONS:
        assert set(config.model_options) <= set(KNOWN_OPTIONS[prefix]), command
    if args.task.startswith(("mmworld", "autoeval-video")) and "random-choice" not in command:
        assert args.judge, f"a judged task without its judge: {command}"
