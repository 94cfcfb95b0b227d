"""The annotation app: people review generated QA, write captions, answer human baselines and
red-team AutoEval-Video rules in the browser (`vidbench annotate ...`; docs/review-app.md).

project.py (the folder and its settings), db.py (the SQLite store), auth.py (accounts, sessions,
CSRF), throttle.py (sign-in throttling, bounded password hashes), paths.py (names that become
paths), items.py (importing work items), assign.py (who does what), work.py (reading and saving
work with optimistic concurrency), conflicts.py (refused saves kept and offered back),
media.py and links.py (which video files the app serves, through which links), exports.py (the
official files), progress.py (the admin's numbers), web/ (the FastAPI app), commands.py (the
CLI).
"""
