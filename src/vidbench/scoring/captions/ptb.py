"""The COCO PTB tokenizer (Stanford CoreNLP 3.4.1 via pycocoevalcap), one Java start per call.

pycocoevalcap's and cidereval's PTBTokenizer write their sentences one per line into a file and
run `PTBTokenizer -preserveLines -lowerCase` on it, then drop punctuation tokens. The tokens of
a line can depend on the next line (an abbreviation-like "a." before a capitalised word loses
its period, before the end of the file it keeps it), so a sentence must be tokenized in the same
file context as the official call: `tokenize_groups` writes each group as its own file and
tokenizes them all in one Java run (`-ioFileList`), each file exactly as a separate call would.
- `per_object`: the official 4D-Bench CIDEr (cidereval `cider([c], [refs])` per object: the
  candidate alone in one file, the object's references in another).
- `corpus`: COCOEvalCap (all references in one file, all candidates in another).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from vidbench.core.errors import ConfigError

PUNCTUATIONS = frozenset(
    ["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-",
     "--", "...", ";"]
)  # fmt: skip
# Characters Java reads as line ends besides "\n" (which the COCO wrappers replace by a space);
# left in, one would split its line and shift every later caption of the file.
_LINE_BREAKS = str.maketrans(dict.fromkeys("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029", " "))


def java() -> str:
    path = shutil.which("java")
    if path is None:
        raise ConfigError(
            "the COCO PTB tokenizer and METEOR 1.5 need Java: install a JRE "
            "(apt-get install default-jre-headless)"
        )
    return path


def check() -> None:
    """Stop (ConfigError) unless Java runs the tokenizer here: one sentence tokenized."""
    tokenize_groups([["A check."]])


def _jar() -> str:
    from pycocoevalcap.tokenizer import ptbtokenizer

    folder = Path(ptbtokenizer.__file__).resolve().parent
    return str(folder / ptbtokenizer.STANFORD_CORENLP_3_4_1_JAR)


def _clean(line: str) -> str:
    return " ".join(w for w in line.rstrip().split(" ") if w not in PUNCTUATIONS)


def tokenize_groups(groups: Sequence[Sequence[str]]) -> list[list[str]]:
    """Each group's sentences lower-cased, PTB-tokenized, punctuation removed, tokens joined by
    spaces; each group tokenized as one file, all groups in one Java run."""
    if not groups:
        return []
    with tempfile.TemporaryDirectory(prefix="vidbench-ptb-") as tmp:
        folder = Path(tmp)
        listing = []
        for i, group in enumerate(groups):
            text = "\n".join(s.replace("\n", " ").translate(_LINE_BREAKS) for s in group)
            (folder / f"{i}.txt").write_bytes(text.encode("utf-8"))
            listing.append(f"{i}.txt\t{i}.tok")
        (folder / "files.list").write_text("\n".join(listing) + "\n")
        cmd = [java(), "-cp", _jar(), "edu.stanford.nlp.process.PTBTokenizer",
               "-preserveLines", "-lowerCase", "-ioFileList", "files.list"]  # fmt: skip
        done = subprocess.run(cmd, cwd=folder, capture_output=True, check=False)
        if done.returncode != 0:
            message = done.stderr.decode(errors="replace")[-500:]
            raise ConfigError(f"PTB tokenizer failed: {message}")
        out = []
        for i, group in enumerate(groups):
            lines = (folder / f"{i}.tok").read_bytes().decode("utf-8").split("\n")
            lines += [""] * (len(group) - len(lines))  # trailing empty sentences print nothing
            out.append([_clean(line) for line in lines[: len(group)]])
    return out


def per_object(
    cands: Sequence[str], refs: Sequence[Sequence[str]]
) -> tuple[list[str], list[list[str]]]:
    """Tokens as the official per-object cidereval calls make them: [candidate] and [refs] of
    each object are separate files."""
    groups = tokenize_groups([*([c] for c in cands), *refs])
    return [g[0] for g in groups[: len(cands)]], groups[len(cands) :]


def corpus(
    cands: Sequence[str], refs: Sequence[Sequence[str]]
) -> tuple[list[str], list[list[str]]]:
    """Tokens as COCOEvalCap makes them: all references in one file, all candidates in one."""
    flat = [r for group in refs for r in group]
    cand_tok, ref_flat = tokenize_groups([cands, flat])
    ref_tok, at = [], 0
    for group in refs:
        ref_tok.append(ref_flat[at : at + len(group)])
        at += len(group)
    return cand_tok, ref_tok
