"""`FuseOptions.orders`, the one way to choose regions' orders: by region name, by fusion-group
name, or for every other region (key None), as `--order K [--region R]` says through
`pick_orders`."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseflowc.diagnostics import UserError
from fuseflowc.fuse.algorithm import FuseOptions, fuse_program, pick_orders
from fuseflowc.lang.load import load_program

SWEEP = str(Path(__file__).resolve().parents[2] / "ir_examples/kernels/nested_matmul_sweep.ff")


def _ks(orders: dict, unfused: bool = True) -> dict[str, int]:
    p = load_program(SWEEP, (), unfused)
    fp = fuse_program(p, None, FuseOptions(orders, free_input_order=True))
    return {r.name: r.order_index for r in fp.regions}


def test_pick_orders_is_the_command_line():
    assert pick_orders(None) == {}
    assert pick_orders(2) == {None: 2}
    assert pick_orders(2, "E") == {"E": 2}
    assert pick_orders(None, "E") == {"E": 0}  # --region alone still checks the name


def test_named_region_then_group_then_every_other():
    assert _ks({}) == {"E": 0, "D": 0}
    assert _ks({None: 1}) == {"E": 1, "D": 1}
    assert _ks({"D": 2}) == {"E": 0, "D": 2}
    assert _ks({None: 1, "D": 2}) == {"E": 1, "D": 2}
    assert _ks({"abc": 5}, unfused=False) == {"abc": 5}


def test_unknown_name_is_an_error_also_in_a_per_region_map():
    # A misspelt name in a sweep's per-region map used to be ignored silently (order 0).
    with pytest.raises(UserError, match="no region named 'X' \\(regions: E, D\\)"):
        _ks({"E": 1, "X": 2})
