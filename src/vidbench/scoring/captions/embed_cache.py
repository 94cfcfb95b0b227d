"""Sentence embeddings kept on disk, so references are encoded once for every model scored.

Table 2 scores many models against the same five references per object; the official script
encodes the references again for each. One SQLite file per embedding model under
`$VIDBENCH_CACHE/embeddings/` (default ~/.cache/vidbench) maps sha256(sentence) to its float32
vector. The model is identified by its folder's files (names, sizes, modification and change
times, inodes; for a Hugging Face id, those of its cached snapshot), so a changed model never
reuses old vectors. A cached vector is the one the model computed in an earlier batch (batch
padding moves values by float32 rounding only). VIDBENCH_EMBED_CACHE=off turns the cache off.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from vidbench.media.cache import cache_root


def _stamp(stat: os.stat_result) -> str:
    """What changes when a file's contents may have: its size, modification time, and the
    inode's change time and number (new weights copied over old ones with their size and
    modification time kept, by `cp -p`, `rsync -a` or an archive, still change those)."""
    return f"{stat.st_size}:{stat.st_mtime_ns}:{stat.st_ctime_ns}:{stat.st_ino}"


def model_folder(model: str) -> Path:
    """The folder a model is read from: `model` itself, or for a Hugging Face id the cached
    snapshot sentence-transformers loads (its revision's own folder)."""
    root = Path(model)
    if root.is_dir():
        return root
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(model, local_files_only=True))
    except (HFValidationError, LocalEntryNotFoundError, OSError):
        return root  # not a cached model: the loader says so when it opens it


def model_key(model_path: str) -> str:
    root = model_folder(model_path)
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
    parts = [str(root.resolve())] + [f"{p.relative_to(root)}:{_stamp(p.stat())}" for p in files]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def enabled() -> bool:
    return os.environ.get("VIDBENCH_EMBED_CACHE", "on").lower() not in ("off", "0", "no")


def _sha(sentence: str) -> str:
    return hashlib.sha256(sentence.encode("utf-8", "surrogatepass")).hexdigest()


def embed(
    sentences: Sequence[str], model_path: str, encode: Callable[[list[str]], np.ndarray]
) -> np.ndarray:
    """Embeddings of `sentences` (rows in order): cached ones read, the others encoded in one
    `encode` call and stored."""
    if not enabled():
        return np.asarray(encode(list(sentences)))
    folder = cache_root() / "embeddings"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{model_key(model_path)}.sqlite"
    try:
        return _embed_cached(path, sentences, encode)
    except sqlite3.DatabaseError as e:
        if type(e) is not sqlite3.DatabaseError:  # locked, read-only, I/O: not a damaged file
            raise
        # a damaged file (not a database, malformed): it is only a cache, so it is started anew
        logging.getLogger(__name__).warning("embedding cache %s is damaged (%s): rebuilt", path, e)
        for stale in (path, path.with_name(f"{path.name}-wal"), path.with_name(f"{path.name}-shm")):
            stale.unlink(missing_ok=True)
        return _embed_cached(path, sentences, encode)


def _embed_cached(
    path: Path, sentences: Sequence[str], encode: Callable[[list[str]], np.ndarray]
) -> np.ndarray:
    db = sqlite3.connect(path, timeout=60)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS vectors (sha TEXT PRIMARY KEY, vector BLOB)")
        keys = [_sha(s) for s in sentences]
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for sha, blob in db.execute(
                f"SELECT sha, vector FROM vectors WHERE sha IN ({marks})", chunk
            ):
                found[sha] = np.frombuffer(blob, dtype=np.float32)
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            fresh = np.asarray(encode([sentences[i] for i in missing]), dtype=np.float32)
            with db:
                db.executemany(
                    "INSERT OR IGNORE INTO vectors VALUES (?, ?)",
                    [(keys[i], fresh[j].tobytes()) for j, i in enumerate(missing)],
                )
            for j, i in enumerate(missing):
                found[keys[i]] = fresh[j]
        return np.stack([found[k] for k in keys])
    finally:
        db.close()
