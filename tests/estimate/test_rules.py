"""The estimator's per-kind table and its relation algebra: every SAMML kind has a cost rule
that takes the kind's ports, and the FULL marker means what a matrix of ones means (checked
against numpy on random patterns)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fuseflowc.estimate import relation
from fuseflowc.estimate.relation import FULL
from fuseflowc.estimate.rules import RULES, Context
from fuseflowc.estimate.shape import StreamShape, lane_product, product
from fuseflowc.samml.ir import KINDS


def test_every_kind_has_one_cost_rule():
    assert sorted(RULES) == sorted(KINDS)


def test_every_rule_takes_its_kinds_ports():
    """Each rule binds to (context, node, one shape per input port, for every operand count
    the kind's signature allows), and a rule without variadic operands refuses one more: a rule that forgets a
    port, or expects one the kind does not have, fails here."""
    for kind, cls in sorted(KINDS.items()):
        node = cls()
        arities = {len(node.signature(k).inputs) for k in (None, 1, 2, 3, 4, 6)}
        sig = inspect.signature(RULES[kind])
        for ports in arities:
            sig.bind(Context("g", {}, 4), node, *[None] * ports)
        if not any(p.kind == p.VAR_POSITIONAL for p in sig.parameters.values()):
            with pytest.raises(TypeError):
                sig.bind(Context("g", {}, 4), node, *[None] * (max(arities) + 1))


def test_full_is_a_marker_not_a_string():
    assert FULL is relation.Full.FULL and repr(FULL) == "FULL"
    assert FULL != "full" and relation.pattern(FULL) is None and relation.pattern(None) is None


def _patterns():
    return st.tuples(st.integers(1, 6), st.integers(1, 6)).flatmap(lambda s: st.tuples(
        arrays(bool, s), arrays(bool, s)))


def _csr(a) -> sp.csr_matrix:
    return sp.csr_matrix(a.astype(float))


@settings(max_examples=40, deadline=None)
@given(_patterns(), st.integers(1, 4), st.integers(0, 3))
def test_relations_against_numpy(ab, lanes, lane):
    """both / either / through / lane_rows on csr patterns against numpy, and FULL behaving as
    a matrix of ones wherever the result is defined by it."""
    a, b = ab
    ones = np.ones_like(a)
    ra, rb = _csr(a), _csr(b)
    assert (relation.both(ra, rb).toarray() > 0).tolist() == (a & b).tolist()
    assert (relation.either(ra, rb).toarray() > 0).tolist() == (a | b).tolist()
    assert relation.both(FULL, rb) is rb and relation.both(ra, FULL) is ra
    assert relation.either(FULL, rb) is FULL and relation.either(None, FULL) is FULL
    assert relation.both(None, rb) is None and relation.either(ra, None) is None
    w = np.arange(1.0, a.shape[0] + 1)
    assert np.allclose(relation.through(ra, [w]), a.T.astype(float) @ w)
    assert relation.through(FULL, [w]) is None and relation.through(ra, [None]) is None
    lane %= lanes
    for r, dense in ((ra, a), (FULL, ones)):
        parts = [relation.lane_rows(r, a.shape, lanes, k).toarray() > 0 for k in range(lanes)]
        assert (sum(p.astype(int) for p in parts) == dense.astype(int)).all()  # a partition
        for row in range(a.shape[0]):       # round-robin: lanes differ by one per row at most
            per_lane = [int(p[row].sum()) for p in parts]
            assert max(per_lane) - min(per_lane) <= 1
            assert per_lane == sorted(per_lane, reverse=True)


@settings(max_examples=25, deadline=None)
@given(st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(1, 5)).flatmap(
    lambda s: st.tuples(arrays(bool, (s[0], s[1])), arrays(bool, (s[1], s[2])))),
    st.integers(1, 3))
def test_symbolic_product_full_is_ones(r12, lanes):
    """spacc1's symbolic product (shape.product, lane_product): a FULL side gives the
    coordinates a side of ones would, numpy's boolean product being the oracle."""
    m1, m2 = r12
    ng, nu, nc = m1.shape[0], m1.shape[1], m2.shape[1]
    w = np.arange(1.0, ng + 1)
    c = StreamShape("crd", [1.0, ng, ng * nu, ng * nu * nc], [1, ng, nu, nc],
                    per_coord_by_depth=[None, w, None, None])

    def expect(x1, x2):
        return ((x1.astype(int) @ x2.astype(int)) > 0).T.astype(float) @ w

    for r1, r2, x1, x2 in ((_csr(m1), _csr(m2), m1, m2),
                           (FULL, _csr(m2), np.ones_like(m1), m2),
                           (_csr(m1), FULL, m1, np.ones_like(m2))):
        got, _ = product(c, [None, None, r1, r2], 0.0)
        assert np.allclose(got, expect(x1, x2))
        total = sum(lane_product(c, [None, None, r1, r2], 0.0, lanes, k)[0]
                    for k in range(lanes))
        assert np.all(total >= expect(x1, x2) - 1e-9)    # every lane's share, at least once
    assert product(c, [None, None, FULL, FULL], 0.0) is None
