"""What `curate 4d qa` leaves in OUT:

- 4d_qa.json: the kept questions in the official layout (ids `<uid>_<suffix>`, "Answer index"
  1..4, "Category"), gold letters balanced (layout.py);
- 4d_object_multi_view_videos: a link to the objects' video folder, so OUT is a data folder
  `vidbench run 4dbench-qa --data OUT` and `vidbench validate 4dbench OUT` read as they are;
- review_queue.jsonl: the kept questions with their provenance, for `vidbench annotate`;
- candidates.jsonl: every candidate with its fate (kept, rejected, blind-dropped, undecided),
  the reason, the validator's verdict and the blind answers;
- settings.json: the models, the FrameSpec, the prompt versions and the seed.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

from vidbench.benchmarks.fourd import loader as fourd
from vidbench.benchmarks.fourd.curate.qa import calls
from vidbench.benchmarks.fourd.curate.qa.candidates import SUBTASKS, Candidate
from vidbench.benchmarks.fourd.curate.qa.config import QAConfig
from vidbench.benchmarks.fourd.curate.qa.layout import letter_balance, qa_records, queue_record
from vidbench.core.files import Json, write_json, write_jsonl
from vidbench.models.registry import ModelChoice

QUEUE_FILE = "review_queue.jsonl"  # the name annotate/items.py looks for
CANDIDATES_FILE = "candidates.jsonl"
SETTINGS_FILE = "settings.json"


@dataclass(frozen=True)
class Written:
    kept: int
    letters: dict[str, dict[str, int]]


def prompt_versions(subtasks: tuple[str, ...]) -> list[str]:
    names = ["generate", "validate", "blind"] + [f"subtask_{SUBTASKS[s]}" for s in subtasks]
    return [calls.prompt(n).version for n in names]


def _model(choice: ModelChoice) -> dict[str, Json]:
    return {"spec": choice.spec, "options": choice.options}


def settings(config: QAConfig) -> dict[str, Json]:
    return {
        "data": str(config.data),
        "generator": _model(config.generator),
        "validator": _model(config.validator),
        "blind": [_model(b) for b in config.blind],
        "frame_spec": asdict(config.spec),
        "subtasks": list(config.subtasks),
        "questions_per_object_and_subtask": config.questions,
        "seed": config.seed,
        "prompts": prompt_versions(config.subtasks),
    }


def link_videos(out: Path, video_root: Path) -> None:
    """OUT/4d_object_multi_view_videos -> the objects' video folder (absolute), unless OUT already
    holds the videos themselves."""
    link = out / fourd.VIDEO_DIR
    target = video_root.resolve()
    if link.is_symlink():
        if Path(os.readlink(link)) == target:
            return
        link.unlink()
    elif link.exists():
        return  # OUT is the data folder itself
    link.symlink_to(target, target_is_directory=True)


def write_all(out: Path, found: list[Candidate], video_root: Path, config: QAConfig) -> Written:
    kept = [c for c in found if c.status == "kept"]
    records = qa_records(kept, config.seed)
    write_json(out / fourd.QA_FILE, records, indent=1)
    link_videos(out, video_root)
    by_id = {c.id: c for c in kept}
    queue = [
        queue_record(
            by_id[key],
            record,
            {
                "machine_generated": True,
                "generator": config.generator.spec,
                "validator": config.validator.spec,
                "validation": by_id[key].validation,
                "blind": by_id[key].blind,
            },
        )
        for key, record in records.items()
    ]
    write_jsonl(out / QUEUE_FILE, queue)
    write_jsonl(out / CANDIDATES_FILE, [c.as_dict() for c in found])
    write_json(out / SETTINGS_FILE, settings(config), indent=1)
    return Written(len(records), letter_balance(records))
