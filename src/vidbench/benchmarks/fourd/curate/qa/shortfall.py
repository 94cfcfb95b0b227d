"""Why `curate 4d qa` kept few questions: the funnel's main losses, each with the file that
holds its cases, for the terminal (funnel.md has every count; this says where to look first)."""

from __future__ import annotations

from pathlib import Path

from vidbench.benchmarks.fourd.curate.qa.funnel import FunnelData
from vidbench.benchmarks.fourd.curate.qa.output import CANDIDATES_FILE

FUNNEL_JSON = "funnel.json"
FEW = 0.5  # kept below this share of the questions asked for: the reasons are printed
SHOWN = 3  # reasons printed, the largest first


def reasons(data: FunnelData, out: Path) -> list[tuple[int, str]]:
    """(count, what happened and where to see it) for every loss in the funnel's data; `out`
    holds the files."""
    total = data["total"]
    problems = f'{out / FUNNEL_JSON} "problems"'
    candidates = out / CANDIDATES_FILE
    found: list[tuple[int, str]] = [
        (
            total["replies unparsed"],
            f"generator replies held no readable questions (the end of each: {problems}; "
            f"the whole replies: {out / 'store.sqlite'})",
        ),
        (total["call errors"], f"generator calls failed (the errors: {problems}; run again)"),
        (total["undecided"], f"questions undecided, a check failed ({candidates}; run again)"),
        (total["blind-dropped"], f"questions both blind models answered ({candidates})"),
    ]
    found += [
        (n, f'questions rejected: {reason} ({problems}, "reason")')
        for reason, n in total["parse rejects"].items()
    ]
    found += [
        (n, f"questions the validator rejected: {reason} ({candidates})")
        for reason, n in total["validator rejects"].items()
    ]
    for reason, n in data["objects"].get("skipped", {}).items():
        found.append((n, f'objects skipped: {reason} ({problems}, stage "objects")'))
    return sorted((item for item in found if item[0]), key=lambda item: -item[0])


def shortfall(data: FunnelData, asked: int, out: Path) -> list[str]:
    """Lines for the terminal when fewer than FEW of the ``asked`` questions were kept (none
    otherwise): the main reasons, largest first."""
    kept = data["total"]["kept"]
    if asked and kept >= FEW * asked:
        return []
    lines = [f"{kept} kept of {asked} questions asked for; the main reasons:"]
    lines += [f"  {n} {what}" for n, what in reasons(data, out)[:SHOWN]]
    if len(lines) == 1:
        lines.append("  no object was asked about (see the skipped objects above)")
    return lines
