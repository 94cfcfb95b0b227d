"""The media route: any invalid path (a NUL, a control character, a name too long for the
file system, a link loop) is a 400, never a server error; the video links the project's own
tools make are followed (the output of `curate 4d qa`, whose videos folder is an absolute link
to the render folder, and the folder `annotate export qa` writes), while any other link leading
out of the data folder, or out of the folder such a link leads to, stays refused."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from annotate_support import ADAPTERS, PASSWORD, make_project, query, sign_in
from conftest import write_object_views
from vidbench.annotate import assign, auth, exports
from vidbench.annotate.folder import import_folder
from vidbench.annotate.project import Project
from vidbench.annotate.web.app import create_app
from vidbench.benchmarks.fourd.curate.qa import output
from vidbench.benchmarks.fourd.curate.qa.config import ModelChoice, QAConfig
from vidbench.benchmarks.fourd.loader import VIDEO_DIR

UID0 = "0" * 32
QA_VIDEOS = f"4D_Object_Question_Answering/data/{VIDEO_DIR}"


@pytest.fixture(scope="module")
def project(qa_release: Path, tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_project(qa_release, tmp_path_factory.mktemp("annotate_media"))


@pytest.fixture
def client(project: Project) -> TestClient:
    client = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    sign_in(client, "ann1")
    return client


@pytest.mark.parametrize(
    "rel",
    [
        f"{QA_VIDEOS}/{UID0}/view_0%00_rgb_white_bg.mp4",  # NUL
        f"{QA_VIDEOS}/{UID0}%00/view_0_rgb_white_bg.mp4",
        f"{QA_VIDEOS}/{UID0}/view_0%0a.mp4",  # a control character
        f"{QA_VIDEOS}/{'x' * 300}/view_0_rgb_white_bg.mp4",  # a name too long for the disk
        f"{QA_VIDEOS}/{'y' * 300}.mp4",
        "a/" * 600 + "v.mp4",  # a path too long
        f"{QA_VIDEOS}//{UID0}/view_0_rgb_white_bg.mp4",  # an empty part
        f"{QA_VIDEOS}/{UID0}",  # a folder, not a video
    ],
)
def test_an_invalid_media_path_is_a_400(client: TestClient, rel: str) -> None:
    answer = client.get(f"/media/{rel}")
    assert answer.status_code == 400, (answer.status_code, answer.text[:200])
    assert "error" in answer.json()


def test_a_link_loop_and_a_link_to_a_non_video_are_400(
    project: Project, client: TestClient
) -> None:
    loop = project.data / "loop.mp4"
    loop.symlink_to("loop.mp4")
    inside = project.data / "settings.mp4"  # a link inside the folder, to a file not a video
    inside.symlink_to(project.data / "4D_Object_Question_Answering/data/4d_qa.json")
    try:
        assert client.get("/media/loop.mp4").status_code == 400
        assert client.get("/media/settings.mp4").status_code == 400
    finally:
        loop.unlink()
        inside.unlink()


def _render_folder(root: Path) -> Path:
    """What `curate 4d render` leaves: <uid>/view_K_rgb_white_bg.mp4."""
    write_object_views(root, UID0, frames=6, views=24)
    return root / VIDEO_DIR


def _curate_output(out: Path, render: Path) -> Path:
    """`curate 4d qa`'s own output writer (no question kept): OUT/4d_object_multi_view_videos, an
    absolute link to the render folder, and settings.json recording it as the data."""
    model = ModelChoice("random")
    config = QAConfig(data=render, out=out, generator=model, validator=model, blind=(model, model))
    out.mkdir(parents=True)
    output.write_all(out, [], render, config)
    link = out / VIDEO_DIR
    assert link.is_symlink() and Path(os.readlink(link)).is_absolute()
    return out


def _project_on(data: Path, root: Path) -> tuple[Project, TestClient]:
    project = Project.init(root, data)
    conn = project.connect()
    import_folder(conn, project.data, "test", ADAPTERS)
    auth.add_user(conn, "ann1", "annotator", PASSWORD)
    conn.close()
    client = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    sign_in(client, "ann1")
    return project, client


def test_the_videos_of_a_curate_output_play_through_its_link(tmp_path: Path) -> None:
    render = _render_folder(tmp_path / "render")
    out = _curate_output(tmp_path / "qa", render)
    project, client = _project_on(out, tmp_path / "project")
    views = json.loads(
        sqlite3.connect(project.database)
        .execute("SELECT data FROM items WHERE id = ?", (f"caption:{UID0}",))
        .fetchone()[0]
    )["views"]
    assert views[1] == f"{VIDEO_DIR}/{UID0}/view_1_rgb_white_bg.mp4"
    video = client.get(f"/media/{views[1]}")
    assert video.status_code == 200 and video.content[4:8] == b"ftyp"
    conn = project.connect()
    assign.assign(conn, "caption", 1, "test")
    conn.close()
    work_id = query(project, "SELECT id FROM work WHERE item_id = ?", (f"caption:{UID0}",))[0][0]
    page = client.get(f"/work/{work_id}").text
    assert f'src="/media/{VIDEO_DIR}/{UID0}/view_1_rgb_white_bg.mp4"' in page
    assert "missing video" not in page

    # inside the render folder, a link leading further out stays refused
    secret = tmp_path / "elsewhere" / "secret.mp4"
    secret.parent.mkdir()
    secret.write_bytes(b"\x00\x00\x00\x18ftypisom")
    (render / UID0 / "out.mp4").symlink_to(secret)
    assert client.get(f"/media/{VIDEO_DIR}/{UID0}/out.mp4").status_code == 400
    # the same link with settings.json recording another folder is refused
    settings = json.loads((out / "settings.json").read_text())
    (out / "settings.json").write_text(json.dumps({**settings, "data": str(tmp_path)}))
    assert client.get(f"/media/{views[1]}").status_code == 400


def test_links_leading_out_that_no_tool_recorded_are_refused(tmp_path: Path) -> None:
    render = _render_folder(tmp_path / "render")
    data = tmp_path / "data"
    data.mkdir()
    (data / VIDEO_DIR).symlink_to(render.resolve(), target_is_directory=True)  # no record
    (data / "other").symlink_to(render.resolve(), target_is_directory=True)
    _, client = _project_on(data, tmp_path / "project")
    for rel in (VIDEO_DIR, "other"):
        answer = client.get(f"/media/{rel}/{UID0}/view_1_rgb_white_bg.mp4")
        assert answer.status_code == 400, rel
        assert answer.json()["error"] == "not a video of the project's data folder"
    # a settings.json naming the render folder does not make another link name trusted
    (data / "settings.json").write_text(json.dumps({"data": str(render), "generator": {}}))
    assert client.get(f"/media/other/{UID0}/view_1_rgb_white_bg.mp4").status_code == 400
    assert client.get(f"/media/{VIDEO_DIR}/{UID0}/view_1_rgb_white_bg.mp4").status_code == 200


def test_the_videos_of_an_export_folder_play_through_its_link(
    project: Project, tmp_path: Path
) -> None:
    conn = project.connect()
    done = exports.export_kind(project, conn, "qa", "ada", None, "4dbench", ADAPTERS)
    conn.close()
    exported = done.path.parent
    assert (exported / VIDEO_DIR).is_symlink()
    _, client = _project_on(exported, tmp_path / "second")
    answer = client.get(f"/media/{VIDEO_DIR}/{UID0}/view_16_rgb_white_bg.mp4")
    assert answer.status_code == 200 and answer.content[4:8] == b"ftyp"
    record = json.loads((exported / "export.json").read_text())
    (exported / "export.json").write_text(json.dumps({**record, "videos_of": str(tmp_path)}))
    assert client.get(f"/media/{VIDEO_DIR}/{UID0}/view_16_rgb_white_bg.mp4").status_code == 400


def test_thumbnails_are_checked_as_media_and_made_once(
    client: TestClient, project: Project
) -> None:
    """A list's thumbnail: a JPEG of the video's middle frame, made once and kept; paths are
    refused as the media route refuses them; signed-in people only."""
    video = f"{QA_VIDEOS}/{UID0}/view_1_rgb_white_bg.mp4"
    answer = client.get(f"/thumb/{video}")
    assert answer.status_code == 200 and answer.headers["content-type"] == "image/jpeg"
    assert answer.content[:3] == b"\xff\xd8\xff"  # JPEG
    kept = list((project.path / "thumbnails").glob("*.jpg"))
    assert len(kept) == 1
    made = kept[0].stat().st_mtime_ns
    assert client.get(f"/thumb/{video}").content == answer.content
    assert kept[0].stat().st_mtime_ns == made  # not made again
    assert client.get("/thumb/..%2Fproject%2Fannotate.sqlite").status_code == 400
    assert client.get(f"/thumb/{QA_VIDEOS}/{UID0}/view_0%00.mp4").status_code == 400
    assert client.get(f"/thumb/{QA_VIDEOS}/gone/view_1_rgb_white_bg.mp4").status_code == 404
    anonymous = TestClient(create_app(project, ADAPTERS), base_url="http://127.0.0.1")
    assert anonymous.get(f"/thumb/{video}").status_code == 401


def test_a_thumbnail_that_cannot_be_kept_is_still_shown(qa_release: Path, tmp_path: Path) -> None:
    """A project folder that cannot be written (read-only, a full disk; here its thumbnails
    folder is a file): the thumbnail is made and sent, not kept."""
    project, client = _project_on(qa_release, tmp_path)
    (project.path / "thumbnails").write_text("not a folder")
    answer = client.get(f"/thumb/{QA_VIDEOS}/{UID0}/view_1_rgb_white_bg.mp4")
    assert answer.status_code == 200 and answer.content[:3] == b"\xff\xd8\xff"
    assert (project.path / "thumbnails").read_text() == "not a folder"
