"""The data directory an import writes: the model's constants, and seeded random values for its
graph inputs (so that the program runs at once; replace them with real inputs of the same names).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _save(d: Path, name: str, a: np.ndarray, compressed: bool) -> None:
    if compressed:
        coords = np.argwhere(a != 0).astype(np.int64)
        np.savez(d / f"{name}.npz", coords=coords, values=a[tuple(coords.T)].astype(np.float64),
                 shape=np.array(a.shape, dtype=np.int64))
    else:
        np.save(d / f"{name}.npy", np.asarray(a, dtype=np.float64))


def random_inputs(inputs: dict, seed: int, density: float = 0.25) -> dict[str, np.ndarray]:
    """Per graph input (program name -> (onnx name, shape, dtype, format)): float values drawn
    from N(0, 1) (rounded to the input's precision), a boolean mask true with `density` and on
    the diagonal of its last two axes (so that no row of a square mask is empty)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in sorted(inputs):
        _, shape, dtype, _ = inputs[name]
        if dtype == "bool":
            m = rng.random(shape) < density
            if len(shape) >= 2 and shape[-1] == shape[-2]:
                m |= np.eye(shape[-1], dtype=bool)
            out[name] = m
        else:
            out[name] = rng.standard_normal(shape).astype(dtype)
    return out


def write_data(d: Path, imported, values: dict[str, np.ndarray]) -> None:
    """Write the constants of `imported` and the input `values` (program name -> array in the
    ONNX shape) into the directory `d`."""
    for name, a in sorted(imported.constants.items()):
        _save(d, name, a, _compressed(imported.text, name))
    for name, a in sorted(values.items()):
        _, shape, dtype, fmt = imported.inputs[name]
        arr = np.asarray(a, dtype=np.float64).reshape([n for n in shape if n != 1])
        _save(d, name, arr, fmt != "dense")


def _compressed(text: str, name: str) -> bool:
    for line in text.splitlines():
        if line.startswith(f"tensor {name}["):
            return "dense" != line.split(":", 1)[1].split("#")[0].strip()
    return False
