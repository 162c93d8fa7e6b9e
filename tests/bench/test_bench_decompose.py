"""fuseflowc/bench/decompose.py on tiny matrices (no shared data): every variant is simulated and
checked, the table names the fastest, and GCN's normalized adjacency is the one GCN uses."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from fuseflowc.bench import decompose as bd


def _blocky() -> sp.csr_matrix:
    """16 x 16: one full 4 x 4 block and a scattered rest (one row longer than the others)."""
    a = sp.lil_matrix((16, 16))
    a[0:4, 0:4] = 1.0
    for i, j in [(5, 9), (7, 2), (9, 14), (12, 6), (15, 15), (6, 0), (6, 11), (6, 13)]:
        a[i, j] = 0.5 + i / 32
    return sp.csr_matrix(a)


def test_row_has_every_variant_and_table_names_the_fastest():
    a = _blocky()
    row = bd.bench_matrix("tiny", "spmm", a, top=1, blocks=(4,))
    assert row["ell"]["width"] == 4 == bd.ell_width(a)
    assert set(row["bcsr"]) == {4}
    assert len(row["decomposed"]) == 1
    assert row["checked"] == 5     # CSR, ELL, BCSR(4), the decomposition split and hoisted
    for r in (row["csr"], row["ell"], row["bcsr"][4], *row["decomposed"]):
        assert r["cycles"] > 0 and r["bytes"] > 0
    cycles = {"CSR": row["csr"]["cycles"], "BCSR(4)": row["bcsr"][4]["cycles"],
              "ELL(4)": row["ell"]["cycles"],
              "decomposed": row["decomposed"][0]["hoisted"]}
    assert cycles[bd.winner(row)] == min(cycles.values())
    lines = bd.table([row]).splitlines()
    assert len(lines) == 3 and lines[0].count("|") == lines[2].count("|")
    assert lines[2].startswith("| tiny | SpMM | 16 | 24 |")
    assert lines[2].endswith(f"| {bd.winner(row)} |")


def test_row_without_entries_in_a_row():
    """An empty matrix: ELL of width 1 (all padding), every variant still checks."""
    row = bd.bench_matrix("empty", "gcn", sp.csr_matrix((16, 16)), top=1, blocks=(8,))
    assert row["ell"]["width"] == 1
    assert "| empty | GCN agg |" in bd.table([row])


def test_normalized_adjacency_matches_the_gcn_formula():
    rng = np.random.default_rng(0)
    dense = (rng.random((9, 9)) < 0.3).astype(float)
    dense[2, 2] = 1.0                       # a stored self loop: not counted twice
    dense[4, :] = dense[:, 4] = 0.0         # an isolated node: its self loop alone
    got = bd.normalized_adjacency(sp.csr_matrix(dense)).toarray()
    p = ((dense + dense.T) > 0).astype(float)
    np.fill_diagonal(p, 1.0)
    d = p.sum(axis=1) ** -0.5
    np.testing.assert_allclose(got, d[:, None] * p * d[None, :])
    np.testing.assert_allclose(got, got.T)


def test_rank_check_compares_both_rankings_with_the_simulator():
    row = bd.rank_check("tiny", "spmm", _blocky(), blocks=(4,))
    sims = [c["simulated"] for c in row["candidates"]]
    assert len(sims) == 7       # none, and bcsr(4) at thresholds 1/16, 1/8, 1/4, 1/2, 3/4, 1
    assert "(no decomposition)" in {c["directive"] for c in row["candidates"]}
    assert row["best"]["simulated"] == min(sims)
    assert row["proxy"]["proxy"] == min(c["proxy"] for c in row["candidates"])
    assert row["model"]["model"] == min(c["model"] for c in row["candidates"])
    assert -1.0 <= row["rho_proxy"] <= 1.0 and -1.0 <= row["rho_model"] <= 1.0
    lines = bd.rank_table([row]).splitlines()
    assert len(lines) == 3 and lines[0].count("|") == lines[2].count("|")
