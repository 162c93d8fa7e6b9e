"""The configurations of a sweep: the cross product of a spec's axes, each with a stable id.

A configuration is a plain JSON-ready dict (it crosses process boundaries and is written into
the results file). Its id is the first 12 hex digits of the SHA-256 of its canonical JSON
(sorted keys, no spaces), so the same configuration has the same id in every run and resuming
can tell which rows are done.

Expanding compiles nothing: `orders = "all"` and `"product"` need each program's orders
counted (by fusing it), so `expand` leaves them pending and `fuseflowc sweep` counts them in
its workers, then expands again with the counts (runner.run_sweep); `--dry-run` lists them
pending. The grid is the same either way, in the same order, with the same ids.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
from typing import Callable

from ..diagnostics import UserError
from .spec import ProgramEntry, SweepSpec

# The fields of a configuration, in the order results files show them.
CONFIG_FIELDS = ("model", "variant", "program", "inline_widened", "free_input_order", "order",
                 "order_region",
                 "params", "schedule", "pipeline", "data", "data_source", "arch")


#: Fields added after results files existed: they count in the id only when set, so the ids
#: of configurations without them (and resumed results files) stay what they were.
LATER_FIELDS = ("share", "estimate_only", "unfused", "orders")


def config_id(config: dict) -> str:
    """A stable 12-hex-digit id of a configuration (only its CONFIG_FIELDS count, and the
    LATER_FIELDS that are set)."""
    canon = {k: config[k] for k in CONFIG_FIELDS}
    canon.update({k: config[k] for k in LATER_FIELDS if config.get(k)})
    canon = json.dumps(canon, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:12]


#: The most configurations a sweep may have: every one is a fuse | lower | simulate run (and
#: "orders = all" counts each parameter point's orders first), so a larger grid is a spec
#: mistake, refused before it is built.
MAX_CONFIGS = 100_000


def _too_many(spec: SweepSpec, n: int) -> UserError:
    return UserError(f"{spec.path}: the sweep has more than {MAX_CONFIGS:,} configurations "
                     f"(at least {n:,}: the product of its programs' parameter values, orders, "
                     f"pipelines, data sets and arch alternatives); split it into several specs")


def _param_points(params: dict[str, list]) -> list[dict]:
    names = sorted(params)
    return [dict(zip(names, vals)) for vals in itertools.product(*(params[n] for n in names))]


#: The `orders` of a program whose order indices are counted (which compiles it): until then
#: its configurations are pending (`is_pending`), with this text as their order.
COUNTED = ("all", "product")

#: The fields of a configuration its order count depends on (`task_key`).
COUNT_FIELDS = ("program", "schedule", "unfused", "inline_widened", "free_input_order", "share",
                "order_region")

#: A pending configuration -> its regions' numbers of valid orders, region name -> count, in
#: the fused program's order (None when the program does not compile that far):
#: fuseflowc.sweep.worker.count_orders, run where the configurations run.
Counter = Callable[[dict], "dict[str, int] | None"]


def is_pending(config: dict) -> bool:
    """Whether a configuration of `expand` (without a counter) still needs its orders counted:
    its order is "all" or "product", which stands for every order index it will get."""
    return config["order"] in COUNTED


def task_key(config: dict) -> str:
    """What a configuration's order count depends on, as text: pending configurations with
    the same key are counted once."""
    return json.dumps({k: config[k] for k in COUNT_FIELDS}, sort_keys=True)


def count_tasks(configs: list[dict]) -> list[dict]:
    """The pending configurations of `configs` with distinct `task_key`s, in grid order: what
    a sweep counts before it runs."""
    tasks: dict[str, dict] = {}
    for c in configs:
        if is_pending(c):
            tasks.setdefault(task_key(c), c)
    return list(tasks.values())


def _order_product(counts: dict[str, int] | None, spec: SweepSpec, prog: ProgramEntry
                   ) -> list[dict[str, int] | None]:
    """What `orders = "product"` means for a program whose regions have `counts` orders:
    every combination of every region's order indices, as {region: K} (regions in execution
    order, the last varying fastest); [None] (order 0 everywhere) when the program does not
    compile this far. More than max_orders combinations is the spec's error (counted before
    any is built)."""
    if counts is None:
        return [None]
    n = math.prod(counts.values())
    if n > min(spec.max_orders, MAX_CONFIGS):
        factors = " x ".join(f"{r}: {k:,}" for r, k in counts.items())
        raise UserError(f"{spec.path}: {prog.path}: orders = \"product\" gives {n:,} order "
                        f"combinations ({factors}), more than max_orders = {spec.max_orders:,}"
                        + (f" (and the most configurations a sweep may have, {MAX_CONFIGS:,})"
                           if n > MAX_CONFIGS else "")
                        + "; raise max_orders or list order indices")
    names = list(counts)
    return [dict(zip(names, ks)) for ks in itertools.product(*(range(counts[r])
                                                               for r in names))]


def _choices(spec: SweepSpec, prog: ProgramEntry, count: Counter | None, task: dict
             ) -> list[tuple]:
    """The (order index, per-region indices or None) of a program at one parameter point:
    its listed indices; with `orders = "all"` as many as the chosen region has orders (or
    the smallest count over all regions: one index is applied to every region), capped at
    max_orders; with "product" every combination (order None: no single index applies);
    [(0, None)] when the program does not compile this far. Without a counter, "all" and
    "product" stay pending: [(orders, None)]."""
    if prog.orders not in COUNTED:
        return [(k, None) for k in prog.orders]
    if count is None:
        return [(prog.orders, None)]
    counts = count(task)
    if prog.orders == "product":
        return [(None if ks else 0, ks) for ks in _order_product(counts, spec, prog)]
    n = min(counts.values()) if counts else None
    return [(k, None) for k in (range(min(n, spec.max_orders, MAX_CONFIGS + 1)) if n else [0])]


def _config(prog: ProgramEntry, point: dict, schedule: list[str], order, per_region,
            pipeline: str, data, arch) -> dict:
    config = {
        "model": prog.model, "variant": prog.variant, "program": prog.path,
        "inline_widened": prog.inline_widened,
        "free_input_order": prog.free_input_order, "share": prog.share,
        "unfused": prog.unfused, "orders": per_region,
        "estimate_only": prog.estimate_only, "order": order,
        "order_region": prog.order_region, "params": point,
        "schedule": schedule, "pipeline": pipeline, "data": data.name,
        "data_source": data.describe(), "arch": list(arch),
    }
    config["id"] = config_id(config)
    return config


def expand(spec: SweepSpec, count: Counter | None = None) -> list[dict]:
    """Every configuration of the spec, in a fixed order (programs, parameters, orders,
    pipelines, data sets, arch alternatives), each with its `id`. Nothing is compiled: a
    program with `orders = "all"` or `"product"` gives, per parameter point, pending
    configurations (`is_pending`: order "all" or "product", one per pipeline, data set and
    arch) unless `count` gives its order counts (`fuseflowc sweep` counts them in its
    workers: runner.run_sweep; `expand_counted` in this process)."""
    out: list[dict] = []
    seen: set[str] = set()
    rest = len(spec.pipelines) * len(spec.data) * len(spec.arch)
    for prog in spec.programs:
        points = math.prod(len(v) for v in prog.params.values())
        if len(out) + points * rest > MAX_CONFIGS:
            raise _too_many(spec, len(out) + points * rest)
        for point in _param_points(prog.params):
            schedule = [t.format(**point) for t in prog.schedule]
            if not rest:
                continue
            task = _config(prog, point, schedule, prog.orders, None, spec.pipelines[0],
                           spec.data[0], spec.arch[0])
            choices = _choices(spec, prog, count, task)
            if len(out) + len(choices) * rest > MAX_CONFIGS:
                raise _too_many(spec, len(out) + len(choices) * rest)
            for (order, per_region), pipeline, data, arch in itertools.product(
                    choices, spec.pipelines, spec.data, spec.arch):
                config = _config(prog, point, schedule, order, per_region, pipeline, data, arch)
                if config["id"] in seen:  # e.g. the same parameter value listed twice
                    continue
                seen.add(config["id"])
                out.append(config)
    return out


def expand_counted(spec: SweepSpec) -> list[dict]:
    """Every configuration of the spec with `orders = "all"` and `"product"` counted here,
    in this process (which fuses each such program once per schedule): for harnesses that
    compile the configurations in this process anyway (benches, the order summary)."""
    from .worker import count_orders

    ctx = {"base": os.path.dirname(spec.path) or "."}
    counted: dict[str, dict[str, int] | None] = {}

    def count(task: dict) -> dict[str, int] | None:
        key = task_key(task)
        if key not in counted:
            counted[key] = count_orders(task, ctx)
        return counted[key]
    return expand(spec, count)
