"""Graph.topo_order against an independent oracle: Kahn's algorithm as its docstring states it
(ties broken by list position, nodes on a cycle appended in list order), on random graphs whose
node lists are in topological order (the one-pass answer) or shuffled (the heap)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.samml.test_samml_properties import modules


def _kahn(nodes: list) -> list:
    """The smallest-position ready node first, quadratically and plainly."""
    ids = [id(n) for n in nodes]
    deps = [{ids.index(id(s.producer)) for s in n.inputs
             if s.producer is not None and id(s.producer) in ids} for n in nodes]
    order: list[int] = []
    while True:
        ready = [i for i in range(len(nodes)) if i not in order and deps[i] <= set(order)]
        if not ready:
            break
        order.append(min(ready))
    order += [i for i in range(len(nodes)) if i not in order]
    return [nodes[i] for i in order]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(modules(), st.randoms(use_true_random=False), st.booleans())
def test_topo_order_is_kahns_order(m, rnd, shuffle):
    for g in m.graphs:
        if shuffle:
            rnd.shuffle(g.nodes)
        assert [id(n) for n in g.topo_order()] == [id(n) for n in _kahn(g.nodes)]
