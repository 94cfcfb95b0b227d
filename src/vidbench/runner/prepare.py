"""Preparing one sample's request: its frames, messages and store key.

The local infer stage (infer.py) and the Ray workers (ray/worker.py) both prepare requests with
these functions, so a request (and so its store key) is the same wherever it is built.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass

from vidbench.core.errors import DataError
from vidbench.core.messages import Message
from vidbench.core.records import Sample
from vidbench.core.requests import Request
from vidbench.media.cache import FrameCache
from vidbench.media.frame import Frame
from vidbench.media.frames import load_frames
from vidbench.runner.keys import prompt_hash, request_key
from vidbench.runner.samples import SampleSet
from vidbench.runner.store import RequestRecord
from vidbench.tasks.base import Task, call_task_code

# The status of a sample whose request the task's code could not build (PromptError).
PROMPT = "prompt"


class PromptError(DataError):
    """The task's code failed on a sample's request (`build_messages` or `choices` raised): a
    bug of the task (a plugin's), said with the task's code; that sample fails alone."""


def messages_of(task: Task, sample: Sample, frames: Sequence[Frame]) -> tuple[Message, ...]:
    """The task's messages for a sample; PromptError naming the task when its code fails."""
    return call_task_code(
        task, "build_messages()", lambda: task.build_messages(sample, list(frames)), PromptError
    )


@dataclass(frozen=True)
class Prepared:
    """A request ready to send, with what the store keeps about it (no image bytes)."""

    sample_id: str
    request: Request
    record: RequestRecord

    @property
    def prompt_hash(self) -> str:
        return prompt_hash(self.request.messages)


def describe(frames: Sequence[Frame], request: Request) -> RequestRecord:
    """What the store keeps about a request: its frames and its prompt text."""
    return {
        "frames": [f.describe() for f in frames],
        "prompt": [m.text for m in request.messages],
    }


def sample_frames(
    task: Task, sample: Sample, cache: FrameCache | None, needs_frames: bool
) -> list[Frame]:
    """The frames a model sees for a sample (none for a model that reads no images).
    Raises DataError for unusable media."""
    return load_frames(sample.media, task.frame_spec, cache) if needs_frames else []


@dataclass(frozen=True)
class Preparation:
    """What preparing a sample's request needs besides the sample: the task, the frame cache,
    whether the model reads images, and the plan key."""

    task: Task
    cache: FrameCache | None
    needs_frames: bool
    plan: str

    @property
    def keys_from_labels(self) -> bool:
        """Whether a request's key is known from its frames' labels, before any image is read
        (not for a grid image: its key is known once it is made)."""
        return not (self.needs_frames and self.task.frame_spec.grid is not None)

    def answered_by_labels(self, sample: Sample, answered: Container[str]) -> bool:
        """Whether the sample's request key is among `answered`, told from its frames' labels
        alone, without reading any image (False where the labels cannot tell: a grid image).
        Raises DataError for unusable media, as preparing the request would."""
        key = self.label_keys_of([sample])[0]
        return key is not None and key in answered

    def label_keys_of(self, group: Sequence[Sample]) -> list[str | None]:
        """The request key of each sample of a group that shows the same frames (one clip's
        questions: infer.same_frames), made from its frames' labels alone, found once for them
        all, without reading any image (None where the labels cannot tell: a grid image, or a
        sample the task's code fails on, said when its request is built). Raises DataError for
        unusable media."""
        task = self.task
        if not self.keys_from_labels:
            return [None] * len(group)
        named = (
            load_frames(group[0].media, task.frame_spec, self.cache, pixels=False)
            if self.needs_frames and group
            else []
        )
        keys: list[str | None] = []
        for sample in group:
            try:
                keys.append(request_key(self.plan, sample.id, messages_of(task, sample, named)))
            except PromptError:  # said by build_request, for this sample alone
                keys.append(None)
        return keys

    def new_request(self, sample: Sample, answered: Container[str]) -> Prepared | str:
        """The request of a sample, or the key of its stored answer when that is among
        `answered` (the keys stored for it): where the frames' labels tell, before any image is
        read, so a rerun reads no frame of an answered sample. Raises DataError for unusable
        media."""
        key = self.label_keys_of([sample])[0]
        if key is not None and key in answered:
            return key
        frames = sample_frames(self.task, sample, self.cache, self.needs_frames)
        prepared = build_request(self.task, sample, frames, self.plan)
        return prepared.request.key if prepared.request.key in answered else prepared


def check_views(task: Task, samples: SampleSet, data: str) -> None:
    """DataError when the samples have videos on disk, but no sample one for a view the task
    reads (a dataset rendered with fewer views than that): said once, before any model call,
    instead of a media error on every sample. Videos missing altogether, or a view missing for
    some samples only, are the samples' own media errors. Reads the samples until every view is
    found (the first sample, most often)."""

    def has(sample: Sample, view: int) -> bool:
        path = sample.media.videos.get(view)
        return path is not None and path.is_file()

    views = task.frame_spec.views
    unseen = set(views)
    with_videos: Sample | None = None  # the first sample with a video on disk
    for sample in samples:
        if not unseen:
            return
        unseen -= {view for view in unseen if has(sample, view)}
        if with_videos is None and any(has(sample, view) for view in sample.media.videos):
            with_videos = sample
    nowhere = [view for view in views if view in unseen]
    if not nowhere or with_videos is None:
        return
    there = [v for v in sorted(with_videos.media.videos) if has(with_videos, v)]
    raise DataError(
        f"{data}: none of the {len(samples)} samples has a video for view "
        f"{', '.join(map(str, nowhere))}, and {task.name} reads views "
        f"{', '.join(map(str, views))} (sample {with_videos.id} has views {_ranges(there)}); "
        "choose views the data has with --views"
    )


def _ranges(views: Sequence[int]) -> str:
    """ "0-15" for a run of ids, "0, 2, 5" otherwise."""
    if len(views) > 2 and list(views) == list(range(views[0], views[-1] + 1)):
        return f"{views[0]}-{views[-1]}"
    return ", ".join(map(str, views))


def build_request(task: Task, sample: Sample, frames: Sequence[Frame], plan: str) -> Prepared:
    """The sample's request; PromptError naming the task when the task's code fails on it."""
    messages = messages_of(task, sample, frames)
    key = request_key(plan, sample.id, messages)
    choices = call_task_code(task, "choices()", lambda: task.choices(sample), PromptError)
    request = Request(key, sample.id, messages, task.generation, choices)
    return Prepared(sample.id, request, describe(frames, request))
