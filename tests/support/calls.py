"""The Python function calls a piece of work makes: a deterministic measure of work, unlike a
time, counted in a fresh interpreter. A profiler enabled inside a test worker shares the process
with whatever earlier tests left there (Dask's IO-loop threads, caches): on the fresh-clone CI
of 11e63ff a worker spun for over 10 minutes inside such a count (tests/fuse/test_fuse_scaling.py)
that takes half a second on its own."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_RUNNER = """
import cProfile, pstats, sys
ns = {}
exec(sys.argv[1], ns)
profile = cProfile.Profile()
profile.enable()
exec(sys.argv[2], ns)
profile.disable()
print(sum(s[1] for s in pstats.Stats(profile).stats.values()))
"""


def count_calls(setup: str, work: str) -> int:
    """The calls `work` makes after `setup` has run (its one-time costs out of the count), both
    Python source run in one namespace of a new interpreter."""
    r = subprocess.run([sys.executable, "-c", _RUNNER, setup, work], capture_output=True,
                       text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    return int(r.stdout.split()[-1])
