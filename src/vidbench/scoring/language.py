"""Whether generated text is written in another script than English's: the curation pipelines
ask their generators in English for English benchmarks, and a reply in Chinese or Russian
(a model answering in its own first language) would otherwise pass every check and land in the
benchmark. Only the script is told (by the Unicode names of the letters), not the language:
French or Spanish text in Latin letters is not caught here.
"""

from __future__ import annotations

import unicodedata
from collections import Counter

LATIN = "LATIN"
MOST_FOREIGN = 0.5  # above this share of its letters in another script, text is not English
FEWEST_LETTERS = 3  # "π", "Δt": symbols inside an English question are not a language


def foreign_script(text: str) -> str | None:
    """The script most of the text's letters are in when it is not Latin (e.g. "CJK",
    "CYRILLIC", "HIRAGANA"); None for text mostly in Latin letters, or with too few letters to
    tell."""
    scripts = Counter(unicodedata.name(c, "UNKNOWN").split()[0] for c in text if c.isalpha())
    letters = sum(scripts.values())
    if letters < FEWEST_LETTERS or scripts[LATIN] >= (1 - MOST_FOREIGN) * letters:
        return None
    del scripts[LATIN]
    return scripts.most_common(1)[0][0]
