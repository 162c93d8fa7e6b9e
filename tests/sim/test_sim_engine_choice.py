"""Which engine runs a graph: `Simulator(engine=None)` and `fuseflowc simulate` use the compiled
engine where it is built and can run the graph, else the Python engine with a one-line note;
`--engine fast` refuses instead (exit 1); `--engine python` always runs Python. Without the
compiled engine (no compiler at install time) everything still runs, on Python."""

from __future__ import annotations

import numpy as np
import pytest

from fuseflowc.data.fibertree import FiberTensor
from fuseflowc.diagnostics import Source, UserError
from fuseflowc.samml.parser import parse_module
from fuseflowc.sim import engine_fast
from fuseflowc.sim.build import Simulator
from tests.support.golden import run_cli

COPY = """
tensor A[N]: sparse input
tensor B[N]: sparse output
graph copy {
  %ra = root {tensor = A}
  %ci, %ri = scan %ra {tensor = A, mode = 0, format = compressed, index = i}
  %va = array %ri {tensor = A}
  write_level %ci {tensor = B, mode = 0, format = compressed}
  write_vals %va {tensor = B}
}
"""


def _setup(tmp_path, values=(1.5, -2.0, 4.0)):
    module = parse_module(Source("copy.samml", COPY))
    a = FiberTensor.from_coo((8,), [[1], [4], [6]], np.array(values, dtype=np.float64),
                             module.tensor("A").format)
    path = tmp_path / "copy.samml"
    path.write_text(COPY)
    data = tmp_path / "d"
    data.mkdir()
    np.save(data / "A.npy", a.to_dense())
    return module, {"A": a}, path, data


@pytest.fixture
def no_fast(monkeypatch):
    """As if fuseflowc was installed without a C++ compiler."""
    monkeypatch.setattr(engine_fast, "_fast", None)
    monkeypatch.setattr(engine_fast, "_WHY", "not built (it needs a C++ compiler when "
                                             "fuseflowc is installed)")


def test_without_the_compiled_engine_python_runs_and_says_so(tmp_path, no_fast):
    module, inputs, path, data = _setup(tmp_path)
    sim = Simulator(module, inputs, {"N": 8})
    res = sim.run()
    assert res.kernels[0].engine == "python"
    assert sim.notes == ["the compiled engine is not built (it needs a C++ compiler when "
                         "fuseflowc is installed): running the Python engine"]
    assert res.tensors["B"].to_dense().tolist() == [0, 1.5, 0, 0, -2.0, 0, 4.0, 0]
    r = run_cli(["simulate", str(path), "--data", str(data)])
    assert r.exit_code == 0
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("simulate: note:")]
    assert len(notes) == 1 and "not built" in notes[0]
    r = run_cli(["simulate", str(path), "--data", str(data), "--engine", "fast"])
    assert r.exit_code == 1
    assert "--engine fast: the compiled engine is not built" in r.stderr
    r = run_cli(["simulate", str(path), "--data", str(data), "--engine", "python"])
    assert r.exit_code == 0 and "note" not in r.stderr


needs_fast = pytest.mark.skipif(not engine_fast.available(), reason="compiled engine not built")


@needs_fast
def test_the_compiled_engine_is_the_default(tmp_path):
    module, inputs, path, data = _setup(tmp_path)
    sim = Simulator(module, inputs, {"N": 8})
    assert sim.run().kernels[0].engine == "fast" and sim.notes == []
    assert Simulator(module, inputs, {"N": 8}, engine="python").run().kernels[0].engine == \
        "python"
    r = run_cli(["simulate", str(path), "--data", str(data)])
    assert r.exit_code == 0 and "note" not in r.stderr


@needs_fast
def test_a_primitive_the_compiled_engine_lacks(tmp_path, monkeypatch):
    module, inputs, path, data = _setup(tmp_path)
    monkeypatch.setattr(engine_fast, "unsupported", lambda nodes: ["array"])
    sim = Simulator(module, inputs, {"N": 8})
    assert sim.run().kernels[0].engine == "python"
    assert sim.notes == ["graph copy: the compiled engine does not implement array yet: "
                         "running it on the Python engine"]
    with pytest.raises(UserError, match="--engine fast: graph copy: the compiled engine does "
                                        "not implement array yet; use --engine python"):
        Simulator(module, inputs, {"N": 8}, engine="fast").run()
    r = run_cli(["simulate", str(path), "--data", str(data), "--engine", "fast"])
    assert r.exit_code == 1 and "Traceback" not in r.stderr


@needs_fast
def test_a_value_the_compiled_engine_refuses(tmp_path):
    """A NaN whose payload is one of the token tags (never made by arithmetic) runs on Python."""
    tagged = np.array([0xFFFE000000000005], dtype=np.uint64).view(np.float64)[0]
    module, inputs, path, data = _setup(tmp_path, (1.0, tagged, 3.0))
    sim = Simulator(module, inputs, {"N": 8})
    res = sim.run()
    assert res.kernels[0].engine == "python"
    assert len(sim.notes) == 1 and "reserved payload" in sim.notes[0]
    got = res.tensors["B"].vals.view(np.uint64)
    assert got[1] == 0xFFFE000000000005   # carried bit for bit
    with pytest.raises(UserError, match="--engine fast: .*reserved payload"):
        Simulator(module, inputs, {"N": 8}, engine="fast").run()


@needs_fast
def test_the_compiled_engine_is_keyed_by_samml_kind():
    """The compiled engine's factories are keyed by the SAMML kind name (samml/ir.py KINDS, the
    Python node's `kind`), not a Python class name, and cover every kind the simulator runs."""
    from fuseflowc.samml.ir import KINDS as SAMML_KINDS
    from fuseflowc.sim import _fast
    from fuseflowc.sim.arch import KINDS as SIM_KINDS

    kinds = _fast.kinds()
    assert kinds == sorted(kinds)
    assert set(kinds) <= set(SAMML_KINDS)
    assert set(kinds) == set(SIM_KINDS)


@needs_fast
@pytest.mark.parametrize("engine", ["fast", "python"])
def test_bulk_data_is_a_python_list_only_on_the_python_engine(tmp_path, engine):
    """The builder hands a scanner its level and an array its values as the tensor's numpy
    arrays (sim/build.py `bulk`): the compiled engine reads them in place, so at the paper's
    sizes no graph holds a Python object per stored entry (sim/README.md, "Memory"); only the
    Python engine turns them into the lists it indexes (Node.materialize). Same outputs."""
    module, inputs, _, _ = _setup(tmp_path)
    res = Simulator(module, inputs, {"N": 8}, engine=engine, keep_streams=True).run()
    k = res.kernels[0]
    assert k.engine == engine
    scan = next(n for n in k.nodes if n.kind == "scan")
    array = next(n for n in k.nodes if n.kind == "array")
    kind = np.ndarray if engine == "fast" else list
    assert all(isinstance(x, kind) for x in (scan.seg, scan.crd, array.vals))
    assert list(scan.crd) == [1, 4, 6] and list(array.vals) == [1.5, -2.0, 4.0]
    assert res.tensors["B"].vals.tolist() == [1.5, -2.0, 4.0]
