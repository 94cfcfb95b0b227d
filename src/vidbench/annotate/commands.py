"""The `vidbench annotate ...` commands: init, users add/list/role/remove/unlock, assign, import,
import-audit, export, serve.

cli.py calls `register(sub)`; each handler parses its arguments and calls the library. Passwords
come from a prompt or from standard input (--password-stdin), never from a flag value (a flag
would end up in the shell history and the process list).
"""

from __future__ import annotations

import argparse
import errno
import getpass
import math
import socket
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from vidbench import cli_options as options
from vidbench import cli_types as types
from vidbench.annotate.adapters import registered_adapters
from vidbench.annotate.db import COMMAND_LINE
from vidbench.console import counted, err, out
from vidbench.core.errors import EXIT_INCOMPLETE, ConfigError

if TYPE_CHECKING:  # the app's modules load when a command runs
    from vidbench.annotate.items import Imported
    from vidbench.annotate.project import Project


def _require() -> None:
    from vidbench.extras import require

    require("vidbench annotate", ["fastapi", "uvicorn", "jinja2", "argon2"], "annotate")


def _open(path: str) -> Project:
    from vidbench.annotate.project import Project

    return Project.open(Path(path))


def _print_import(done: Imported) -> None:
    there = f", {len(done.skipped)} already there" if done.skipped else ""
    out.print(f"{counted(done.added, 'item')} added{there}")
    for problem in done.problems:
        err.print(f"[yellow]skipped[/]: {escape(problem)}", highlight=False)


def _cmd_init(args: argparse.Namespace) -> int:
    _require()
    from vidbench.annotate.folder import import_folder
    from vidbench.annotate.project import Project

    project = Project.init(Path(args.project), Path(args.data))
    with closing(project.connect()) as conn:
        _print_import(import_folder(conn, project.data, COMMAND_LINE, args.adapters))
    out.print(f"project {project.path}: add people with `vidbench annotate users add`")
    return 0


def _read_password(args: argparse.Namespace) -> str:
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass(f"password for {args.name}: ")
    if getpass.getpass("again: ") != first:
        raise ConfigError("the two passwords differ")
    return first


def _cmd_users_add(args: argparse.Namespace) -> int:
    _require()
    from vidbench.annotate import auth

    project = _open(args.project)
    with closing(project.connect()) as conn:
        auth.check_free_name(conn, args.name)  # before the password is typed twice
        user = auth.add_user(conn, args.name, args.role, _read_password(args))
    out.print(f"added {user.name} ({user.role})")
    return 0


def _cmd_users_list(args: argparse.Namespace) -> int:
    from vidbench.annotate import auth

    with closing(_open(args.project).connect()) as conn:
        for user in auth.users(conn):
            removed = f"\tremoved {user.removed}" if user.removed else ""
            out.print(f"{user.name}\t{user.role}{removed}", markup=False, highlight=False)
    return 0


def _cmd_users_role(args: argparse.Namespace) -> int:
    from vidbench.annotate import auth

    with closing(_open(args.project).connect()) as conn:
        done = auth.set_role(conn, args.name, args.role, COMMAND_LINE)
    if done.before == done.user.role:
        out.print(f"{done.user.name} is {done.user.role} already; nothing changed", highlight=False)
        return 0
    out.print(
        f"{done.user.name}: {done.before} -> {done.user.role} (from their next request)",
        highlight=False,
    )
    nothing = (
        f"nothing given back: their unfinished work is all of jobs the {done.user.role} role does"
    )
    _print_released(args.project, done.released, nothing)
    return 0


def _print_released(project: str, released: dict[str, int], nothing: str) -> None:
    """How much unfinished work went back to the pool, and the command that gives it out (or
    `nothing`, when none did)."""
    total = sum(released.values())
    if not total:
        out.print(nothing, highlight=False)
        return
    kinds = ", ".join(f"{kind} {n}" for kind, n in released.items())
    out.print(f"{counted(total, 'unfinished piece')} of work back in the pool ({kinds})")
    for kind in released:
        out.print(f"  give it to others: vidbench annotate assign {project} {kind}")


def _cmd_users_remove(args: argparse.Namespace) -> int:
    from vidbench.annotate import auth

    with closing(_open(args.project).connect()) as conn:
        done = auth.remove_user(conn, args.name, COMMAND_LINE)
    out.print(
        f"removed {done.user.name}: {counted(done.sessions, 'session')} ended, cannot sign in; "
        "their submitted work stays in exports under their name",
        highlight=False,
    )
    _print_released(args.project, done.released, "no unfinished work of theirs to give to others")
    return 0


def _cmd_users_unlock(args: argparse.Namespace) -> int:
    from vidbench.annotate import throttle

    with closing(_open(args.project).connect()) as conn:
        cleared = throttle.unlock(conn, args.name, COMMAND_LINE)
    if not cleared:
        out.print(f"{args.name}: no sign-in attempts counted; nothing to clear", highlight=False)
        return 0
    now = time.time()
    for pair in cleared:
        state = f"locked for {math.ceil(pair.locked_until - now)} s more"
        if pair.locked_until <= now:
            state = "not locked"
        out.print(
            f"{args.name} from {pair.client}: {counted(pair.attempts, 'attempt')} cleared "
            f"({state})",
            highlight=False,
        )
    return 0


def _cmd_assign(args: argparse.Namespace) -> int:
    from vidbench.annotate import assign

    with closing(_open(args.project).connect()) as conn:
        planned = assign.plan(conn, args.kind, args.n, args.admins, args.per_item)
        for line in planned.lines():
            out.print(line, markup=False, highlight=False)
        if args.dry_run:
            out.print("dry run: nothing assigned")
            return 0
        added = assign.apply(conn, planned, COMMAND_LINE)
    out.print(f"{counted(added, 'assignment')} added")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    from vidbench.annotate.folder import import_named

    project = _open(args.project)
    source = Path(args.file) if args.file else None
    with closing(project.connect()) as conn:
        done = import_named(conn, project.data, args.kind, source, COMMAND_LINE, args.adapters)
    _print_import(done)
    return 0


def _cmd_import_audit(args: argparse.Namespace) -> int:
    from vidbench.annotate.audit_queue import import_audit

    project = _open(args.project)
    with closing(project.connect()) as conn:
        done = import_audit(conn, project.data, Path(args.audit), args.adapters, COMMAND_LINE)
    reviewed = f"; {done.reviewed} kept after an earlier review" if done.reviewed else ""
    out.print(f"{done.flagged} item(s) with open flags in {args.audit}{reviewed}", highlight=False)
    _print_import(done.imported)
    if done.without_video:
        shown = ", ".join(done.without_video[:5]) + (", ..." if len(done.without_video) > 5 else "")
        err.print(
            f"[yellow]warning[/]: {counted(len(done.without_video), 'item')} queued with no video "
            f"to show ({escape(shown)}): the app serves only files inside the project's data "
            f"folder {escape(str(project.data))}, and their videos are not there (a link out of "
            "it, or missing)",
            highlight=False,
        )
    if done.imported.added:
        out.print("give them to reviewers: vidbench annotate assign PROJECT audit", highlight=False)
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from vidbench.annotate import audit_queue, exports

    project = _open(args.project)
    with closing(project.connect()) as conn:
        if args.kind == "audit":
            done = audit_queue.export_audit(project, conn, args.adapters, COMMAND_LINE)
        else:
            done = exports.export_kind(
                project, conn, args.kind, COMMAND_LINE, args.user, args.benchmark, args.adapters
            )
    out.print(f"{counted(done.written, 'record')} written to {done.path}")
    for why in done.left_out:
        err.print(f"[yellow]left out[/]: {escape(why)}", highlight=False)
    if done.then:
        out.print(done.then, highlight=False)
    if done.left_out:  # written, and not all of it: a script must not take it for the whole
        err.print(
            f"incomplete: {counted(len(done.left_out), 'item')} left out, listed above "
            f"(exit code {EXIT_INCOMPLETE})",
            highlight=False,
        )
        return EXIT_INCOMPLETE
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    _require()
    import uvicorn

    from vidbench.annotate.web.app import create_app

    project = _open(args.project)
    judge = None
    if args.judge:
        from vidbench.models.registry import ModelChoice, parse_options

        options = parse_options(args.judge_opt, "--judge-opt")
        judge = ModelChoice(args.judge, options, "--judge-opt", concurrency=4)
    app = create_app(project, args.adapters, judge)
    listening = _listen(args.host, args.port)  # bound before the address is printed
    port = listening.getsockname()[1]
    host = f"[{args.host}]" if ":" in args.host else args.host
    address = f"serving {project.path} on http://{host}:{port}/ (Ctrl-C stops it)"
    out.print(address, markup=False, highlight=False, soft_wrap=True)
    out.file.flush()  # a script waiting for the address reads it at once
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    try:
        server.run(sockets=[listening])
    finally:
        listening.close()
    return 0


def _listen(host: str, port: int) -> socket.socket:
    """A socket listening on host:port (0: a free port), or a ConfigError saying what to do."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"port {port} on {host} is in use (by another program, or another `annotate "
                "serve`): choose another with --port N, or --port 0 for a free one"
            ) from None
        raise ConfigError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


PROJECT = "the project folder"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `annotate` and its subcommands to the CLI; the registered benchmarks' review
    adapters' importers and exports are the choices."""
    adapters = registered_adapters()
    top = sub.add_parser("annotate", help="the annotation web app (review, captions, baselines)")
    top.set_defaults(adapters=adapters)
    cmds = top.add_subparsers(dest="annotate_command", required=True)
    imports = ["folder", *(i.name for i in adapters.importers())]
    exports = ["answers", "audit", *dict.fromkeys(e.name for e in adapters.exporters())]

    p = cmds.add_parser("init", help="a project from a dataset folder")
    p.add_argument("project", help=PROJECT)
    p.add_argument("--data", required=True, help="the dataset folder (media are served from it)")
    p.set_defaults(func=_cmd_init)

    users = cmds.add_parser("users", help="accounts").add_subparsers(dest="users", required=True)
    p = users.add_parser("add", help="add an account (password from a prompt or stdin)")
    p.add_argument("project", help=PROJECT)
    p.add_argument("name", help="the account name (letters, digits, . _ -)")
    p.add_argument(
        "--role",
        required=True,
        choices=["annotator", "reviewer", "admin"],
        help="annotators answer and write; reviewers also review; admins also assign and export",
    )
    p.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    p.set_defaults(func=_cmd_users_add)
    p = users.add_parser("list", help="list accounts")
    p.add_argument("project", help=PROJECT)
    p.set_defaults(func=_cmd_users_list)
    p = users.add_parser(
        "role",
        help="give an account another role (from its next request; the last admin stays admin)",
    )
    p.add_argument("project", help=PROJECT)
    p.add_argument("name", help="the account name")
    p.add_argument("role", choices=["annotator", "reviewer", "admin"], help="the new role")
    p.set_defaults(func=_cmd_users_role)
    p = users.add_parser(
        "remove",
        help="someone leaves: their sessions end and they cannot sign in; their submitted work "
        "stays under their name; their unfinished work goes back to `annotate assign`",
        description="Remove an account. Its sessions end at once and it cannot sign in again. "
        "The account is kept as removed (not deleted), since its submitted work, its history "
        "and the exports name it; the name cannot be taken again. Its unfinished work (to do, "
        "draft, sent back) goes back to the pool: `vidbench annotate assign PROJECT KIND` gives "
        "it to others. The last admin cannot be removed.",
    )
    p.add_argument("project", help=PROJECT)
    p.add_argument("name", help="the account name")
    p.set_defaults(func=_cmd_users_remove)
    p = users.add_parser(
        "unlock", help="clear an account's failed sign-ins and locks (from every address)"
    )
    p.add_argument("project", help=PROJECT)
    p.add_argument("name", help="the account name")
    p.set_defaults(func=_cmd_users_unlock)

    p = cmds.add_parser(
        "assign",
        help="give items to people by role, an object's items together, balanced; prints the "
        "plan first (tops up, never takes away)",
    )
    p.add_argument("project", help=PROJECT)
    p.add_argument(
        "kind",
        choices=["caption", "qa", "answer", "rule", "audit"],
        help="which items: caption (to write), qa (to review), answer, rule (to red-team), "
        "audit (flagged by an audit: keep, fix or drop)",
    )
    p.add_argument("--n", type=types.positive, help="people per item (captions 5, QA review 1)")
    p.add_argument(
        "--admins", action="store_true", help="give admins work too (by default they get none)"
    )
    p.add_argument(
        "--per-item",
        action="store_true",
        help="spread one object's (or video's) items over people (default: the same people)",
    )
    p.add_argument("--dry-run", action="store_true", help="print the plan, assign nothing")
    p.set_defaults(func=_cmd_assign)

    p = cmds.add_parser(
        "import", help="add items: a folder, a review queue, caption drafts, a rules file, ..."
    )
    p.add_argument("project", help=PROJECT)
    p.add_argument(
        "kind",
        choices=imports,
        help="folder: everything a dataset folder holds; or one benchmark's importer",
    )
    p.add_argument("file", nargs="?", help="the file or folder (default: the project's data)")
    p.set_defaults(func=_cmd_import)

    p = cmds.add_parser(
        "import-audit",
        help="the items an audit flagged, as a queue to keep, fix or drop (docs/audit.md)",
    )
    p.add_argument("project", help=PROJECT)
    p.add_argument("audit", metavar="AUDIT_JSON", help="DIR/audit.json of `vidbench audit`")
    p.set_defaults(func=_cmd_import_audit)

    p = cmds.add_parser(
        "export",
        help="the official files into PROJECT/exports/",
        description="Write the official files from people's work into PROJECT/exports/. What is "
        "not written (pending, rejected, not assigned) is listed. Exit code 0: nothing left out; "
        f"{EXIT_INCOMPLETE}: the file is written, with items left out.",
    )
    p.add_argument("project", help=PROJECT)
    p.add_argument(
        "kind",
        choices=exports,
        help="answers (one person's), audit (the decisions as the benchmark's fixed data), or a "
        "benchmark's file",
    )
    p.add_argument("--user", help="answers: whose")
    p.add_argument(
        "--benchmark",
        default="4dbench",
        choices=adapters.benchmarks() or ["4dbench"],
        help="answers: to which benchmark's questions (default 4dbench)",
    )
    p.set_defaults(func=_cmd_export)

    p = cmds.add_parser("serve", help="serve the app (127.0.0.1 by default)")
    p.add_argument("project", help=PROJECT)
    p.add_argument(
        "--port",
        type=types.port_or_free,
        default=8765,
        help="port (default 8765; 0: a free one, printed with the address)",
    )
    p.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1)")
    options.add_judge(p, what="the red-team judge")
    p.set_defaults(func=_cmd_serve)
