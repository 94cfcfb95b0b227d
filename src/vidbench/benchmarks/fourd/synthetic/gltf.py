"""Meshes of the procedural shapes and a binary glTF (GLB) writer.

The shapes match the 2D renderer's (render.py) proportions at radius 1: a sphere, a cube of half
side 0.85, a cone 1.8 high, a cylinder of radius 0.6 and height 2, all centred at the origin.
Triangles are written unindexed (three vertices each) with outward normals: smooth on the sphere,
flat elsewhere.

The GLB container is written by hand (a 12-byte header, a JSON chunk and a BIN chunk, glTF 2.0
specification, section "GLB File Format Specification"): a glTF library (pygltflib) would only
pack these two chunks while we still build every buffer and accessor ourselves, and this way
exporting assets needs nothing beyond numpy.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

from vidbench.core.files import write_atomic

SEGMENTS = 24  # around the vertical axis
RINGS = 12  # sphere rings from pole to pole

GLB_MAGIC = 0x46546C67  # "glTF"
CHUNK_JSON = 0x4E4F534A
CHUNK_BIN = 0x004E4942
FLOAT = 5126  # glTF componentType of float32


def _circle(radius: float, y: float) -> np.ndarray:
    a = np.linspace(0.0, 2.0 * np.pi, SEGMENTS, endpoint=False)
    return np.stack([radius * np.sin(a), np.full_like(a, y), radius * np.cos(a)], axis=1)


def _quads(lower: np.ndarray, upper: np.ndarray) -> list[np.ndarray]:
    """Two triangles per side between two rings of equal length."""
    tris = []
    for i in range(len(lower)):
        j = (i + 1) % len(lower)
        tris += [np.array([lower[i], lower[j], upper[j]]), np.array([lower[i], upper[j], upper[i]])]
    return tris


def _fan(ring: np.ndarray, centre: np.ndarray) -> list[np.ndarray]:
    return [np.array([centre, ring[i], ring[(i + 1) % len(ring)]]) for i in range(len(ring))]


def _sphere() -> list[np.ndarray]:
    tris = []
    for k in range(RINGS):
        lo, hi = np.pi * k / RINGS - np.pi / 2, np.pi * (k + 1) / RINGS - np.pi / 2
        tris += _quads(_circle(np.cos(lo), np.sin(lo)), _circle(np.cos(hi), np.sin(hi)))
    return tris


def _cube() -> list[np.ndarray]:
    a = 0.85
    tris = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            u, v = [i for i in range(3) if i != axis]
            corners = []
            for du, dv in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                p = np.zeros(3)
                p[axis], p[u], p[v] = sign * a, du * a, dv * a
                corners.append(p)
            tris += [np.array(corners[:3]), np.array([corners[0], corners[2], corners[3]])]
    return tris


def _cone() -> list[np.ndarray]:
    base = _circle(1.0, -0.9)
    return _fan(base, np.array([0.0, 0.9, 0.0])) + _fan(base, np.array([0.0, -0.9, 0.0]))


def _cylinder() -> list[np.ndarray]:
    bottom, top = _circle(0.6, -1.0), _circle(0.6, 1.0)
    caps = _fan(bottom, np.array([0.0, -1.0, 0.0])) + _fan(top, np.array([0.0, 1.0, 0.0]))
    return _quads(bottom, top) + caps


_BUILDERS = {"sphere": _sphere, "cube": _cube, "cone": _cone, "cylinder": _cylinder}


def shape_mesh(shape: str) -> tuple[np.ndarray, np.ndarray]:
    """(positions, normals), float32 arrays of shape (3 * triangles, 3), of a unit ``shape``."""
    if shape not in _BUILDERS:
        raise ValueError(f"unknown shape {shape!r}")
    positions, normals = [], []
    for tri in _BUILDERS[shape]():
        normal = np.cross(tri[1] - tri[0], tri[2] - tri[0])
        if np.linalg.norm(normal) < 1e-9:  # a sphere's pole triangles collapse to a line
            continue
        if np.dot(normal, tri.mean(axis=0)) < 0:  # convex and centred: outward = away from 0
            tri, normal = tri[[0, 2, 1]], -normal
        positions.append(tri)
        if shape == "sphere":
            normals.append(tri / np.linalg.norm(tri, axis=1, keepdims=True))
        else:
            normals.append(np.tile(normal / np.linalg.norm(normal), (3, 1)))
    return (
        np.concatenate(positions).astype(np.float32),
        np.concatenate(normals).astype(np.float32),
    )


class GltfBuilder:
    """Collects binary data into one buffer and describes it with accessors."""

    def __init__(self) -> None:
        self.doc: dict = {"asset": {"version": "2.0", "generator": "vidbench"}}
        self.doc.update(buffers=[], bufferViews=[], accessors=[])
        self.blob = bytearray()

    def accessor(self, data: np.ndarray, kind: str, bounds: bool = False) -> int:
        """Add float32 ``data`` (rows of SCALAR/VEC3/VEC4) and return its accessor index."""
        data = np.ascontiguousarray(data, dtype=np.float32)
        self.blob += b"\0" * (-len(self.blob) % 4)
        self.doc["bufferViews"].append(
            {"buffer": 0, "byteOffset": len(self.blob), "byteLength": data.nbytes}
        )
        self.blob += data.tobytes()
        accessor = {
            "bufferView": len(self.doc["bufferViews"]) - 1,
            "componentType": FLOAT,
            "count": len(data),
            "type": kind,
        }
        if bounds:  # required for POSITION and animation inputs
            rows = data.reshape(len(data), -1)
            accessor["min"] = rows.min(axis=0).tolist()
            accessor["max"] = rows.max(axis=0).tolist()
        self.doc["accessors"].append(accessor)
        return len(self.doc["accessors"]) - 1

    def write_glb(self, path: Path) -> None:
        """Write the document and its buffer as one .glb file (atomically)."""
        self.blob += b"\0" * (-len(self.blob) % 4)
        self.doc["buffers"] = [{"byteLength": len(self.blob)}]
        text = json.dumps(self.doc, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 4)
        total = 12 + 8 + len(text) + 8 + len(self.blob)
        data = struct.pack("<III", GLB_MAGIC, 2, total)
        data += struct.pack("<II", len(text), CHUNK_JSON) + text
        data += struct.pack("<II", len(self.blob), CHUNK_BIN) + bytes(self.blob)
        write_atomic(Path(path), data)
