"""The audit queue: the items `vidbench audit` flagged, for people to keep, fix or drop.

`vidbench annotate import-audit PROJECT DIR/audit.json` reads the audit (audit/audit.py writes
it), asks the benchmark it audited (its review adapter's AuditFixer, adapters.py) for those items
in the project's data folder, and adds each item with an open flag as an `audit` item: its
question, options, gold, videos, and its flags as the item's `flag` (the reasons, the suggested
gold) that every page shows. A reviewer decides (work content, JSON):

    {"decision": "keep"}                         the item is right as it is
    {"decision": "fix", "gold": "B"}             another option is the gold
    {"decision": "drop", "reason": "..."}        the item leaves the benchmark

`vidbench annotate export PROJECT audit` hands the submitted decisions to the benchmark, which
writes its fixed data (AuditFixer.write); what it cannot take is listed under `left_out`.

Bad input is refused with the file and the item named: a file that is not an audit, an audit of
a benchmark no adapter takes, one whose flagged items are none of the project's data (another
project's audit), and per item (the rest import): a flag of a kind the audit does not write
(core/audit_flags.py: an audit.json edited by hand, or by another version), an id the data
lacks, a gold that changed since the audit, a suggested option the item does not have.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue

from vidbench.annotate import db
from vidbench.annotate.adapters import Adapters, Audited, Decision
from vidbench.annotate.exports import not_assigned, review_of, work_and_unassigned
from vidbench.annotate.items import Exported, Imported, add_item
from vidbench.annotate.paths import writing_into
from vidbench.annotate.project import Project
from vidbench.core.audit_flags import FLAG_KINDS
from vidbench.core.errors import ConfigError, DataError

KIND = "audit"  # the item kind and the job (assign.JOBS)
DECISIONS = ("keep", "fix", "drop")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
FLAGGED_BY = "vidbench audit"


@dataclass(frozen=True)
class AuditFlag:
    kind: str
    reason: str
    suggested: str | None
    score: float | None
    reviewed: bool  # people kept the item with this flag before (it is not open)


@dataclass(frozen=True)
class AuditedItem:
    id: str
    gold: str | None
    flags: tuple[AuditFlag, ...]

    @property
    def open_flags(self) -> tuple[AuditFlag, ...]:
        return tuple(f for f in self.flags if not f.reviewed)


@dataclass(frozen=True)
class AuditDocument:
    path: Path
    task: str
    items: tuple[AuditedItem, ...]
    problems: tuple[str, ...]  # items whose record is malformed, named


@dataclass
class QueueImport:
    imported: Imported = field(default_factory=Imported)
    flagged: int = 0  # items with an open flag in the audit
    reviewed: int = 0  # items whose flags were all reviewed and kept before: not queued
    without_video: list[str] = field(default_factory=list)  # queued with no video to show


def _flag(raw: JsonValue) -> AuditFlag:
    if not isinstance(raw, dict):
        raise DataError(f"a flag is not an object: {raw!r}"[:200])
    kind, reason, suggested = raw.get("kind"), raw.get("reason", ""), raw.get("suggested")
    if not isinstance(kind, str) or not kind:
        raise DataError(f"a flag without its kind: {raw!r}"[:200])
    if kind not in FLAG_KINDS:  # it would key the queue item and be written back as reviewed
        raise DataError(
            f"unknown flag kind {kind[:60]!r} (the audit writes {', '.join(FLAG_KINDS)})"
        )
    if not isinstance(reason, str):
        raise DataError(f"the {kind} flag's reason is not text: {reason!r}"[:200])
    if suggested is not None and not isinstance(suggested, str):
        raise DataError(f"the {kind} flag's suggestion is not an option letter: {suggested!r}")
    score = raw.get("score")
    number = None if isinstance(score, bool) or not isinstance(score, int | float) else float(score)
    return AuditFlag(kind, reason, suggested, number, raw.get("reviewed") is True)


def _item(n: int, raw: JsonValue) -> AuditedItem:
    if not isinstance(raw, dict):
        raise DataError(f"item {n + 1} is not an object")
    key = raw.get("id")
    if not isinstance(key, str) or not key:
        raise DataError(f"item {n + 1} has no id")
    gold, flags = raw.get("gold"), raw.get("flags")
    if gold is not None and not isinstance(gold, str):
        raise DataError(f"item {key}: 'gold' is not an option letter: {gold!r}")
    if not isinstance(flags, list):
        raise DataError(f"item {key}: 'flags' is not a list")
    try:
        return AuditedItem(key, gold, tuple(_flag(f) for f in flags))
    except DataError as e:
        raise DataError(f"item {key}: {e}") from None


def read_audit(path: Path) -> AuditDocument:
    """The audit at `path` (or the audit.json in the folder `path`, the audit's --out);
    ConfigError naming the file when it is not one (a malformed item is a problem naming it,
    the rest are read)."""
    if Path(path).is_dir():
        path = Path(path) / "audit.json"  # audit/link.py's DOCUMENT (annotate sits below audit)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read it ({e})") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(
            f"{path}: not JSON (line {e.lineno}, column {e.colno}: {e.msg}); give the audit.json "
            "that `vidbench audit RUN... --out DIR` wrote"
        ) from None
    summary = raw.get("summary") if isinstance(raw, dict) else None
    task = summary.get("task") if isinstance(summary, dict) else None
    items = raw.get("items") if isinstance(raw, dict) else None
    if not isinstance(task, str) or not isinstance(items, list):
        raise ConfigError(
            f"{path}: not an audit (no summary.task and items list); give the audit.json that "
            "`vidbench audit RUN... --out DIR` wrote"
        )
    found, problems = [], []
    for n, item in enumerate(items):
        try:
            found.append(_item(n, item))
        except DataError as e:
            problems.append(f"{path}: {e}")
    return AuditDocument(Path(path), task, tuple(found), tuple(problems))


def letters_of(options: JsonValue) -> str:
    return LETTERS[: len(options)] if isinstance(options, list) else ""


def _checked(item: AuditedItem, subject: Audited) -> str | None:
    """Why the item cannot be queued against the data's item, or None."""
    if item.gold != subject.gold:
        return (
            f"item {item.id}: the audit saw the gold {item.gold}, the data has {subject.gold} "
            "(changed since the audit?): audit the runs again"
        )
    letters = LETTERS[: len(subject.options)]
    for flag in item.open_flags:
        if flag.suggested is not None and flag.suggested not in letters:
            have = f"options {letters[0]}-{letters[-1]}" if letters else "no options"
            return (
                f"item {item.id}: the {flag.kind} flag suggests {flag.suggested!r}, but the item "
                f"has {have}"
            )
    return None


def _data(
    doc: AuditDocument, audit_file: str, benchmark: str, item: AuditedItem, subject: Audited
) -> dict[str, JsonValue]:
    """What the audit item holds (items.describe reads its title, thumbnail and flag)."""
    flags = item.open_flags
    suggested = next((f.suggested for f in flags if f.suggested is not None), None)
    data: dict[str, JsonValue] = {
        "benchmark": benchmark,
        "task": doc.task,
        "id": subject.id,
        "Question": subject.question,
        "Options": list(subject.options),
        "gold": subject.gold,
        "references": list(subject.references),
        "flag": {
            "reason": "\n".join(f"{f.kind}: {f.reason}" for f in flags),
            "suggested": suggested,
            "by": FLAGGED_BY,
        },
        "flags": [
            {"kind": f.kind, "score": f.score, "reason": f.reason, "suggested": f.suggested}
            for f in flags
        ],
        "audit": audit_file,
    }
    if subject.subject is not None:
        data["uid"] = subject.subject
    if subject.videos:
        data["video"] = subject.videos[0]
    if len(subject.videos) > 1:
        data["views"] = list(subject.videos)
    if subject.first_views:
        data["first_views"] = list(subject.first_views)
    if subject.task:
        data["Category"] = subject.task
    return data


def queue_ref(item: AuditedItem) -> str:
    """The queue item's ref: the benchmark's item id, the gold the audit saw and its open flag
    kinds ("q03:D:gold+chance"), so importing an audit again adds nothing twice, and a later
    audit that flags the item anew (after a fix, with other flags) queues it again."""
    kinds = "+".join(f.kind for f in item.open_flags)
    return f"{item.id}:{item.gold}:{kinds}" if item.gold is not None else f"{item.id}:{kinds}"


def import_audit(
    conn: sqlite3.Connection, data: Path, path: Path, adapters: Adapters, author: str
) -> QueueImport:
    """The audit's items with an open flag, as `audit` items (see the module's docstring)."""
    doc = read_audit(path)
    try:
        benchmark, fixer = adapters.audit_fixer(doc.task)
        subjects = fixer.items(data, doc.task)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    out = QueueImport()
    out.imported.problems += doc.problems
    flagged = [item for item in doc.items if item.open_flags]
    out.flagged = len(flagged)
    out.reviewed = sum(1 for item in doc.items if item.flags and not item.open_flags)
    missing = [item.id for item in flagged if item.id not in subjects]
    if flagged and len(missing) == len(flagged):
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise ConfigError(
            f"{path}: none of its {len(flagged)} flagged items is in this project's data "
            f"({data}): {shown}. It audited {doc.task}: is it another project's audit?"
        )
    audit_file = str(doc.path.resolve())  # once: every item names it
    with db.transaction(conn):
        for item in flagged:
            subject = subjects.get(item.id)
            why = (
                f"item {item.id}: not in this project's data ({data})"
                if subject is None
                else _checked(item, subject)
            )
            if why is not None:
                out.imported.problems.append(f"{path}: {why}")
                continue
            assert subject is not None
            record = _data(doc, audit_file, benchmark, item, subject)
            if not subject.videos:  # outside the data folder (never served), or none at all
                out.without_video.append(item.id)
            add_item(conn, KIND, queue_ref(item), record, path.name, out.imported)
        db.log_event(conn, author, "import.audit", f"{path}: {out.imported.added} added")
    return out


def check_review(content: str, status: str, item: dict[str, JsonValue]) -> None:
    """DataError naming what is wrong with a decision on an audit item (work.check_content)."""
    if not content:
        if status == "submitted":
            raise DataError("choose keep, fix or drop before submitting")
        return
    try:
        review = json.loads(content)
    except json.JSONDecodeError as e:
        raise DataError(f"a decision must be JSON ({e})") from e
    if not isinstance(review, dict):
        raise DataError("a decision must be a JSON object")
    decision = review.get("decision")
    if decision not in (None, "", *DECISIONS):
        raise DataError(f"unknown decision {decision!r} (one of {', '.join(DECISIONS)})")
    reason = review.get("reason", "")
    if not isinstance(reason, str):
        raise DataError("the reason must be text")
    if decision == "fix":
        letters = letters_of(item.get("Options"))
        chosen = review.get("gold")
        if not letters:
            raise DataError("this item has no options to choose another gold from: keep or drop")
        if chosen not in tuple(letters):
            raise DataError(f"a fix chooses the new gold, one of {', '.join(letters)}")
        if chosen == item.get("gold") and status == "submitted":
            raise DataError(f"{chosen} is the gold already: keep the item, or choose another")
    if status == "submitted":
        if not decision:
            raise DataError("choose keep, fix or drop before submitting")
        if decision == "drop" and not reason.strip():
            raise DataError("a drop needs a reason")


def decisions(conn: sqlite3.Connection) -> tuple[dict[str, list[Decision]], list[str]]:
    """The submitted decisions by audited task, and what is left out (pending, reviewers who
    disagree, items never assigned), each named."""
    found: dict[str, list[Decision]] = defaultdict(list)
    left_out: list[str] = []
    given, left = work_and_unassigned(conn, KIND, KIND)
    for key, works in given.items():
        item = json.loads(works[0]["data"])
        pending = [w["owner"] for w in works if w["status"] != "submitted"]
        if pending:
            left_out.append(f"{key}: decision pending ({', '.join(pending)})")
            continue
        made = [(w, review_of(w)) for w in works]
        chosen = {(r.get("decision"), r.get("gold") if r.get("decision") == "fix" else None)
                  for _, r in made}  # fmt: skip
        if len(chosen) > 1:
            said = ", ".join(f"{w['owner']}: {_said(r)}" for w, r in made)
            left_out.append(f"{key}: the reviewers disagree ({said})")
            continue
        work, review = made[-1]
        decision, gold = str(review["decision"]), review.get("gold")  # checked when saved
        found[item["task"]].append(
            Decision(
                id=item["id"],
                decision=decision,
                gold=str(gold) if decision == "fix" and gold is not None else None,
                reason=str(review.get("reason") or "").strip(),
                flags=tuple(f["kind"] for f in item.get("flags", [])),
                by=", ".join(w["owner"] for w, _ in made),
                at=work["updated_at"] or "",
            )
        )
    return found, left_out + not_assigned(left)


def _said(review: dict[str, JsonValue]) -> str:
    decision = str(review.get("decision"))
    return f"fix to {review.get('gold')}" if decision == "fix" else decision


def export_audit(
    project: Project, conn: sqlite3.Connection, adapters: Adapters, author: str
) -> Exported:
    """`annotate export PROJECT audit`: each audited benchmark writes its fixed data from the
    submitted decisions (one audit's task per project is the usual case)."""
    tasks = sorted(
        {
            json.loads(r["data"])["task"]
            for r in conn.execute("SELECT data FROM items WHERE kind = ? AND deleted = 0", (KIND,))
        }
    )
    if not tasks:
        raise DataError(
            "no audit items in this project: add them first (vidbench annotate import-audit "
            "PROJECT DIR/audit.json)"
        )
    by_task, left_out = decisions(conn)
    done: Exported | None = None
    for task in tasks:
        _, fixer = adapters.audit_fixer(task)
        with writing_into(project.path / "exports", "the export") as out:
            written = fixer.write(project.data, by_task.get(task, []), out)
        with db.transaction(conn):
            db.log_event(conn, author, "export.audit", f"{written.path}: {written.written}")
        if done is None:
            done = written
        else:
            done.written += written.written
            done.left_out += [f"also written: {written.path}", *written.left_out]
    assert done is not None
    done.left_out += left_out
    return done
