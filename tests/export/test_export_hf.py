"""`vidbench export DIR --to hf OUT` for the three kinds of data vidbench builds or reads: a
4D-Bench style release, MMWorld synthetic subsets, a declared benchmark. The folder loads with
the Hugging Face `datasets` library offline (rows, videos, splits), its card carries the license,
the construction settings, the funnel and the splits, and `vidbench run ... --data OUT` asks the
model exactly what a run on the original data asks (the same store keys: nothing is asked
again)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from export_support import fourd_release, mmworld_subsets, vidbench

from custom_support import ISSUE_TOML, ROWS, make_bench
from vidbench.export.card import code_span
from vidbench.registry import get_task
from vidbench.tasks.data import load_samples

datasets = pytest.importorskip("datasets")


def load_config(out: Path, config: str, cache: Path) -> Any:
    return datasets.load_dataset(str(out), config, split="test", cache_dir=str(cache))


def card(out: Path) -> tuple[dict[str, Any], str]:
    _, front, body = (out / "README.md").read_text().split("---\n", 2)
    return yaml.safe_load(front), body


def check_rows_and_videos(out: Path, config: str, n: int, cache: Path) -> list[dict]:
    assert datasets.get_dataset_split_names(str(out), config) == ["test"]
    rows = list(load_config(out, config, cache))
    assert len(rows) == n
    for row in rows:
        assert row["video"] == row["videos"][0]
        assert all((out / path).is_file() for path in row["videos"])
    return rows


def reused(capsys: pytest.CaptureFixture) -> str:
    return next(line for line in capsys.readouterr().err.splitlines() if line.startswith("infer:"))


@pytest.fixture(scope="module")
def fourd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fourd_release(tmp_path_factory.mktemp("fourd") / "release")


@pytest.mark.slow
def test_a_4d_bench_release(fourd: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "hf"
    assert vidbench("export", fourd, "--to", "hf", out, "--license", "cc-by-4.0") == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "README.md", "construction", "data", "vidbench.json", "videos"
    ]  # fmt: skip
    qa = check_rows_and_videos(out, "4dbench-qa", 10, tmp_path / "cache")
    captions = check_rows_and_videos(out, "4dbench-caption", 2, tmp_path / "cache")
    assert len(qa[0]["videos"]) == 24 and qa[0]["views"] == list(range(24))
    assert qa[0]["subtask"] in qa[0]["metadata"] and len(captions[0]["references"]) == 5
    assert len(list((out / "videos").rglob("*.mp4"))) == 48  # 2 objects x 24 views, once each

    front, body = card(out)
    assert front["license"] == "cc-by-4.0" and front["pretty_name"] == "4D-Bench"
    assert [c["config_name"] for c in front["configs"]] == ["4dbench-qa", "4dbench-caption"]
    assert "| 4dbench-qa | test | 10 | 48 | `4dbench-qa` |" in body
    assert "| 4dbench-caption | test | 2 | 48 | `4dbench-caption` |" in body
    assert '"spec": "anthropic:claude-sonnet-4-5"' in body  # settings.json of curate 4d qa
    assert '"rendered": 2' in body and '"max_frames": 125' in body  # the render records
    # funnel.json
    assert "| render | objects | 3 | 2 | 1 | no animation 1 |" in body
    qa_data = "4D_Object_Question_Answering/data"
    assert (out / "construction" / qa_data / "settings.json").is_file()
    assert (out / "construction" / qa_data / "funnel.json").is_file()

    # the same questions, read back from the export: every answer comes from the store
    results = tmp_path / "run"
    assert (
        vidbench("run", "4dbench-qa", "--data", fourd, "--model", "random", "--out", results) == 0
    )
    native = json.loads((results / "results.json").read_text())["columns"]
    native_samples = (results / "samples.jsonl").read_text()
    capsys.readouterr()
    assert vidbench("run", "4dbench-qa", "--data", out, "--model", "random", "--out", results) == 0
    assert reused(capsys) == "infer: 0 answered, 10 reused from the store, 0 failed"
    assert json.loads((results / "results.json").read_text())["columns"] == native
    assert (results / "samples.jsonl").read_text() == native_samples  # ids, golds, replies

    task = get_task("4dbench-caption")
    a, b = (sorted(load_samples(task, d).items, key=lambda s: s.id) for d in (fourd, out))
    assert [(s.id, s.references, s.metadata) for s in a] == [
        (s.id, s.references, s.metadata) for s in b
    ]
    assert [s.media.videos[3].read_bytes() for s in a] == [
        s.media.videos[3].read_bytes() for s in b
    ]


@pytest.mark.slow
def test_mmworld_synthetic_subsets(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    curated = mmworld_subsets(tmp_path / "mmworld")
    out = tmp_path / "hf"
    assert vidbench("export", curated, "--to", "hf", out, "--license", "cc-by-sa-4.0") == 0
    rows = check_rows_and_videos(out, "mmworld-synth-visual", 2, tmp_path / "cache")
    assert {r["discipline"] for r in rows} == {"Science"}
    assert {r["question"] for r in rows} == {"What colour is the disc?"}

    front, body = card(out)
    assert front["license"] == "cc-by-sa-4.0"
    assert [c["config_name"] for c in front["configs"]] == ["mmworld-synth-visual"]
    assert "| mmworld-synth-visual | test | 2 | 2 | `mmworld-synth-visual` |" in body
    assert '"subsets": [\n  "visual"\n ]' in body  # the curation's settings.json
    assert "| filter · visual | questions | 2 | 2 | 0 | - |" in body  # its funnel.json

    results = tmp_path / "run"
    args = ["--model", "random", "--out", results]
    assert vidbench("run", "mmworld-synth-visual:rule", "--data", curated, *args) == 0
    native_samples = (results / "samples.jsonl").read_text()
    native = json.loads((results / "results.json").read_text())["columns"]
    capsys.readouterr()
    assert vidbench("run", "mmworld-synth-visual:rule", "--data", out, *args) == 0
    assert reused(capsys) == "infer: 0 answered, 2 reused from the store, 0 failed"
    assert (results / "samples.jsonl").read_text() == native_samples
    assert json.loads((results / "results.json").read_text())["columns"] == native


def test_a_declared_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bench = make_bench(tmp_path / "bench", ISSUE_TOML + 'license = "mit"\ntitle = "My clips"\n')
    out = tmp_path / "hf"
    assert vidbench("export", bench, "--to", "hf", out) == 0  # the license of benchmark.toml
    rows = check_rows_and_videos(out, "my-bench", 6, tmp_path / "cache")
    assert [r["answer"] for r in rows] == list("ABCDAB")
    assert rows[0]["domain"] == "kitchen" and rows[0]["video_id"] == "clip0"  # its own fields
    front, body = card(out)
    assert front["license"] == "mit" and front["pretty_name"] == "My clips"
    assert "vidbench run custom:path/to/this/folder --model MODEL --out results" in body
    assert (out / "benchmark.toml").read_text() == (bench / "benchmark.toml").read_text()

    results = tmp_path / "run"
    assert vidbench("run", f"custom:{bench}", "--model", "random", "--out", results) == 0
    capsys.readouterr()
    args = ["--model", "random", "--out", results]
    assert vidbench("run", f"custom:{bench}", "--data", out, *args) == 0
    assert reused(capsys) == "infer: 0 answered, 6 reused from the store, 0 failed"
    assert vidbench("run", f"custom:{out}", *args) == 0  # the export is a benchmark itself
    assert reused(capsys) == "infer: 0 answered, 6 reused from the store, 0 failed"
    assert vidbench("validate", "custom", out) == 0


def test_bad_records_stop_the_export_unless_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    bench = make_bench(tmp_path / "bench", rows=[*ROWS, {**ROWS[0], "video_id": "gone"}])
    out = tmp_path / "hf"
    assert vidbench("export", bench, "--to", "hf", out, "--license", "mit") == 2
    said = capsys.readouterr().err.replace("\n", "")
    assert "1 record(s) cannot be exported" in said and "questions-7: line 7: missing video" in said
    assert not out.exists() and list(tmp_path.glob(".hf.partial-*")) == []

    assert vidbench("export", bench, "--to", "hf", out, "--license", "mit", "--skip-bad") == 0
    check_rows_and_videos(out, "my-bench", 6, tmp_path / "cache")
    _, body = card(out)
    assert "## Records left out\n\n- `questions-7: line 7: missing video" in body

    assert vidbench("export", bench, "--to", "hf", out, "--license", "mit") == 2  # not empty
    assert "exists and is not an empty folder" in capsys.readouterr().err.replace("\n", "")
    for link in (tmp_path / "dangling", tmp_path / "to-empty"):  # renamed onto: a link cannot be
        (tmp_path / "empty").mkdir(exist_ok=True)
        link.symlink_to(tmp_path / ("empty" if link.name == "to-empty" else "nowhere"))
        assert vidbench("export", bench, "--to", "hf", link, "--license", "mit") == 2
        assert "is a symbolic link" in capsys.readouterr().err.replace("\n", "")
    assert list(tmp_path.glob(".*.partial-*")) == [] and list((tmp_path / "empty").iterdir()) == []


def test_a_missing_view_is_named(tmp_path: Path, qa_release: Path) -> None:
    release = shutil.copytree(qa_release, tmp_path / "release")
    data = release / "4D_Object_Question_Answering" / "data"
    gone = data / "4d_object_multi_view_videos" / f"{1:032x}" / "view_5_rgb_white_bg.mp4"
    gone.unlink()
    out = tmp_path / "hf"
    assert vidbench("export", release, "--to", "hf", out, "--license", "mit", "--skip-bad") == 0
    _, body = card(out)
    left_out = body.split("## Records left out\n\n")[1].strip().splitlines()
    assert len(left_out) == 5  # the object's five questions
    assert left_out[0] == f"- `{1:032x}_object_counting: missing video [{gone}]`"
    assert json.loads((out / "vidbench.json").read_text())["tasks"]["4dbench-qa"]["rows"] == 15


def test_what_export_needs(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bench = make_bench(tmp_path / "bench")
    assert vidbench("export", bench, "--to", "hf", tmp_path / "hf") == 2
    assert "give --license ID" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert vidbench("export", empty, "--to", "hf", tmp_path / "hf2", "--license", "mit") == 2
    assert "no benchmark's data found here" in capsys.readouterr().err.replace("\n", "")


def test_videos_outside_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A video the rows name outside DIR is copied under videos/_external/, once."""
    bench = make_bench(tmp_path / "bench")
    outside = tmp_path / "elsewhere"
    (bench / "videos").rename(outside)
    toml = ISSUE_TOML.replace('"videos/{video_id}.mp4"', f'"{outside}/{{video_id}}.mp4"')
    (bench / "benchmark.toml").write_text(toml)
    out = tmp_path / "hf"
    assert vidbench("export", bench, "--to", "hf", out, "--license", "mit") == 0
    copies = sorted(p.relative_to(out).parts[:2] for p in (out / "videos").rglob("*.mp4"))
    assert len(copies) == 3 and {c for c in copies} == {("videos", "_external")}
    results = tmp_path / "run"
    assert vidbench("run", f"custom:{out}", "--model", "random", "--out", results) == 0
    assert json.loads((results / "results.json").read_text())["n"] == 6


NEXT_QA = """name = "nextqa-like"
license = "mit"
rows = "val.csv"
video = "videos/{video}.mp4"
id = "{video}_{qid}"
options = ["a0", "a1", "a2", "a3", "a4"]
answer = "answer"
groups = ["type"]
"""


def test_the_source_columns_are_kept(tmp_path: Path) -> None:
    """The gold as given beside the resolved letter, CSV numbers as numbers, each video once at
    its path under the videos' folder (no videos/videos/), and a card that says how it is
    scored and how to run it."""
    rows = [
        {"video": f"clip{n % 3}", "frame_count": 300 + n, "question": f"Q{n}?", "answer": n % 5,
         "qid": n, "type": "CW", **{f"a{k}": f"option {k}" for k in range(5)}}
        for n in range(4)
    ]  # fmt: skip
    bench = make_bench(tmp_path / "bench", NEXT_QA, rows, "val.csv")
    out = tmp_path / "hf"
    assert vidbench("export", bench, "--to", "hf", out) == 0
    exported = check_rows_and_videos(out, "nextqa-like", 4, tmp_path / "cache")
    first = exported[0]
    assert (first["answer"], first["original_answer"]) == ("A", 0)  # the letter, and as given
    assert exported[3]["original_answer"] == 3 and exported[3]["answer"] == "D"
    assert first["frame_count"] == 300 and first["qid"] == 0  # numbers stay numbers
    assert first["original_video"] == "clip0" and first["video"] == "videos/clip0.mp4"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.mp4")) == [
        f"videos/clip{n}.mp4" for n in range(3)
    ]
    import pyarrow.parquet as pq

    schema = pq.read_schema(out / "data" / "nextqa-like" / "test-00000-of-00001.parquet")
    assert str(schema.field("frame_count").type) == "int64"
    assert str(schema.field("original_answer").type) == "int64"

    _, body = card(out)
    assert "## How it is scored" in body
    assert "The reply's option letter is read by the `extract` parser" in body
    assert "resolved from the source's `answer`" in body and "per value of `type`" in body
    assert "vidbench run custom:path/to/this/folder --model MODEL --out results" in body
    assert "| `original_answer` | the source record's `answer` as given" in body


def test_a_judged_benchmarks_card_names_the_judge(tmp_path: Path) -> None:
    rows = [{"video_id": "clip0", "question": "What?", "answer": "a cat", "rule": "Any cat."}]
    toml = (
        'name = "judged"\nlicense = "mit"\nrows = "q.jsonl"\nvideo = "videos/{video_id}.mp4"\n'
        'kind = "open-ended"\nscoring = "judge"\nrubric = "rule"\n'
    )
    bench = make_bench(tmp_path / "bench", toml, rows, "q.jsonl")
    assert vidbench("export", bench, "--to", "hf", tmp_path / "hf") == 0
    _, body = card(tmp_path / "hf")
    assert "judged by an LLM in AutoEval-Video's rule style" in body
    assert "give one with `--judge`" in body
    assert (
        "vidbench run custom:path/to/this/folder --model MODEL --judge JUDGE_MODEL --out results"
    ) in body


def test_a_problem_is_shown_on_the_card_as_it_is() -> None:
    """A record's id and problem come from the source's data: on the card they are code spans,
    never Markdown or HTML, and stay on their line."""
    assert code_span("q1: missing video") == "`q1: missing video`"
    assert code_span("<script>alert(1)</script>\n# heading") == (
        "`<script>alert(1)</script> # heading`"
    )
    assert code_span("a `b` and ``c``") == "``` a `b` and ``c`` ```"
    assert code_span("`x`") == "`` `x` ``"
