"""The layering at run time (tests/layering/calls.py): a sweep spec's whole path (parse, count
orders, compile, estimate, simulate, check) makes no call from a lower layer into a higher one
and compiles only through the pipeline facade. Each check has a twin showing it catches the
call it forbids."""

from __future__ import annotations

import ast
import subprocess
import sys

from tests.support.golden import ROOT

SPEC = f"""
orders = "all"
[[programs]]
path = "{ROOT / 'ir_examples' / 'kernels' / 'spmv.ff'}"
[[data]]
name = "tiny"
sizes = {{ I = 4, J = 3 }}
density = 0.5
seed = 1
"""


def test_a_sweep_climbs_no_layer_and_compiles_through_the_pipeline(tmp_path):
    """Traced in a fresh interpreter: a trace function set inside a test worker shares the
    process with what earlier tests left there (Dask's IO-loop threads), and a traced run of
    this test once spun for many minutes in CI (see tests/support/calls.py)."""
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    out = tmp_path / "r.csv"
    code = ("from fuseflowc.sweep.worker import import_stages\n"
            "import_stages()\n"   # (what importing runs is not the path under test: slow traced)
            "from tests.layering.calls import run\n"
            f"climbs, bypasses = run(['sweep', {str(spec)!r}, '-o', {str(out)!r}])\n"
            "print(repr((dict(climbs), dict(bypasses))))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    climbs, bypasses = ast.literal_eval(r.stdout.strip().splitlines()[-1])
    assert out.read_text().count(",ok,") >= 1
    assert climbs == {}
    assert bypasses == {}


def _in_module(name: str, source: str, **env):
    """The function `f` of `source` as if defined in module `name` (its layer)."""
    scope = {"__name__": name, **env}
    exec(compile(source, f"<{name}>", "exec"), scope)
    return scope["f"]


def test_the_counts_catch_a_callback_from_below_and_a_stage_called_directly():
    """Traced in a fresh interpreter too, as the sweep above: in a test worker this traced
    compile spun for many minutes twice (2026-11-28, CI and a full run), inside the worker that
    earlier tests had left threads in."""
    code = ("import sys\n"
            "from fuseflowc import pipeline\n"
            "from fuseflowc.fuse.algorithm import fuse_program\n"
            "from tests.layering.calls import counting\n"
            "from tests.layering.test_call_layering import _in_module\n"
            f"program = pipeline.load_program({str(ROOT / 'ir_examples' / 'kernels' / 'spmv.ff')!r})\n"
            "callback = _in_module('fuseflowc.sweep.fake', 'def f(name, module):\\n    pass\\n')\n"
            "direct = _in_module('fuseflowc.sweep.fake', 'def f(p):\\n    return fuse_program(p)\\n',\n"
            "                    fuse_program=fuse_program)\n"
            "with counting() as (climbs, bypasses):\n"
            "    pipeline.compile(program, pipeline.CompileOptions(passes='cleanup'), after=callback)\n"
            "    direct(program)\n"
            "print(repr((list(climbs), list(bypasses))))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    climbs, bypasses = ast.literal_eval(r.stdout.strip().splitlines()[-1])
    assert any(dst == "fuseflowc.sweep.fake:f" for _, dst in climbs)
    assert ("fuseflowc.sweep.fake:f", "fuseflowc.fuse.algorithm:fuse_program") in bypasses
