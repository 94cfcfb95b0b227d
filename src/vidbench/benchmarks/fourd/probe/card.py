"""The dataset card (DIR/README.md) of a probe dataset: its knobs, seed, renderer and Blender
version, what it holds and how to run it; made from probe.json's summary alone."""

from __future__ import annotations

ENGINES = {"cycles": "Cycles", "eevee": "EEVEE"}
KNOB_MEANINGS = {
    "parts": "parts per object, occluders and look-alikes included",
    "occluders": "parts placed between a counted part and one of the input cameras",
    "lookalikes": "parts of the counted shape in another colour, then of the counted colour on "
    "another shape, in turn",
    "motion_size": "x the default distance moved, jump height and change of size",
    "motion_speed": "x the default speed (events last 1 / speed as long)",
    "camera_jitter": "x the 4D-Bench ring's random camera offsets (0: an exact ring)",
    "input_views": "views the model is shown (3: the official 1, 8, 16; K: `views-K`)",
}


def _values(value: object) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else str(value)


def dataset_card(summary: dict) -> str:
    knobs, counts, render = summary["knobs"], summary["counts"], summary["render"]
    views = knobs["input_views"]
    task = "4dbench-qa" if views == 3 else f"4dbench-qa:views-{views}"
    lines = [
        f"# 4D probe: {summary['objects']} objects, seed {summary['seed']}",
        "",
        "Procedural 4D objects rendered by Blender from their scene graphs, in the official "
        "4D-Bench layout, with exact answers for the five QA subtasks and five captions per "
        "object. Made by `vidbench synth 4d --renderer blender`; the same command and seed "
        "give the same files byte for byte, another seed a new set no model has seen.",
        "",
        f"- Blender {summary['blender']}, {ENGINES[render['engine']]} on the "
        f"{render['device'].upper()}, "
        f"{render['samples']} samples per pixel{', denoised' if render['denoise'] else ''}",
        f"- {summary['size']} x {summary['size']} px, {summary['frames']} frames per view at "
        f"{render['fps']} fps; views rendered: {summary['views']}",
        f"- seed {summary['seed']} (scenes, questions, camera offsets, Cycles noise)",
        "",
        "## Knobs",
        "",
        "Object i takes value i mod n of a knob given n values. Every question records its "
        "object's values in `probe.jsonl` (and so in a run's `samples.jsonl`).",
        "",
        "| knob | values | meaning |",
        "| --- | --- | --- |",
    ]
    lines += [f"| {k} | {_values(v)} | {KNOB_MEANINGS[k]} |" for k, v in knobs.items()]
    dropped = counts["dropped"] or {"(none)": 0}
    missing = counts["no_question"] or {"(none)": 0}
    vis = summary["visibility"]
    lines += [
        "",
        "## Contents",
        "",
        f"- {counts['rendered']} objects rendered ({counts['failed']} failed; a rerun redoes them)",
        f"- {counts['kept']} questions kept of {counts['generated']} generated: "
        + ", ".join(f"{s} {n}" for s, n in counts["kept_per_subtask"].items()),
        f"- gold letters: {', '.join(f'{k} {n}' for k, n in counts['gold_letters'].items())}",
        "",
        "A question is kept when everything it rests on (the counted parts, a moving part at "
        "its event, the pair in a spatial relation, ...) is visible in at least one frame of "
        "the input (the input views, six frames each), as Blender's own ray casts measure it: "
        f"at least {vis['min_seen']} pixels of a grid of {vis['grid']} x {vis['grid']} and "
        f"{vis['min_share']:.0%} of the part's silhouette.",
        "",
        "| dropped because | questions |",
        "| --- | --- |",
    ]
    lines += [f"| {reason} | {n} |" for reason, n in dropped.items()]
    lines += ["", "| subtask without a question | objects |", "| --- | --- |"]
    lines += [f"| {reason} | {n} |" for reason, n in missing.items()]
    lines += [
        "",
        "## Use",
        "",
        "```bash",
        f"vidbench run {task} --data DIR --model MODEL --out results/MODEL",
        "vidbench figures results/* --out figures   # accuracy against each swept knob",
        "```",
        "",
        "## Files",
        "",
        "- `4D_Object_Question_Answering/data/4d_qa.json`: the questions (official layout)",
        "- `4D_Object_Question_Answering/data/probe.jsonl`: each question's knob fields",
        "- `4D_Object_Question_Answering/data/4d_object_multi_view_videos/<uid>/`: the videos "
        "and `render.json` (cameras, settings, Blender's visibility counts)",
        "- `4D_Object_Captioning/data/human_annotations.csv`: five scene-true captions each",
        "- `assets/<uid>.glb`: the animated scenes Blender rendered",
        "- `funnel.json`: objects rendered, questions generated and kept, with reasons",
        "- `probe.json`: these settings and counts",
        "",
    ]
    return "\n".join(lines)
