"""A tiny randomly initialised BERT with a word-level vocabulary, built offline from a config.

For tests and benchmarks of BERTScore where `bert-base-uncased` is not available: saved to a
folder that `AutoModel` / `AutoTokenizer.from_pretrained(path)` (and so `bert_score.score(...,
model_type=path, num_layers=N)`) load back.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def tiny_bert(path: Path, words: Iterable[str] = (), layers: int = 2, seed: int = 0) -> Path:
    """Save a 2-layer, 32-wide BERT whose vocabulary is the specials, the letters and `words`."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab = list(dict.fromkeys([*SPECIALS, *letters, *(w.lower() for w in words)]))
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizer(
        str(path / "vocab.txt"), do_lower_case=True, model_max_length=512
    ).save_pretrained(str(path))
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    torch.manual_seed(seed)
    BertModel(config).eval().save_pretrained(str(path))
    return path


def tiny_sentence_model(path: Path, words: Iterable[str] = (), seed: int = 0) -> Path:
    """Save a sentence-transformers model (a tiny BERT, mean pooling, normalisation) to `path`."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    bert = tiny_bert(Path(path) / "bert", words, seed=seed)
    transformer = Transformer(str(bert))
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    SentenceTransformer(modules=[transformer, pooling, Normalize()], device="cpu").save(str(path))
    return Path(path)
