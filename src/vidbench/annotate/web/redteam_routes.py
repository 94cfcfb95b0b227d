"""The red-team workflow's API: record an attack with its expected verdict, run the judge on
every attack (a round), revise the rule. Only the person the rule was given to may act on it."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel

from vidbench.annotate import redteam_store, work
from vidbench.annotate.adapters import Adapters, RedTeam, RedTeamRecord
from vidbench.annotate.web.deps import RowId, Signed, Text

router = APIRouter()


def _mine(work_id: int, v: Signed) -> work.Work:
    found = work.get(v.conn, work_id, v.user)
    if found["job"] != "redteam" or found["user_id"] != v.user.id:
        raise work.NoSuchWork(f"no red-team work {work_id} for {v.user.name}")
    return found


def history(request: Request, found: work.Work) -> dict[str, object]:
    """The instance's versions, attacks and rounds, with its status and current rule."""
    project = request.app.state.project
    conn = project.connect()
    try:
        return redteam_store.history(project, _engine(request), found["ref"], conn)
    finally:
        conn.close()


def _engine(request: Request) -> RedTeam | None:
    """The red-team engine of the benchmark whose rules the project holds."""
    adapters: Adapters = request.app.state.adapters
    return adapters.red_team


class AttackBody(BaseModel):
    answer: Text
    expected: Literal[0, 1]


class ReviseBody(BaseModel):
    rule: Text
    note: Text = ""


@router.post("/api/redteam/{work_id}/attack")
def attack(work_id: RowId, body: AttackBody, v: Signed, request: Request) -> dict[str, int]:
    found = _mine(work_id, v)
    project = request.app.state.project
    number = redteam_store.attack(
        project, _engine(request), v.conn, found["ref"], body.answer, body.expected, v.user.name
    )
    return {"attack": number}


@router.post("/api/redteam/{work_id}/check")
def check(work_id: RowId, v: Signed, request: Request) -> RedTeamRecord:
    found = _mine(work_id, v)
    judge = request.app.state.judge
    if judge is None:
        raise HTTPException(409, "no judge: start the app with `annotate serve ... --judge SPEC`")
    project = request.app.state.project
    return redteam_store.check(project, _engine(request), v.conn, found["ref"], judge, v.user.name)


@router.post("/api/redteam/{work_id}/revise")
def revise(work_id: RowId, body: ReviseBody, v: Signed, request: Request) -> RedTeamRecord:
    found = _mine(work_id, v)
    project = request.app.state.project
    return redteam_store.revise(
        project, _engine(request), v.conn, found["ref"], body.rule, body.note, v.user.name
    )
