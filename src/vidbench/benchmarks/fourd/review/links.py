"""The folder links the project's own tools make, and the target each one recorded.

`curate 4d qa` links OUT/4d_object_multi_view_videos to the videos it read (an absolute link to
the render or data folder; OUT/settings.json records that folder as "data"), and `annotate export
qa` links its output's 4d_object_multi_view_videos to the project's videos (OUT/export.json
records the folder whose videos it linked). The review app's media route follows such a link only
when the link is where the tool puts it and leads exactly where the tool's record says
(annotate/media.py asks through the ReviewAdapter's `link_target`); any other link leading out
of the data folder stays refused.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import JsonValue

from vidbench.benchmarks.fourd import loader as fourd
from vidbench.core.errors import ConfigError

EXPORT_RECORD = "export.json"  # written beside the link by `annotate export qa`
CURATE_SETTINGS = "settings.json"  # benchmarks/fourd/curate/qa/output.SETTINGS_FILE


def _record(path: Path) -> dict[str, JsonValue] | None:
    try:
        found = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _curate_target(folder: Path) -> Path | None:
    """Where `curate 4d qa` linked OUT's videos: the video folder of its recorded "data"."""
    from vidbench.benchmarks.fourd.curate.qa.objects import video_root

    settings = _record(folder / CURATE_SETTINGS)
    data = settings.get("data") if settings is not None else None
    if settings is None or not isinstance(data, str) or "generator" not in settings:
        return None
    try:
        return video_root(Path(data))[0].resolve()
    except (ConfigError, OSError, RuntimeError):
        return None


def _export_target(folder: Path) -> Path | None:
    """Where `annotate export qa` linked its videos: the video folder of its recorded source."""
    record = _record(folder / EXPORT_RECORD)
    videos_of = record.get("videos_of") if record is not None else None
    if not isinstance(videos_of, str):
        return None
    try:
        return (Path(videos_of) / fourd.VIDEO_DIR).resolve()
    except (OSError, RuntimeError):
        return None


def recorded_target(link: Path) -> Path | None:
    """The folder a project tool recorded for `link` (a symlink), or None when no tool made it."""
    if link.name != fourd.VIDEO_DIR:
        return None
    for target in (_curate_target(link.parent), _export_target(link.parent)):
        if target is not None:
            return target
    return None


def export_record(videos_of: Path) -> dict[str, str]:
    """What `annotate export qa` writes to EXPORT_RECORD beside its link."""
    return {"made_by": "vidbench annotate export qa", "videos_of": str(videos_of.resolve())}
