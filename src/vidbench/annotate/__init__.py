"""The annotation app: people review generated QA, write captions, answer human baselines and
red-team AutoEval-Video rules in the browser (`vidbench annotate ...`).

project.py (the folder and its settings), db.py (the SQLite store), auth.py (accounts, sessions,
CSRF), items.py (importing work items), assign.py (who does what), work.py (reading and saving
work with optimistic concurrency), exports.py (the official files), web/ (the FastAPI app),
commands.py (the CLI).
"""
