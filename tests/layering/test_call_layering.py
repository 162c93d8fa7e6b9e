"""The layering at run time (tests/layering/calls.py): a sweep spec's whole path (parse, count
orders, compile, estimate, simulate, check) makes no call from a lower layer into a higher one
and compiles only through the pipeline facade. Each check has a twin showing it catches the
call it forbids."""

from __future__ import annotations

from tests.layering.calls import counting, run
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
    from fuseflowc.sweep.worker import import_stages
    import_stages()     # (what importing runs is not the path under test, and it is slow traced)
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    climbs, bypasses = run(["sweep", str(spec), "-o", str(tmp_path / "r.csv")])
    assert (tmp_path / "r.csv").read_text().count(",ok,") >= 1
    assert dict(climbs) == {}
    assert dict(bypasses) == {}


def _in_module(name: str, source: str, **env):
    """The function `f` of `source` as if defined in module `name` (its layer)."""
    scope = {"__name__": name, **env}
    exec(compile(source, f"<{name}>", "exec"), scope)
    return scope["f"]


def test_the_counts_catch_a_callback_from_below_and_a_stage_called_directly():
    from fuseflowc import pipeline
    from fuseflowc.fuse.algorithm import fuse_program
    program = pipeline.load_program(str(ROOT / "ir_examples" / "kernels" / "spmv.ff"))
    callback = _in_module("fuseflowc.sweep.fake", "def f(name, module):\n    pass\n")
    direct = _in_module("fuseflowc.sweep.fake", "def f(p):\n    return fuse_program(p)\n",
                        fuse_program=fuse_program)
    with counting() as (climbs, bypasses):
        pipeline.compile(program, pipeline.CompileOptions(passes="cleanup"), after=callback)
        direct(program)
    assert any(dst == "fuseflowc.sweep.fake:f" for _, dst in climbs)
    assert ("fuseflowc.sweep.fake:f", "fuseflowc.fuse.algorithm:fuse_program") in bypasses
