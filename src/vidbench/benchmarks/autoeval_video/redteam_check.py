"""One attack round: the judge, with an instance's current rule, on every recorded attack."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from vidbench.benchmarks.autoeval_video.loader import instance_id
from vidbench.benchmarks.autoeval_video.redteam import Workspace, current
from vidbench.benchmarks.autoeval_video.rules import JudgeProtocol, rules_call
from vidbench.core.errors import ConfigError, VidbenchError
from vidbench.models.registry import ModelChoice
from vidbench.runner.model_calls import ask_judge
from vidbench.runner.store import Store
from vidbench.scoring.model_call import CallResult


def _result(attack: dict[str, Any], verdict: CallResult) -> dict[str, Any]:
    value = verdict.value if verdict.ok else None
    return {
        "attack": attack["attack"],
        "expected": attack["expected"],
        "verdict": value.verdict if value else None,
        "status": verdict.status,
        "reason": value.reason if value else None,
        "reply": verdict.reply,
        "attempts": verdict.attempts,
        # the judge disagrees with the human, or cannot give a verdict under this rule
        "broke": value is None or value.verdict != attack["expected"],
    }


def check(
    workspace: Workspace,
    key: Any,
    judge: ModelChoice,
    protocol: JudgeProtocol,
    show_progress: bool = False,
    console: Console | None = None,
) -> dict[str, Any]:
    """Judge every attack of an instance with its current rule and record the round.

    A failed judge call records nothing (the round would be incomplete): it raises, and the
    same check can simply be run again (answered calls are not asked twice).
    """
    key = instance_id(key)
    history = workspace.instance(key)
    if not history["attacks"]:
        raise ConfigError(f"ID {key}: no attacks yet; record one with `vidbench rules attack`")
    version = current(history)
    calls = [
        rules_call(
            f"{key}/v{version['version']}/a{a['attack']}", version["rule"], a["answer"], protocol
        )
        for a in history["attacks"]
    ]
    with Store(workspace.path) as store:
        verdicts, _ = ask_judge(judge, calls, store, protocol.attempts, show_progress, console)
    failed = [(c.item, verdicts[c.item].error) for c in calls if verdicts[c.item].status == "error"]
    if failed:
        detail = "; ".join(f"{item}: {error}" for item, error in failed)
        raise VidbenchError(f"ID {key}: the judge failed ({detail}); nothing recorded, run again")
    results = [_result(a, verdicts[c.item]) for a, c in zip(history["attacks"], calls, strict=True)]
    return workspace.record_round(key, version["version"], judge.spec, protocol.name, results)
