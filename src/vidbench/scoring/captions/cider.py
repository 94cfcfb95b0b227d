"""Plain CIDEr (Vedantam et al.; the `Cider` of the cidereval package the official code uses).

Per object: for n = 1..4, each sentence's n-gram counts weighted by tf-idf, with
idf = ref_len - log(max(1, df)); the cosine of the candidate's vector with each reference's;
score = 10 * mean over n of (sum over references of the cosine) / #references. Unlike CIDEr-D
there is no clipping and no length penalty.

Document frequencies come from a cidereval df pickle (`{"ref_len": log(#images), "df":
{ngram_tuple: count}}`, e.g. the COCO-val one the official run used) or, without one, from the
references of a set of objects (`corpus_df`: in how many objects' reference sets each n-gram occurs,
ref_len = log(#objects)), as cidereval's df="corpus" mode computes them.
"""

from __future__ import annotations

import math
import pickle
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vidbench.core.errors import ConfigError

N = 4
Ngram = tuple[str, ...]


@dataclass(frozen=True)
class DocFreq:
    ref_len: float
    df: Mapping[Ngram, float]


def counts(sentence: str, n: int = N) -> dict[Ngram, int]:
    words = sentence.split()
    out: dict[Ngram, int] = defaultdict(int)
    for k in range(1, n + 1):
        for i in range(len(words) - k + 1):
            out[tuple(words[i : i + k])] += 1
    return out


# What a df pickle is made of (cidereval's are Python 2 pickles: `__builtin__`, numpy scalars):
# pickle's own safe reader is this list, since loading any other class may run code.
_DATA_CLASSES = {
    *((module, name) for module in ("builtins", "__builtin__")
      for name in ("dict", "list", "tuple", "set", "frozenset", "str", "unicode", "int", "long",
                   "float")),
    ("collections", "defaultdict"), ("_codecs", "encode"),  # bytes in protocol 2
    ("copy_reg", "_reconstructor"), ("copyreg", "_reconstructor"),
    ("numpy", "dtype"), ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
}  # fmt: skip


class _DataOnly(pickle.Unpickler):
    """An unpickler of plain data: a class outside _DATA_CLASSES (`os.system`, a module's
    function) is refused instead of called, so a df file from elsewhere cannot run code."""

    def find_class(self, module: str, name: str) -> type:
        if (module, name) not in _DATA_CLASSES:
            raise pickle.UnpicklingError(
                f"it refers to {module}.{name}, which a df pickle does not hold (loading it "
                "could run code: refused)"
            )
        found: type = super().find_class(module, name)
        return found


def load_df(path: Path) -> DocFreq:
    """A cidereval df pickle; ConfigError naming the file when it is not one."""
    try:
        with Path(path).open("rb") as f:
            data = _DataOnly(f, encoding="iso-8859-1").load()
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as e:
        raise ConfigError(f"--cider-df {path}: cannot read a df pickle ({e})") from e
    if not isinstance(data, dict) or "df" not in data or "ref_len" not in data:
        raise ConfigError(f"--cider-df {path}: expected a dict with 'ref_len' and 'df'")
    problem = _df_problem(data["ref_len"], data["df"])
    if problem:
        raise ConfigError(f"--cider-df {path}: {problem} (a cidereval df pickle)")
    return DocFreq(float(data["ref_len"]), data["df"])


def _df_problem(ref_len: object, df: object) -> str | None:
    """What is wrong with a df pickle's contents (None: nothing): every key an n-gram tuple of
    1..4 words, as `counts` makes them (a key of another form never matches: every n-gram would
    count as unseen, without a word), every count and log(#images) a finite number >= 0."""

    def number(value: object) -> bool:
        return isinstance(value, int | float | np.number) and bool(
            math.isfinite(value) and value >= 0
        )

    if not number(ref_len):
        return f"ref_len {ref_len!r} is not a finite number >= 0"
    if not isinstance(df, Mapping) or not df:
        return "df is not a non-empty dict of n-gram counts"
    for key, count in df.items():
        if not (
            isinstance(key, tuple) and 1 <= len(key) <= N and all(isinstance(w, str) for w in key)
        ):
            return f"df key {key!r} is not an n-gram tuple of 1..{N} words, e.g. ('a', 'man')"
        if not number(count):
            return f"df count {count!r} of {key!r} is not a finite number >= 0"
    return None


def corpus_df(tokenized_refs: Sequence[Sequence[str]]) -> DocFreq:
    df: dict[Ngram, float] = defaultdict(float)
    for refs in tokenized_refs:
        for ngram in {g for ref in refs for g in counts(ref)}:
            df[ngram] += 1
    return DocFreq(float(np.log(float(len(tokenized_refs)))), df)


def _vector(
    cnts: Mapping[Ngram, int], doc: DocFreq, idf: dict[Ngram, float]
) -> tuple[list[dict[Ngram, float]], list[float]]:
    vec: list[dict[Ngram, float]] = [{} for _ in range(N)]
    norm = [0.0] * N
    for ngram, tf in cnts.items():
        weight = idf.get(ngram)
        if weight is None:
            weight = idf[ngram] = doc.ref_len - float(np.log(max(1.0, doc.df.get(ngram, 0.0))))
        n = len(ngram) - 1
        value = float(tf) * weight
        vec[n][ngram] = value
        norm[n] += pow(value, 2)
    return vec, [float(np.sqrt(x)) for x in norm]


def cider(cands: Sequence[str], refs: Sequence[Sequence[str]], doc: DocFreq) -> list[float]:
    """Per object plain CIDEr of tokenized candidates against tokenized references."""
    idf: dict[Ngram, float] = {}
    scores = []
    for cand, ref_group in zip(cands, refs, strict=True):
        vec, norm = _vector(counts(cand), doc, idf)
        total = np.zeros(N)
        for ref in ref_group:
            vec_r, norm_r = _vector(counts(ref), doc, idf)
            val = np.zeros(N)
            for n in range(N):
                for ngram, value in vec[n].items():
                    val[n] += value * vec_r[n].get(ngram, 0.0)
                if norm[n] != 0 and norm_r[n] != 0:
                    val[n] /= norm[n] * norm_r[n]
                if math.isnan(val[n]):
                    raise ValueError("CIDEr: NaN similarity")
            total += val
        score = np.mean(total)
        score /= len(ref_group)
        score *= 10.0
        scores.append(float(score))
    return scores
