"""What `fuse` and `lower` import: compile latency is mostly Python start-up (make
bench-compile), so neither loads numpy or scipy (only data, simulate and the reference need
them), and `lower` reading `fuse`'s output loads no Lark (fuse.fastlines and fuse.fastregions
read it whole). A text they leave is read by Lark, which is then imported (the guard below can
tell the two apart)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("lark", "numpy", "scipy")
# Runs the CLI in-process, then lists the heavy packages it imported, on stderr.
PROBE = ("import runpy, sys\nsys.argv = ['fuseflowc', *sys.argv[1:]]\n"
         "try:\n    runpy.run_module('fuseflowc', run_name='__main__')\n"
         "except SystemExit as e:\n    code = e.code\n"
         f"print('loaded:', sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})),"
         " code, file=sys.stderr)\n")


def loaded(*args: str, stdin: str | None = None) -> tuple[str, str]:
    """(the probe's last stderr line, stdout) of `fuseflowc ARGS`."""
    run = subprocess.run([sys.executable, "-c", PROBE, *args], input=stdin, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    return run.stderr.strip().splitlines()[-1], run.stdout


def test_fuse_and_lower_load_no_numpy_scipy_and_lower_no_lark():
    line, fused = loaded("fuse", "ir_examples/models/gpt3_mini/gpt3_mini.ff")
    assert line == "loaded: ['lark'] 0"
    line, samml = loaded("lower", "-", stdin=fused)
    assert line == "loaded: [] 0" and samml.strip()


def test_lower_loads_lark_for_what_the_fast_readers_leave():
    _, fused = loaded("fuse", "ir_examples/kernels/spmv.ff")
    line, _ = loaded("lower", "-", stdin=fused.replace("\n", "\n# a comment\n", 3)
                     .replace("region ", "region  ", 1))
    assert line == "loaded: ['lark'] 0"
