"""What the annotators read: a round's broken attacks with the judge's reasoning, an
instance's history, the workspace overview."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from vidbench.benchmarks.autoeval_video.redteam import History, Round, Workspace, current, status


def _verdict(value: int | None) -> str:
    return "no verdict" if value is None else str(value)


def print_round(console: Console, key: str, history: History, round_: Round) -> None:
    broken = [r for r in round_["results"] if r["broke"]]
    attacks = {a["attack"]: a for a in history["attacks"]}
    console.print(
        f"ID {key}, round {round_['round']}, rule v{round_['version']}: "
        f"{len(broken)} of {len(round_['results'])} attack(s) break the rule"
    )
    for result in broken:
        attack = attacks[result["attack"]]
        console.print(
            f"\n[bold red]attack {result['attack']}[/] expected {result['expected']}, "
            f"judge said {_verdict(result['verdict'])} ({result['status']})"
        )
        console.print(f"[bold]answer:[/] {escape(attack['answer'])}", highlight=False)
        reasoning = result["reason"] if result["reason"] is not None else result["reply"]
        console.print(f"[bold]judge's reasoning:[/] {escape(reasoning or '')}", highlight=False)
    if broken:
        console.print(
            f"\nrevise the rule: vidbench rules revise WORKSPACE {key} --rule-file NEW_RULE.txt"
        )
    else:
        console.print(f"[green]the rule holds[/]: no attack breaks rule v{round_['version']}")


def print_history(console: Console, key: str, history: History) -> None:
    console.print(f"[bold]ID {key}[/]: {escape(history['question'] or '')} — {status(history)}")
    for version in history["versions"]:
        after = f"after round {version['round']}" if version["version"] else "from the rules file"
        note = f" — {escape(version['note'])}" if version["note"] else ""
        console.print(f"  rule v{version['version']} ({after}){note}")
    for attack in history["attacks"]:
        console.print(
            f"  attack {attack['attack']} (expect {attack['expected']}): "
            f"{escape(attack['answer'][:100])}",
            highlight=False,
        )
    for round_ in history["rounds"]:
        verdicts = ", ".join(f"a{r['attack']}={_verdict(r['verdict'])}" for r in round_["results"])
        won = ", ".join(map(str, round_["successful_attacks"])) or "none"
        console.print(
            f"  round {round_['round']} on v{round_['version']} by {escape(round_['judge'])}: "
            f"{verdicts}; successful attacks: {won}",
            highlight=False,
        )


def print_overview(console: Console, workspace: Workspace) -> None:
    table = Table(title=f"red team workspace {workspace.path}")
    for column in ("ID", "rule version", "attacks", "rounds", "successful attacks", "status"):
        table.add_column(column)
    for key in workspace.ids():
        history = workspace.data["instances"][key]
        won = sum(len(r["successful_attacks"]) for r in history["rounds"])
        table.add_row(
            key,
            str(current(history)["version"]),
            str(len(history["attacks"])),
            str(len(history["rounds"])),
            str(won),
            status(history),
        )
    console.print(table)
