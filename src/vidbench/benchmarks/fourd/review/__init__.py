"""4D-Bench in the review app (annotate/adapters.py): QA candidates to review and to answer,
objects to caption with machine drafts offered, and 4d_qa.json / human_annotations.csv made
from people's work; the video links `curate 4d qa` and the export make are followed."""

from __future__ import annotations

from pathlib import Path

from vidbench.annotate.adapters import Exporter, Importer, ReviewAdapter
from vidbench.benchmarks.fourd import loader as fourd
from vidbench.benchmarks.fourd.review.drafts import DRAFTS_FILE, import_drafts
from vidbench.benchmarks.fourd.review.exports import captions_exporter, qa_exporter
from vidbench.benchmarks.fourd.review.items import (
    QUEUE_FILE,
    check_candidate,
    import_queue,
    import_release,
)
from vidbench.benchmarks.fourd.review.links import recorded_target


def _queues(data: Path) -> list[Path]:
    """review_queue.jsonl beside the data folder's (or its QA release's) 4d_qa.json: `curate 4d
    qa` writes it, and its records carry the provenance the same ids in 4d_qa.json lack, so it
    is read before the release."""
    release = data / fourd.RELEASE_FOLDERS[fourd.QA_FILE]
    return [q for q in (data / QUEUE_FILE, release / QUEUE_FILE) if q.is_file()]


def _release(data: Path) -> list[Path]:
    return [data]  # reads whatever of a release (QA, videos) the folder holds


def _drafts(data: Path) -> list[Path]:
    return [data / DRAFTS_FILE] if (data / DRAFTS_FILE).is_file() else []


REVIEW = ReviewAdapter(
    benchmark="4dbench",
    importers=(
        Importer("queue", import_queue, _queues),
        Importer("4dbench", import_release, _release),
        Importer("drafts", import_drafts, _drafts),
    ),
    exporters=(Exporter("qa", qa_exporter), Exporter("captions", captions_exporter)),
    link_target=recorded_target,
    check_edit=check_candidate,
)
