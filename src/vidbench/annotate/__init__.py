"""The annotation app: people review generated QA, write captions, answer human baselines and
red-team judging rules in the browser (`vidbench annotate ...`; docs/review-app.md).

project.py (the folder and its settings), db.py (the SQLite store), auth.py (accounts, sessions,
CSRF), throttle.py (sign-in throttling, bounded password hashes), paths.py (names that become
paths), items.py (work items and importing them), adapters.py (what each benchmark tells the
app: its importers, exports, video links and red-team engine; no benchmark is imported here),
folder.py (`annotate init`), assign.py (who does what), work.py (reading and saving work with
optimistic concurrency), conflicts.py (refused saves kept and offered back), drafts.py (machine
drafts), media.py (which video files the app serves, through which links), exports.py (the
exports every benchmark shares), redteam_store.py (the red-team workspace), progress.py (the
admin's numbers), web/ (the FastAPI app), commands.py (the CLI).
"""
