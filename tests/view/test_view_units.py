"""The report's pieces without a browser: outcomes, judge items to samples, the paper table's
cells, video links and copies, data chunks."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from vidbench.cli import main
from vidbench.core.errors import ConfigError
from vidbench.core.records import MediaRef
from vidbench.media.spec import FrameSpec
from vidbench.report.results_dir import run_folders
from vidbench.report.schema import Results, SampleRow
from vidbench.scoring.outcome import LABELS, NO_VERDICT, NOT_GRADED, SampleScore, graded
from vidbench.view.build import ViewOptions, write_report
from vidbench.view.collect import RunData, owner_of
from vidbench.view.samples import OUTCOMES, SampleView, disagree, sample_order, sample_rows
from vidbench.view.tables import table_data
from vidbench.view.videos import VideoPlacer


def _row(sample_id: str, **score: Any) -> SampleRow:
    answer = {"id": sample_id, "prompt_hash": "h", "frames": [], "raw_output": "(A)"}
    return SampleRow.scored(answer, SampleScore(**score))  # type: ignore[arg-type]


def _all_rows(runs: list[RunData], groups: tuple[str, ...] = ()) -> list[SampleView]:
    """Every row of the report of `runs`, in its order, without media."""
    order, _ = sample_order(runs)
    return sample_rows(runs, order, lambda index, sample: {}, groups)


def test_the_page_shows_each_rows_typed_outcome() -> None:
    assert OUTCOMES == LABELS  # the filter offers every label an outcome can have
    run = RunData(Path("r1"))
    run.records = [
        _row("a", outcome=graded(True), groups={"shape": "cube", "size": "big"}),
        _row("b", outcome=graded(False, unparsed=True), judge_reply="no"),
        _row("c", outcome=NOT_GRADED, metrics={"bleu": 0.3}, details={"caption": "x"}),
        SampleRow.unanswered("d", "media", "gone"),  # set by the score stage: no answer
    ]
    rows = _all_rows([run], groups=("shape",))
    assert [r["runs"][0]["outcome"] for r in rows] == ["correct", "unparsed", "not-graded",
                                                        "no-answer"]  # fmt: skip
    assert rows[0]["group"] == "cube" and rows[0]["runs"][0]["scores"] == {"size": "big"}
    assert rows[1]["runs"][0]["verdict_reply"] == "no"
    assert rows[2]["runs"][0]["scores"] == {"bleu": "0.3", "caption": "x"}
    assert rows[3]["runs"][0]["error"] == "gone" and rows[3]["group"] == ""


def test_run_folders_expand_folders_of_runs_and_skip_files(tmp_path: Path) -> None:
    results = tmp_path / "results"
    for name in ("random", "constant-A", "sweep/4dbench-qa/model-b"):
        (results / name).mkdir(parents=True)
        (results / name / "results.json").write_text("{}")
    (results / "table.md").write_text("| table |")
    single = results / "random"
    found, skipped = run_folders(
        [results, results / "table.md", single / "results.json", tmp_path / "gone"]
    )
    assert found == [
        results / "constant-A",
        single,
        results / "sweep/4dbench-qa/model-b",
        single,
        tmp_path / "gone",  # kept: the report says what it lacks
    ]
    assert skipped == [f"{results / 'table.md'}: a file, not a results directory: skipped"]


def test_judge_items_belong_to_their_samples() -> None:
    ids = {"a", "a:b", "uid1"}
    assert owner_of("a:judge", ids) == "a"
    assert owner_of("a:b:judge", ids) == "a:b"
    assert owner_of("uid1:appearance", ids) == "uid1"
    assert owner_of("other:judge", ids) is None


def test_disagreements_come_first() -> None:
    same = {"outcome": "correct", "parsed": "A"}
    runs = [RunData(Path("r1")), RunData(Path("r2"))]
    runs[0].records = [_row(i, outcome=graded(True), parsed="A") for i in "xyz"]
    runs[1].records = [_row(i, outcome=graded(i != "z"), parsed="A" if i != "z" else "B")
                       for i in "xyz"]  # fmt: skip
    rows = _all_rows(runs)
    order = sample_order(runs)  # the page's disagreement filter: row < 1
    assert order == ([("", "z"), ("", "x"), ("", "y")], 1)
    assert [r["id"] for r in rows] == ["z", "x", "y"]
    assert [r["disagree"] for r in rows] == [True, False, False]
    assert not disagree([same, dict(same)]) and not disagree([same, None])
    assert disagree([same, None, {"outcome": "no-answer", "parsed": None}])
    # runs of other data (two declared benchmarks, ids "questions-N" both): the second run's
    # answers were shown under the first's questions, as one sample, compared as a disagreement
    runs[1].data_key = "custom\n/data/other"
    rows = _all_rows(runs)
    assert [r["id"] for r in rows] == ["x", "y", "z", "x", "y", "z"]
    assert [[e is not None for e in r["runs"]] for r in rows] == [[True, False]] * 3 + [
        [False, True]
    ] * 3
    assert not any(r["disagree"] for r in rows) and sample_order(runs)[1] == 0


def test_table_cells_hold_interval_n_and_best() -> None:
    def result(model: str, overall: float, **more: object) -> Results:
        return Results.model_validate(
            {
                "task": "t",
                "model": model,
                "n": 10,
                "errors": 0,
                "columns": {"Overall": overall},
                "ci95": {"Overall": [overall - 5, overall + 5]},
                "column_n": {"Overall": 10},
                **more,
            }
        )

    two = [Path("runs/a"), Path("runs/b")]
    [table] = table_data([result("a", 40.0), result("b", 55.5)], two)
    [part] = table["parts"]
    assert part["header"] == ["Model", "Overall", "n", "errors", "unparsed"]
    a, b = (row["cells"][0] for row in part["rows"])
    assert a == {"text": "40.0", "value": 40.0, "ci": "[35, 45]", "n": 10, "best": False}
    assert b["best"] and b["ci"] == "[50.5, 60.5]"
    # results.json keeps full precision; the page rounds as the report stage used to store
    # them: 2 decimals for percent, 3 for other scales (a 0..5 judge score)
    percent = result("c", 100 * 7 / 9, ci95={"Overall": [100 / 3, 100 * 8 / 9]},
                     column_scale={"Overall": 100.0})  # fmt: skip
    judge = result("d", 3.50749, ci95={"Overall": [3.1234567, 3.9]}, column_scale={"Overall": 1})
    [table] = table_data([percent, judge], two)
    c, d = (row["cells"][0] for row in table["parts"][0]["rows"])
    assert (c["text"], c["ci"], c["value"]) == ("77.8", "[33.33, 88.89]", 100 * 7 / 9)
    assert (d["text"], d["ci"]) == ("3.5", "[3.123, 3.9]")
    # an incomplete run's row is never the best, nor is a NaN; chance rows that differ both show
    flaky = result("flaky", 90.0, errors=3, chance={"Overall": 30.0})
    [table] = table_data([result("a", 40.0, chance={"Overall": 25.0}), flaky], two)
    labels = [row["label"] for row in table["parts"][0]["rows"]]
    assert labels[2:] == ["a", "flaky (incomplete: 3 of 10 not scored)"] and len(labels) == 4
    assert [row["cells"][0].get("best") for row in table["parts"][0]["rows"]] == [
        None, None, True, False
    ]  # fmt: skip
    [table] = table_data([result("nan", float("nan")), result("b", 1.0)], two)
    assert [row["cells"][0]["best"] for row in table["parts"][0]["rows"]] == [False, True]
    # one model in several folders: its rows were "a #1", "a #2", which the page's list of
    # runs, naming them by folder, did not say; now they are named as the list names them
    folders = [Path("x/r01"), Path("x/r05"), Path("y/r05")]
    [table] = table_data([result("a", 40.0), result("a", 50.0), result("a", 60.0)], folders)
    labels = [row["label"] for row in table["parts"][0]["rows"]]
    assert labels == ["a (r01)", "a (x/r05)", "a (y/r05)"]


def test_videos_are_linked_relatively_or_copied(tmp_path: Path) -> None:
    source = tmp_path / "data" / "v.mp4"
    source.parent.mkdir()
    source.write_bytes(b"video bytes")
    media = MediaRef({0: source, 1: tmp_path / "gone.mp4"}, start_s=1.5, end_s=4)
    spec = FrameSpec(views=(0, 1, 2))
    linked = VideoPlacer(tmp_path / "r1", "link").videos(media, spec)
    assert linked[0]["src"].startswith("videos/") and linked[0]["src"].endswith(".mp4#t=1.5,4")
    target = tmp_path / "r1" / linked[0]["src"].split("#")[0]
    assert target.is_symlink() and not os.readlink(target).startswith("/")
    assert target.read_bytes() == b"video bytes"
    assert "not found" in linked[1]["error"] and "no video" in linked[2]["error"]
    copied = VideoPlacer(tmp_path / "r2", "copy").videos(MediaRef.single(source), spec)
    copy = tmp_path / "r2" / copied[0]["src"]
    assert not copy.is_symlink() and copy.read_bytes() == b"video bytes"
    source.write_bytes(b"the video edited")  # in place: the report built again showed the old
    VideoPlacer(tmp_path / "r2", "copy").videos(MediaRef.single(source), spec)
    assert copy.read_bytes() == b"the video edited"
    # built again with --videos copy over a linked build: the links were kept, not copies
    VideoPlacer(tmp_path / "r1", "copy").videos(media, spec)
    assert not target.is_symlink() and target.read_bytes() == b"the video edited"
    assert VideoPlacer(tmp_path / "r3", "none").videos(media, spec) == []


def test_a_killed_views_temporaries_go_and_two_views_never_share_a_folder(
    tmp_path: Path,
) -> None:
    """A view killed while placing a video (or writing a data file) left `.tmp-PID-THREAD.mp4`
    in REPORT/videos for good; two views into one folder wrote over each other's files."""
    from vidbench.runner.lock import results_lock

    run = RunData(tmp_path / "run", label="m", records=[_row("s0", outcome=graded(True))])
    report = tmp_path / "report"
    write_report([run], ViewOptions(report))
    (report / "videos").mkdir()
    left = [report / "videos" / ".tmp-4242-17.mp4", report / "data" / ".tmp-abcd_123"]
    for path in left:
        path.write_bytes(b"half a video")
    (report / "videos" / ".tmp-4242-18.mp4").symlink_to("../gone.mp4")  # a link half-placed
    kept = report / "videos" / "0123abcd.mp4"
    kept.write_bytes(b"a placed video")
    with results_lock(report, "another view"), pytest.raises(ConfigError) as refused:
        write_report([run], ViewOptions(report))  # never writing into a live view's folder
    assert "in use by another vidbench command" in str(refused.value)
    assert "another view" in str(refused.value) and "report folder" in str(refused.value)
    assert all(path.exists() for path in left)  # a live view's files are left alone
    write_report([run], ViewOptions(report))
    assert sorted(p.name for p in (report / "videos").iterdir()) == [kept.name]
    assert not any(path.exists() for path in left)


def _script_data(path: Path, call: str) -> Any:
    """The arguments of the one `call(...)` a data file makes, as a JSON list."""
    text = path.read_text()
    assert text.startswith(f"{call}(") and text.endswith(");\n")
    return json.loads(f"[{text[len(call) + 1 : -3]}]")


def test_data_are_chunked_scripts(tmp_path: Path) -> None:
    run = RunData(tmp_path / "run", label="m")
    run.records = [_row(f"s{i}", outcome=graded(i % 2 == 0)) for i in range(1201)]
    built = write_report([run], ViewOptions(tmp_path / "report", chunk_size=500))
    assert built.samples == 1201
    data = tmp_path / "report" / "data"
    names = sorted(p.name for p in data.iterdir())
    assert names == ["meta.js", "samples-000.js", "samples-001.js", "samples-002.js",
                     "search-000.js"]  # fmt: skip
    k, rows = _script_data(data / "samples-002.js", "vidbenchView.add")
    assert k == 2
    assert [r["id"] for r in rows] == ["s1000", "s1001"] + [f"s{i}" for i in range(1002, 1201)]
    [meta] = _script_data(data / "meta.js", "vidbenchView.meta")
    assert (meta["chunks"], meta["chunk_size"], meta["total"]) == (3, 500, 1201)
    assert meta["runs"][0]["outcomes"]["correct"] == 601
    assert meta["runs"][0]["outcomes"]["wrong"] == 600
    # the index the filters read: an outcome (its position in the list) and a group per row
    correct, wrong = OUTCOMES.index("correct"), OUTCOMES.index("wrong")
    [outcomes] = meta["index"]["outcome"]
    assert outcomes == [correct if i % 2 == 0 else wrong for i in range(1201)]
    assert meta["index"]["group"] == [-1] * 1201 and meta["groups"] == []
    k, texts = _script_data(data / "search-000.js", "vidbenchView.search")
    assert k == 0 and len(texts) == 1201 and texts[1000] == "s1000\n\n\n(A)\n\n"
    smaller = write_report([RunData(tmp_path / "run", records=run.records[:10])],
                           ViewOptions(tmp_path / "report"))  # fmt: skip
    with pytest.raises(ConfigError, match="other files"):
        write_report([run], ViewOptions(tmp_path))  # holds run/ and report/: not a report
    loop = tmp_path / "loop"  # a link to itself: not a folder, named rather than a traceback
    loop.symlink_to(loop)
    with pytest.raises(ConfigError, match="cannot be made a folder"):
        write_report([run], ViewOptions(loop))
    assert smaller.samples == 10 and sorted(p.name for p in data.iterdir())[1:] == [
        "samples-000.js",
        "search-000.js",
    ]


def test_thumbnails_of_a_grid_and_of_views(tmp_path: Path) -> None:
    from PIL import Image

    from conftest import solid_frames
    from vidbench.media.cache import FrameCache
    from vidbench.media.encode import write_mp4
    from vidbench.view.thumbs import FRAME_SIDE, GRID_SIDE, Thumbnailer

    videos = {v: tmp_path / f"view{v}.mp4" for v in (0, 1)}
    for v, path in videos.items():
        write_mp4(path, solid_frames(12, size=400, seed=v))
    thumbs = Thumbnailer(tmp_path / "report", FrameCache(tmp_path / "cache"))
    strip = thumbs.strip(MediaRef(videos), FrameSpec(views=(0, 1), frames=3, grid="2x3"))
    assert strip["layout"] == "grid" and len(strip["frames"]) == 1
    [grid] = strip["frames"]
    assert len(grid["tiles"]) == 6
    with Image.open(tmp_path / "report" / grid["src"]) as image:
        assert max(image.size) == GRID_SIDE
    strip = thumbs.strip(MediaRef(videos), FrameSpec(views=(0, 1), frames=3, order="time-first"))
    assert strip["layout"] == "views"
    assert [(f["view"], f["index"]) for f in strip["frames"]] == [
        (0, 0),
        (1, 0),
        (0, 5),
        (1, 5),
        (0, 11),
        (1, 11),
    ]  # fmt: skip; linspace over 12 frames, one frame of every view per time step
    with Image.open(tmp_path / "report" / strip["frames"][0]["src"]) as image:
        assert max(image.size) == FRAME_SIDE
    videos[1].unlink()
    strip = thumbs.strip(MediaRef(videos), FrameSpec(views=(0, 1), frames=3))
    assert strip["frames"] == [] and "view1.mp4" in strip["error"]


def test_the_store_is_read_without_writing(tmp_path: Path) -> None:
    from vidbench.core.files import write_jsonl
    from vidbench.core.requests import Response, Usage
    from vidbench.runner.store import Store, StoreError
    from vidbench.view.collect import collect_run

    store = Store(tmp_path)
    store.put_failure("call:abc", "s1:judge", 0, "k9", "HTTP 503 after retries", "error")
    store.put_failure("plan", "s1", 1, "k1", "a model error", "error")  # not the judge's
    reply = Response(key="k2", text="yes", usage=Usage(1, 1))
    store.put_call("k2", "judge-model", "s1:judge", "v1", 0, "is it right?", reply)
    store.close()
    write_jsonl(tmp_path / "samples.jsonl", [_row("s1", outcome=NO_VERDICT).record()])
    before = (tmp_path / "store.sqlite").stat().st_mtime_ns
    run = collect_run(tmp_path, with_samples=False)
    assert (tmp_path / "store.sqlite").stat().st_mtime_ns == before
    readonly = Store.read_only(tmp_path)
    with pytest.raises(StoreError, match="store.sqlite: attempt to write a readonly database"):
        readonly.put_failure("plan", "s2", 1, None, "x")
    readonly.close()
    [row] = _all_rows([run])
    [entry] = row["runs"]
    assert entry["outcome"] == "no-verdict"
    assert entry["judge"] == [{"item": "s1:judge", "error": "error: HTTP 503 after retries"}]
    # the judge's calls go to judge files, read from the store a row at a time
    write_report([run], ViewOptions(tmp_path / "report"))
    assert (tmp_path / "store.sqlite").stat().st_mtime_ns == before
    data = tmp_path / "report" / "data"
    [[entry]] = [
        row["runs"] for row in _script_data(data / "samples-000.js", "vidbenchView.add")[1]
    ]
    assert entry["judge_calls"] == [[0, 0]]
    assert _script_data(data / "judge-000.js", "vidbenchView.judge") == [
        0,
        [{"item": "s1:judge", "judge": "judge-model", "version": "v1", "attempt": 1,
          "prompt": "is it right?", "reply": "yes"}],
    ]  # fmt: skip


def test_runs_of_one_name_in_folders_of_one_name_are_told_apart(tmp_path: Path) -> None:
    from vidbench.view.collect import collect_runs

    results = {"task": "t", "model": "m", "n": 2, "errors": 0, "columns": {}}
    for folder in ("a/run", "b/run", "c/other"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "results.json").write_text(json.dumps(results))
    runs = collect_runs([tmp_path / f for f in ("a/run", "b/run", "c/other")], with_samples=False)
    assert [r.label for r in runs] == [f"m ({tmp_path / 'a/run'})", f"m ({tmp_path / 'b/run'})",
                                       "m (other)"]  # fmt: skip
    # runs of other tasks and data: named as in their own tables (they were named by every
    # setting that differed, "m [t, protocol None, /data/a, frames=6, ...]"), then by folder
    other = {**results, "task": "u", "data": "/data/u", "frame_spec": {"frames": 6}}
    (tmp_path / "d/run").mkdir(parents=True)
    (tmp_path / "d/run" / "results.json").write_text(json.dumps({**other, "model": "n"}))
    runs = collect_runs([tmp_path / "c/other", tmp_path / "d/run"], with_samples=False)
    assert [r.label for r in runs] == ["m", "n"]
    (tmp_path / "d/run" / "results.json").write_text(json.dumps(other))
    runs = collect_runs([tmp_path / "c/other", tmp_path / "d/run"], with_samples=False)
    assert [r.label for r in runs] == ["m (other)", "m (run)"]


def test_a_repeated_runs_folder_points_at_its_runs(tmp_path: Path) -> None:
    from vidbench.view.collect import collect_run

    (tmp_path / "run-1").mkdir()
    results = {"task": "t", "model": "m", "n": 2, "errors": 0, "columns": {}, "runs": 2}
    (tmp_path / "results.json").write_text(json.dumps(results))
    run = collect_run(tmp_path, with_samples=False)
    assert run.results is not None and run.results.runs == 2 and run.records == []
    assert any("repeated runs: give" in m and "run-1" in m for m in run.messages)


def test_view_of_nothing_is_an_error_not_an_empty_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A misspelt directory, or runs with neither results.json nor samples.jsonl, stop with the
    reason (exit 2) instead of writing a report of 0 samples that looks like an empty run."""
    report = tmp_path / "report"
    assert main(["--no-progress", "view", str(tmp_path / "typo"), "--out", str(report)]) == 2
    assert "no such results directory" in capsys.readouterr().err
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "results.json").write_text("[1, 2]")
    assert main(["--no-progress", "view", str(broken), "--out", str(report)]) == 2
    said = "".join(capsys.readouterr().err.split())  # the console wraps long lines anywhere
    assert "noresultstoshow" in said and "results.json:notaJSONobject" in said
    assert not report.exists()


def test_prompts_are_written_once_beside_the_rows(tmp_path: Path) -> None:
    """The exact prompts go to prompt files, each text once however many runs sent it; a row
    points at its prompt's place ([file, position]); a prompt no row sent is left out."""
    from vidbench.core.files import write_jsonl
    from vidbench.core.requests import Response, Usage
    from vidbench.runner.store import Store
    from vidbench.view.collect import collect_runs

    for name in ("a", "b"):
        store = Store(tmp_path / name)
        for sample_id, prompt_hash in (("s1", "h1"), ("s2", "h2"), ("old", "h-old")):
            request = {"frames": [], "prompt": [f"asked {prompt_hash}", "second part"]}
            reply = Response(key=f"{name}{sample_id}", text="(A)", usage=Usage(1, 1))
            store.put_response("plan", sample_id, 1, prompt_hash, request, reply)
        store.close()
        rows = [_row(i, outcome=graded(True)).model_copy(update={"prompt_hash": h})
                for i, h in (("s1", "h1"), ("s2", "h2"))]  # fmt: skip
        write_jsonl(tmp_path / name / "samples.jsonl", [row.record() for row in rows])
    runs = collect_runs([tmp_path / "a", tmp_path / "b"], with_samples=False)
    write_report(runs, ViewOptions(tmp_path / "report"))
    data = tmp_path / "report" / "data"
    assert _script_data(data / "prompts-000.js", "vidbenchView.prompts") == [
        0,
        [["asked h1", "second part"], ["asked h2", "second part"]],
    ]
    _, rows = _script_data(data / "samples-000.js", "vidbenchView.add")
    assert [[e["prompt"] for e in row["runs"]] for row in rows] == [[[0, 0], [0, 0]],
                                                                     [[0, 1], [0, 1]]]  # fmt: skip


def test_rows_are_read_again_from_where_they_were(tmp_path: Path) -> None:
    """The report reads each row of samples.jsonl again from where the first reading found it;
    a file rewritten in between is an error, never another sample's row under this one's id."""
    from vidbench.core.errors import DataError
    from vidbench.core.files import write_jsonl
    from vidbench.view.collect import collect_run

    rows = [_row(f"s{i}", outcome=graded(i % 3 == 0)) for i in range(30)]
    write_jsonl(tmp_path / "samples.jsonl", [row.record() for row in rows])
    run = collect_run(tmp_path, with_samples=False)
    assert list(run.index()) == [f"s{i}" for i in range(30)]
    [found] = _all_rows([run])[7:8]
    assert found["id"] == "s7" and found["runs"][0]["outcome"] == "wrong"
    swapped = [rows[0], rows[2], rows[1], *rows[3:]]  # s1 and s2: lines of the same length
    write_jsonl(tmp_path / "samples.jsonl", [row.record() for row in swapped])
    with pytest.raises(DataError, match="samples.jsonl changed while the report was written"):
        write_report([run], ViewOptions(tmp_path / "report"))
    meta = (tmp_path / "report" / "data" / "meta.js").read_text()  # the page says so
    assert "its writing stopped: run vidbench view again" in meta and '"total":0' in meta
    write_jsonl(tmp_path / "samples.jsonl", [row.record() for row in reversed(rows)])
    with pytest.raises(DataError, match="byte 168: not a JSON line"):  # s10's line, cut
        write_report([run], ViewOptions(tmp_path / "report"))


def test_a_video_edited_in_place_after_the_run_is_marked_not_shown_as_answered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A video rewritten in place (same name, other pixels) after its run: the report showed its
    new frames beside the answers to the old ones without a word."""
    from custom_support import make_bench, write_clip

    monkeypatch.setenv("VIDBENCH_TEST_LOG", str(tmp_path / "asked.log"))
    bench, out, report = make_bench(tmp_path / "bench"), tmp_path / "r", tmp_path / "report"
    where = ("--out", str(out), "--cache-dir", str(tmp_path / "cache"))
    model = ("--model", "python:support_models:SeesPixels")
    assert main(["--no-progress", "run", f"custom:{bench}", *model, *where]) == 0
    write_clip(bench / "videos" / "clip1.mp4", 200)  # rows 1 and 4 are about clip1
    assert main(["--no-progress", "view", str(out), "--out", str(report)]) == 0
    data = report / "data"
    _, rows = _script_data(data / "samples-000.js", "vidbenchView.add")
    marked = {row["id"] for row in rows if "video_changed" in row["runs"][0]}
    assert marked == {row["id"] for row in rows if "clip 1" in row["question"]}
    assert len(marked) == 2
    [meta] = _script_data(data / "meta.js", "vidbenchView.meta")
    assert any("2 sample(s) marked 'video edited'" in m for m in meta["messages"])


def test_rows_cut_since_scoring_are_said_not_shown_as_the_tables(tmp_path: Path) -> None:
    """samples.jsonl cut (a copy that stopped, an edit) under an intact results.json: the page
    showed the table of 6 samples above 2, without a word; a mismatch of the data, compared
    over the rows left, was blamed instead."""
    from custom_support import make_bench
    from vidbench.view.collect import collect_run

    bench, out = make_bench(tmp_path / "bench"), tmp_path / "r"
    assert main(["--no-progress", "run", f"custom:{bench}", "--model", "random",
                 "--out", str(out)]) == 0  # fmt: skip
    assert collect_run(out).messages == []
    lines = (out / "samples.jsonl").read_text().splitlines(keepends=True)
    (out / "samples.jsonl").write_text("".join(lines[:2]))
    (note,) = collect_run(out).messages
    assert "samples.jsonl is not the file the score stage wrote" in note
    assert "not those the table was made from" in note
    with pytest.raises(ConfigError, match=r"a run's results directory \(it holds results.json\)"):
        write_report([collect_run(out)], ViewOptions(out))  # its own folder: named as such


def test_a_report_or_an_empty_folder_given_as_a_run_drops_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`vidbench view runs/* --out runs/report` again: the report was a run of the page (no
    results, no samples), and its folder beside a run dropped that run's figures ('figures not
    drawn: report/results.json is missing')."""
    from custom_support import make_bench

    bench, out = make_bench(tmp_path / "bench"), tmp_path / "runs" / "r"
    assert main(["--no-progress", "run", f"custom:{bench}", "--model", "random",
                 "--out", str(out)]) == 0  # fmt: skip
    report = tmp_path / "runs" / "report"
    (tmp_path / "runs" / "empty").mkdir()
    assert main(["--no-progress", "view", str(out), "--out", str(report)]) == 0
    given = [str(p) for p in sorted((tmp_path / "runs").iterdir())]  # runs/*: empty, r, report
    assert main(["--no-progress", "view", *given, "--out", str(report)]) == 0
    said = " ".join(capsys.readouterr().err.split())
    assert f"{report}: a report of vidbench view, not a run: skipped" in said
    assert "figures not drawn" not in said
    [meta] = _script_data(report / "data" / "meta.js", "vidbenchView.meta")
    assert meta["figures"] == ["figures/bars-1.png"]
    assert [run["label"] for run in meta["runs"]] == ["empty", "random"]
