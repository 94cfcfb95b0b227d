"""benchmark.toml: the issue's example reads as written; every mistake stops at once with a
message naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from custom_support import ISSUE_TOML
from vidbench.benchmarks.custom.spec import Spec, read_spec
from vidbench.core.errors import ConfigError


def spec_of(folder: Path, text: str) -> Spec:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "benchmark.toml").write_text(text)
    return read_spec(folder)


def test_the_issue_example_reads_as_written(tmp_path: Path) -> None:
    spec = spec_of(tmp_path, ISSUE_TOML)
    assert spec.name == "my-bench" and spec.kind == "multiple-choice"
    [source] = spec.sources
    assert source.path == "questions.jsonl" and source.video == ("videos/{video_id}.mp4",)
    assert (spec.question, spec.options, spec.answer) == ("question", ("options",), "answer")
    assert spec.groups == ("domain",)
    assert spec.frame_spec.frames == 8 and spec.frame_spec.views == (0,)
    assert spec.parser == "extract" and spec.unparsed == "wrong"


def test_several_videos_per_row_and_rows_tables(tmp_path: Path) -> None:
    spec = spec_of(
        tmp_path,
        'name = "two-views"\nvideo = ["left/{id}.mp4", "right/{id}.mp4"]\nsampler = "interval"\n'
        'max_side = 0\n[[rows]]\npath = "a.json"\nset = {task = "A"}\n'
        '[[rows]]\npath = "b.csv"\nvideo = ["l/{id}.mp4", "r/{id}.mp4"]\n',
    )
    assert spec.views == 2 and spec.frame_spec.views == (0, 1)
    assert spec.frame_spec.sampler == "interval" and spec.frame_spec.max_side is None
    assert spec.sources[0].set == {"task": "A"} and spec.sources[0].video[0] == "left/{id}.mp4"
    assert spec.sources[1].video == ("l/{id}.mp4", "r/{id}.mp4")


BASE = 'name = "b"\nrows = "q.jsonl"\nvideo = "v/{id}.mp4"\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('rows = "q.jsonl"\nvideo = "v.mp4"\n', "key 'name' is missing"),
        (BASE + "frame = 8\n", "key 'frame': unknown key; did you mean 'frames'?"),
        (BASE + 'kind = "mcq"\n', "key 'kind': 'mcq' is not one of multiple-choice, open-ended"),
        (BASE + "frames = 0\n", "key 'frames': expected a whole number >= 1, got 0"),
        (BASE + 'sampler = "uniform"\n', "key 'sampler': 'uniform' is not one of"),
        (BASE + 'parser = "gpt"\n', "key 'parser': 'gpt' is not one of extract, letter"),
        (BASE + 'prompt = "{question"\n', "key 'prompt': not a template"),
        (BASE + 'groups = ["correct"]\n', "key 'groups': 'correct' is a field of vidbench's"),
        (BASE + "views = 2\n", "key 'views': 2, but `video` gives [1] template(s)"),
        (BASE + "max_side = 4\n", "max_side 4 is too small"),
        (BASE + 'option_format = "{foo} {text}"\n', "key 'option_format': {foo}: an option has"),
        (BASE + 'question = "a..b"\n', "key 'question': 'a..b' is not a field path"),
        (BASE + 'id = "{video"\n', "key 'id': not a template"),
        (BASE + 'window = "ts"\nstart = "s"\n', "key 'window': give `window`"),
        (BASE + 'empty_options = "skip"\n', "key 'empty_options': 'skip' is not one of"),
        (BASE + 'answers = { file = "a.txt" }\n', "key 'answers.file': 'a.txt': answers are"),
        (BASE + 'answers = { file = "a.json", kee = "x" }\n', "did you mean 'key'?"),
        ('name = "b"\nrows = "q.txt"\nvideo = "v.mp4"\n', "rows are read from .jsonl, .json"),
        ('name = "b"\nrows = "q.jsonl"\n', "give `video` (path templates) or `videos`"),
        (
            'name = "b"\nrows = "q.jsonl"\nvideo = "v.mp4"\nvideos = "clips"\n',
            "give `video` (path templates) or `videos`",
        ),
        (
            'name = "b"\nvideo = "v.mp4"\n[[rows]]\npath = "q.json"\nvidoe = "x"\n',
            "key 'rows[1].vidoe': unknown key; did you mean 'video'?",
        ),
        (
            BASE + 'kind = "open-ended"\n',
            "key 'answer': scoring 'exact' compares replies with `answer`",
        ),
        (
            BASE + 'kind = "open-ended"\nscoring = "judge"\n',
            "key 'rubric': judge scoring needs a `rubric` field, an `answer`, or both",
        ),
        (BASE + 'judge_prompt = "missing.txt"\n', "key 'judge_prompt': cannot read"),
        (
            'name = "b"\nvideo = "v.mp4"\n[[rows]]\npath = "a.json"\n'
            '[[rows]]\npath = "b.json"\nvideo = ["x.mp4", "y.mp4"]\n',
            "key 'video': the rows files give [1, 2] video templates",
        ),
        (BASE + "name = [\n", "not valid TOML"),
    ],
)
def test_a_bad_file_names_the_file_and_the_key(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        spec_of(tmp_path, text)
    message = str(caught.value)
    assert str(tmp_path / "benchmark.toml") in message
    assert expected in message


def test_no_benchmark_toml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="benchmark.toml: no such file"):
        read_spec(tmp_path)
