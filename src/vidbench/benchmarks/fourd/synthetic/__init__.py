"""Procedural 4D-Bench demo dataset: multi-view videos of coloured shapes with exact QA/captions."""

from vidbench.benchmarks.fourd.synthetic.writer import build_object, generate

__all__ = ["build_object", "generate"]
