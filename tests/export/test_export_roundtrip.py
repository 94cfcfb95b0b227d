"""The round trip `vidbench export DIR --to hf OUT`, then `--data OUT`: the samples read back
are the samples of the source (ids, questions, options in their order, gold, references,
rules, fields, windows, videos), for declared benchmarks of every answer format and rows file
and for text that breaks naive code (combining marks, right-to-left, emoji, NUL, unpaired
surrogates, numbers as strings, very long text); and `run` on the export gives the samples and
scores of `run` on the source."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conftest import AUTOEVAL, AUTOEVAL_CLIPS
from custom_support import (
    make_bench,
    predictions,
    results,
    samples,
    vidbench,
    write_clip,
    write_rows,
)
from vidbench.core.records import Sample
from vidbench.registry import get_task
from vidbench.tasks.data import load_samples

pytest.importorskip("pyarrow")

# Text that breaks naive code: a combining mark, right-to-left marks and letters, an emoji, NUL;
# numbers as strings, very long text, and an unpaired surrogate (a JSON rows file may spell one;
# the loader refuses that row).
SPECIAL = ["\u0301", "\u202e", "\u05e9", "\u200f", "\U0001f600", "\x00", " "]
TEXT = st.one_of(
    st.text(st.one_of(st.characters(), st.sampled_from(SPECIAL)), max_size=8),
    st.sampled_from(["", "007", "1e3", "NaN", "-0", "true", "null", "a" * 20_000, "x\ud800"]),
)
# A field of the rows, of one type per benchmark (a Parquet column holds one type), or of any.
FIELDS = {
    "text": TEXT,
    "int": st.integers(-(2**63), 2**63 - 1),
    "float": st.floats(allow_nan=True, allow_infinity=False),
    "list": st.lists(TEXT, max_size=3),
    "any": st.one_of(TEXT, st.integers(), st.floats(), st.none(), st.lists(st.integers())),
}
LETTERS = "ABCDEFGH"


@st.composite
def mc_row(draw: st.DrawFn, form: str, field: str, lists: bool, window: bool) -> dict[str, Any]:
    """A multiple-choice row whose gold is mostly one of its options (options may repeat or be
    empty, and the gold may name none: such a row is refused on both sides alike)."""
    options = draw(st.lists(TEXT, min_size=2, max_size=5))
    gold = draw(st.sampled_from([*range(len(options))] * 3 + [len(options)]))  # or one past
    answer: Any = {
        "letter": LETTERS[gold],
        "index": gold,
        "text": options[gold] if gold < len(options) else draw(TEXT),
    }[form]
    return {
        "question": "Q" + draw(TEXT),
        "options": options,
        "answer": answer,
        "clip": draw(st.sampled_from(["clip0", "clip1"])),
        "g": draw(st.one_of(TEXT, st.lists(TEXT, min_size=1, max_size=2)) if lists else TEXT),
        "own": draw(FIELDS[field]),
        **({"s": draw(st.sampled_from([None, 0.0, 0.25])), "e": 0.5} if window else {}),
    }


@st.composite
def declared(draw: st.DrawFn) -> tuple[str, str, list[dict[str, Any]]]:
    """A benchmark.toml, its rows file's name and its rows: multiple choice with the gold as a
    letter, an index or the option's text; one or two videos per row; a window or none; a
    group that is a text or a list of texts; a field of its own."""
    suffix = draw(st.sampled_from([".jsonl", ".json", ".csv", ".parquet"]))
    form = draw(st.sampled_from(["letter", "index", "text"]))
    json_rows = suffix in (".jsonl", ".json")
    kinds = sorted(FIELDS) if json_rows else ["text", "int", "float"]
    field = draw(st.sampled_from(kinds))
    window = draw(st.booleans())
    row = mc_row(form, field, json_rows, window)
    rows = [{"id": f"q{n}", **r} for n, r in enumerate(draw(st.lists(row, min_size=1, max_size=4)))]
    videos = draw(
        st.sampled_from(['"videos/{clip}.mp4"', '["videos/{clip}.mp4", "videos/clip2.mp4"]'])
    )
    empty = draw(st.sampled_from(["problem", "drop"]))
    toml = (
        f'name = "trip"\nlicense = "mit"\nrows = "q{suffix}"\nid = "id"\nvideo = {videos}\n'
        f'groups = ["g"]\nanswer_format = "{form}"\nempty_options = "{empty}"\n'
        + ('start = "s"\nend = "e"\n' if window else "")
    )
    return toml, f"q{suffix}", rows


def same(sample: Sample) -> tuple[Any, ...]:
    """What a run reads of a sample, its videos by content (the paths differ)."""
    return (
        sample.id, sample.benchmark, sample.kind, sample.question, sample.options, sample.answer,
        sample.references, sample.rules, json.dumps(sample.metadata, sort_keys=True),
        sample.media.start_s, sample.media.end_s,
        {view: path.read_bytes() for view, path in sample.media.videos.items()},
    )  # fmt: skip


def parquet_holds(sample: Sample) -> bool:
    """Whether the sample's text is all UTF-8 (the export leaves out, naming it, a record holding
    half a character: the declared loader refuses them itself, so all should be)."""
    text = [sample.id, sample.question, sample.options, sample.answer, sample.references]
    try:
        json.dumps([*text, sample.rules, sample.metadata], ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return False
    return True


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("clips")
    for n in range(3):
        write_clip(folder / "videos" / f"clip{n}.mp4", 40 + 60 * n)
    return folder


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=declared())
def test_a_declared_benchmark_reads_back_as_its_source(
    case: tuple[str, str, list[dict[str, Any]]],
    clips: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    toml, rows_file, rows = case
    root = tmp_path_factory.mktemp("trip")
    bench = root / "bench"
    shutil.copytree(clips, bench)
    try:
        write_rows(bench / rows_file, rows)
    except (ValueError, TypeError, OverflowError, ArithmeticError):
        event("rows the file type cannot hold")
        return  # rows this file type cannot hold (a Parquet column of mixed values)
    except Exception as e:  # pyarrow's own errors, for the same reason
        if type(e).__module__.startswith("pyarrow"):
            return
        raise
    (bench / "benchmark.toml").write_text(toml, encoding="utf-8")
    task = get_task(f"custom:{bench}")
    source = load_samples(task, bench)
    out = root / "hf"
    code = vidbench("export", bench, "--to", "hf", out, "--skip-bad")
    event(f"{len(source.items)} of {len(rows)} rows load")
    exportable = [same(s) for s in source.items if parquet_holds(s)]
    if not exportable:
        assert code == 2 and not out.exists()  # nothing to export: nothing written
        return
    assert code == 0
    back = load_samples(get_task(f"custom:{out}"), out)
    assert back.problems == []
    assert [same(s) for s in back.items] == exportable
    # the original file on the exported rows reads the same
    assert [same(s) for s in load_samples(task, out).items] == exportable


# ------------------------------------------------------------- run on the source, run on OUT
MC = 'name = "{name}"\nlicense = "mit"\nrows = "q.{ext}"\nvideo = "videos/{{clip}}.mp4"\n'
OPEN = MC + 'kind = "open-ended"\nanswer = "answer"\n'
TWO_VIEWS = MC.replace('"videos/{{clip}}.mp4"', '["videos/{{clip}}.mp4", "videos/clip2.mp4"]')


def _rows(answers: list[Any], **fields: Any) -> list[dict[str, Any]]:
    options = ["007", "1e3", "NaN", "7", "\u05e9\u0301\U0001f600"]
    return [
        {"clip": f"clip{n % 2}", "question": f"Which? ({n})", "options": options,
         "answer": answer, **{k: v[n] for k, v in fields.items()}}
        for n, answer in enumerate(answers)
    ]  # fmt: skip


CASES = {
    "letter": (MC + 'groups = ["g"]\n', "jsonl", _rows(["A", "B", "E"], g=["x", ["x", "y"], "y"])),
    "option text": (MC + 'answer_format = "text"\n', "json", _rows(["007", "NaN", "1e3"])),
    "index from 1": (MC + 'answer_format = "index"\nindex_base = 1\n', "csv", _rows([1, 5, 3])),
    "no gold": (MC, "jsonl", _rows(["A", None, "C"])),
    "numbers, exact": (OPEN + 'scoring = "exact"\n', "csv", _rows(["007", "1e3", "NaN"])),
    "several answers, contains": (
        OPEN + 'scoring = "contains"\n',
        "jsonl",
        _rows([["007", "seven"], ["1e3"], [""]]),
    ),
    "two views, a window": (
        TWO_VIEWS + 'start = "s"\nend = "e"\nframes = 2\n',
        "jsonl",
        _rows(["A", "B", "C"], s=[0.0, None, 0.25], e=[0.5, None, 0.75]),
    ),
    "judge with rules": (
        OPEN + 'scoring = "judge"\nrubric = "rule"\n',
        "jsonl",
        _rows(["a cat", None, "7"], rule=["Any cat.", "[Answer to be judged]: 😀", None]),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_run_on_the_export_is_run_on_the_source(case: str, tmp_path: Path) -> None:
    toml, ext, rows = CASES[case]
    bench = make_bench(tmp_path / "bench", toml.format(name="b", ext=ext), rows, f"q.{ext}")
    out = tmp_path / "hf"
    assert vidbench("export", bench, "--to", "hf", out, "--skip-bad") == 0
    replies = {f"q-{n}": reply for n, reply in enumerate(["(A)", "007", "a cat"], 1)}
    args = ["--model", predictions(tmp_path / "replies.jsonl", replies)]
    args += ["--judge", "constant:1"] if "judge" in case else []
    first, second = tmp_path / "source", tmp_path / "export"
    codes = [
        vidbench("run", f"custom:{folder}", *args, "--out", results_dir)
        for folder, results_dir in ((bench, first), (out, second))
    ]
    assert codes[0] == codes[1] and codes[0] in (0, 3)
    assert samples(first) == samples(second) and len(samples(first)) == 3
    assert results(first)["columns"] == results(second)["columns"]
    assert results(first)["n"] == results(second)["n"]


def test_autoeval_video_reads_back_as_its_source(tmp_path: Path) -> None:
    """The AutoEval-Video fixture (8 of the release's 327 clips: --skip-bad leaves the others
    out): the 8 samples a run on the release scores are those of a run on the export."""
    out = tmp_path / "hf"
    assert (
        vidbench("export", AUTOEVAL, "--to", "hf", out, "--license", "cc-by-4.0", "--skip-bad") == 0
    )
    args = ["--model", "constant:a cat", "--judge", "constant:1"]
    assert (
        vidbench("run", "autoeval-video", "--data", AUTOEVAL, *args, "--out", tmp_path / "a") == 3
    )
    assert vidbench("run", "autoeval-video", "--data", out, *args, "--out", tmp_path / "b") == 0
    source, export = samples(tmp_path / "a"), samples(tmp_path / "b")
    answered = {k: row for k, row in source.items() if row["error"] is None}
    assert len(answered) == AUTOEVAL_CLIPS and export == answered
    assert results(tmp_path / "a")["columns"] == results(tmp_path / "b")["columns"]
