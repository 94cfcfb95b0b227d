"""What DIR holds after `synth 4d --renderer blender`: the official 4D-Bench layout (4d_qa.json
with the kept questions, human_annotations.csv, the videos and each object's render.json), the
knob fields of every question (probe.jsonl beside 4d_qa.json, which the loader carries into
samples.jsonl), funnel.json (objects rendered, questions generated, questions kept), probe.json
(the settings and counts) and README.md (the dataset card). Every file is written the same way
for the same settings: no dates, no paths of this machine.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from vidbench.benchmarks.fourd.curate.funnel import stage_count
from vidbench.benchmarks.fourd.loader import PROBE_FILE
from vidbench.benchmarks.fourd.probe.card import dataset_card
from vidbench.benchmarks.fourd.probe.plan import PlannedObject, ProbeSettings
from vidbench.benchmarks.fourd.probe.questions import ProbeQuestion
from vidbench.benchmarks.fourd.probe.report import ProbeReport
from vidbench.benchmarks.fourd.probe.visibility import MIN_SEEN, MIN_SHARE
from vidbench.benchmarks.fourd.synthetic.questions import SUBTASKS
from vidbench.benchmarks.fourd.synthetic.writer import (
    CAPTION_DATA,
    CAPTION_FILE,
    QA_DATA,
    QA_FILE,
    VIDEOS,
    link_videos,
)
from vidbench.core.files import write_json, write_jsonl, write_text
from vidbench.report.funnel import record_stage

SETTINGS_FILE = "probe.json"
CARD_FILE = "README.md"


@dataclass(frozen=True)
class KeptQuestion:
    item: PlannedObject
    question: ProbeQuestion
    least_visible: float  # the smallest best visible share of a piece of its evidence


FUNNEL_STAGES = ("render", "questions", "visibility")  # funnel.json, in this order


def question_fields(kept: KeptQuestion, seed: int) -> dict[str, object]:
    """What samples.jsonl rows of this question carry: the object's knob values, the seed, the
    count (Object Counting) and how well its hardest piece of evidence is seen."""
    fields: dict[str, object] = {**kept.item.obj.knobs.to_json(), "seed": seed}
    if kept.question.draft.number is not None:
        fields["count"] = kept.question.draft.number
    fields["least_visible"] = kept.least_visible
    return fields


def write_dataset(
    out: Path,
    settings: ProbeSettings,
    planned: list[PlannedObject],
    records: dict[str, dict],
    kept: list[KeptQuestion],
    report: ProbeReport,
) -> None:
    """Every file of DIR but the videos, assets and render.json (see the module docstring)."""
    qa_data, caption_data = out / QA_DATA, out / CAPTION_DATA
    write_json(qa_data / QA_FILE, {k.question.key: k.question.record for k in kept})
    rows = [{"id": k.question.key, "probe": question_fields(k, settings.seed)} for k in kept]
    write_jsonl(qa_data / PROBE_FILE, rows)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(["folder_name"] + [f"caption_{i}" for i in range(1, 6)])
    for item in planned:
        if item.obj.scene.uid in records:
            writer.writerow([item.obj.scene.uid, *item.captions])
    write_text(caption_data / CAPTION_FILE, text.getvalue())
    link_videos(qa_data / VIDEOS, caption_data)

    rendered = stage_count(len(planned), len(report.rendered), report.failed)
    record_stage(out, "render", rendered, FUNNEL_STAGES)
    asked = len(planned) * len(SUBTASKS)
    generated = stage_count(asked, asked - len(report.missing), report.missing)
    record_stage(out, "questions", replace(generated, unit="questions"), FUNNEL_STAGES)
    visible = stage_count(report.generated, report.kept, report.dropped)
    record_stage(out, "visibility", replace(visible, unit="questions"), FUNNEL_STAGES)

    blender = sorted({r["blender"] for r in records.values()}) or ["(nothing rendered)"]
    summary = {
        "objects": settings.objects,
        "seed": settings.seed,
        "frames": settings.frames,
        "size": settings.size,
        "views": "all 24" if settings.all_views else "the input views",
        "knobs": settings.knobs.to_json(),
        "render": settings.render_settings().identity(),
        "blender": ", ".join(blender),
        "visibility": {"grid": settings.grid, "min_seen": MIN_SEEN, "min_share": MIN_SHARE},
        "counts": {
            "rendered": len(report.rendered),
            "failed": len(report.failed),
            "generated": report.generated,
            "kept": report.kept,
            "kept_per_subtask": dict(Counter(k.question.subtask for k in kept)),
            "dropped": dict(sorted(report.reasons().items())),
            "no_question": dict(sorted(Counter(p.reason for p in report.missing).items())),
            "gold_letters": dict(
                sorted(Counter("ABCD"[k.question.record["Answer index"] - 1] for k in kept).items())
            ),
        },
    }
    write_json(out / SETTINGS_FILE, summary)
    write_text(out / CARD_FILE, dataset_card(summary))
