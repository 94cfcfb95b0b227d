"""A local vision-language model on a GPU: how busy the device is, by batch size, cold and warm.

    python bench/local_gpu.py                      # a GPU: Qwen2-VL with the 2B shapes, bf16
    python bench/local_gpu.py --shapes tiny --questions 10 --batches 1,2 --dtype float32  # CPU

The model is Qwen2-VL with Qwen2-VL-2B's shapes built from a config with random weights (no
download; throughput does not depend on the weights' values), behind the real `hf:` backend: the
runner's frame loading and cache, the chat template, the processor, batches prepared in a pool
while the device generates. The data is the synthetic 4D-Bench set (`vidbench synth 4d`), the
official input (3 views x 6 frames) at --size px, max_tokens 24. For each batch size the infer
stage runs twice: cold (an empty frame cache) and warm (the same cache, a fresh store).

Printed: batch | wall cold | wall warm | device (generate) | preparing | device busy (warm).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from tiny_models import QWEN2_VL_2B, tiny_qwen2_vl
from vidbench.benchmarks.fourd.synthetic import generate
from vidbench.benchmarks.fourd.variants import TASKS
from vidbench.models import hf_runtime
from vidbench.models.hf_backend import HFModel, HFSettings
from vidbench.models.hf_families import family_for
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.tasks.registry import build_task


class InMemoryHF(HFModel):
    """The hf backend on a model built in memory (so 2B random weights need no disk)."""

    def __init__(self, loaded: hf_runtime.LoadedModel, settings: HFSettings) -> None:
        super().__init__("hf:qwen2-vl-2b-shapes", "memory", settings)
        self._loaded = loaded

    def _device_type(self) -> str:
        return self._loaded.device.partition(":")[0]


def build(shapes: str, dtype: str, device: str, image_side: int) -> hf_runtime.LoadedModel:
    import torch

    target = hf_runtime.pick_device(device)
    model, processor = tiny_qwen2_vl(
        None, image_side=image_side, shapes=QWEN2_VL_2B if shapes == "2b" else None
    )
    model = model.to(device=target, dtype=getattr(torch, dtype)).eval()
    processor.tokenizer.padding_side = "left"
    family = family_for(model.config.model_type)
    eos_ids = hf_runtime.eos_ids(model, processor)
    return hf_runtime.LoadedModel(model, processor, family, target, eos_ids)


def infer(
    work: Path, name: str, model: InMemoryHF, data: Path, limit: int, cache: Path, size: int
) -> Any:
    """One infer stage through the runner; its timing record."""
    config = RunConfig(
        task="4dbench-qa",
        data=str(data),
        model=model.spec,
        out=str(work / name),
        limit=limit,
        concurrency=32,
        generation={"max_tokens": 24},
        frames={"max_side": size},
        cache_dir=str(cache),
        progress=False,
    )
    task = build_task(TASKS, "4dbench-qa", config.generation, **config.frame_overrides())
    run = Run(config, task, Console(file=io.StringIO()))
    run.__dict__["model"] = model  # the in-memory model in place of the backend its spec names
    run.infer()
    return json.loads((work / name / "timing.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--shapes", choices=["2b", "tiny"], default="2b")
    ap.add_argument("--questions", type=int, default=150)
    ap.add_argument("--batches", default="1,8,16")
    ap.add_argument("--size", type=int, default=384, help="frame side in pixels")
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--device", default="auto")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = work / "data"
        objects = (args.questions + 4) // 5
        generate(data, objects=objects, seed=0, frames=48, size=args.size)
        loaded = build(args.shapes, args.dtype, args.device, args.size)
        print(f"model: Qwen2-VL, {args.shapes} shapes, {args.dtype} on {loaded.device}; "
              f"{args.questions} questions, 3 views x 6 frames at {args.size} px")  # fmt: skip
        print("| batch | wall cold | wall warm | device (generate) | preparing | busy (warm) |")
        print("| --- | --- | --- | --- | --- | --- |")
        for batch in (int(b) for b in args.batches.split(",")):
            settings = HFSettings(loaded.device, args.dtype, batch)
            rows = []
            for kind in ("cold", "warm"):
                model = InMemoryHF(loaded, settings)
                cache = work / f"frames-{batch}"  # cold: empty; warm: what cold filled
                name = f"b{batch}-{kind}"
                rows.append(infer(work, name, model, data, args.questions, cache, args.size))
            cold, warm = rows
            cells = [f"{cold['wall_s']:.1f} s", f"{warm['wall_s']:.1f} s"]
            cells += [f"{warm['device_s']:.1f} s", f"{warm['prepare_s']:.1f} s"]
            print(f"| {batch} | " + " | ".join(cells) + f" | {warm['device_busy']:.2f} |")


if __name__ == "__main__":
    main()
