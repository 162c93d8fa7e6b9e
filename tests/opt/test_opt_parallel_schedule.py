"""Schedules through the IR: the program's `parallelize S: k by F` reaches the SAMML module as a
`schedule parallelize {...}` directive (through `fuse | lower` and `lower` alone), which prints,
parses back and verifies; `opt -p schedule` applies it (bit-identical results) and drops it; an
explicit `parallelize` on the command line overrides it; `index=` accepts the program's name."""

from __future__ import annotations

import pytest

from fuseflowc.diagnostics import UserError
from fuseflowc.opt import parse_pipeline, run_pipeline
from fuseflowc.opt.schedule import resolve_pipeline
from fuseflowc.samml import ir
from fuseflowc.samml.parser import parse_text
from fuseflowc.samml.printer import print_module
from fuseflowc.samml.verify import verify
from tests.opt.test_opt_parallel import check_same
from tests.support.golden import run_cli
from tests.support.lower_harness import fused_module, load_text, lowered_module

SPMM = """dim I, K, J
tensor A[I, K] : csr
tensor B[K, J] : dense
tensor C[I, J] : dense
C[i,j] = A[i,k] * B[k,j]
order C: i -> k -> j
"""
PAR = "parallelize C: i by 2\nparallelize C: k by 3\n"


def spmm(schedule: str = PAR, via_fuse: bool = True):
    program = load_text(SPMM + schedule)
    module = fused_module(program) if via_fuse else lowered_module(program)
    verify(module)
    return parse_text(print_module(module))


def directives(m) -> list[tuple]:
    return [(d.kind, d.graph, d.index, d.factor, d.statement, d.local) for d in m.schedules]


def test_lower_records_the_schedule():
    assert directives(spmm()) == [("parallelize", "C", "i", 2, "C", "i"),
                                  ("parallelize", "C", "u0", 3, "C", "k")]
    # `lower` reading the program directly fuses it first: the same directives
    assert directives(spmm(via_fuse=False)) == directives(spmm())
    assert spmm("").schedules == []


def test_directives_round_trip():
    m = spmm()
    text = print_module(m)
    assert "schedule parallelize {graph = C, index = u0, factor = 3, statement = C, local = k}" \
        in text
    assert print_module(parse_text(text)) == text


@pytest.mark.parametrize("line,message", [
    ("schedule fuse {graph = C, index = i, factor = 2}", "unknown schedule directive 'fuse'"),
    ("schedule parallelize {graph = C, index = i}", "needs attribute 'factor'"),
    ("schedule parallelize {graph = D, index = i, factor = 2}", "names graph D"),
    ("schedule parallelize {graph = C, index = q, factor = 2}", "does not iterate index q"),
    ("schedule parallelize {graph = C, index = i, factor = 0}", "attribute 'factor': expected"),
    ("schedule parallelize {graph = C, index = i, factor = 2}\n"
     "schedule parallelize {graph = C, index = i, factor = 4}", "is given twice"),
])
def test_verifier_errors(line, message):
    text = print_module(spmm("")).replace("\ngraph C", line + "\n\ngraph C")
    with pytest.raises(UserError) as e:
        verify(parse_text(text))
    assert message in str(e.value) + "".join(str(d) for d in e.value.diagnostics)


def test_parser_rejects_unknown_attribute():
    text = print_module(spmm("")).replace(
        "\ngraph C", "schedule parallelize {graph = C, lanes = 2}\n\ngraph C")
    with pytest.raises(UserError) as e:
        parse_text(text)
    assert "has no attribute 'lanes'" in str(e.value) + "".join(
        str(d) for d in e.value.diagnostics)


def run(m, pipeline: str):
    passes = resolve_pipeline(m, parse_pipeline(pipeline))
    run_pipeline(m, passes)
    return m


def lanes(m) -> set:
    return {n.lane for g in m.graphs for n in g.nodes if n.lane is not None}


def test_schedule_pass_applies_and_drops():
    m = run(spmm(), "schedule")
    assert m.schedules == [] and lanes(m) == set(range(6))
    # same graph as the explicit passes in directive order
    explicit = run(spmm(""), "parallelize{index=i,factor=2},parallelize{index=u0,factor=3}")
    assert print_module(m) == print_module(explicit)
    check_same(spmm(), "schedule", {}, dim=5)
    # applying the output's (empty) schedule again changes nothing
    assert print_module(run(parse_text(print_module(m)), "schedule")) == print_module(m)


def test_without_schedule_the_directives_stay():
    m = run(spmm(), "cleanup")
    assert len(m.schedules) == 2 and lanes(m) == set()


def test_command_line_overrides_the_module():
    # k (the program's name) and u0 (the graph's) both replace the directive for u0
    for name in ("k", "u0"):
        m = run(spmm(), f"schedule,parallelize{{index={name},factor=4}}")
        forks = [n for g in m.graphs for n in g.nodes if isinstance(n, ir.Fork)]
        assert sorted({n.lanes for n in forks}) == [2, 4]
        assert m.schedules == []
    # an explicit pass before `schedule` also wins
    m = run(spmm(), "parallelize{index=i,factor=5},schedule")
    forks = [n for g in m.graphs for n in g.nodes if isinstance(n, ir.Fork)]
    assert sorted({n.lanes for n in forks}) == [3, 5]
    # skip by hand
    m = run(spmm(), 'schedule{skip="i u0"}')
    assert lanes(m) == set() and m.schedules == []


def test_local_name_resolves_through_directives():
    m = run(spmm(), "parallelize{index=k,factor=2}")
    assert {n.lanes for g in m.graphs for n in g.nodes if isinstance(n, ir.Fork)} == {2}
    assert any(isinstance(n, ir.Fork) and n.inputs[0].producer.index == "u0"
               for g in m.graphs for n in g.nodes if n.inputs and
               isinstance(n.inputs[0].producer, ir.Intersect))


def test_cli(tmp_path):
    path = tmp_path / "spmm.samml"
    path.write_text(print_module(spmm()))
    r = run_cli(["opt", str(path), "-p", "schedule,cleanup"])
    assert r.exit_code == 0, r.stderr
    assert "schedule parallelize" not in r.stdout and "fork" in r.stdout
    r = run_cli(["opt", str(path), "-p", "parallelize{index=nope,factor=2}"])
    assert r.exit_code == 1 and "option index" in r.stderr
