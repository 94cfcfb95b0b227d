"""The admin page's accounts: add a person, give one another role, remove one, by the rules of
`vidbench annotate users add/role/remove` (auth.py does both): a removed person's sessions end
at once, their submitted work stays under their name, their unfinished work goes back to assign;
the last admin is kept. An account added without a password gets one made here, answered once
for the admin to hand over (it is stored only hashed)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter
from fastapi import Path as PathPart
from pydantic import BaseModel, Field

from vidbench.annotate import auth
from vidbench.annotate.web.deps import Admin, Text, Viewer

router = APIRouter()
AccountName = Annotated[str, PathPart(max_length=64)]


class AddBody(BaseModel):
    name: Text = Field(max_length=64)
    role: auth.Role
    password: Text | None = None  # None or empty: one is made and answered once


class RoleBody(BaseModel):
    role: auth.Role


@router.post("/api/admin/users")
def add_account(body: AddBody, v: Admin) -> dict[str, Any]:
    made = not body.password
    password = auth.new_password() if made else str(body.password)
    auth.check_free_name(v.conn, body.name)  # before the hashing: a taken name answers at once
    user = auth.add_user(v.conn, body.name, body.role, password, v.user.name)
    return {"name": user.name, "role": user.role, "password": password if made else None}


@router.post("/api/admin/users/{name}/role")
def change_role(name: AccountName, body: RoleBody, v: Admin) -> dict[str, Any]:
    return _changed(auth.set_role(v.conn, name, body.role, v.user.name), v)


@router.post("/api/admin/users/{name}/remove")
def remove_account(name: AccountName, v: Admin) -> dict[str, Any]:
    return _changed(auth.remove_user(v.conn, name, v.user.name), v)


def _changed(done: auth.Changed, v: Viewer) -> dict[str, Any]:
    """What the page says: the account now, its role before, the sessions ended, the unfinished
    work given back per item kind, and whether the admin changed their own account."""
    return {
        "name": done.user.name,
        "role": done.user.role,
        "before": done.before,
        "removed": done.user.removed,
        "sessions": done.sessions,
        "released": done.released,
        "you": done.user.id == v.user.id,
    }
