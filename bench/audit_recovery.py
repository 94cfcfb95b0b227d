"""How well `vidbench audit` finds what is wrong, on a benchmark whose truth is known.

A 1,000-question declared benchmark (benchmark.toml, questions.jsonl, ten tiny clips) is
written with 5% of its golds changed at random, 2% of its items answerable without the video
and 2% with negative discrimination, and ten near-duplicate questions. A population of models
answers it from a known three-parameter item response model (guessing 1/4; a wrong answer
picks a distractor by the item's own Dirichlet weights); each answers through
`vidbench run custom:DIR --model predictions:FILE`, two blind runs through
`blind:predictions:FILE`; then `vidbench audit` reads the runs. Printed, for 5, 10 and 20
models: precision and recall of each planted flag, the Spearman rank correlation of fitted
against true difficulty and discrimination, the same for an oracle that knows every true
ability and slope (the ceiling of any estimator at that many models), once on whether each answer
is the true one and once on what the audit sees (whether it is the gold, 5% of which are wrong),
and for the plain share of models right; and the audit's seconds.

    python bench/audit_recovery.py [--models 5 10 20] [--items 1000] [--seed 0]
        [--autoeval tests/data/autoeval-video]

With --autoeval, the same for AutoEval-Video's open-ended instances with a judge's verdicts as
the outcomes (`gold` does not apply).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.special import expit
from scipy.stats import spearmanr

from vidbench.cli import main as vidbench
from vidbench.media.encode import write_mp4

LETTERS = "ABCD"
GUESS = 0.25
SUBJECTS = """cat dog horse robot child chef cyclist drone parrot kettle lamp violin truck
sailboat juggler gardener painter goat rabbit tractor""".split()  # noqa: SIM905
ACTIONS = """opens closes lifts drops spins paints throws catches pushes pulls folds fills
cuts carries hides shakes""".split()  # noqa: SIM905
OBJECTS = """box cup ball door window chair book rope bucket hat plate bottle kite basket
ladder bell""".split()  # noqa: SIM905
ADJECTIVES = """old young tall small noisy quiet tired happy clumsy careful striped spotted
wooden shiny muddy tiny giant sleepy busy brave""".split()  # noqa: SIM905
PLACES = """kitchen garden garage street beach forest office classroom barn attic park
station market bridge harbour library stadium cellar rooftop meadow""".split()  # noqa: SIM905
ASKS = [
    "How many times does the {s} {a} the {o}?",
    "What colour is the {o} the {s} {a}?",
    "Where does the {s} stand when it {a} the {o}?",
    "What happens right after the {s} {a} the {o}?",
    "Why does the {s} {a} the {o} near the end?",
    "Which hand does the {s} use when it {a} the {o}?",
    "What is the {s} holding before it {a} the {o}?",
    "In which direction does the {o} move once the {s} {a} it?",
]
ANSWERS = {
    0: ["once", "twice", "three times", "four times", "five times", "never"],
    1: ["red", "green", "blue", "yellow", "black", "white", "orange"],
    2: ["by the wall", "on a table", "in the middle", "at the door", "on the stairs"],
    3: ["it falls", "it rolls away", "it breaks", "nothing changes", "it is put back"],
    4: ["it is stuck", "it is too heavy", "to make room", "to clean it", "to hide it"],
    5: ["the left", "the right", "both hands", "neither hand"],
    6: ["a spoon", "a key", "a phone", "nothing", "a brush", "a cloth"],
    7: ["left", "right", "up", "down", "towards the camera"],
}
TOML = """name = "audit-sim"
rows = "questions.jsonl"
video = "videos/{video}.mp4"
question = "question"
options = "options"
answer = "answer"
kind = "multiple-choice"
frames = 2
"""


def write_benchmark(root: Path, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The benchmark's folder and the truth behind it."""
    (root / "videos").mkdir(parents=True, exist_ok=True)
    for v in range(10):
        frames = [np.full((16, 16, 3), 20 * v + 4 * t, np.uint8) for t in range(4)]
        write_mp4(root / "videos" / f"clip{v}.mp4", frames)
    true = rng.integers(0, 4, n)
    gold = true.copy()
    wrong_gold = rng.choice(n, size=n * 5 // 100, replace=False)
    gold[wrong_gold] = (true[wrong_gold] + rng.integers(1, 4, len(wrong_gold))) % 4
    rows, seen = [], set()
    for i in range(n):
        while True:
            kind = int(rng.integers(len(ASKS)))
            s, a, o = rng.choice(SUBJECTS), rng.choice(ACTIONS), rng.choice(OBJECTS)
            s = f"{rng.choice(ADJECTIVES)} {s}"
            if (kind, s, a, o) not in seen:
                seen.add((kind, s, a, o))
                break
        picks = rng.choice(ANSWERS[kind], size=4, replace=False)
        rows.append(
            {
                "id": f"q{i:04d}",
                "video": f"clip{i % 10}",
                "question": f"In the {rng.choice(PLACES)}: " + ASKS[kind].format(s=s, a=a, o=o),
                "options": [str(p) for p in picks],
                "answer": LETTERS[gold[i]],
            }
        )
    duplicates = rng.choice(n, size=20, replace=False)
    for first, second in zip(duplicates[:10], duplicates[10:], strict=True):  # reworded copies
        rows[second]["question"] = rows[first]["question"].replace("?", ", in this clip?")
        rows[second]["options"] = rows[first]["options"]
    lines = "".join(json.dumps(r) + "\n" for r in rows)
    (root / "questions.jsonl").write_text(lines, encoding="utf-8")
    (root / "benchmark.toml").write_text(TOML, encoding="utf-8")
    slope = rng.lognormal(0.3, 0.4, n)
    negative = rng.choice(np.setdiff1d(np.arange(n), wrong_gold), size=n // 50, replace=False)
    slope[negative] *= -1
    blind_solvable = rng.choice(np.setdiff1d(np.arange(n), wrong_gold), size=n // 50, replace=False)
    return {
        "true": true,
        "gold": gold,
        "wrong_gold": np.sort(wrong_gold),
        "duplicates": np.sort(duplicates),
        "difficulty": rng.normal(0.0, 1.0, n),
        "slope": slope,
        "negative": np.sort(negative),
        "blind_solvable": np.sort(blind_solvable),
        "distractors": rng.dirichlet(np.ones(3), n),
    }


def simulate(truth: dict[str, np.ndarray], ability: np.ndarray, rng: np.random.Generator):
    """Letters (models x items) and the chance of each answer being right."""
    b, a = truth["difficulty"], truth["slope"]
    right = GUESS + (1 - GUESS) * expit(a[None, :] * (ability[:, None] - b[None, :]))
    hit = rng.random(right.shape) < right
    letters = np.empty(right.shape, int)
    for m in range(len(ability)):
        for i in range(right.shape[1]):
            if hit[m, i]:
                letters[m, i] = truth["true"][i]
            else:
                others = [c for c in range(4) if c != truth["true"][i]]
                letters[m, i] = rng.choice(others, p=truth["distractors"][i])
    return letters


def blind_letters(truth: dict[str, np.ndarray], n: int, rng: np.random.Generator) -> np.ndarray:
    letters = rng.integers(0, 4, (2, n))
    solvable = truth["blind_solvable"]
    knows = rng.random((2, len(solvable))) < 0.9
    letters[:, solvable] = np.where(knows, truth["true"][solvable], letters[:, solvable])
    return letters


def run_model(bench: Path, folder: Path, name: str, letters: np.ndarray, blind: bool) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    answers = folder / f"{name}.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"id": f"q{i:04d}", "answer": f"({LETTERS[x]})"}) + "\n"
            for i, x in enumerate(letters)
        ),
        encoding="utf-8",
    )
    out = folder / name
    spec = f"{'blind:' if blind else ''}predictions:{answers}"
    args = ["--no-progress", "run", f"custom:{bench}", "--model", spec, "--model-opt",
            f"name={name}", "--out", str(out)]  # fmt: skip
    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
        code = vidbench(args)
    if code != 0:
        raise SystemExit(f"vidbench run failed for {name}:\n{said.getvalue()}")
    return out


def precision_recall(flagged: set[int], planted: set[int]) -> tuple[float, float]:
    hits = len(flagged & planted)
    return (hits / len(flagged) if flagged else float("nan"), hits / len(planted))


def oracle_difficulty(truth, ability, correct) -> np.ndarray:
    """Posterior mean difficulty of each item knowing every true ability and slope."""
    grid = np.linspace(-4, 4, 161)
    a = truth["slope"][None, :, None]
    p = GUESS + (1 - GUESS) * expit(a * (ability[:, None, None] - grid[None, None, :]))
    x = correct[:, :, None]
    loglik = (x * np.log(p) + (1 - x) * np.log(1 - p)).sum(axis=0) - grid**2 / 2
    weight = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    return (weight * grid).sum(axis=1) / weight.sum(axis=1)


def one_population(bench: Path, truth, n_models: int, work: Path, seed: int) -> dict:
    rng = np.random.default_rng(seed + n_models)
    ability = np.linspace(-1.1, 2.1, n_models)
    letters = simulate(truth, ability, rng)
    runs = [run_model(bench, work, f"sim{m:02d}", letters[m], blind=False) for m in range(n_models)]
    runs += [
        run_model(bench, work, f"blind{k}", row, blind=True)
        for k, row in enumerate(blind_letters(truth, len(truth["true"]), rng))
    ]
    out = work / "audit"
    start = time.perf_counter()
    if vidbench(["--no-progress", "audit", *map(str, runs), "--out", str(out)]) != 0:
        raise SystemExit("vidbench audit failed")
    seconds = time.perf_counter() - start
    document = json.loads((out / "audit.json").read_text())
    index = {item["id"]: int(item["id"][1:]) for item in document["items"]}
    flagged: dict[str, set[int]] = {}
    suggested_right = 0
    for item in document["items"]:
        for flag in item["flags"]:
            flagged.setdefault(flag["kind"], set()).add(index[item["id"]])
            i = index[item["id"]]
            if flag["kind"] == "gold" and flag["suggested"] == LETTERS[truth["true"][i]]:
                suggested_right += 1
    fitted_b = np.array([np.nan if it["difficulty"] is None else it["difficulty"]
                         for it in document["items"]])  # fmt: skip
    fitted_a = np.array([np.nan if it["discrimination"] is None else it["discrimination"]
                         for it in document["items"]])  # fmt: skip
    correct = (letters == truth["true"][None, :]).astype(float)
    observed = (letters == truth["gold"][None, :]).astype(float)
    ok = ~np.isnan(fitted_b)
    accuracy = [m["accuracy"] for m in document["models"] if not m["blind"]]
    result = {
        "models": n_models,
        "accuracy": f"{100 * min(accuracy):.0f}-{100 * max(accuracy):.0f}%",
        "audit_s": seconds,
        "difficulty_rho": spearmanr(fitted_b[ok], truth["difficulty"][ok])[0],
        "discrimination_rho": spearmanr(fitted_a[ok], truth["slope"][ok])[0],
        "oracle_difficulty_rho": spearmanr(
            oracle_difficulty(truth, ability, correct), truth["difficulty"]
        )[0],
        # the same oracle on what the audit sees: right or wrong against the golds, 5% wrong
        "observed_oracle_difficulty_rho": spearmanr(
            oracle_difficulty(truth, ability, observed), truth["difficulty"]
        )[0],
        "share_right_difficulty_rho": spearmanr(-observed.mean(axis=0), truth["difficulty"])[0],
        "gold_suggested_right": suggested_right,
        "sizing": document["summary"]["sizing"],
    }
    for kind, planted in (("gold", "wrong_gold"), ("blind", "blind_solvable"),
                          ("negative", "negative"), ("duplicate", "duplicates")):  # fmt: skip
        precision, recall = precision_recall(flagged.get(kind, set()), set(truth[planted]))
        result[kind] = (precision, recall, len(flagged.get(kind, set())))
    result["flags"] = document["summary"]["flags"]
    return result


def autoeval_population(data: Path, n_models: int, work: Path, seed: int) -> dict:
    """AutoEval-Video's 327 open-ended instances answered by `n_models` simulated models (the
    release's sample prediction, or a wrong answer, by a 2PL with abilities spread like the
    population above) and judged through `vidbench judge autoeval-video` by a judge on
    127.0.0.1 whose verdict is 1 for the sample prediction: the verdicts are the outcomes."""
    from vidbench.testing.chat_server import ChatServer

    lines = (data / "prediction_sample.json").read_text(encoding="utf-8").splitlines()
    sample = [json.loads(line) for line in lines if line.strip()]
    rng = np.random.default_rng(seed)
    b, a = rng.normal(0.0, 1.0, len(sample)), rng.lognormal(0.3, 0.4, len(sample))
    ability = np.linspace(-1.1, 2.1, n_models)
    knows = rng.random((n_models, len(sample))) < expit(a * (ability[:, None] - b))

    def verdict(body: dict) -> str:
        prompt = json.dumps(body.get("messages", []))
        return "Judged.\n0" if "WRONG-ANSWER" in prompt else "Judged.\n1"

    runs = []
    work.mkdir(parents=True, exist_ok=True)
    with ChatServer(reply=verdict) as server:
        for m in range(n_models):
            answers = work / f"model{m}.jsonl"
            answers.write_text(
                "".join(
                    json.dumps(
                        {
                            "ID": row["ID"],
                            "prediction": row["prediction"] if knows[m, i] else f"WRONG-ANSWER-{i}",
                        }
                    )
                    + "\n"
                    for i, row in enumerate(sample)
                ),
                encoding="utf-8",
            )
            out = work / f"model{m}"
            judge = f"openai-compat:{server.base_url}#judge"
            args = ["--no-progress", "judge", "autoeval-video", "--rules",
                    str(data / "AUTO-EVAL-VIDEO.json"), "--predictions", str(answers),
                    "--judge", judge, "--out", str(out)]  # fmt: skip
            said = io.StringIO()
            with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
                if vidbench(args) != 0:
                    raise SystemExit(f"vidbench judge failed:\n{said.getvalue()}")
            runs.append(out)
    start = time.perf_counter()
    if vidbench(["--no-progress", "audit", *map(str, runs), "--out", str(work / "audit")]) != 0:
        raise SystemExit("vidbench audit failed")
    seconds = time.perf_counter() - start
    document = json.loads((work / "audit" / "audit.json").read_text())
    fitted_b = np.array([np.nan if it["difficulty"] is None else it["difficulty"]
                         for it in document["items"]])  # fmt: skip
    ok = ~np.isnan(fitted_b)
    return {
        "audit_s": seconds,
        "flags": document["summary"]["flags"],
        "difficulty_rho": spearmanr(fitted_b[ok], b[ok])[0],
        "sizing": document["summary"]["sizing"],
        "duplicates": [
            (item["id"], flag["reason"])
            for item in document["items"]
            for flag in item["flags"]
            if flag["kind"] == "duplicate"
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, nargs="+", default=[5, 10, 20])
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="write the benchmark and runs here (kept)")
    ap.add_argument(
        "--autoeval",
        type=Path,
        help="also audit 10 simulated models judged on this AutoEval-Video folder "
        "(e.g. tests/data/autoeval-video)",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        bench = root / "bench"
        truth = write_benchmark(bench, args.items, np.random.default_rng(args.seed))
        for n in args.models:
            r = one_population(bench, truth, n, root / f"models-{n}", args.seed)
            print(f"\n{n} models (accuracy {r['accuracy']}, audit {r['audit_s']:.1f} s):")
            for kind in ("gold", "blind", "negative", "duplicate"):
                p, rec, count = r[kind]
                print(f"  {kind:9s} flags {count:4d}: precision {p:.3f} recall {rec:.3f}")
            print(f"  gold suggestions that name the true answer: {r['gold_suggested_right']}")
            print(
                f"  rank correlation with the truth: difficulty {r['difficulty_rho']:.3f} "
                f"(oracle {r['oracle_difficulty_rho']:.3f}; on the answers against the golds "
                f"{r['observed_oracle_difficulty_rho']:.3f}; share of models right "
                f"{r['share_right_difficulty_rho']:.3f}), "
                f"discrimination {r['discrimination_rho']:.3f}"
            )
            s = r["sizing"]
            print(
                f"  sizing: interval [{100 * s['ci95'][0]:.1f}, {100 * s['ci95'][1]:.1f}] at "
                f"{100 * s['accuracy']:.1f}%; McNemar detects {100 * s['detectable_observed']:.1f}"
                f" points (observed disagreement {100 * s['discordance_observed']:.1f}%)"
            )
            print(f"  every flag: {r['flags']}")
        if args.autoeval:
            r = autoeval_population(args.autoeval, 10, root / "autoeval", args.seed)
            print(f"\nAutoEval-Video, 10 judged models (audit {r['audit_s']:.1f} s):")
            print(f"  every flag: {r['flags']}")
            print(f"  rank correlation of fitted and true difficulty: {r['difficulty_rho']:.3f}")
            print(f"  duplicates: {r['duplicates']}")
            s = r["sizing"]
            print(
                f"  sizing: interval [{100 * s['ci95'][0]:.1f}, {100 * s['ci95'][1]:.1f}] at "
                f"{100 * s['accuracy']:.1f}%; McNemar detects {100 * s['detectable_observed']:.1f}"
                f" points"
            )


if __name__ == "__main__":
    main()
