"""Lists and loops (docs/language.md, "Lists and loops"): the reference evaluator's loops
against plain numpy loops, the unrolled program against the loops, and the compiled pipeline
(fuse, lower, simulate) against the reference, on random loop bodies and lengths 0, 1, many."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuseflowc.data.gen import random_inputs
from fuseflowc.diagnostics import Source, UserError
from fuseflowc.lang.checker import check
from fuseflowc.lang.parser import parse_program
from fuseflowc.reference import evaluate
from tests.support.lower_harness import assert_matches

ACTS = {"relu": lambda x: np.maximum(x, 0), "tanh": np.tanh, "": lambda x: x}
# How an iteration l (of n) reads the list B (n elements) or C (2n + 1 elements):
# (text, the element of B or C it reads, or None for the fallback X)
ACCESSES = {
    "same": ("B[l; i, h]", lambda l, n, p: ("B", l)),
    "reverse": ("B[reverse(l); i, h]", lambda l, n, p: ("B", n - 1 - l)),
    "shift": ("(B[l - 1; i, h] else X[i, h])", lambda l, n, p: ("B", l - 1) if l else None),
    "ahead": ("(B[l + 1; i, h] else X[i, h])",
              lambda l, n, p: ("B", l + 1) if l + 1 < n else None),
    "stride": ("C[2 * l + 1; i, h]", lambda l, n, p: ("C", 2 * l + 1)),
    "indirect": ("B[p[l]; i, h]", lambda l, n, p: ("B", p[l])),
}


def program_text(kind: str, n: int, act: str, access: str, k: float, perm) -> str:
    acc = ACCESSES[access][0]
    state_decl = {"fold": "tensor S[N, F] : dense", "scan": "tensor S[L; N, F] : dense",
                  "map": "tensor Y[L; N, F] : dense"}[kind]
    head = [f"dim L = {n}, C2 = {2 * n + 1}, N = 3, F = 3",
            "tensor X[N, F] : dense", "tensor W[L; F, F] : dense", "tensor B[L; N, F] : dense",
            "tensor C[C2; N, F] : dense", "tensor T[N, F] : dense", state_decl]
    if perm:
        head.append(f"index p[L] = {', '.join(map(str, perm))}")
    if kind == "map":
        body = (f"map l in L {{\n  T[i, h] = sum[f](X[i, f] * W[l; f, h])\n"
                f"  Y[l; i, h] = {act}(T[i, h] + {k} * {acc})\n}}")
    else:
        body = (f"S = {kind} l in L from X {{\n  T[i, h] = sum[f](S[i, f] * W[l; f, h])\n"
                f"  S[i, h] = {act}(T[i, h] + {k} * {acc})\n}}")
    return "\n".join(head) + "\n" + body + "\n"


def numpy_loop(kind, n, act, access, k, perm, x: dict) -> dict[str, np.ndarray]:
    """The program's outputs computed by a plain loop."""
    f, pick = ACTS[act], ACCESSES[access][1]

    def read(l):
        which = pick(l, n, perm)
        return x["X"] if which is None else x[f"{which[0]}__{which[1]}"]

    out, s = {}, x["X"]
    for l in range(n):
        src = x["X"] if kind == "map" else s
        s = f(src @ x[f"W__{l}"] + k * read(l))
        if kind != "fold":
            out[f"{'Y' if kind == 'map' else 'S'}__{l}"] = s
    if kind == "fold":
        out["S"] = s
    return out


def sizes(prog) -> dict[str, int]:
    return {d.name: d.size for d in prog.dims if d.size is not None}


def load(text: str):
    return check(parse_program(Source("<test>", text)))


cases = st.tuples(st.sampled_from(["fold", "scan", "map"]), st.sampled_from([0, 1, 2, 5]),
                  st.sampled_from(sorted(ACTS)), st.sampled_from(sorted(ACCESSES)),
                  st.sampled_from([0.5, -1.0, 2.0]), st.randoms(use_true_random=False),
                  st.integers(0, 2**16))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases)
def test_loops_match_numpy_and_unrolled(case):
    kind, n, act, access, k, rnd, seed = case
    if access == "indirect" and n == 0:
        access = "same"  # an index list has at least one entry
    perm = list(range(n))
    rnd.shuffle(perm)
    text = program_text(kind, n, act, access, k, perm if access == "indirect" else None)
    prog = load(text)
    specs = [s for s in prog.specs() if s.name in set(prog.inputs)]
    inputs = random_inputs(specs, sizes(prog), seed)
    dense = {name: t.to_dense() for name, t in inputs.items()}
    want = numpy_loop(kind, n, act, access, k, perm, dense)
    got = evaluate(prog, inputs)                       # the loops, run as written
    flat = evaluate(replace(prog, looped=None), inputs)  # the unrolled statements
    assert sorted(got) == sorted(flat)
    for name in got:
        np.testing.assert_allclose(got[name].to_dense(), flat[name].to_dense(), rtol=1e-12)
    for name, value in want.items():
        np.testing.assert_allclose(got[name].to_dense(), value, rtol=1e-9, atol=1e-12,
                                   err_msg=f"{name}\n{text}")
    assert set(want) <= set(got)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases, st.sampled_from(["unroll", "reuse"]))
def test_every_compilation_mode_matches_reference(case, mode):
    """Random loop bodies and lengths through fuse, lower and simulate, unrolled or reused,
    against the reference evaluator's loops."""
    kind, n, act, access, k, rnd, seed = case
    if access == "indirect" and n == 0:
        access = "same"
    perm = list(range(n))
    rnd.shuffle(perm)
    text = program_text(kind, n, act, access, k, perm if access == "indirect" else None)
    text += "fuse layer: T, " + ("Y" if kind == "map" else "S") + "\n"
    text += f"schedule l: {mode}\n" + ("output S\n" if kind == "scan" and n else "")
    prog = load(text)
    if not prog.statements:
        return  # a map or scan of no iteration computes nothing
    specs = [sp for sp in prog.specs() if sp.name in set(prog.inputs)]
    assert_matches(prog, {}, inputs=random_inputs(specs, sizes(prog), seed))


@pytest.mark.parametrize("kind,n,access", [("fold", 0, "same"), ("fold", 3, "shift"),
                                           ("scan", 1, "reverse"), ("map", 4, "indirect"),
                                           ("scan", 3, "stride")])
def test_compiled_matches_reference(kind, n, access):
    perm = list(reversed(range(n)))
    text = program_text(kind, n, "relu", access, 0.5, perm if access == "indirect" else None)
    assert_matches(load(text + "fuse layer: T, " + ("Y" if kind == "map" else "S")
                        + ("\noutput S" if kind == "scan" else "")), {})


RNN = """dim D = 2, T = 3, B = 2, K = 3
tensor X[T; B, K] : dense
tensor W[D; K, K] : dense
tensor U[D; K, K] : dense
tensor H0[B, K] : dense
tensor Hs[D, T; B, K] : dense
scan d in D {
  scan t in T {
    Hs[d, t; b, k] = tanh(sum[j]((Hs[d - 1, t; b, j] else X[t; b, j]) * W[d; j, k])
                          + sum[j2]((Hs[d, t - 1; b, j2] else H0[b, j2]) * U[d; j2, k]))
  }
}
output Hs
"""


def test_nested_scans_match_numpy_and_compile():
    prog = load(RNN)
    specs = [s for s in prog.specs() if s.name in set(prog.inputs)]
    inputs = random_inputs(specs, sizes(prog), 3)
    x = {n: t.to_dense() for n, t in inputs.items()}
    got = evaluate(prog, inputs)
    h = {}
    for d in range(2):
        for t in range(3):
            below = h[d - 1, t] if d else x[f"X__{t}"]
            before = h[d, t - 1] if t else x["H0"]
            h[d, t] = np.tanh(below @ x[f"W__{d}"] + before @ x[f"U__{d}"])
            np.testing.assert_allclose(got[f"Hs__{d}_{t}"].to_dense(), h[d, t], rtol=1e-12)
    assert_matches(prog, {}, inputs=inputs)


def test_reuse_and_wavefront_compile_check_and_count_configurations():
    """reuse: iterations 1.. are iteration 0's graph with other tensors bound (one
    configuration); wavefront: statements in anti-diagonal order, graphs marked with their
    wave; both compute what the sequential order computes."""
    from fuseflowc.samml.parser import parse_module
    from fuseflowc.samml.printer import print_module
    from tests.support.lower_harness import lowered_module
    text = program_text("fold", 4, "relu", "same", 0.5, None) + "fuse layer: T, S\n"
    for sched in ("", "schedule l: reuse\n"):
        prog = load(text + sched)
        module = lowered_module(prog)
        printed = print_module(module)
        assert print_module(parse_module(Source("<m>", printed))) == printed
        reused = [g.name for g in module.graphs if g.template is not None]
        assert reused == ([] if not sched else ["layer__1", "layer__2", "layer__3"])
        assert ("graph layer__1 = layer__0 {" in printed) == bool(sched)
        assert_matches(prog, {})
    seq, wave = load(RNN), load(RNN + "schedule t: wavefront\n")
    assert [s.name for s in wave.statements] == ["Hs__0_0", "Hs__0_1", "Hs__1_0", "Hs__0_2",
                                                 "Hs__1_1", "Hs__1_2"]
    assert wave.waves == {"Hs__0_0": 0, "Hs__0_1": 1, "Hs__1_0": 1, "Hs__0_2": 2,
                          "Hs__1_1": 2, "Hs__1_2": 3}
    assert sorted(s.name for s in seq.statements) == sorted(s.name for s in wave.statements)
    specs = [s for s in seq.specs() if s.name in set(seq.inputs)]
    inputs = random_inputs(specs, sizes(seq), 5)
    a, b = evaluate(replace(seq, looped=None), inputs), evaluate(replace(wave, looped=None),
                                                                 inputs)
    for name in a:
        np.testing.assert_array_equal(a[name].to_dense(), b[name].to_dense())
    module = lowered_module(wave)
    assert [g.wave for g in module.graphs] == [0, 1, 1, 2, 2, 3]
    assert_matches(wave, {}, inputs=inputs)


def test_schedule_stats_model():
    """Configuration cost: base + per_node * nodes per graph loaded, rebind * tensors per
    reuse; a wave costs its slowest graph."""
    from types import SimpleNamespace as NS

    from fuseflowc.sim.arch import Arch
    from fuseflowc.sim.report import schedule_stats
    g0 = NS(iteration=("l", 0), name="a", template=None, binds={}, wave=None, nodes=[1] * 10)
    g1 = NS(iteration=("l", 1), name="b", template="a", binds={"x": "y", "u": "v"}, wave=None, nodes=[1] * 10)
    w0 = NS(iteration=None, name="c", template=None, binds={}, wave=0, nodes=[1] * 3)
    w1 = NS(iteration=None, name="d", template=None, binds={}, wave=1, nodes=[1] * 3)
    w2 = NS(iteration=None, name="e", template=None, binds={}, wave=1, nodes=[1] * 3)
    module = NS(graphs=[g0, g1, w0, w1, w2])
    result = NS(kernels=[NS(graph=n, cycles=c, nodes=[]) for n, c in
                         [("a", 100), ("b", 90), ("c", 10), ("d", 20), ("e", 30)]])
    arch = Arch.load(None, ("config.base=1000", "config.per_node=16", "config.rebind=4"))
    s = schedule_stats(result, module, arch)
    assert s["configurations"] == 4 and s["reused_runs"] == 1
    assert s["configuration_cycles"] == 4 * 1000 + 16 * (10 + 3 * 3) + 4 * 2
    assert s["cycles_with_configuration"] == 250 + s["configuration_cycles"]
    assert s["iteration_cycles"] == {"l": [100, 90]}
    assert s["waves"] == 2 and s["lanes"] == 2 and s["wavefront_cycles"] == 100 + 90 + 10 + 30


ERRORS = [
    ("dim L = 2, N = 2\ntensor W[L; N] : dense\ntensor y[N] : dense\ny[i] = W[i]\n",
     "4:8", "W is a list over L"),
    ("dim L, N = 2\ntensor W[L; N] : dense\n", "2:10", "needs a fixed size"),
    ("dim L = 2, N = 2\ntensor W[L; N] : dense\ntensor Y[L; N] : dense\n"
     "map l in L { Y[l; i] = W[l + 1; i] }\n", "4:26", "out of range at l = 1"),
    ("dim L = 2, N = 2\ntensor W[L; N] : dense\ntensor Y[L; N] : dense\n"
     "map l in L { Y[l; i] = W[l; i] + (Y[l - 1; i] else W[0; i]) }\n", "4:35",
     "iterations of a map are independent"),
    ("dim L = 2, N = 2\ntensor W[L; N] : dense\ntensor Y[L; N] : dense\n"
     "scan l in L { Y[l; i] = W[l; i] + (Y[l + 1; i] else W[0; i]) }\n", "4:36",
     "before it is computed"),
    ("dim L = 2, N = 2\ntensor W[L; N] : dense\ntensor S[N] : dense\ntensor T[N] : dense\n"
     "S = fold l in L from T { T[i] = S[i] }\n", "5:10", "must end by assigning the next state"),
    ("dim L = 2, N = 2\ntensor W[L; N] : dense\ntensor S[N] : dense\ntensor X[N] : dense\n"
     "tensor T[N] : dense\nS = fold l in L from X { T[i] = W[l; i] S[i] = T[i] }\n"
     "tensor y[N] : dense\ny[i] = T[i]\n", "8:8", "cannot be read outside that loop"),
    ("dim L = 2, N = 2\ntensor W[L; N] : dense\ntensor Y[L; N] : dense\n"
     "map l in L { Y[l; i] = W[q; i] }\n", "4:26", "q is not a loop variable"),
    ("dim L = 2, N = 2\ntensor W[L; N] : dense\ntensor Y[L; N] : dense\n"
     "map l in L { Y[l; i] = W[p[l]; i] }\n", "4:26", "undefined index list p"),
    ("dim L = 2, N = 2\nindex p[L] = 1, 5\ntensor W[L; N] : dense\ntensor Y[L; N] : dense\n"
     "map l in L { Y[l; i] = W[p[l]; i] }\n", "5:26", "out of range at l = 1"),
    ("dim L = 0, N = 0\ntensor W[L; N] : dense\n", "2:13", "only list dimensions"),
    ("dim N = 2\ntensor x[N] : dense\ntensor y[N] : dense\ny[i] = x[i] else x[i]\n", "4:8",
     "has no list indices"),
    ("dim L = 2, N = 2\ntensor W[L; N] : dense\ntensor Y[L; N] : dense\n"
     "map l in L { Y[l; i] = W[l; i] }\nschedule l: spiral\n", "5:13", "unknown loop schedule"),
    ("dim L = 2, N = 2\ntensor W[L; N] : dense\ntensor Y[L; N] : dense\n"
     "map l in L { Y[l; i] = W[l; i] }\nschedule q: reuse\n", "5:10", "no loop's variable"),
    ("dim L = 2, N = 2\ntensor W[L; N] : dense\ntensor Y[L; N] : dense\n"
     "map l in L { Y[l; i] = W[l; i] }\nschedule l: wavefront\n", "5:13",
     "wavefront applies to a scan"),
    (RNN + "schedule t: reuse\nschedule t: wavefront\n", "15:10", "loop t has two schedules"),
    ("dim L = 3, N = 2\ntensor W[L; N] : dense\ntensor S[N] : dense\ntensor X[N] : dense\n"
     "S[i] = fold l in L from X: S[i] * W[l; i]\nschedule l: reuse\nfuse two: S__0, S__1\n",
     "7:6", "spans iterations of the loop over l"),
]


@pytest.mark.parametrize("text,where,message", ERRORS)
def test_located_errors(text, where, message):
    with pytest.raises(UserError) as e:
        load(text)
    shown = e.value.format()
    assert f"<test>:{where}: error:" in shown and message in shown, shown


def test_fused_ir_and_samml_carry_loop_schedules():
    """The fused IR's reuse/wave lines and SAMML's reused graphs print and parse back; bad
    references are located errors."""
    from fuseflowc.fuse.algorithm import fuse_program
    from fuseflowc.fuse.parser import parse_fused
    from fuseflowc.fuse.printer import fused_str
    from fuseflowc.samml.parser import parse_module
    prog = load(program_text("fold", 3, "tanh", "same", 2.0, None)
                + "fuse layer: T, S\nschedule l: reuse\n")
    text = fused_str(fuse_program(prog))
    assert "reuse l 0: T__0, S__0\nreuse l 1: T__1, S__1\nreuse l 2: T__2, S\n" in text
    assert fused_str(parse_fused(Source("<f>", text))) == text
    wave = fused_str(fuse_program(load(RNN + "schedule t: wavefront\n")))
    assert "wave Hs__1_2 3\n" in wave
    assert fused_str(parse_fused(Source("<f>", wave))) == wave
    with pytest.raises(UserError, match="reuse l 1: iterations are listed in increasing order"):
        parse_fused(Source("<f>", text.replace("reuse l 0:", "reuse l 7:")))
    head = "tensor x[N]: dense input\ntensor y[N]: dense output\n"
    bad = head + "graph b = a {x = y}\n"
    with pytest.raises(UserError) as e:
        parse_module(Source("<m>", bad))
    assert "<m>:3:11: error: graph b reuses graph a, which is not defined before it" \
        in e.value.format()
    with pytest.raises(UserError, match="wave of graph zz, which the module does not define"):
        parse_module(Source("<m>", head + "wave zz 1\n"))


def test_a_region_may_span_iterations_when_unrolled():
    """Coarsening by hand: the unrolled statements of two layers fused into one graph."""
    from tests.support.lower_harness import lowered_module
    prog = load(program_text("fold", 2, "relu", "same", 0.5, None)
                + "fuse two: T__0, S__0, T__1, S\n")
    module = lowered_module(prog)
    assert [g.name for g in module.graphs] == ["two"]
    assert_matches(prog, {})
