"""The configurations of a sweep: the cross product of a spec's axes, each with a stable id.

A configuration is a plain JSON-ready dict (it crosses process boundaries and is written into
the results file). Its id is the first 12 hex digits of the SHA-256 of its canonical JSON
(sorted keys, no spaces), so the same configuration has the same id in every run and resuming
can tell which rows are done.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
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


#: Region name -> its number of valid orders, of a program entry with a schedule (None when the
#: program does not compile that far); fuseflowc.sweep.worker.region_counts by default.
Counter = Callable[[ProgramEntry, list[str]], "dict[str, int] | None"]


def _order_count(count: Counter, prog: ProgramEntry, schedule: list[str]) -> int | None:
    """How many orders `"all"` means for this program and schedule: the order count of the
    chosen region, or the smallest count over all regions (one index is applied to every
    region); None when the program does not compile this far."""
    counts = count(prog, schedule)
    return min(counts.values()) if counts else None


def _order_product(count: Counter, spec: SweepSpec, prog: ProgramEntry, schedule: list[str]
                   ) -> list[dict[str, int] | None]:
    """What `orders = "product"` means for this program and schedule: every combination of
    every region's order indices, as {region: K} (regions in execution order, the last
    varying fastest); [None] (order 0 everywhere) when the program does not compile this far.
    More than max_orders combinations is the spec's error (counted before any is built)."""
    counts = count(prog, schedule)
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


def expand(spec: SweepSpec, count: Counter | None = None) -> list[dict]:
    """Every configuration of the spec, in a fixed order (programs, parameters, orders,
    pipelines, data sets, arch alternatives), each with its `id`. `count` gives the order
    counts of `orders = "all"` and `"product"` (default: fuseflowc.sweep.worker.region_counts,
    which compiles through the pipeline); it is called only for those programs, so a grid of
    listed order indices compiles nothing."""
    if count is None:
        from .worker import region_counts as count
    out: list[dict] = []
    seen: set[str] = set()
    rest = len(spec.pipelines) * len(spec.data) * len(spec.arch)
    for prog in spec.programs:
        points = math.prod(len(v) for v in prog.params.values())
        if len(out) + points * rest > MAX_CONFIGS:
            raise _too_many(spec, len(out) + points * rest)
        for point in _param_points(prog.params):
            schedule = [t.format(**point) for t in prog.schedule]
            # (order index, per-region indices or None): "product" gives the latter, with
            # order None (no single index applies)
            if prog.orders == "product":
                choices = [(None if ks else 0, ks) for ks in _order_product(count, spec, prog, schedule)]
            elif prog.orders == "all":
                n = _order_count(count, prog, schedule)
                choices = [(k, None) for k in
                           (range(min(n, spec.max_orders, MAX_CONFIGS + 1)) if n else [0])]
            else:
                choices = [(k, None) for k in prog.orders]
            if len(out) + len(choices) * rest > MAX_CONFIGS:
                raise _too_many(spec, len(out) + len(choices) * rest)
            for (order, per_region), pipeline, data, arch in itertools.product(
                    choices, spec.pipelines, spec.data, spec.arch):
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
                if config["id"] in seen:  # e.g. the same parameter value listed twice
                    continue
                seen.add(config["id"])
                out.append(config)
    return out
