"""`/thumb/REL`: a list's thumbnail of the video REL (thumbnails.py), for signed-in people only;
REL is checked exactly as the media route checks it (media.py: 400 for a path it refuses, 404 for
no such video); a video that cannot be decoded is a 404 as well (the list shows no picture)."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, Response
from starlette.concurrency import run_in_threadpool

from vidbench.annotate.media import BadMediaPath, MissingVideo, video_path
from vidbench.annotate.thumbnails import thumbnail
from vidbench.annotate.web.deps import Signed
from vidbench.core.errors import MediaError

router = APIRouter()


@router.get("/thumb/{rel:path}")
async def thumb(rel: str, request: Request, v: Signed) -> Response:
    project, adapters = request.app.state.project, request.app.state.adapters
    try:
        video = video_path(project.data, rel, adapters.link_target)
        made = await run_in_threadpool(thumbnail, project.path, video)
    except BadMediaPath as e:
        raise HTTPException(400, str(e)) from e
    except (MissingVideo, MediaError) as e:
        raise HTTPException(404, str(e)) from e
    cache = {"Cache-Control": "private, max-age=3600"}
    if isinstance(made, bytes):  # not kept: the project folder cannot be written
        return Response(made, media_type="image/jpeg", headers=cache)
    return FileResponse(made, media_type="image/jpeg", headers=cache)
