"""`vidbench export` and `--data OUT` given what a user or an attacker may give them: source
fields Parquet cannot hold as they are, text that is not UTF-8, a broken video, OUT inside the
source; an export whose Parquet was edited since (a column dropped or retyped, rows removed or
repeated, a config or a video gone, a video path leading out of the folder). Each is a clear
error naming the file and the record; the rest goes on where it can, and nothing looks
complete when it is not."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from custom_support import ISSUE_TOML, ROWS, make_bench, results, vidbench, write_clip
from vidbench.core.errors import ConfigError
from vidbench.core.records import MediaRef, Sample
from vidbench.export.hf import export_hf
from vidbench.export.request import ExportRequest, ExportTask
from vidbench.tasks.problems import Loaded

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

ROWS_FILE = Path("data/my-bench/test-00000-of-00001.parquet")


def said(capsys: pytest.CaptureFixture) -> str:
    return " ".join(capsys.readouterr().err.split())  # the console wraps long lines


def unwrapped(text: str) -> str:
    return "".join(text.split())  # the console may wrap a line after a "/"


def test_fields_parquet_cannot_hold_as_they_are(tmp_path: Path) -> None:
    """An integer past int64 is a column of JSON text (was: OverflowError); a field named
    `original_answer` beside `answer` keeps its values (was: two columns of one name)."""
    rows = [
        {**ROWS[0], "big": 2**70, "original_answer": 5},
        {**ROWS[1], "big": 3, "original_answer": 6},
    ]
    bench = make_bench(tmp_path / "bench", ISSUE_TOML + 'license = "mit"\n', rows)
    assert vidbench("export", bench, "--to", "hf", tmp_path / "hf") == 0
    table = pq.read_table(tmp_path / "hf" / ROWS_FILE)
    assert table.column("big").to_pylist() == [str(2**70), "3"]
    assert table.column("original_answer").to_pylist() == ["A", "B"]  # `answer` as given
    assert table.column("original_original_answer").to_pylist() == [5, 6]


def _request(source: Path, out: Path, samples: list[Sample], skip_bad: bool) -> ExportRequest:
    task = ExportTask("plugin-bench", "plugin-bench", Loaded(samples, []))
    return ExportRequest(source, out, "plugin", "Plugin", "mit", [task], skip_bad=skip_bad)


def test_text_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    """A loader (a plugin's) may pass on half a character from a JSON "\\ud800" escape:
    Parquet cannot hold it (was: UnicodeEncodeError); with skip_bad the record is left out, and
    when none is left nothing is written (was: an export of 0 rows)."""
    source = tmp_path / "source"
    media = MediaRef({0: write_clip(source / "clip.mp4", 90)})
    good = Sample("good", "plugin", "open", media, "What?", references=("x",))
    broken = dataclasses.replace(good, id="broken", metadata={"note": "x\ud800"})
    out = tmp_path / "hf"
    with pytest.raises(ConfigError, match="broken: not UTF-8 text in the field 'note'"):
        export_hf(_request(source, out, [good, broken], skip_bad=False))
    assert not out.exists()
    exported = export_hf(_request(source, out, [good, broken], skip_bad=True))
    assert [str(p) for p in exported.problems] == [
        f"broken: not UTF-8 text in the field 'note' (an unpaired surrogate escape) [{source}]"
    ]
    table = pq.read_table(out / "data" / "plugin-bench" / "test-00000-of-00001.parquet")
    assert table.column("id").to_pylist() == ["good"]

    with pytest.raises(ConfigError, match="no record can be exported:\n  broken: not UTF-8"):
        export_hf(_request(source, tmp_path / "none", [broken], skip_bad=True))
    assert not (tmp_path / "none").exists() and list(tmp_path.glob(".none.*")) == []


def test_a_csv_cell_of_json_holds_text_only(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A declared benchmark's CSV cell holding a JSON list is checked as a JSON rows file is
    (was: the half character passed on to the prompt, `validate` saying "no problems")."""
    toml = ISSUE_TOML.replace("questions.jsonl", "questions.csv")
    broken = {**ROWS[0], "options": ["A. one", "B. x\ud800"]}
    bench = make_bench(tmp_path / "bench", toml, [broken, ROWS[1]], "questions.csv")
    assert vidbench("validate", "custom", bench) == 1
    assert (
        "questions-1: line 2: options: not UTF-8 text in its JSON (an unpaired surrogate escape)"
        in capsys.readouterr().out.replace("\n", " ")
    )


def test_a_broken_video_is_named(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A video that is there but cannot be read is not copied as if it were one."""
    bench = make_bench(tmp_path / "bench", ISSUE_TOML + 'license = "mit"\n')
    (bench / "videos" / "clip2.mp4").write_bytes(b"not a video")
    out = tmp_path / "hf"
    assert vidbench("export", bench, "--to", "hf", out) == 2
    text = said(capsys)
    assert "2 record(s) cannot be exported" in text
    assert "questions-3: unreadable video (cannot open video" in text and "questions-6" in text
    assert not out.exists()
    assert vidbench("export", bench, "--to", "hf", out, "--skip-bad") == 0
    ids = pq.read_table(out / ROWS_FILE).column("id").to_pylist()
    assert ids == [f"questions-{n}" for n in (1, 2, 4, 5)]
    assert not (out / "videos" / "clip2.mp4").exists()


def test_out_inside_the_source_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A later export (or a loader globbing its rows) would read the export back as data."""
    bench = make_bench(tmp_path / "bench", ISSUE_TOML + 'license = "mit"\n')
    for out in (bench / "hf", bench / "videos" / "hf"):
        assert vidbench("export", bench, "--to", "hf", out) == 2
        assert f"{out} is inside the source folder {bench}" in said(capsys)
        assert not out.exists()
    assert sorted(p.name for p in bench.iterdir()) == [
        "benchmark.toml",
        "questions.jsonl",
        "videos",
    ]
    file = tmp_path / "file"
    file.write_text("x")
    assert vidbench("export", bench, "--to", "hf", file) == 2
    assert "exists and is not an empty folder" in said(capsys) and file.read_text() == "x"


def test_an_earlier_export_kept_in_the_source_is_not_construction(tmp_path: Path) -> None:
    """Its construction/ copies are not records of how the source was built (were: copied
    again, and shown twice on the card)."""
    bench = make_bench(tmp_path / "bench", ISSUE_TOML + 'license = "mit"\n')
    (bench / "settings.json").write_text('{"seed": 1}')
    assert vidbench("export", bench, "--to", "hf", tmp_path / "hf") == 0
    shutil.move(tmp_path / "hf", bench / "published")
    out = tmp_path / "again"
    assert vidbench("export", bench, "--to", "hf", out) == 0
    assert [p.relative_to(out).as_posix() for p in (out / "construction").rglob("*.json")] == [
        "construction/settings.json"
    ]
    assert "published" not in (out / "README.md").read_text()
    # an export is a benchmark itself: exported again, it reads back as the first
    twice = tmp_path / "twice"
    assert vidbench("export", bench / "published", "--to", "hf", twice) == 0
    first, second = (pq.read_table(d / ROWS_FILE) for d in (bench / "published", twice))
    assert first.select(sorted(first.column_names)) == second.select(sorted(first.column_names))


@pytest.mark.parametrize("name", ["../../outside", "a/b"])
def test_a_name_that_is_no_folder_name_is_refused(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The benchmark's name is the config's folder, data/<name>/ (was: written where the name
    led, out of OUT)."""
    toml = ISSUE_TOML.replace('name = "my-bench"', f'name = "{name}"') + 'license = "mit"\n'
    bench = make_bench(tmp_path / "a" / "bench", toml)
    assert vidbench("export", bench, "--to", "hf", tmp_path / "a" / "hf") == 2
    assert f"the config name {name!r} (the benchmark's name) is not a folder name" in said(capsys)
    assert sorted(p.name for p in tmp_path.rglob("*") if p.suffix == ".parquet") == []


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("exported")
    bench = make_bench(root / "bench", ISSUE_TOML + 'license = "mit"\n')
    assert vidbench("export", bench, "--to", "hf", root / "hf") == 0
    return root / "hf"


def _rewrite(change: Callable[[pa.Table], pa.Table]) -> Callable[[Path], None]:
    def edit(out: Path) -> None:
        pq.write_table(change(pq.read_table(out / ROWS_FILE)), out / ROWS_FILE)

    return edit


def _set(**columns: list[object]) -> Callable[[Path], None]:
    def change(table: pa.Table) -> pa.Table:
        for name, values in columns.items():
            table = table.set_column(table.schema.get_field_index(name), name, pa.array(values))
        return table

    return _rewrite(change)


def _manifest_files(out: Path, files: list[str]) -> None:
    manifest = json.loads((out / "vidbench.json").read_text())
    manifest["tasks"]["custom"]["files"] = files
    (out / "vidbench.json").write_text(json.dumps(manifest))
    shutil.copy(out / ROWS_FILE, out.parent / "elsewhere.parquet")


def _edit_card(out: Path, old: str, new: str) -> None:
    card = out / "README.md"
    assert old in card.read_text()
    card.write_text(card.read_text().replace(old, new) + "\nA paragraph of my own.\n")


# An edit of the export, what a run on it then exits with, and what it says.
EDITS: dict[str, tuple[Callable[[Path], None], int, list[str]]] = {
    "the gold retyped": (  # was: the gold "0", "1", ... scored as given
        _set(answer=list(range(6))),
        2,
        [
            f"{ROWS_FILE}: not the rows of a vidbench export: its column 'answer' is int64, "
            "where an export writes string"
        ],
    ),
    "the gold edited to no option": (  # was: scored wrong, "" as a gold too
        _set(answer=["Z", "b", "", None, "A", "B"]),
        3,
        [
            "questions-1: its answer 'Z' is no option letter (A-D)",
            "questions-3: its answer '' is no option letter (A-D)",
        ],
    ),
    "a column dropped": (
        _rewrite(lambda t: t.drop_columns(["options"])),
        2,
        [f"{ROWS_FILE}: not the rows of a vidbench export: it lacks the column 'options'"],
    ),
    "rows removed": (  # was: a complete run of 4 samples
        _rewrite(lambda t: t.slice(0, 4)),
        3,
        [
            "my-bench: the export wrote 6 rows, its Parquet files hold 4 (rows removed or added "
            "since it was written) [",
            "vidbench.json]",
        ],
    ),
    "an id repeated": (  # was: six samples of one id
        _set(id=[f"questions-{n}" for n in (1, 2, 3, 4, 5, 1)]),
        3,
        [
            "questions-1: row 6: an id met before (data/my-bench/test-00000-of-00001.parquet "
            "row 1); row skipped"
        ],
    ),
    "a video path out of the folder": (  # was: the file read wherever it was
        _set(
            videos=[["/etc/hostname"], ["../bench/videos/clip1.mp4"], *[["videos/clip2.mp4"]] * 4]
        ),
        3,
        [
            "questions-1: its video path '/etc/hostname' is outside the export folder",
            "questions-2: its video path '../bench/videos/clip1.mp4' is outside the export folder",
        ],
    ),
    "a rows file out of the folder": (  # was: read wherever it was
        lambda out: _manifest_files(out, ["../elsewhere.parquet"]),
        2,
        ["vidbench.json: the rows file '../elsewhere.parquet' is outside the folder"],
    ),
    "a view repeated": (  # was: one of its two videos dropped without a word
        _set(
            views=[[0, 0], *[[0]] * 5],
            videos=[["videos/clip0.mp4", "videos/clip1.mp4"], *[["videos/clip0.mp4"]] * 5],
        ),
        3,
        ["questions-1: its views and videos do not pair up (one video per view)"],
    ),
    "a config removed": (
        lambda out: shutil.rmtree(out / "data" / "my-bench"),
        2,
        [f"{ROWS_FILE}: missing (the rows of my-bench, ", "vidbench.json says)"],
    ),
    "the card removed": (  # was: not a word; the Hub and `datasets` have no card to read
        lambda out: (out / "README.md").unlink(),
        0,
        ["warning: ", "README.md: missing: the dataset card"],
    ),
    "the card's configs edited": (  # was: `datasets` read other rows than vidbench, unsaid
        lambda out: _edit_card(out, "path: data/my-bench/", "path: data/other/"),
        0,
        ["README.md: its configs no longer name the rows of my-bench (" + str(ROWS_FILE)],
    ),
    "the card's header removed": (
        lambda out: _edit_card(out, "configs:", "sections:"),
        0,
        ["README.md: no `configs` in its YAML header (edited?)"],
    ),
    "a video removed": (
        lambda out: (out / "videos" / "clip1.mp4").unlink(),
        3,
        ["questions-2: missing video", "videos/clip1.mp4 [", "questions-5: missing video"],
    ),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edited_export_says_what_changed(
    edit: str, exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    change, code, messages = EDITS[edit]
    out = shutil.copytree(exported, tmp_path / "hf")
    change(out)
    capsys.readouterr()
    run = tmp_path / "run"
    assert vidbench("run", f"custom:{out}", "--model", "random", "--out", run) == code
    text = unwrapped(said(capsys))
    for message in messages:
        assert unwrapped(message) in text, (message, text)
    if code == 3:  # the rows that load are run, the results say they are incomplete
        stored = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
        assert sum(1 for row in stored if row["error"]) in (1, 2)
        assert results(run)["n"] == len(stored)


def test_an_untouched_export_runs_complete(
    exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """The checks above find nothing in an export as written, its card's prose edited."""
    out = shutil.copytree(exported, tmp_path / "hf")
    (out / "README.md").write_text((out / "README.md").read_text() + "\nMy own words.\n")
    assert vidbench("run", f"custom:{out}", "--model", "random", "--out", tmp_path / "run") == 0
    assert "warning" not in said(capsys)
    assert results(tmp_path / "run")["n"] == 6
    assert json.loads((out / "vidbench.json").read_text())["tasks"]["custom"]["rows"] == 6
