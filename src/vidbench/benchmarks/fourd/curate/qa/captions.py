"""`curate 4d captions`: a model drafts one caption per object for annotators to start from.

Each line of OUT/caption_drafts.jsonl is `{"uid", "caption", "machine_draft": true, "model",
"prompt"}`: a machine draft, never a reference; people edit it in the annotate app
(`vidbench annotate import PROJECT drafts OUT/caption_drafts.jsonl`). Calls go
through the store like every other curation call (a rerun asks nothing again); an object whose
views are missing or unreadable is recorded and skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from vidbench.benchmarks.fourd.curate.qa import calls
from vidbench.benchmarks.fourd.curate.qa.objects import list_objects
from vidbench.benchmarks.fourd.prompt import frames_sentence
from vidbench.benchmarks.fourd.variants import SPEC
from vidbench.core.errors import MediaError
from vidbench.core.files import write_jsonl
from vidbench.core.messages import Message, TextPart
from vidbench.core.requests import GenerationConfig
from vidbench.media.cache import FrameCache
from vidbench.media.spec import FrameSpec
from vidbench.models.registry import ModelOptions, load_model
from vidbench.runner.lock import results_lock
from vidbench.runner.model_calls import DEFAULT_ATTEMPTS, ask_in
from vidbench.scoring.model_call import ModelCall

DRAFTS_FILE = "caption_drafts.jsonl"
SETTINGS = GenerationConfig(temperature=0.0, max_tokens=512)


@dataclass
class CaptionConfig:
    data: Path
    out: Path
    model: str
    model_options: dict[str, str]
    spec: FrameSpec = SPEC
    attempts: int = DEFAULT_ATTEMPTS
    concurrency: int = 16
    cache_dir: Path | None = None
    progress: bool = True


def _caption(reply: str) -> str | None:
    text = " ".join(reply.split())
    return text or None


def draft_captions(config: CaptionConfig, console: Console) -> dict[str, int]:
    """Counts: objects, drafted, skipped, failed (the call failed: asked again by the next run),
    empty (the model replied with no text: stored, so not asked again), asked now."""
    template = calls.prompt("caption")
    listing = list_objects(config.data, config.spec)
    cache = FrameCache(config.cache_dir)
    batch, skipped = [], len(listing.skipped)
    for obj in listing.objects:
        try:
            images = calls.object_images(obj, config.spec, cache)
        except MediaError as e:
            console.print(f"[yellow]skipped[/] {obj.uid}: unreadable video: {escape(str(e))}")
            skipped += 1
            continue
        text = template.render(frames_sentence=frames_sentence(config.spec), uid=obj.uid)
        message = Message("user", (*images, TextPart(text)))
        batch.append(
            ModelCall(f"caption/{obj.uid}", (message,), template.version, _caption, SETTINGS)
        )
    for s in listing.skipped:
        console.print(f"[yellow]skipped[/] {s.uid}: {s.reason} {s.detail}", highlight=False)
    model = load_model(config.model, ModelOptions(0, config.concurrency, config.model_options))
    with results_lock(config.out, "curate 4d captions"):
        verdicts = ask_in(config.out, model, batch, config, "caption drafts")
        drafts = [
            {
                "uid": call.item.removeprefix("caption/"),
                "caption": verdicts[call.item].value,
                "machine_draft": True,
                "model": config.model,
                "prompt": template.version,
            }
            for call in batch
            if verdicts[call.item].ok
        ]
        write_jsonl(Path(config.out) / DRAFTS_FILE, drafts)
    asked = sum(v.asked for v in verdicts.values())
    return {
        "objects": len(listing.objects) + len(listing.skipped),
        "drafted": len(drafts),
        "skipped": skipped,
        "failed": sum(verdicts[call.item].absent for call in batch),
        "empty": sum(verdicts[call.item].status == "unparsed" for call in batch),
        "asked now": asked,
    }
