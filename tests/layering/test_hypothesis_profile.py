"""The hypothesis profile the suite runs under (tests/conftest.py): no `explain` phase, whose
sys.settrace of every example after a failure turned one failing property test into a
20-minute stall of `make test`."""

from __future__ import annotations

from hypothesis import Phase, settings


def test_a_failing_property_test_is_not_replayed_under_a_tracer():
    phases = settings().phases
    assert Phase.explain not in phases
    assert {Phase.generate, Phase.shrink} <= set(phases)
