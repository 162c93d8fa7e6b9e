"""Expanding a sweep's grid compiles nothing (issue 24): `orders = "all"` and `"product"` leave
pending configurations, whose orders `fuseflowc sweep` counts in its workers; the grid they
give is the one counting in this process gives (same configurations, order and ids)."""

from __future__ import annotations

import itertools
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflowc.diagnostics import UserError
from fuseflowc.sweep.grid import (
    config_id,
    count_tasks,
    expand,
    expand_counted,
    is_pending,
    task_key,
)
from fuseflowc.sweep.results import read_rows
from fuseflowc.sweep.runner import run_sweep
from fuseflowc.sweep.spec import parse_spec
from tests.support.golden import ROOT, run_cli
from tests.sweep.test_sweep import write
from tests.sweep.test_sweep_orders_product import DATA  # the same tiny nested-matmul data

KERNELS = ROOT / "ir_examples" / "kernels"
# "all" on the unfused nested matmul (regions E and D, 3 orders each: 3 indices) with a
# schedule parameter, a program with listed orders, "product" on the same (3 x 3)
SPEC = f"""
max_orders = 9
pipelines = ["", "cleanup"]
[[programs]]
path = "{KERNELS / 'nested_matmul_sweep.ff'}"
model = "nm"
variant = "all"
unfused = true
free_input_order = true
orders = "all"
schedule = ["parallelize D: i by {{f}}"]
params = {{ f = [2, 4] }}
[[programs]]
path = "{KERNELS / 'spmv.ff'}"
orders = [0]
[[programs]]
path = "{KERNELS / 'nested_matmul_sweep.ff'}"
model = "nm"
variant = "product"
unfused = true
free_input_order = true
orders = "product"
""" + DATA


def forbid_compiling(monkeypatch) -> None:
    """Every way into the compiler raises in this process from now on (the worker processes
    it forks may compile)."""
    from fuseflowc import pipeline
    from fuseflowc.fuse import algorithm, orders

    parent = os.getpid()

    def guarded(original):
        def guard(*args, **kwargs):
            if os.getpid() == parent:
                raise AssertionError(f"compiled in the sweep's own process "
                                     f"({original.__module__}.{original.__name__})")
            return original(*args, **kwargs)
        return guard
    for module, name in ((pipeline, "load"), (pipeline, "load_program"), (pipeline, "fuse"),
                         (pipeline, "region_orders"), (algorithm, "fuse_program"),
                         (orders, "region_orders")):
        monkeypatch.setattr(module, name, guarded(getattr(module, name)))


def test_expanding_and_a_dry_run_compile_nothing(tmp_path, monkeypatch):
    spec = write(tmp_path, SPEC)
    forbid_compiling(monkeypatch)
    configs = expand(parse_spec(spec))
    pending = [c for c in configs if is_pending(c)]
    # one pending configuration per parameter point and pipeline ("all"), per pipeline
    # ("product"); the listed orders are configurations already
    assert [(c["variant"], c["order"], c["params"], c["pipeline"]) for c in pending] == [
        ("all", "all", {"f": 2}, ""), ("all", "all", {"f": 2}, "cleanup"),
        ("all", "all", {"f": 4}, ""), ("all", "all", {"f": 4}, "cleanup"),
        ("product", "product", {}, ""), ("product", "product", {}, "cleanup")]
    assert len(configs) == len(pending) + 2
    assert len(count_tasks(configs)) == 3        # the pipeline does not change the count
    r = run_cli(["sweep", spec, "-o", str(tmp_path / "r.csv"), "--dry-run"])
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "count  nm/all free-input-order unfused order all f=2 tiny"
    assert sum(x.startswith("count  ") for x in lines) == 6
    assert sum(x.startswith("todo  ") for x in lines) == 2
    assert "sweep: 2 configurations, 0 already in" in r.stderr
    assert "6 count line(s)" in r.stderr


def test_the_workers_count_the_orders_counting_here_gives(tmp_path, monkeypatch):
    """A sweep on two workers compiles nothing in its own process, and its results are the
    grid counted here: the same configurations, in the same order, with the same ids."""
    spec = parse_spec(write(tmp_path, SPEC.replace("f = [2, 4]", "f = [2]")
                            .replace('pipelines = ["", "cleanup"]', "")))
    here = expand_counted(spec)
    assert not any(map(is_pending, here))
    assert [(c["variant"], c["order"]) for c in here[:4]] == \
        [("all", 0), ("all", 1), ("all", 2), ("spmv", 0)]
    assert [c["orders"] for c in here[4:]] == [{"E": e, "D": d} for e in range(3)
                                               for d in range(3)]
    assert all(c["id"] == config_id(c) for c in here)
    forbid_compiling(monkeypatch)
    out = tmp_path / "r.csv"
    summary = run_sweep(spec, str(out), jobs=2)
    rows = read_rows(str(out))
    assert summary.total == len(here) == len(rows) == 13
    assert [r["id"] for r in rows] == [c["id"] for c in here]
    assert all(r["status"] == "ok" and r["check"] == "match" for r in rows), \
        [r["error"] for r in rows if r["status"] != "ok"]


# ---- the grid's order, without compiling: pending configurations counted by a fake counter ----
@st.composite
def specs(draw):
    """A spec's text with up to three programs, each with listed orders, "all" or "product",
    maybe a parameter, and fake order counts for each (program, schedule)."""
    lines = [f"max_orders = {draw(st.integers(1, 12))}",
             f"pipelines = {draw(st.sampled_from([[''], ['', 'cleanup']]))!r}".replace("'", '"')]
    for k in range(draw(st.integers(1, 3))):
        orders = draw(st.sampled_from(['"all"', '"product"', "[0, 1]", "[2]"]))
        lines += ["[[programs]]", f'path = "{KERNELS / "spmv.ff"}"', f'model = "m{k}"',
                  f"orders = {orders}"]
        if draw(st.booleans()):
            values = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
            lines += ['schedule = ["parallelize y: i by {f}"]', f"params = {{ f = {values} }}"]
    return "\n".join(lines) + "\n" + DATA


@settings(max_examples=40, deadline=None)
@given(text=specs(), seed=st.integers(0, 2**16))
def test_counted_pending_configurations_become_the_counted_grid(tmp_path_factory, text, seed):
    """Replacing each group of pending configurations (one parameter point) by its choices,
    in place, the choices outermost, gives expand(spec, count): the order and ids a sweep's
    resumed results and final sort rely on."""
    import random
    tmp = tmp_path_factory.mktemp("spec")
    spec = parse_spec(write(tmp, text))
    rng = random.Random(seed)
    fake: dict[str, dict[str, int] | None] = {}

    def count(task):
        assert is_pending(task)
        key = task_key(task)
        if key not in fake:
            fake[key] = rng.choice([None, {"R": rng.randint(1, 4)},
                                    {"E": rng.randint(1, 3), "D": rng.randint(1, 3)}])
        return fake[key]
    lazy = expand(spec)
    try:
        counted = expand(spec, count)
    except UserError as e:     # too many product combinations: the spec's error
        assert "max_orders" in str(e)
        return
    want, seen = [], set()
    for _, group in itertools.groupby(lazy, key=lambda c: (is_pending(c), c["model"],
                                                            str(c["params"]))):
        group = list(group)
        if not is_pending(group[0]):
            want += group
            continue
        counts = fake[task_key(group[0])]
        if counts is None:
            choices = [(0, None)]
        elif group[0]["order"] == "all":
            choices = [(k, None) for k in range(min(min(counts.values()), spec.max_orders))]
        else:
            choices = [(None, dict(zip(counts, ks)))
                       for ks in itertools.product(*(range(n) for n in counts.values()))]
        for (order, per_region), c in itertools.product(choices, group):
            c = {**c, "order": order, "orders": per_region}
            c["id"] = config_id(c)
            if c["id"] not in seen:
                seen.add(c["id"])
                want.append(c)
    assert counted == want
