"""A content-addressed frame cache on disk.

Entries are keyed by a hash of the video file's bytes, so a copied or renamed video still hits and
an edited one misses; that hash is remembered by the file's stat (`video_digest`), so a rerun
reads no video to know it. Per video it keeps the probe (frame timestamps) and each encoded frame
at a given size and format; a second run, or a second model with other views, decodes nothing it
has already decoded. Simultaneous misses on the same thing within a process are merged
(`single_flight`): one thread probes or decodes, the others wait and read what it wrote. Writes
are atomic (temp file + rename), so concurrent runs can share a cache.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from vidbench.core.files import write_atomic
from vidbench.media.decode import VideoInfo, probe

# The probe's checks change what it accepts (v2: truncated files are refused): probes cached by
# another version are made again rather than trusted.
PROBE_VERSION = "v2"
# Probes a FrameCache keeps in memory (a few KB each): a video's probe is read from disk once
# per run, not once per sample that shows it.
PROBES_KEPT = 4096


def cache_root() -> Path:
    """vidbench's cache folder: `$VIDBENCH_CACHE`, else `$XDG_CACHE_HOME/vidbench`, else
    ~/.cache/vidbench. Each kind of cached thing has its own subfolder (frames, asr, ...)."""
    root = os.environ.get("VIDBENCH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "vidbench"
    )
    return Path(root)


def default_cache_dir() -> Path:
    return cache_root() / "frames"


def file_digest(path: Path) -> str:
    """Hash of a file's bytes (blake2b, 128 bits, hex), read in 1 MiB chunks."""
    h = hashlib.blake2b(digest_size=16)
    with Path(path).open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _read_digest(memo: Path) -> str | None:
    """A digest remembered in `memo`, or None when there is none (or it is not one: a damaged
    cache is made again, not trusted)."""
    try:
        text = memo.read_text()
    except (OSError, UnicodeDecodeError):  # none, or an unreadable one
        return None
    return text if len(text) == 32 and all(c in "0123456789abcdef" for c in text) else None


class FrameCache:
    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self._digests: dict[tuple[int, int, int, int, int], str] = {}
        self._probes: OrderedDict[str, VideoInfo] = OrderedDict()  # by digest, last used last
        self._lock = threading.Lock()
        self._flights: dict[Hashable, _Flight] = {}

    def video_digest(self, path: Path) -> str:
        """Hash of the file's bytes, remembered on disk (and in memory) by the file's stat: its
        device and inode (which `stat` gives through any symlink: resolving the path would cost
        a system call per folder of it, per view of every sample), size, mtime and ctime.

        Store keys hold this digest, so an answer is reused only for the same video bytes.
        Why a digest remembered by stat, not the bytes hashed on every run nor (size, mtime)
        in the keys: hashing costs 6-8 s per GiB on a busy 2-core machine (measured), for every
        video a task reads, on every rerun, while this lookup is one stat and one small file
        read (0.2 ms); keying by the bytes rather than by (size, mtime) itself means a copied
        data folder, or a touched file, costs one hash, never a model call per question. ctime
        (which no tool can set back, unlike mtime: `cp -p`, `rsync -t`, `touch -d`) tells a
        file rewritten in place with its old size and mtime. The memo is written best-effort:
        a read-only cache hashes again next time."""
        stat = path.stat()
        memo_key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
        with self._lock:
            digest = self._digests.get(memo_key)
        if digest is None:
            name = "-".join(map(str, memo_key))
            memo = self.root / "digests" / f"{stat.st_ino & 0xFF:02x}" / name
            digest = _read_digest(memo)
            if digest is None:
                digest = file_digest(path)
                with contextlib.suppress(OSError):  # a read-only cache: hashed again next run
                    write_atomic(memo, digest.encode())
            with self._lock:
                self._digests[memo_key] = digest
        return digest

    @contextmanager
    def single_flight(self, key: Hashable) -> Iterator[None]:
        """Hold `key` while computing what other threads would compute the same (a probe, the
        frames of one video for one FrameSpec): they wait here, then find it in the cache, or
        get the error it raised (a later call, once no one waits, tries again).
        Hand-written because functools' caches neither merge concurrent misses nor keep bytes
        on disk."""
        with self._lock:
            flight = self._flights.setdefault(key, _Flight())
            flight.waiting += 1
        try:
            with flight.lock:
                if flight.error is not None:  # a corrupt video fails once, not once per waiter
                    raise copy.copy(flight.error)
                try:
                    yield
                except Exception as e:
                    flight.error = e
                    raise
        finally:
            with self._lock:
                flight.waiting -= 1
                if flight.waiting == 0:
                    del self._flights[key]

    def info(self, path: Path, digest: str) -> VideoInfo:
        """The video's probe: from memory (the PROBES_KEPT last used), the cache, or by
        demuxing it once."""
        with self._lock:
            info = self._probes.get(digest)
            if info is not None:
                self._probes.move_to_end(digest)
                return info
        meta = self.root / "meta" / PROBE_VERSION / digest[:2] / f"{digest}.json"
        with self.single_flight(("probe", digest)):
            if meta.is_file():
                info = VideoInfo.from_json(json.loads(meta.read_text()))
            else:
                info = probe(path)
                write_atomic(meta, json.dumps(info.to_json()).encode())
        with self._lock:
            self._probes[digest] = info
            if len(self._probes) > PROBES_KEPT:
                self._probes.popitem(last=False)
        return info

    def frame_path(self, digest: str, index: int, variant: str) -> Path:
        return self.root / "img" / digest[:2] / digest / f"{index:06d}-{variant}"

    def get_frame(self, digest: str, index: int, variant: str) -> bytes | None:
        try:
            return self.frame_path(digest, index, variant).read_bytes()
        except FileNotFoundError:
            return None

    def put_frame(self, digest: str, index: int, variant: str, data: bytes) -> None:
        write_atomic(self.frame_path(digest, index, variant), data)


@dataclass
class _Flight:
    lock: threading.Lock = field(default_factory=threading.Lock)
    waiting: int = 0
    error: Exception | None = None  # what the first holder ran into: the waiters get it too
