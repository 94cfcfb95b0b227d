"""The query generation stage: search queries per subdiscipline, for a user to find videos with.

The MMWorld paper's pipeline starts with a "Query Generator" over the seven disciplines and
their subdisciplines (section 3.2, Figure 3); appendix C lists the subdisciplines the queries
were generated for, reproduced in SUBDISCIPLINES below (Table 3's spelling of the disciplines).
Each (discipline, subdiscipline) is one call to a model through the judge plumbing (stored,
never asked twice, a reply without a JSON list of strings asked again, then counted as unparsed).

Output: `OUT/queries.jsonl` (one `{discipline, subdiscipline, query}` a line) and
`OUT/queries.txt` (the queries, grouped under `# discipline / subdiscipline` headings). Saving the
videos found for a query under `VIDEOS/<discipline>/<subdiscipline>/` tags them for the later
stages (videos.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import JsonValue

from vidbench.benchmarks.mmworld import fields
from vidbench.benchmarks.mmworld.curate.funnel import (
    STAGES,
    QueryCounts,
    queries_stage,
    usage_by_stage,
)
from vidbench.benchmarks.mmworld.curate.generation import LABEL, PACKAGE
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.files import write_jsonl, write_text
from vidbench.core.messages import user
from vidbench.core.requests import GenerationConfig
from vidbench.models.registry import ModelOptions, load_model
from vidbench.report.funnel import Funnel, refuse_other_pipeline
from vidbench.runner.model_calls import DEFAULT_ATTEMPTS, ask_in
from vidbench.runner.store import Store
from vidbench.scoring.model_call import CallResult, ModelCall, find_json
from vidbench.scoring.prompt_files import load_prompt

PROMPT_FILE = "queries.v1.txt"
QUERY_GENERATION = GenerationConfig(temperature=0.0, max_tokens=1024)

# MMWorld paper, appendix C, "Query Generation in Synthetic Data Generation Pipeline".
SUBDISCIPLINES: dict[str, tuple[str, ...]] = {
    "Science": (
        "Geography", "Chemistry", "Wildlife Restoration", "Mycology", "Nature", "Physics",
        "Weather", "Zoology", "Math", "Botany", "Biology", "Geology",
    ),
    "Tech & Engineering": (
        "Electronics", "Animal Behavior", "Mechanical Engineering", "Energy & Power",
        "Architecture", "Agriculture", "Nature", "Physics", "Robotics", "Woodworking",
        "Gardening",
    ),
    "Art & Sports": (
        "Music", "Drawing and Painting", "Football", "Volleyball", "Aerobic Gymnastics",
        "Basketball", "Instrument", "Baking", "Dance", "Woodworking", "Graffiti", "Anatomy",
    ),
    "Embodied Tasks": ("Assembly", "Ego-motion", "Single Object Manipulation"),
    "Health & Medicine": (
        "Pharmacy", "Public Health", "Clinical Medicine", "Basic Medical Science",
    ),
    "Business": ("Accounting", "Finance", "Management", "Marketing", "Economics"),
    "Game": (
        "Role Playing Game", "First Person Shooting Game", "Racing Game", "Adventure Game",
        "Real-Time Strategy Game", "Tower Defense Game", "Fighting Game",
    ),
}  # fmt: skip


def topics(disciplines: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(discipline, subdiscipline) pairs of the chosen disciplines (all when none given)."""
    chosen = []
    for name in disciplines:
        try:
            chosen.append(fields.discipline(name))
        except DataError as e:
            raise ConfigError(f"--discipline: {e}") from None
    return [(d, s) for d, subs in SUBDISCIPLINES.items() if not chosen or d in chosen for s in subs]


def parse_queries(reply: str) -> list[str] | None:
    value: JsonValue = find_json(reply)
    if isinstance(value, dict):
        value = value.get("queries")
    if not isinstance(value, list):
        return None
    queries = [" ".join(q.split()) for q in value if isinstance(q, str) and q.strip()]
    return queries or None


def query_call(discipline: str, subdiscipline: str, count: int) -> ModelCall[list[str]]:
    template = load_prompt(PACKAGE, PROMPT_FILE, LABEL)
    text = template.render(discipline=discipline, subdiscipline=subdiscipline, count=count)
    item = f"queries/{discipline}/{subdiscipline}"
    return ModelCall(item, (user(text),), template.version, parse_queries, QUERY_GENERATION)


def write_queries(
    out: Path,
    calls: Sequence[tuple[str, str, ModelCall[list[str]]]],
    verdicts: Mapping[str, CallResult[list[str]]],
) -> QueryCounts:
    """Write the queries; the stage's counts (calls ok / unparsed / error, queries)."""
    rows: list[dict[str, str]] = []
    lines: list[str] = []
    counts = QueryCounts(calls=len(calls), ok=0, unparsed=0, error=0, queries=0, failed=[])
    for discipline, subdiscipline, call in calls:
        verdict = verdicts[call.item]
        queries = verdict.value
        if queries is None:
            if verdict.status in ("error", "missing"):
                counts["error"] += 1
            else:
                counts["unparsed"] += 1
            counts["failed"].append({"discipline": discipline, "subdiscipline": subdiscipline,
                                     verdict.status: verdict.error or verdict.reply})  # fmt: skip
            continue
        counts["ok"] += 1
        lines.append(f"# {discipline} / {subdiscipline}")
        for query in queries:
            rows.append({"discipline": discipline, "subdiscipline": subdiscipline, "query": query})
            lines.append(query)
        lines.append("")
    counts["queries"] = len(rows)
    write_jsonl(out / "queries.jsonl", rows)
    write_text(out / "queries.txt", "\n".join(lines))
    return counts


@dataclass(frozen=True)
class QueriesConfig:
    """`curate mmworld queries`: the generator, where to write, which disciplines (none: all
    seven), how many queries per subdiscipline, and how calls are made."""

    out: Path
    model: str
    model_options: dict[str, str]
    disciplines: Sequence[str] = ()
    count: int = 5
    attempts: int = DEFAULT_ATTEMPTS
    concurrency: int = 16
    progress: bool = False


def generate_queries(config: QueriesConfig) -> QueryCounts:
    """Ask the model for `count` queries per subdiscipline; write them; the stage's counts
    (also in OUT/funnel.json, with the tokens spent)."""
    refuse_other_pipeline(config.out, STAGES, "curate mmworld queries")
    options = ModelOptions(0, config.concurrency, dict(config.model_options))
    model = load_model(config.model, options)
    calls = [(d, s, query_call(d, s, config.count)) for d, s in topics(config.disciplines)]
    config.out.mkdir(parents=True, exist_ok=True)
    verdicts = ask_in(config.out, model, [c for _, _, c in calls], config)
    counts = write_queries(config.out, calls, verdicts)
    with Store(config.out) as store:
        usage = usage_by_stage(store)
    # The pipeline's stages, when it wrote OUT/funnel.json too (queries come before its videos
    # and change none of its counts), with this stage's counts and problems replaced.
    try:
        funnel = Funnel.read(config.out)
    except ConfigError:  # not a funnel: ours to write
        funnel = Funnel()
    funnel.stages = {"queries": queries_stage(counts)} | {
        name: count for name, count in funnel.stages.items() if name != "queries"
    }
    funnel.usage = usage
    funnel.problems = [p for p in funnel.problems if p.get("stage") != "queries"]
    funnel.problems += [{"stage": "queries", **problem} for problem in counts["failed"]]
    funnel.write(config.out)
    return counts
