"""Where the audits of a run are: `vidbench audit` records its output folder in each run it
read (RUN/audits.json), and `vidbench view` of those runs links the audit pages it finds
there (view/build.py copies each page into the report)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vidbench.core.errors import VidbenchError
from vidbench.report.results_dir import ResultsDir, read_required_json

AUDITS_FILE = "audits.json"
PAGE = "audit.html"
DOCUMENT = "audit.json"


def record_audit(runs: Sequence[Path], out: Path) -> None:
    """Add `out` to every run's audits.json (kept once, newest last)."""
    target = str(out.resolve())
    for run in runs:
        known = [a for a in audits_of(run) if a != target]
        ResultsDir(run).write_json(AUDITS_FILE, {"audits": [*known, target]})


def audits_of(run: Path) -> list[str]:
    """The audit folders recorded in `run` (none when the file is missing or unreadable)."""
    path = run / AUDITS_FILE
    if not path.is_file():
        return []
    try:
        data = read_required_json(path, "")
    except VidbenchError:
        return []
    found = data.get("audits") if isinstance(data, dict) else None
    return [a for a in found if isinstance(a, str)] if isinstance(found, list) else []


def audit_pages(runs: Sequence[Path]) -> list[Path]:
    """The audit pages still there for any of `runs`, each once, in the order recorded: a
    folder that a later audit of other runs wrote again is left out for these runs."""
    wanted = {str(run.resolve()) for run in runs}
    folders = dict.fromkeys(a for run in runs for a in audits_of(run))
    pages = [Path(f) / PAGE for f in folders]
    return [page for page in pages if page.is_file() and _covers(page, wanted)]


def _covers(page: Path, runs: set[str]) -> bool:
    """Whether the audit beside `page` read one of `runs` (resolved folders); True when its
    audit.json cannot tell (unreadable, or written before audits named each run's folder)."""
    try:
        data = read_required_json(page.parent / DOCUMENT, "")
    except VidbenchError:
        return True
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, list):
        return True
    folders = {m.get("folder") for m in models if isinstance(m, dict)}
    return None in folders or bool(folders & runs)


def audited_runs(page: Path) -> int | None:
    """How many runs the audit beside `page` read (None: its audit.json is not readable)."""
    try:
        data = read_required_json(page.parent / DOCUMENT, "")
    except VidbenchError:
        return None
    models = data.get("models") if isinstance(data, dict) else None
    return len(models) if isinstance(models, list) else None
