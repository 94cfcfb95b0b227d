"""What `vidbench export` publishes of a declared benchmark: its one task, its license and
description, how it is scored (for the dataset card), and its benchmark.toml (and judge prompt
file), so the export is itself a declared benchmark: `vidbench run custom:OUT` reads its rows
back from the Parquet files."""

from __future__ import annotations

from pathlib import Path

from vidbench.benchmarks.custom.declared import declared_benchmark
from vidbench.benchmarks.custom.spec import SPEC_FILE, Spec, read_spec
from vidbench.export.source import ExportSource
from vidbench.tasks.registry import build_task

PARSERS = {
    "extract": 'the first "(X)", else the first capital option letter standing alone '
    "(4D-Bench's official output processor)",
    "letter": "the reply must be the letter alone",
    "videomme": "Video-MME's official answer extraction (evaluation/eval_your_results.py)",
    "option-text": "the letter, or the text of exactly one option",
}
MATCHES = {
    "exact": "equals one of the accepted answers (`references`), case, punctuation and spacing "
    "aside",
    "contains": "holds one of the accepted answers (`references`) as whole words",
    "regex": "is matched by one of the accepted answers (`references`), regular expressions",
}


def scoring_text(spec: Spec) -> str:
    """How a declared benchmark scores a reply, in a paragraph for the dataset card."""
    groups = (
        f", Overall and per value of {', '.join(f'`{g}`' for g in spec.groups)}"
        if (spec.groups)
        else ""
    )
    if spec.multiple_choice:
        left = "counts wrong" if spec.unparsed == "wrong" else "is left out of every denominator"
        how = (
            f"multiple choice. The reply's option letter is read by the `{spec.parser}` parser "
            f"({PARSERS[spec.parser]}) and compared with `answer`, the gold letter vidbench "
            f"resolved from the source's `{spec.answer}`; a reply no letter is read from {left}. "
            f"Accuracy in percent{groups}"
        )
    elif spec.scoring == "judge":
        rubric = f" and the row's rubric (`rules`, from `{spec.rubric}`)" if spec.rubric else ""
        how = (
            "open-ended, judged by an LLM in AutoEval-Video's rule style: the judge sees the "
            f"question, the accepted answers (`references`){rubric} and the reply, and ends with "
            f"1 (right) or 0 (wrong). Accuracy in percent{groups}"
        )
    else:
        how = f"open-ended: a reply is right when it {MATCHES[spec.scoring]}. Accuracy in percent"
        how += groups
    return how + ". A row without a gold answer is asked and not scored (`no-gold`)."


def declares(folder: Path) -> bool:
    return (folder / SPEC_FILE).is_file()


def export_source(folder: Path) -> ExportSource:
    folder = Path(folder).expanduser().resolve()
    spec = read_spec(folder)
    benchmark = declared_benchmark(folder)
    [name] = benchmark.tasks
    files = {SPEC_FILE: spec.file}
    if spec.judge_prompt_file is not None:
        files[spec.judge_prompt_file] = folder / spec.judge_prompt_file
    return ExportSource(
        benchmark="custom",
        title=spec.title,
        tasks=[(spec.name, build_task(benchmark.tasks, name))],
        license=spec.license,
        description=spec.description,
        files=files,
        scoring={spec.name: scoring_text(spec)},
    )
