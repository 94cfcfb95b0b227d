"""The annotation app: people review generated QA, write captions, answer human baselines and
red-team judging rules in the browser (`vidbench annotate ...`; docs/review-app.md).

project.py (the folder and its settings), db.py (the SQLite store), auth.py (accounts, sessions,
CSRF), throttle.py (sign-in throttling, bounded password hashes), paths.py (names that become
paths), items.py (work items, importing them, and what each says it is: title, question,
thumbnail, flag), adapters.py (what each benchmark tells the app: its importers, exports, video
links and red-team engine; no benchmark is imported here), folder.py (`annotate init`),
assign.py (who does what, by role, an object's items together, balanced), work.py (reading and
saving work with optimistic concurrency, an item's place in its owner's list), conflicts.py
(refused saves kept and offered back), drafts.py (machine drafts), media.py (which video files
the app serves, through which links), thumbnails.py (the lists' thumbnails), exports.py (the
exports every benchmark shares), redteam_store.py (the red-team workspace), progress.py (the
numbers of progress), web/ (the FastAPI app; static/keys.js the keys), commands.py (the CLI).
"""
