"""How busy a local model's device is kept, on a machine without a GPU.

    python bench/local_overlap.py [--objects 30] [--batch 8] [--device-s 0.4]

A stand-in for the device: the `hf:` backend on a tiny Qwen2-VL (built from a config, random
weights), with the real preparation path (frames from the videos through the frame cache, chat
template, image decoding, the processor), whose generate step is replaced by holding the device
for a fixed time per batch (a sleep, which releases the GIL as a GPU kernel wait does). The run
goes through `vidbench run`'s infer stage, which records the device's share (timing.json).

Printed: busy without overlap (each batch prepared, then generated, in one thread) and with it
(the default: batches prepared in a pool while the device holds the previous one); the last line
is `busy <fraction>` for the default settings.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from tiny_models import tiny_qwen2_vl
from vidbench.benchmarks.fourd.synthetic import generate
from vidbench.benchmarks.fourd.variants import TASKS
from vidbench.core.requests import Request, Response
from vidbench.models import hf_runtime
from vidbench.models.batcher import DeviceBatcher
from vidbench.models.hf_backend import HFModel, HFSettings
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.tasks.registry import build_task


class StandIn(HFModel):
    """The hf backend, its device step replaced by a fixed hold per batch."""

    def __init__(self, source: Path, batch: int, device_s: float, overlap: bool) -> None:
        super().__init__(f"hf:{source}", str(source), HFSettings("cpu", "float32", batch))
        self.device_s = device_s
        self.held_s = 0.0  # the device's time alone (without overlap, the run's device_s
        # would count the preparation done in the device's thread too)
        if not overlap:  # prepare and generate one after the other, in the device's thread
            self._batcher = DeviceBatcher(self._prepare_then_hold, batch)

    def _hold(self, requests: Sequence[Request]) -> list[Response]:
        time.sleep(self.device_s)
        self.held_s += self.device_s
        return [Response(r.key, "(A)") for r in requests]

    def _generate_batch(self, prepared: Any) -> list[Response]:
        return self._hold(prepared.requests)

    def _prepare_then_hold(self, requests: Sequence[Request]) -> list[Response]:
        hf_runtime.prepare_batch(self.load(), requests)
        return self._hold(requests)


def measure(work: Path, name: str, model: StandIn, data: Path) -> dict[str, Any]:
    """One infer stage of 4dbench-qa with the stand-in; its timing record."""
    out = work / name
    config = RunConfig(
        task="4dbench-qa",
        data=str(data),
        model=model.spec,
        out=str(out),
        concurrency=16,
        cache_dir=str(work / "frames"),
        progress=False,
    )
    run = Run(config, build_task(TASKS, "4dbench-qa"), Console(file=io.StringIO()))
    run.__dict__["model"] = model  # the stand-in in place of the backend its spec names
    run.infer()
    return json.loads((out / "timing.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--objects", type=int, default=30, help="objects (5 questions each)")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--device-s", type=float, default=0.4, help="device time held per batch")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "data"
        generate(data, objects=args.objects, seed=0, frames=24, size=256)
        model_dir = tiny_qwen2_vl(work / "tiny-qwen2-vl")
        # warm the frame cache, so both passes prepare the same way
        measure(work, "warm", StandIn(model_dir, args.batch, 0.0, True), data)
        for overlap in (False, True):
            model = StandIn(model_dir, args.batch, args.device_s, overlap)
            t = measure(work, "overlap" if overlap else "serial", model, data)
            busy = model.held_s / t["wall_s"]
            label = "with overlap   " if overlap else "without overlap"
            # the serial stand-in prepares inside its generate call, so the run records that
            # preparation as device time: its recorded share is not comparable, and not shown
            recorded = f" (recorded in results: {t['device_busy']:.2f})" if overlap else ""
            print(
                f"{label}: wall {t['wall_s']:.1f} s, device held {model.held_s:.1f} s, "
                f"{t['batches']} batches of <= {args.batch}, busy {busy:.2f}{recorded}"
            )
    print(f"busy {busy:.2f}")


if __name__ == "__main__":
    main()
