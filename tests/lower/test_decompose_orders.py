"""A format decomposition compiles in every dataflow order the undecomposed program compiles in
(issue #22: SpMM with `order C: i -> k -> j` and `decompose A: bcsr(2) >= 0.25, csr` was
refused by lower: "permuted tensor 'B__b2__T' is a copy of 'B__b2', itself a copy"), and the
simulated result matches the reference evaluator. A block size that does not divide a dim of a
tensor a blocked part reads is refused at the directive (check, or run once the data binds
it), or in simulate and estimate naming the dim and the user's tensor, never an internal copy."""

from __future__ import annotations

import itertools

import pytest

from tests.support.golden import run_cli, run_pipeline

SPMM = """dim I{I}, J{J}, K{K}
tensor A[I, J] : csr
tensor B[J, K] : dense
tensor C[I, K] : dense
C[i,k] = A[i,j] * B[j,k]
order C: {order}
"""
DECOMPOSE = "decompose A: bcsr(2) >= 0.25, csr\n"
ORDERS = [" -> ".join(p) for p in itertools.permutations("ijk")]


def _program(tmp_path, name, order, decompose, sizes=(" = 8", " = 6", " = 4")):
    text = SPMM.format(I=sizes[0], J=sizes[1], K=sizes[2], order=order)
    path = tmp_path / name
    path.write_text(text + (DECOMPOSE if decompose else ""))
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("spmm")
    prog = _program(d, "p.ff", "i -> j -> k", False)
    r = run_cli(["gen-data", str(prog), "-o", str(d / "data"), "--density", "A=0.4",
                 "--seed", "5"])
    assert r.exit_code == 0, r.stderr
    return d / "data"


@pytest.mark.parametrize("order", ORDERS)
def test_a_decomposition_compiles_wherever_the_plain_program_does(tmp_path, data, order):
    plain = _program(tmp_path, "plain.ff", order, False)
    dec = _program(tmp_path, "dec.ff", order, True)
    compiles = run_pipeline(f"fuseflowc fuse {plain} | fuseflowc lower").exit_code == 0
    r = run_pipeline(f"fuseflowc fuse {dec} | fuseflowc lower | fuseflowc simulate - --data "
                     f"{data} --check --quiet")
    if compiles:
        assert r.exit_code == 0, r.stderr
        assert r.stderr.splitlines()[-1] == "check: C match", r.stderr
    else:       # an order the output's format forbids: refused alike, in the user's names
        assert r.exit_code == 1 and "Traceback" not in r.stderr
        refused = run_pipeline(f"fuseflowc fuse {plain}").stderr.splitlines()[0]
        assert r.stderr.splitlines()[0] == refused.replace("plain.ff", "dec.ff"), r.stderr
        assert "C__d0" not in r.stderr.split("is computed part by part")[0], r.stderr
        assert "note: C is computed part by part (`decompose`): this is its statement C__d0, " \
            "over the part A__d0 (bcsr(2) >= 0.25)" in r.stderr, r.stderr
    assert "__b2" not in r.stderr and "itself a copy" not in r.stderr
    if order == "i -> k -> j":                       # the order
        assert compiles and r.exit_code == 0


def test_a_block_size_that_does_not_divide_a_declared_dim_is_refused_by_check(tmp_path):
    dec = _program(tmp_path, "dec.ff", "i -> k -> j", True, (" = 8", " = 6", " = 3"))
    r = run_cli(["check", str(dec)])
    assert r.exit_code == 1
    assert r.stderr.startswith(f"{dec}:7:11: error: decompose A: part bcsr(2) of statement C: "
                               f"block size 2 does not divide dimension K = 3 of B")


def test_a_block_size_that_does_not_divide_a_data_dim_names_the_dim(tmp_path):
    dec = _program(tmp_path, "dec.ff", "i -> k -> j", True, ("", "", ""))
    d = tmp_path / "d"
    r = run_cli(["gen-data", str(dec), "-o", str(d), "--size", "I=8", "--size", "J=6",
                 "--size", "K=3"])
    assert r.exit_code == 0, r.stderr
    r = run_cli(["run", str(dec), "--data", str(d)])
    assert r.exit_code == 1
    assert r.stderr.startswith(f"{dec}:7:11: error: decompose A: part bcsr(2) of statement C: "
                               f"block size 2 does not divide dimension K = 3 of B (its size "
                               f"in the data)")
    module = run_pipeline(f"fuseflowc fuse {dec} | fuseflowc lower")
    assert module.exit_code == 0, module.stderr
    want = ("fuseflowc: error: block size 2 of a decomposition's blocked part does not divide "
            "dim K = 3 of B, which the part reads in 2 x 2 blocks")
    for args in (["simulate", "-", "--data", str(d), "--check", "--program", str(dec)],
                 ["estimate", "-", "--data", str(d)],
                 ["estimate", "-", "--size", "I=8", "--size", "J=6", "--size", "K=3"]):
        r = run_cli(args, input=module.stdout)
        assert r.exit_code == 1 and r.stderr.startswith(want), (args, r.stderr)
