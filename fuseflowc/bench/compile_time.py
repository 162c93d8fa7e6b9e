"""`make bench-compile`: compile latency of every model variant.

For each model (ir_examples/models/*/*_*.ff) the pipeline `fuseflowc fuse M | fuseflowc lower`
runs as two separate processes connected by a pipe, Python start-up included, RUNS times; one
line per model gives the median wall time:

    compile-ms <model>: N

(budget: 750 ms, the FuseFlow paper's compile time), then the median CPU time (user + system)
of the two processes, `compile-cpu-ms <model>: N`, which a loaded machine does not inflate the
way it inflates wall time.

The processes run with Python's bytecode cache on, as an installed fuseflowc does (pip compiles
its modules at install time), whatever PYTHONDONTWRITEBYTECODE says: in a temporary
PYTHONPYCACHEPREFIX directory, warmed by one uncounted compile first and removed at the end, so
the checkout gets no __pycache__ directories. Without it every command recompiles each module
it imports from source, about a third of a one-layer model's compile time. A failed compile prints
`compile failed: <model>: <first error line>` and makes the exit status 1. Run:
python -m fuseflowc.bench.compile_time [--runs 5] [PATH ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fuseflowc.bench.exe import fuseflowc_command


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def compile_once(ffc: list[str], model: Path, env: dict | None = None
                 ) -> tuple[float, float, str]:
    """Wall and CPU time (ms) of one `fuse | lower` pipeline (run in `env`, default this
    process's), and its first error line ('' if none)."""
    cpu0 = _children_cpu()
    start = time.perf_counter()
    fuse = subprocess.Popen([*ffc, "fuse", str(model)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    low = subprocess.Popen([*ffc, "lower", "-"], stdin=fuse.stdout, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, env=env)
    fuse.stdout.close()  # lower owns the read end: fuse sees a closed pipe if lower exits
    _, low_err = low.communicate()
    fuse_err = fuse.stderr.read()
    fuse.wait()
    ms = (time.perf_counter() - start) * 1000.0
    cpu = (_children_cpu() - cpu0) * 1000.0
    for code, err in ((fuse.returncode, fuse_err), (low.returncode, low_err)):
        if code != 0:
            lines = err.decode(errors="replace").strip().splitlines()
            return ms, cpu, next((x for x in lines if "error" in x),
                                 lines[-1] if lines else "?")
    return ms, cpu, ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    models = [Path(p) for p in args.paths] or sorted(Path("ir_examples/models").glob("*/*_*.ff"))
    ffc = fuseflowc_command()
    with tempfile.TemporaryDirectory(prefix="fuseflowc-pyc-") as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        if models:
            compile_once(ffc, models[0], env)   # fills the bytecode cache
        return _bench(ffc, models, args.runs, env)


def _bench(ffc: list[str], models: list[Path], runs: int, env: dict) -> int:
    failed = 0
    for m in models:
        times, cpus = [], []
        for _ in range(runs):
            ms, cpu, err = compile_once(ffc, m, env)
            if err:
                print(f"compile failed: {m}: {err}", flush=True)
                failed += 1
                break
            times.append(ms)
            cpus.append(cpu)
        else:
            print(f"compile-ms {m.stem}: {statistics.median(times):.0f}", flush=True)
            print(f"compile-cpu-ms {m.stem}: {statistics.median(cpus):.0f}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
