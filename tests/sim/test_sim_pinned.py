"""The simulator's figures (cycles, FLOPs, token-hops, bytes) on every SAMML example and every
lowered example program are pinned (tests/golden/sim/pinned.json, see tests/support/sim_pins.py): speed
work on the engine and the primitives must not move a single number."""

from __future__ import annotations

import json

import pytest

from tests.support import sim_pins

PINNED = json.loads(sim_pins.PINS.read_text())


def test_the_pins_cover_every_example():
    names = {k.split(" ")[0] for k in PINNED}
    assert {f"samml/{f.name}" for f in sim_pins.samml_examples()} <= names
    assert {f"{f.parent.name}/{f.name}" for f in sim_pins.program_examples()} <= names


@pytest.fixture(scope="module")
def current():
    return sim_pins.all_figures()


@pytest.mark.parametrize("case", sorted(PINNED))
def test_figures_are_unchanged(case, current):
    assert current.get(case) == PINNED[case]
