"""WordNet 3.0 for nltk's METEOR, read offline from Debian's `wordnet-base` package.

Debian installs the WordNet 3.0 database files in /usr/share/wordnet but not the small
`lexnames` table nltk's reader opens first, and nltk (>= 3.9) only reads corpora inside its
data roots (no symlinks out of them). So the first use copies the database files once into
`$VIDBENCH_CACHE/wordnet-3.0` (default ~/.cache/vidbench), writes `lexnames` from the
WordNet 3.0 lexnames(5WN) table, and opens that folder. Nothing is downloaded.
`VIDBENCH_WORDNET` may name a ready WordNet 3.0 dict folder (one holding `lexnames`) instead.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from vidbench.core.errors import ConfigError
from vidbench.media.cache import cache_root

if TYPE_CHECKING:  # nltk is read untyped (pyproject: [tool.mypy])
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

DEBIAN_WORDNET = Path("/usr/share/wordnet")
_DATABASE_FILES = (
    "adj.exc", "adv.exc", "noun.exc", "verb.exc", "cntlist.rev",
    "data.adj", "data.adv", "data.noun", "data.verb",
    "index.adj", "index.adv", "index.noun", "index.verb",
)  # fmt: skip

# lexnames(5WN) of WordNet 3.0: file number = position; syntactic category from the prefix.
LEXNAMES = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance",
    "noun.time", "verb.body", "verb.change", "verb.cognition", "verb.communication",
    "verb.competition", "verb.consumption", "verb.contact", "verb.creation", "verb.emotion",
    "verb.motion", "verb.perception", "verb.possession", "verb.social", "verb.stative",
    "verb.weather", "adj.ppl",
)  # fmt: skip
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}

HOW_TO_GET = (
    "METEOR (nltk) needs WordNet 3.0: install Debian's wordnet-base "
    "(apt-get install wordnet-base, which puts it in /usr/share/wordnet), or set "
    "VIDBENCH_WORDNET to a WordNet 3.0 dict folder"
)


def lexnames_text() -> str:
    return "".join(
        f"{i:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES)
    )


def prepare_dict(source: Path = DEBIAN_WORDNET, target: Path | None = None) -> Path:
    """A folder nltk's WordNet reader can open: `source`'s database files plus `lexnames`.

    Built once (copied into a temporary folder, then renamed), so concurrent first uses are safe.
    """
    target = target or cache_root() / "wordnet-3.0"
    if (target / "lexnames").is_file():
        return target
    missing = [name for name in _DATABASE_FILES if not (source / name).is_file()]
    if missing:
        raise ConfigError(f"{HOW_TO_GET} ({source} lacks {', '.join(missing)})")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=target.parent))
    try:
        for name in _DATABASE_FILES:
            shutil.copyfile(source / name, staging / name)
        (staging / "lexnames").write_text(lexnames_text())
        try:
            staging.rename(target)
        except OSError:  # another process finished first
            if not (target / "lexnames").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def wordnet_reader() -> WordNetCorpusReader:
    """nltk's WordNetCorpusReader over the offline WordNet 3.0 (English only, no OMW), from
    VIDBENCH_WORDNET as it is now (one reader per folder)."""
    given = os.environ.get("VIDBENCH_WORDNET")
    root = Path(given) if given else prepare_dict()
    if not (root / "lexnames").is_file():
        raise ConfigError(f"{HOW_TO_GET} ({root} has no lexnames file)")
    version = _version(root / "data.noun")
    if version != "WordNet 3.0":
        raise ConfigError(f"{HOW_TO_GET} ({root}/data.noun is {version}; other versions give "
                          "METEOR other synonyms)")  # fmt: skip
    return _reader(root)


_VERSION = re.compile(r"WordNet (\d+(?:\.\d+)*) Copyright")


def _version(data_noun: Path) -> str:
    """The WordNet version data.noun's license header names ("WordNet 3.0"), or what the file
    is instead."""
    try:
        with data_noun.open("rb") as f:
            header = b"".join(f.readline() for _ in range(40)).decode("latin-1")
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    found = _VERSION.search(header)
    return f"WordNet {found.group(1)}" if found else "without a WordNet version in its header"


@lru_cache(maxsize=2)
def _reader(root: Path) -> WordNetCorpusReader:
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))  # nltk reads corpora only inside its data roots

    class EnglishWordNet(WordNetCorpusReader):  # type: ignore[misc]
        def map_wn(self, version: str = "wordnet") -> None:
            return None  # this *is* WordNet 3.0; no mapping to another version (OMW only)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        return EnglishWordNet(str(root), None)
