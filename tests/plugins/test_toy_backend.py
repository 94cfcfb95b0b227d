"""A model backend from a package of its own (docs/examples/pick-backend, the model-backend page's),
installed by pip with its one registration (a `vidbench.models` entry point whose name is the
spec prefix): `--model pick:first` runs like a built-in backend. A plugin whose prefix is taken
is refused with both sources named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plugin_support import fake_plugin, refused, run_vidbench


def accuracy(out: Path) -> float:
    return float(json.loads((out / "results.json").read_text())["columns"]["Accuracy"])


@pytest.mark.slow
def test_the_backend_answers_by_its_prefix(
    pickmodel: Path, toybench: Path, toy_data: Path, tmp_path: Path
) -> None:
    data = ["--data", str(toy_data)]
    first = run_vidbench([pickmodel, toybench], "run", "toy-qa", *data, "--model", "pick:first",
                         "--out", str(tmp_path / "first"))  # fmt: skip
    assert first.returncode == 3, first.stderr  # the toy's broken row: incomplete
    last = run_vidbench([pickmodel, toybench], "run", "toy-qa", *data, "--model", "pick:last",
                        "--out", str(tmp_path / "last"))  # fmt: skip
    assert last.returncode == 3, last.stderr
    # gold A, B, C, A of options A-C: the first letter is right twice, the last once
    assert accuracy(tmp_path / "first") == pytest.approx(50.0)
    assert accuracy(tmp_path / "last") == pytest.approx(25.0)
    samples = [json.loads(line) for line in (tmp_path / "last" / "samples.jsonl").open()]
    assert {s["raw_output"] for s in samples if s["status"] == "ok"} == {"C"}
    run = json.loads((tmp_path / "last" / "run.json").read_text())
    assert run["model_identity"] == {"spec": "pick:last", "answer_format": "{letter}"}


@pytest.mark.slow
def test_its_options_and_arguments_are_checked(
    pickmodel: Path, toybench: Path, toy_data: Path, tmp_path: Path
) -> None:
    def run(model: str, *options: str) -> tuple[int, str]:
        done = run_vidbench([pickmodel, toybench], "run", "toy-qa", "--data", str(toy_data),
                            "--model", model, *options, "--out", str(tmp_path / model))  # fmt: skip
        return done.returncode, done.stderr

    worded = run("pick:first", "--model-opt", "answer_format=The answer is ({letter}).")
    assert worded[0] == 3 and accuracy(tmp_path / "pick:first") == pytest.approx(50.0)
    assert run("pick:middle")[1].count("expected pick:first or pick:last") == 1
    code, said = run("pick:last", "--model-opt", "temperature=0")
    assert code == 2 and "does not take --model-opt temperature" in said
    code, said = run("nosuch:x")
    assert code == 2 and "known prefixes:" in said and "pick" in said


@pytest.mark.slow
def test_a_backend_plugin_whose_prefix_is_taken_is_refused_naming_both(
    pickmodel: Path, toybench: Path, toy_data: Path, tmp_path: Path
) -> None:
    entry_points = "[vidbench.models]\nopenai = taken:build\npick = taken:build\n"
    site = fake_plugin(tmp_path, "taken", entry_points, {})
    listed = run_vidbench([pickmodel, site, toybench], "run", "toy-qa", "--data", str(toy_data),
                          "--model", "nosuch", "--out", str(tmp_path / "out"))  # fmt: skip
    assert refused(listed.stderr) == [
        "skipped model backend plugin openai (taken:build): the prefix 'openai' is the "
        "built-in backend vidbench.models.openai_backend.build_openai's",
        "skipped model backend plugin pick (taken:build): the prefix 'pick' is plugin pick "
        "(pickmodel:build)'s",
    ]
