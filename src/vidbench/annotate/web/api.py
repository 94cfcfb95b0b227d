"""The JSON API the pages call (every POST carries the session's CSRF token, checked before the
body is read: limits.py) and the media route.

Media: `/media/REL` serves a video file under the project's data folder only (media.py): a path
with `..`, an absolute path, a NUL or another invalid path, a link leading outside (except the
video links the benchmarks' own tools make and record: their ReviewAdapter's `link_target`), or a
file that is not a video is refused with 400.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, HTTPException, Request, UploadFile
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field

from vidbench.annotate import assign, audit_queue, conflicts, exports, items, work
from vidbench.annotate.folder import read_given
from vidbench.annotate.media import BadMediaPath, MissingVideo, video_path
from vidbench.annotate.paths import child, file_name, writing_into
from vidbench.annotate.web.deps import Admin, Row, RowId, Signed, Text
from vidbench.annotate.web.limits import MAX_UPLOAD, UPLOAD

router = APIRouter()


class SaveBody(BaseModel):
    version: Row
    content: Text | None = None
    status: Text | None = None
    comment: Text | None = None
    resolves: list[Row] = Field(default_factory=list, max_length=100)  # kept texts it settles


@router.get("/api/work/{work_id}")
def read_work(work_id: RowId, v: Signed) -> dict[str, Any]:
    return work.public(work.get(v.conn, work_id, v.user))


@router.post("/api/work/{work_id}")
def save_work(work_id: RowId, body: SaveBody, v: Signed, request: Request) -> work.Saved:
    return work.save(
        v.conn,
        work_id,
        v.user,
        body.version,
        body.content,
        body.status,
        body.comment,
        tuple(body.resolves),
        request.app.state.adapters.check_edit,
    )


@router.post("/api/work/{work_id}/kept/{kept_id}/discard")
def discard_kept(work_id: RowId, kept_id: RowId, v: Signed) -> dict[str, Any]:
    """The author chose not to restore a text kept from a refused save."""
    work.get(v.conn, work_id, v.user)  # 404 unless the work is theirs to read
    conflicts.discard(v.conn, work_id, v.user.id, kept_id)
    return {"discarded": kept_id}


@router.get("/media/{rel:path}")
def media(rel: str, request: Request, v: Signed) -> FileResponse:
    try:
        adapters = request.app.state.adapters
        path = video_path(request.app.state.project.data, rel, adapters.link_target)
    except BadMediaPath as e:
        raise HTTPException(400, str(e)) from e
    except MissingVideo as e:
        raise HTTPException(404, str(e)) from e
    return FileResponse(path, headers={"Cache-Control": "private, max-age=3600"})


class AssignBody(BaseModel):
    kind: Literal["caption", "qa", "answer", "rule", "audit"]
    n: int | None = Field(default=None, ge=1, le=100)
    admins: bool = False  # admins get work too
    per_item: bool = False  # one object's items may go to different people
    dry_run: bool = False  # the plan only


@router.post("/api/admin/assign")
def assign_items(body: AssignBody, v: Admin) -> dict[str, Any]:
    """The plan (who gets how many), applied unless `dry_run`."""
    planned = assign.plan(v.conn, body.kind, body.n, body.admins, body.per_item)
    added = 0 if body.dry_run else assign.apply(v.conn, planned, v.user.name)
    return {**planned.as_dict(), "added": added, "dry_run": body.dry_run}


@router.post("/api/admin/items/{item_id:path}/delete")
def delete_item(item_id: str, v: Admin) -> dict[str, Any]:
    items.delete(v.conn, item_id, v.user.name)
    return {"deleted": item_id}


@router.post("/api/admin/import", max_body_size=UPLOAD)
def import_upload(
    request: Request, v: Admin, file: Annotated[UploadFile, File()], kind: str = "queue"
) -> dict[str, Any]:
    """Upload a file for one of the benchmarks' importers (`kind`; by default 4D-Bench's review
    queue, review_queue.jsonl): malformed lines (not UTF-8, not JSON, not a record of that kind)
    are listed by file and line, the rest import. The body was streamed with a size limit
    (limits.py); the file is kept in PROJECT/uploads under a name of its own. An upload refused
    as a whole (too large, an unknown `kind`) is not kept."""
    if file.size is not None and file.size > MAX_UPLOAD:
        raise HTTPException(413, f"{file.filename}: larger than {MAX_UPLOAD // 2**20} MiB")
    importer = request.app.state.adapters.importer(kind)  # an unknown kind: 422, nothing kept
    project = request.app.state.project
    with writing_into(project.path / "uploads", "the upload") as uploads:
        saved = _keep_upload(uploads, file)
    result = read_given(importer, v.conn, project.data, saved, v.user.name)
    return {"added": result.added, "skipped": result.skipped, "problems": result.problems}


def _keep_upload(uploads: Path, file: UploadFile) -> Path:
    """The uploaded file, copied into `uploads` under a name of its own, numbered in upload
    order: what was uploaded is never lost."""
    uploads.mkdir(exist_ok=True)
    stem = Path(file.filename or "upload.jsonl").stem
    for n in itertools.count(len(list(uploads.iterdir())) + 1):
        saved = child(uploads, file_name(f"{n:04d}-{stem}", ".jsonl"))
        try:
            out = saved.open("xb")
        except FileExistsError:  # another upload took the number
            continue
        with out:
            shutil.copyfileobj(file.file, out, 1 << 20)
        return saved
    raise AssertionError("unreachable: itertools.count never ends")


class ExportBody(BaseModel):
    kind: Text = Field(max_length=64)  # answers, or a benchmark's export (qa, captions, ...)
    user: Text | None = None
    benchmark: Text = Field(default="4dbench", max_length=64)  # whose answers


@router.post("/api/admin/export")
def export(body: ExportBody, request: Request, v: Admin) -> dict[str, Any]:
    project = request.app.state.project
    adapters = request.app.state.adapters
    if body.kind == "audit":
        result = audit_queue.export_audit(project, v.conn, adapters, v.user.name)
    else:
        result = exports.export_kind(
            project, v.conn, body.kind, v.user.name, body.user, body.benchmark, adapters
        )
    return {
        "path": str(result.path),
        "written": result.written,
        "left_out": result.left_out,
        "then": result.then,
    }
