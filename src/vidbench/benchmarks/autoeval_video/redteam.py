"""Adversarial rule annotation (AutoEval-Video paper section 3.4, Fig. 3) as a workspace on disk.

For an instance, the red team records attack answers with the verdict a human expects; a check
runs the judge with the current rule on every attack of the instance and records a round, with
each attack's verdict and reasoning and the attacks that broke the rule (the judge disagreed with
the human, or gave no verdict). The annotators then revise the rule; each revision is a new
version that names the round it answers. The loop ends when a check of the current rule, with
every attack recorded so far, finds none that breaks it ("holds").

WORKSPACE/
  redteam.json   the whole history (format below), rewritten atomically after every change
  store.sqlite   the judge's replies (runner/store.py), so a repeated check asks nothing again

redteam.json: {"format": 1, "rules_file": PATH, "rules_sha256": HEX, "instances": {ID: {
  "versions": [{"version": 0, "round": 0, "rule": TEXT, "note": ..., "created": ISO}, ...],
  "attacks":  [{"attack": 1, "answer": TEXT, "expected": 0|1, "note": ..., "created": ISO}, ...],
  "rounds":   [{"round": 1, "version": 0, "judge": SPEC, "protocol": NAME, "created": ISO,
                "results": [{"attack": 1, "expected": 1, "verdict": 0|1|null, "status": "ok"|
                             "unparsed", "reason": TEXT, "reply": TEXT, "broke": true}, ...],
                "successful_attacks": [1, ...]}, ...]}}}
Version 0 is the rule as read from the rules file; version k > 0 was written after round
`round`.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import JsonValue, TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic validates it only from here before 3.12

from vidbench.benchmarks.autoeval_video import loader as autoeval_video
from vidbench.benchmarks.autoeval_video.loader import MARKER, instance_id
from vidbench.core.errors import ConfigError
from vidbench.core.files import write_json, write_jsonl

FORMAT = 1
FILENAME = "redteam.json"
Status = Literal["unchecked", "open", "broken", "holds"]


class RuleVersion(TypedDict):
    version: int
    round: int  # the round it answers (0: the rule as the rules file has it)
    rule: str
    note: str
    created: str


class Attack(TypedDict):
    attack: int
    answer: str
    expected: int  # the verdict a human expects: 0 or 1
    note: str
    created: str


class AttackResult(TypedDict):
    """What the judge made of one attack in a round."""

    attack: int
    expected: int
    verdict: int | None  # None: no verdict
    status: str  # the judge call's status
    reason: str | None
    reply: str | None
    attempts: int
    broke: bool  # the judge disagreed with the human, or gave no verdict


class Round(TypedDict):
    round: int
    version: int
    judge: str
    protocol: str
    created: str
    results: list[AttackResult]
    successful_attacks: list[int]


class History(TypedDict):
    """One instance: its question, its rule's versions, the attacks and the rounds."""

    question: str | None
    versions: list[RuleVersion]
    attacks: list[Attack]
    rounds: list[Round]


class WorkspaceData(TypedDict):
    format: int
    rules_file: str
    rules_sha256: str
    instances: dict[str, History]


WORKSPACE = TypeAdapter(WorkspaceData)
HISTORY = TypeAdapter(History)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def check_rule_text(rule: str, where: str) -> None:
    count = rule.count(MARKER)
    if count != 1:
        raise ConfigError(
            f"{where}: a rule needs exactly one {MARKER!r} marker (where the answer goes); "
            f"this one has {count}"
        )


@dataclass
class Workspace:
    path: Path
    data: WorkspaceData

    # ------------------------------------------------------------------ creating and saving
    @classmethod
    def init(cls, path: Path, rules_file: Path) -> Workspace:
        file = autoeval_video.resolve_rules(rules_file).resolve()
        if (path / FILENAME).exists():
            raise ConfigError(f"{path / FILENAME} exists already; use that workspace")
        data: WorkspaceData = {
            "format": FORMAT,
            "rules_file": str(file),
            "rules_sha256": hashlib.sha256(file.read_bytes()).hexdigest(),
            "instances": {},
        }
        workspace = cls(path, data)
        workspace.save()
        return workspace

    @classmethod
    def open(cls, path: Path) -> Workspace:
        file = path / FILENAME
        if not file.is_file():
            raise ConfigError(f"{path}: no {FILENAME}; start with `vidbench rules init {path}`")
        found: JsonValue = json.loads(file.read_text(encoding="utf-8"))
        if not isinstance(found, dict) or found.get("format") != FORMAT:
            known = found.get("format") if isinstance(found, dict) else None
            raise ConfigError(f"{file}: unknown workspace format {known!r}")
        try:
            return cls(path, WORKSPACE.validate_python(found))
        except ValidationError as e:
            raise ConfigError(f"{file}: not a red-team workspace ({e})") from None

    def save(self) -> None:
        write_json(self.path / FILENAME, self.data, indent=1)

    @property
    def rules_file(self) -> Path:
        return Path(self.data["rules_file"])

    def rules_changed(self) -> bool:
        """Whether the rules file differs from the one the workspace started from."""
        digest = hashlib.sha256(self.rules_file.read_bytes()).hexdigest()
        return digest != self.data["rules_sha256"]

    # ------------------------------------------------------------------------- instances
    def instance(self, key: object) -> History:
        """An instance's history, started from the rules file on first use."""
        key = instance_id(key)
        instances = self.data["instances"]
        if key not in instances:
            loaded = autoeval_video.load(self.rules_file)
            sample = next((s for s in loaded.items if s.id == key), None)
            if sample is None:
                bad = [str(p) for p in loaded.problems if p.record == key]
                reason = f": {bad[0]}" if bad else ""
                raise ConfigError(f"ID {key}: no usable rule in {self.rules_file}{reason}")
            version: RuleVersion = {
                "version": 0,
                "round": 0,
                "rule": sample.rules or "",
                "note": "",
                "created": _now(),
            }
            instances[key] = {
                "question": sample.question,
                "versions": [version],
                "attacks": [],
                "rounds": [],
            }
        return instances[key]

    def ids(self) -> list[str]:
        return sorted(self.data["instances"], key=int)

    def add_attack(self, key: object, answer: str, expected: int, note: str = "") -> int:
        if expected not in (0, 1):
            raise ConfigError(f"--expect must be 0 or 1, got {expected!r}")
        if not answer.strip():
            raise ConfigError("an attack needs a non-empty answer")
        attacks = self.instance(key)["attacks"]
        number = len(attacks) + 1
        attacks.append(
            {"attack": number, "answer": answer, "expected": expected, "note": note,
             "created": _now()}
        )  # fmt: skip
        self.save()
        return number

    def revise(self, key: object, rule: str, note: str = "") -> RuleVersion:
        """A new version of the rule, answering the latest round."""
        check_rule_text(rule, f"ID {instance_id(key)}: the revised rule")
        history = self.instance(key)
        if rule == current(history)["rule"]:
            raise ConfigError(f"ID {instance_id(key)}: the revised rule is the current rule")
        round_ = history["rounds"][-1]["round"] if history["rounds"] else 0
        version: RuleVersion = {
            "version": len(history["versions"]),
            "round": round_,
            "rule": rule,
            "note": note,
            "created": _now(),
        }
        history["versions"].append(version)
        self.save()
        return version

    def record_round(
        self, key: object, version: int, judge: str, protocol: str, results: list[AttackResult]
    ) -> Round:
        history = self.instance(key)
        round_: Round = {
            "round": len(history["rounds"]) + 1,
            "version": version,
            "judge": judge,
            "protocol": protocol,
            "created": _now(),
            "results": results,
            "successful_attacks": [r["attack"] for r in results if r["broke"]],
        }
        history["rounds"].append(round_)
        self.save()
        return round_

    # ---------------------------------------------------------------------------- export
    def updated_rows(self, initial: bool = False) -> list[JsonValue]:
        """The rules file's rows with each revised instance's latest rule (or, with `initial`,
        the rule each instance started from: the "without adversarial annotation" rules)."""
        rows, _ = autoeval_video.read_rows(self.rules_file)
        out: list[JsonValue] = []
        for row in rows:
            value = row.value
            history = self.data["instances"].get(row.name.strip())
            if isinstance(value, dict) and history is not None:
                chosen = history["versions"][0 if initial else -1]
                value = {**value, "Rule": chosen["rule"]}
            out.append(value)
        return out


def current(history: History) -> RuleVersion:
    return history["versions"][-1]


def status(history: History) -> Status:
    """unchecked: never checked; open: the current rule or some attack is not checked yet;
    broken: the last check of the current rule found successful attacks; holds: it found none."""
    if not history["rounds"]:
        return "unchecked"
    last = history["rounds"][-1]
    checked = {r["attack"] for r in last["results"]}
    if last["version"] != current(history)["version"] or any(
        a["attack"] not in checked for a in history["attacks"]
    ):
        return "open"
    return "broken" if last["successful_attacks"] else "holds"


def export_rules(workspace: Workspace, out: Path, initial: bool = False) -> int:
    """Write the updated rules file (JSON Lines, the original fields and order); returns how
    many instances carry a revised rule."""
    rows = workspace.updated_rows(initial)
    write_jsonl(out, rows)
    if initial:
        return 0
    return sum(1 for h in workspace.data["instances"].values() if len(h["versions"]) > 1)
