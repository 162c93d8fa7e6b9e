"""The paper's Figure 19 (GraphSAGE's neighbour term, tests/golden/lower/graphsage_fig19.ff):
the fused graph of the golden computes what the reference evaluator computes, on several random
inputs and densities, values and stored patterns."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseflowc.lang.load import load_program
from tests.support.lower_harness import assert_matches

FIG19 = Path(__file__).parents[1] / "golden" / "lower" / "graphsage_fig19.ff"


@pytest.mark.parametrize("density", [0.2, 0.5, 1.0])
def test_fig19_fused_matches_reference(density):
    p = load_program(str(FIG19))
    for seed in range(3):
        assert_matches(p, {"I": 6, "L": 7, "M": 5, "J": 4}, seed, density=density,
                       patterns=True)
