"""Random programs (row-major formats, i -> j orders): lowered, simulated and compared with the
reference evaluator. Covers fusion of 2-3 statements, unions with the broadcast rule,
intersections, masks, unary functions, sums over rows and columns, densities down to empty."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.lower_harness import assert_matches, load_text

MAT_FORMATS = ("csr", "dcsr", "dense")
VEC_FORMATS = ("dense", "sparse")


@st.composite
def programs(draw):
    n_in = draw(st.integers(2, 3))
    lines = ["dim I, J"]
    mats = [f"A{k}" for k in range(n_in)]
    for m in mats:
        lines.append(f"tensor {m}[I, J] : {draw(st.sampled_from(MAT_FORMATS))}")
    lines.append(f"tensor u[J] : {draw(st.sampled_from(VEC_FORMATS))}")
    lines.append(f"tensor w[I] : {draw(st.sampled_from(VEC_FORMATS))}")
    exprs = []
    prev = None
    n_st = draw(st.integers(1, 3))
    names = []
    for s in range(n_st):
        a = prev if prev and draw(st.booleans()) else draw(st.sampled_from(mats))
        b = draw(st.sampled_from(mats))
        form = draw(st.sampled_from([
            "{a}[i,j] + {b}[i,j]", "{a}[i,j] * {b}[i,j]", "{a}[i,j] - 2 * {b}[i,j]",
            "relu({a}[i,j]) + u[j]", "mask({a}[i,j], {b}[i,j])", "{a}[i,j] * w[i]",
            "{a}[i,j] * u[j] + {b}[i,j]", "neg({a}[i,j]) * 0.5"]))
        t = f"T{s}"
        fmt = draw(st.sampled_from(("csr", "dcsr")))
        lines.append(f"tensor {t}[I, J] : {fmt}")
        exprs.append(f"{t}[i,j] = " + form.format(a=a, b=b))
        names.append(t)
        prev = t
    last = names[-1]
    red = draw(st.sampled_from(["r[i] = sum[j]({t}[i,j] * u[j])", "r[i] = sum[j]({t}[i,j])",
                                "r[i] = {t}[i,j] * u[j] + w[i]"]))
    lines.append("tensor r[I] : dense")
    exprs.append(red.format(t=last))
    names.append("r")
    lines += exprs
    if draw(st.booleans()):
        lines.append("fuse all: " + ", ".join(names))
    density = {m: draw(st.sampled_from((0.0, 0.2, 0.5, 1.0))) for m in mats}
    return "\n".join(lines) + "\n", density


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 3))
def test_random_programs(prog, seed):
    text, density = prog
    p = load_text(text)
    assert_matches(p, dict(I=4, J=5), seed, density=density, patterns=True)
