"""The JSON API the pages call (every POST carries the session's CSRF token) and the media route.

Media: `/media/REL` serves a video file under the project's data folder only: a path with `..`,
an absolute path, a link leading outside, or a file that is not a video is refused.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, HTTPException, Request, UploadFile
from fastapi.responses import FileResponse
from pydantic import BaseModel

from vidbench.annotate import assign, exports, items, work
from vidbench.annotate.web.deps import Admin, Signed
from vidbench.core.errors import DataError

router = APIRouter()
VIDEO_SUFFIXES = (".mp4", ".webm", ".mkv", ".mov", ".m4v")
MAX_UPLOAD = 50 * 1024 * 1024


class SaveBody(BaseModel):
    version: int
    content: str | None = None
    status: str | None = None
    comment: str | None = None


@router.get("/api/work/{work_id}")
def read_work(work_id: int, v: Signed) -> dict[str, Any]:
    return work.public(work.get(v.conn, work_id, v.user))


@router.post("/api/work/{work_id}")
def save_work(work_id: int, body: SaveBody, v: Signed) -> dict[str, Any]:
    return work.save(v.conn, work_id, v.user, body.version, body.content, body.status, body.comment)


@router.get("/media/{rel:path}")
def media(rel: str, request: Request, v: Signed) -> FileResponse:
    root: Path = request.app.state.project.data.resolve()
    parts = PurePosixPath(rel).parts
    if not rel or rel.startswith(("/", "\\")) or ".." in parts or "\\" in rel or ":" in rel:
        raise HTTPException(400, "media paths are relative to the project's data folder")
    path = (root / rel).resolve()
    if not path.is_relative_to(root) or path.suffix.lower() not in VIDEO_SUFFIXES:
        raise HTTPException(400, "not a video of the project's data folder")
    if not path.is_file():
        raise HTTPException(404, f"missing video: {rel}")
    return FileResponse(path, headers={"Cache-Control": "private, max-age=3600"})


class AssignBody(BaseModel):
    kind: Literal["caption", "qa", "answer", "rule"]
    n: int | None = None


@router.post("/api/admin/assign")
def assign_items(body: AssignBody, v: Admin) -> dict[str, Any]:
    return {"added": assign.assign(v.conn, body.kind, body.n, v.user.name)}


@router.post("/api/admin/items/{item_id:path}/delete")
def delete_item(item_id: str, v: Admin) -> dict[str, Any]:
    items.delete(v.conn, item_id, v.user.name)
    return {"deleted": item_id}


@router.post("/api/admin/import")
async def import_queue(
    request: Request, v: Admin, file: Annotated[UploadFile, File()]
) -> dict[str, Any]:
    """Upload a review_queue.jsonl: malformed lines are listed (file and line), the rest import."""
    raw = await file.read(MAX_UPLOAD + 1)
    if len(raw) > MAX_UPLOAD:
        raise DataError(f"{file.filename}: larger than {MAX_UPLOAD // 2**20} MiB")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{file.filename}: not UTF-8 text ({e})") from e
    project = request.app.state.project
    uploads = project.path / "uploads"
    uploads.mkdir(exist_ok=True)
    name = Path(file.filename or "upload.jsonl").name
    saved = uploads / f"{len(list(uploads.iterdir())) + 1:04d}-{name}"
    saved.write_bytes(raw)  # kept: what was uploaded is never lost
    result = items.import_queue(v.conn, project.data, saved, v.user.name)
    return {"added": result.added, "skipped": result.skipped, "problems": result.problems}


class ExportBody(BaseModel):
    kind: Literal["qa", "captions", "answers", "raters", "rules"]
    user: str | None = None
    benchmark: Literal["4dbench", "mmworld"] = "4dbench"


@router.post("/api/admin/export")
def export(body: ExportBody, request: Request, v: Admin) -> dict[str, Any]:
    project = request.app.state.project
    result = exports.export_kind(project, v.conn, body.kind, v.user.name, body.user, body.benchmark)
    return {"path": str(result.path), "written": result.written, "left_out": result.left_out}
