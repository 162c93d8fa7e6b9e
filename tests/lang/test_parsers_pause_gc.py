"""The three parsers pause Python's cyclic garbage collector while they build an IR.

Found by fuzzing: a SAMML file of 4 MB (a graph repeated) took 25 s of CPU to parse, 9 s of
them parsing and the rest the collector walking the parse's millions of live objects again and
again. No collection may run during a parse, and the collector is on again afterwards, also
when the parse fails.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.fuse.parser import parse_fused
from fuseflowc.lang.parser import parse_program
from fuseflowc.samml.parser import parse_module
from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def collections():
    """The collections run while the test runs (a list, filled by a gc callback)."""
    seen: list[int] = []

    def note(phase, info):
        if phase == "start":
            seen.append(info["generation"])
    gc.callbacks.append(note)
    yield seen
    gc.callbacks.remove(note)


def _big_inputs() -> dict[str, str]:
    """Each IR with a part repeated a few hundred times (renamed where names must differ)."""
    spmv = ROOT / "ir_examples" / "kernels" / "spmv.ff"
    fused = run_cli(["fuse", str(spmv)]).stdout
    samml = run_cli(["lower"], input=fused).stdout
    program = spmv.read_text() + "".join(f"y[i] = A[i,j] * x[j] + {k}\n" for k in range(2000))
    head, _, region = fused.partition("region y ")
    fused = head + "".join(f"region y{k} " + region for k in range(300))
    head, _, graph = samml.partition("graph y ")
    samml = head + "".join(f"graph y{k} " + graph for k in range(300))
    return {"program": program, "fused": fused, "samml": samml}


PARSERS = {"program": parse_program, "fused": lambda s: parse_fused(s, verify=False),
           "samml": parse_module}


@pytest.mark.parametrize("kind", sorted(PARSERS))
def test_no_collection_while_parsing(kind, collections):
    text = _big_inputs()[kind]
    assert gc.isenabled()
    collections.clear()
    try:
        PARSERS[kind](Source("big", text))
    except UserError:  # renamed copies need not make sense together: parsing them is the point
        pass
    # (one collection may run at once when the collector is back on, as the parse returns)
    assert len(collections) <= 1, collections
    assert gc.isenabled()
    with pytest.raises(UserError):
        PARSERS[kind](Source("bad", "tensor [[[\n"))
    assert gc.isenabled()
