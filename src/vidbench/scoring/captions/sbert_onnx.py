"""SBERT sentence embeddings on the CPU through ONNX Runtime: sentence-transformers' numbers (to
float32 rounding) in about 40% of the time of its PyTorch forward on the CPU (3,479 captions on
2 cores: 11-12.5 s against 28-30 s).

Why this is written here: sentence-transformers has an ONNX backend of its own
(`SentenceTransformer(..., backend="onnx")`), but it needs optimum-onnx, which pins
transformers < 4.58, and vidbench runs on transformers 5. So the model's first module (its
Transformer) is exported here with PyTorch's exporter and run by ONNX Runtime; everything after
it (pooling, normalisation) is the model's own sentence-transformers modules, unchanged.

- Export: made once per model and kept under `$VIDBENCH_CACHE/onnx/` (default
  ~/.cache/vidbench), keyed like the embedding cache by the model folder's files and the torch
  version. It uses the TorchScript exporter (`dynamo=False`, deprecated since torch 2.9 but
  present): for MiniLM on the CPU its graph ran about 20% faster under ONNX Runtime than the
  torch.export-based exporter's (11.5 s against 13.7 s for 3,479 captions). A tracing exporter
  can bake shapes into the graph, so each export is checked against the PyTorch forward on
  sentences of other lengths and another batch size before it is kept: one that disagrees stops
  with an error (score with `--sbert-runtime torch` then) instead of giving other numbers.
- Run: batches of a few length-sorted sentences, tokenized on the calling thread, each batch's
  graph on one worker thread, `workers` batches at a time. Whole batches in parallel beat ONNX
  Runtime's own operator threads here (12.3 s against 14.6 s), because single-threaded
  operators never wait for one another.
"""

from __future__ import annotations

import copy
import io
import logging
import threading
import warnings
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from vidbench.core.errors import ConfigError
from vidbench.core.files import write_atomic
from vidbench.media.cache import cache_root
from vidbench.scoring.captions.embed_cache import model_key

EXPORT_SAMPLE = ("a cat", "two dogs run")
# Other lengths and another batch size than the export's sample, for the export check.
PROBE = (
    "a cat",
    "A small red cube spins on a white table, then jumps twice and lands on its side.",
    "Three people walk to the left while a dog runs in circles around them.",
)
TOLERANCE = 1e-4  # largest |difference| of a token embedding allowed between ORT and PyTorch
# Small batches of length-sorted sentences: little padding, activations stay in the CPU's cache.
BATCH_SIZE = 8
IN_FLIGHT_PER_WORKER = 2  # batches waiting or running per worker (more was no faster)
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _graph(auto_model: Any, names: Sequence[str]) -> Any:
    """The Transformer module's model as a function of the tokenizer's tensors, for export."""
    import torch

    class TokenEmbeddings(torch.nn.Module):  # type: ignore[misc]  # torch is read untyped (pyproject: [tool.mypy])
        def __init__(self) -> None:
            super().__init__()
            self.model = auto_model

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            inputs = dict(zip(names, tensors, strict=True))
            return self.model(**inputs, return_dict=True).last_hidden_state

    return TokenEmbeddings().eval()


def _input_names(model: Any) -> list[str]:
    features = model.preprocess(["a"])
    names = [n for n in INPUTS if n in features]
    if "input_ids" not in names or "attention_mask" not in names:
        raise ConfigError(f"SBERT model: its tokenizer gives {list(features)}, not input_ids")
    return names


def export_path(model_path: str) -> Path:
    import torch

    folder = f"{model_key(model_path)}-torch{torch.__version__}"
    return cache_root() / "onnx" / folder / "transformer.onnx"


def _session(model: Path | bytes) -> Any:
    """An ONNX Runtime session over a saved graph (a path) or one in memory (its bytes)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # one batch per thread; see the module's notes
    options.log_severity_level = 3  # errors only
    graph = str(model) if isinstance(model, Path) else model
    return ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


def _token_embeddings(session: Any, names: Sequence[str], features: dict[str, Any]) -> np.ndarray:
    embeddings: np.ndarray = session.run(None, {n: features[n].cpu().numpy() for n in names})[0]
    return embeddings


def _check(model: Any, names: Sequence[str], graph: bytes, model_path: str) -> None:
    """Stop unless the ONNX `graph` gives the PyTorch forward's token embeddings."""
    import torch

    features = model.preprocess(list(PROBE))
    with torch.inference_mode():
        inputs = {n: features[n].to(model.device) for n in names}
        expected = model[0].auto_model(**inputs).last_hidden_state.float().cpu().numpy()
    got = _token_embeddings(_session(graph), names, features)
    diff = float(np.abs(got - expected).max()) if got.shape == expected.shape else float("inf")
    if not diff <= TOLERANCE:
        raise ConfigError(
            f"SBERT model {model_path!r}: its ONNX export differs from PyTorch by {diff:.2e}; "
            "score with --sbert-runtime torch"
        )


def export(model: Any, names: Sequence[str], model_path: str) -> Path:
    """The model's Transformer module as ONNX (inputs `names`): exported in memory and checked
    on first use, then kept (only a checked export is ever written)."""
    import torch

    target = export_path(model_path)
    if target.is_file():
        return target
    logging.getLogger(__name__).info("exporting %s to ONNX: %s", model_path, target)
    auto_model = copy.deepcopy(model[0].auto_model).float().cpu().eval()
    if hasattr(auto_model, "set_attn_implementation"):
        auto_model.set_attn_implementation("eager")  # plain ops, which ONNX Runtime fuses
    sample = model.preprocess(list(EXPORT_SAMPLE))
    graph = io.BytesIO()
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # the exporter's deprecation and tracer notes
            torch.onnx.export(
                _graph(auto_model, names),
                tuple(sample[n].cpu() for n in names),
                graph,
                input_names=list(names),
                output_names=["token_embeddings"],
                dynamic_axes={n: {0: "batch", 1: "length"} for n in [*names, "token_embeddings"]},
                opset_version=17,
                dynamo=False,
            )
    except Exception as e:
        raise ConfigError(
            f"SBERT model {model_path!r}: the ONNX export failed ({type(e).__name__}: {e}); "
            "score with --sbert-runtime torch"
        ) from e
    _check(model, names, graph.getvalue(), model_path)
    write_atomic(target, graph.getvalue())
    return target


@contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    """PyTorch's operator threads set to `n` for a while (the pooling modules run beside ONNX
    Runtime's threads, which would otherwise contend with PyTorch's idle-spinning ones)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class OnnxSentenceEncoder:
    """`encode(sentences)` = `SentenceTransformer.encode(sentences)` with the Transformer
    module run by ONNX Runtime (float32, CPU), `workers` batches at a time."""

    def __init__(self, model: Any, model_path: str, workers: int | None = None) -> None:
        import torch

        self.model = model
        self.names = _input_names(model)
        self.path = export(model, self.names, model_path)
        self.session = _session(self.path)
        self.workers = workers or torch.get_num_threads()

    def encode(
        self,
        sentences: Sequence[str],
        batch_size: int = BATCH_SIZE,
        cancel: threading.Event | None = None,
    ) -> np.ndarray:
        """Sentence embeddings, rows in the order given. Setting `cancel` (from another thread)
        stops the work after the batches already running: CancelledError."""
        import torch

        out = np.zeros((len(sentences), self.model.get_embedding_dimension()), np.float32)
        order = sorted(range(len(sentences)), key=lambda i: -len(sentences[i]))
        batches = [order[s : s + batch_size] for s in range(0, len(order), batch_size)]
        pending: deque[tuple[list[int], dict[str, Any], Future[np.ndarray]]] = deque()

        def finish_oldest() -> None:
            rows, features, job = pending.popleft()
            features["token_embeddings"] = torch.from_numpy(job.result())
            for module in list(self.model)[1:]:  # pooling, normalisation: the model's own
                features = module(features)
            out[rows] = features["sentence_embedding"].float().cpu().numpy()

        with (
            ThreadPoolExecutor(self.workers, thread_name_prefix="sbert-onnx") as pool,
            _torch_threads(1),
            torch.inference_mode(),
        ):
            # Tokenized on this thread only: a fast tokenizer called from two threads at once
            # can fail with "Already borrowed" (transformers#47085). The workers run the graph,
            # a few batches ahead of the one collected next.
            for rows in batches:
                if cancel is not None and cancel.is_set():
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise CancelledError("SBERT encoding cancelled")
                features = self.model.preprocess([sentences[i] for i in rows])
                job = pool.submit(_token_embeddings, self.session, self.names, features)
                pending.append((rows, features, job))
                if len(pending) >= IN_FLIGHT_PER_WORKER * self.workers:
                    finish_oldest()
            while pending:
                finish_oldest()
        return out
