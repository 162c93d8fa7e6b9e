"""Every harness in fuseflowc/bench/ finds the repository's files from where it lives: a module-level
path inside the checkout must exist (the harnesses moved out of sim/ and the stage packages, one
level deeper for some, and a stale `parents[k]` pointed into fuseflowc/ without failing a test)."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import fuseflowc.bench
from tests.support.paths import ROOT


def _module_paths():
    for info in pkgutil.iter_modules(fuseflowc.bench.__path__):
        if info.name == "__main__":
            continue
        mod = importlib.import_module(f"fuseflowc.bench.{info.name}")
        for name, value in vars(mod).items():
            if isinstance(value, Path) and value.is_absolute() and value.is_relative_to(ROOT):
                yield f"{info.name}.{name}", value


def test_module_level_paths_exist():
    paths = dict(_module_paths())
    assert len(paths) >= 5, paths                       # the check sees the harnesses' roots
    missing = {k: str(v) for k, v in paths.items() if not v.exists()}
    assert not missing
    wrong_roots = {k: str(v) for k, v in paths.items() if k.endswith(".ROOT") and v != ROOT}
    assert not wrong_roots


def test_a_stale_root_is_caught(monkeypatch):
    import fuseflowc.bench.block as block
    monkeypatch.setattr(block, "PROGRAMS", ROOT / "fuseflowc" / "ir_examples" / "models")
    assert not dict(_module_paths())["block.PROGRAMS"].exists()
