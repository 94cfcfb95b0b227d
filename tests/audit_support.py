"""A declared benchmark with known faults and the runs that reveal them, for `vidbench audit`:
40 four-option questions (golds A, B, C, D in turn); six seeing models answering 40-90% right;
items 3 and 7 with a wrong gold (every seeing model picks the same other option); item 12 every
model right; item 13 only the weakest model right; items 20 and 21 answered by both blind runs;
a model that always answers A."""

from __future__ import annotations

from pathlib import Path

from custom_support import make_bench, predictions, vidbench

LETTERS = "ABCD"
N = 40
WRONG_GOLD = {3: 2, 7: 2}  # item -> offset of the option every seeing model picks
EASY, HARD = 12, 13
BLIND_RIGHT = {20, 21}

ROWS = [
    {
        "n": f"q{i:02d}",
        "video_id": f"clip{i % 3}",
        "question": f"Question {i}: what does object {i} do at second {i % 7}?",
        "options": [f"{c}. answer {c.lower()}{i}" for c in LETTERS],
        "answer": LETTERS[i % 4],
    }
    for i in range(N)
]


def seeing_answer(model: int, item: int) -> str:
    gold = item % 4
    if item in WRONG_GOLD:
        return LETTERS[(gold + WRONG_GOLD[item]) % 4]
    if item == EASY:
        return LETTERS[gold]
    if item == HARD:  # only the weakest model right, the others spread over the rest
        return LETTERS[(gold + (0, 1, 2, 3, 1, 2)[model]) % 4]
    right = (item * 7 + model * 3) % 10 < 4 + model  # model m: about (40 + 10 m)% right
    return LETTERS[gold] if right else LETTERS[(gold + 1 + (item + model) % 3) % 4]


def blind_answer(run: int, item: int) -> str:
    gold = item % 4
    return LETTERS[gold] if item in BLIND_RIGHT else LETTERS[(gold + 1 + run) % 4]


def make_runs(root: Path, bench: Path | None = None) -> tuple[Path, list[Path]]:
    """The benchmark (or `bench`, already written) and its eight runs: sees0..sees5, blind0,
    blind1 and always-a."""
    bench = bench or make_bench(root / "bench", toml=TOML, rows=ROWS)
    runs = []
    answers: dict[str, tuple[bool, dict[str, str]]] = {}
    for m in range(6):
        answers[f"sees{m}"] = (False, {f"q{i:02d}": seeing_answer(m, i) for i in range(N)})
    for b in range(2):
        answers[f"blind{b}"] = (True, {f"q{i:02d}": blind_answer(b, i) for i in range(N)})
    answers["always-a"] = (False, dict.fromkeys((f"q{i:02d}" for i in range(N)), "A"))
    for name, (blind, given) in answers.items():
        spec = predictions(root / f"{name}.jsonl", given)
        out = root / "runs" / name
        model = f"blind:{spec}" if blind else spec
        args = ["run", f"custom:{bench}", "--model", model, "--model-opt", f"name={name}"]
        assert vidbench(*args, "--out", out) == 0
        runs.append(out)
    return bench, runs


TOML = """name = "faulty"
rows = "questions.jsonl"
video = "videos/{video_id}.mp4"
question = "question"
options = "options"
answer = "answer"
id = "n"
frames = 2
"""
