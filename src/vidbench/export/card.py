"""The dataset card (README.md) of an export: the YAML header the Hub and `datasets` read
(license, configs and their data files, size), then what the data is, how to load it, its
splits and columns, how it was built (the curation's settings and render records) and its
funnel, and any record left out."""

from __future__ import annotations

import json
import re
import time
from importlib import metadata
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from vidbench.export.request import ORIGINAL, ExportTask
from vidbench.report.funnel import Funnel, funnel_markdown
from vidbench.tasks.exported import ROW_COLUMNS, SPLIT

if TYPE_CHECKING:
    from vidbench.export.request import ExportedDataset, ExportRequest

COLUMN_MEANINGS = {
    "id": "the sample's id (vidbench's, as the original data names it)",
    "benchmark": "the benchmark vidbench read it as",
    "kind": "mcq (multiple choice), open (open-ended) or caption",
    "question": "the question (empty for captioning)",
    "options": "the option texts, in label order (A, B, ...)",
    "answer": "the gold option's letter (multiple choice)",
    "references": "accepted answers or reference captions",
    "rules": "a per-sample judging rule, where the benchmark has one",
    "video": "the first video's path in this folder",
    "views": "the view id of each video (one for a plain video, e.g. 24 for a 4D object)",
    "videos": "each view's video path in this folder",
    "start_s": "the window's start in the video, seconds (empty: the whole video)",
    "end_s": "the window's end in the video, seconds",
    "metadata": "everything else vidbench's loader read, as JSON text",
}


def _source_column(name: str, as_json: bool) -> str:
    field = name.removeprefix(ORIGINAL)
    what = (
        f"the source record's `{field}` as given (vidbench's own `{field}` is the column above)"
        if name.startswith(ORIGINAL)
        else "a field of the source record"
    )
    return what + (" as JSON text (its values have no common type)" if as_json else "")


def _size_category(rows: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if rows < limit:
            return label
    return "100K<n<1M"


def _front_matter(request: ExportRequest, exported: ExportedDataset) -> str:
    import yaml

    rows = sum(c.rows for c in exported.configs.values())
    kinds = {s.kind for t in request.tasks for s in t.loaded.items}
    categories = ["video-text-to-text"]
    if kinds & {"mcq", "open"}:
        categories.append("visual-question-answering")
    front = {
        "license": request.license,
        "pretty_name": request.title,
        "tags": ["video", "vidbench", request.benchmark],
        "task_categories": categories,
        "size_categories": [_size_category(rows)],
        "configs": [
            {
                "config_name": name,
                "data_files": [{"split": SPLIT, "path": f"data/{name}/{SPLIT}-*.parquet"}],
            }
            for name in exported.configs
        ],
    }
    return "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n"


def _json_block(value: Any) -> str:
    return "```json\n" + json.dumps(value, indent=1, ensure_ascii=False) + "\n```\n"


def _flat(counts: Any, prefix: str = "") -> str:
    """Nested counts on one line, zeros left out: "kept 5, dropped.no motion 2"."""
    if counts == 0 or counts == {}:
        return ""
    if not isinstance(counts, dict):
        return f"{prefix} {counts}".strip()
    parts = [_flat(v, f"{prefix}.{k}" if prefix else str(k)) for k, v in counts.items()]
    return ", ".join(p for p in parts if p)


def _funnel_section(funnels: dict[str, JsonValue]) -> str:
    if not funnels:
        return "No curation funnel was found beside the data (no `funnel.json`).\n"
    parts = []
    for relative, document in funnels.items():
        try:
            table = funnel_markdown(Funnel.from_document(document))
        except ValueError:  # a funnel.json of an older shape: its stages as they are
            stages = document.get("stages") if isinstance(document, dict) else None
            shown = stages.items() if isinstance(stages, dict) else []
            rows = [f"| {stage} | {_flat(counts)} |" for stage, counts in shown]
            table = "| stage | counts |\n| --- | --- |\n" + "\n".join(rows) + "\n"
        parts.append(f"From `construction/{relative}`:\n\n{table}")
    return "\n".join(parts)


def _construction_section(exported: ExportedDataset) -> str:
    settings = exported.construction.settings()
    renders = exported.construction.renders()
    if not settings and not renders:
        return (
            "No construction records were found beside the data (no `settings.json` or "
            "`render.json`).\n"
        )
    parts = [
        f"From `construction/{relative}`:\n\n" + _json_block(v) for relative, v in settings.items()
    ]
    if renders:
        parts.append(
            "Rendering (`render.json` of each object, under `construction/`): the settings and "
            "the objects rendered with them, by status:\n\n" + _json_block(renders)
        )
    return "\n".join(parts)


def _run_line(task: ExportTask) -> str:
    judge = " --judge JUDGE_MODEL" if task.judged else ""
    if task.task == "custom":  # the folder holds the benchmark.toml
        return f"vidbench run custom:path/to/this/folder --model MODEL{judge} --out results"
    return f"vidbench run {task.task} --data path/to/this/folder --model MODEL{judge} --out results"


def _scoring_section(request: ExportRequest) -> str:
    """How each config is scored, and the command that runs it."""
    parts = []
    for task in request.tasks:
        how = request.scoring.get(task.config) or (
            f"vidbench's `{task.task}` task, protocol `{task.protocol}` (the vidbench "
            "documentation of the benchmark says what it reproduces)"
        )
        judge = (
            " It is scored by an LLM judge: give one with `--judge` (any model spec)."
            if task.judged
            else ""
        )
        parts.append(f"**{task.config}**: {how}{judge}\n\n```console\n{_run_line(task)}\n```\n")
    return "\n".join(parts)


def code_span(text: str) -> str:
    """`text` (a record's id and problem, from the source's own data) as a Markdown code span:
    shown as it is, never read as Markdown or HTML (a `<script>`, a `#` heading, a link) and on
    one line; fenced by more backticks than any run of them in the text (CommonMark)."""
    text = " ".join(text.splitlines())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def card_text(request: ExportRequest, exported: ExportedDataset) -> str:
    configs = exported.configs
    rows = sum(c.rows for c in configs.values())
    first = next(iter(configs))
    try:
        version = metadata.version("vidbench")
    except metadata.PackageNotFoundError:
        version = "unknown"
    split_rows = "\n".join(
        f"| {name} | {SPLIT} | {c.rows} | {c.videos} | `{c.task}` |" for name, c in configs.items()
    )
    extra_columns = sorted({col for c in configs.values() for col in c.columns})
    as_json = {col for c in configs.values() for col in c.json_columns}
    columns = "\n".join(f"| `{name}` | {COLUMN_MEANINGS[name]} |" for name in ROW_COLUMNS)
    if extra_columns:
        columns += "\n" + "\n".join(
            f"| `{name}` | {_source_column(name, name in as_json)} |" for name in extra_columns
        )
    left_out = (
        "\n".join(f"- {code_span(str(p))}" for p in exported.problems)
        if exported.problems
        else "None: every record of the source was exported."
    )
    construction = _construction_section(exported)  # reading the records notes bad ones
    funnel = _funnel_section(exported.construction.funnels())
    unreadable = exported.construction.unreadable
    unreadable_note = (
        f"\nUnreadable construction records: {'; '.join(map(code_span, unreadable))}\n"
        if unreadable
        else ""
    )
    return f"""{_front_matter(request, exported)}
# {request.title}

{request.description or f"The {request.title} benchmark, exported by vidbench."}

Exported by vidbench {version} on {time.strftime("%Y-%m-%d", time.gmtime())}: {rows} rows over
{exported.videos} video files, in {len(configs)} config(s).

## Load it

```python
from datasets import load_dataset

rows = load_dataset("path/to/this/folder", "{first}", split="{SPLIT}")  # or the Hub repository id
```

The videos are files of this folder: each row's `video` and `videos` hold their paths relative
to it.

## How it is scored

{_scoring_section(request)}
## Splits

| config | split | rows | videos | vidbench task |
| --- | --- | --- | --- | --- |
{split_rows}

## Columns

| column | what it holds |
| --- | --- |
{columns}

## License

`{request.license}` (the `license` field above). Videos keep the terms of their sources.

## Construction settings

{construction}
## Curation funnel

{funnel}
## Records left out

{left_out}
{unreadable_note}"""
