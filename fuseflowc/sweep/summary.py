"""What `fuseflowc report` says about a results file, as plain data (JSON-ready): the fusion
comparison, parallel-factor and block-size scaling, the spread over dataflow orders and the
estimator's error. Only rows with status ok (simulated, check passed or skipped) count.

Choices (documented in docs/sweep.md):
- fusion: per model, data set and arch that have a variant named `unfused`, each variant's
  best (fewest cycles) configuration; speedup, FLOPs and bytes relative to unfused;
- parallel: rows whose program is parallelized, grouped by what is parallelized (the site,
  e.g. `Y:i`), best cycles per total factor; baseline = the best unparallelized row of the
  same model, variant and data set (else the smallest factor);
- block: per model and data set, best cycles per variant and block size; baseline = the best
  unblocked row of that model and data set;
- orders: configurations equal but for the order index; best, worst and median cycles,
  normalized to the worst (the paper's Figure 17);
- estimator: mean and max of |estimate - simulated| / simulated for FLOPs and bytes; median
  and max for cycles (the cycle model, est_cycles).
"""

from __future__ import annotations

import json
import math
import statistics

VARIANT_RANK = {"unfused": 0, "partial": 1, "full": 2}
_STATUS_RANK = {"ok": 0, "error": 1, "timeout": 2, "pruned": 3, "estimated": 4}


def _variant_key(v: str) -> tuple:
    return (VARIANT_RANK.get(v, 3), v)


def _best(rows: list[dict]) -> dict:
    return min(rows, key=lambda r: (r["cycles"], r["id"]))


def _arch_label(arch) -> str:
    return " ".join(arch or [])


def _group(rows, key) -> dict:
    out: dict = {}
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return out


def _ratio(a, b):
    return None if a is None or not b else a / b


def fusion_table(rows: list[dict]) -> list[dict]:
    """Per (model, data, arch) and variant: the best row's (fewest cycles) cycles, FLOPs, bytes,
    energy and energy-delay product, and those relative to the unfused variant (speedup =
    unfused cycles / cycles; the others variant / unfused)."""
    out = []
    groups = _group(rows, lambda r: (r["model"], r["data"], _arch_label(r["arch"])))
    for (model, data, arch) in sorted(groups):
        g = groups[(model, data, arch)]
        by_var = _group(g, lambda r: r["variant"])
        if len(by_var) < 2 or "unfused" not in by_var:
            continue
        base = _best(by_var["unfused"])
        for v in sorted(by_var, key=_variant_key):
            b = _best(by_var[v])
            out.append({
                "model": model, "data": data, "arch": arch, "variant": v, "id": b["id"],
                "cycles": b["cycles"], "flops": b["flops"], "bytes": b["bytes"],
                "pipeline": b.get("pipeline") or "",
                "speedup": _ratio(base["cycles"], b["cycles"]),
                "flops_norm": _ratio(b["flops"], base["flops"]),
                "bytes_norm": _ratio(b["bytes"], base["bytes"]),
                # the best row's energy (pJ, sim.energy) and energy-delay product (pJ x cycles)
                "energy": b.get("energy"), "edp": b.get("edp"),
                "energy_norm": _ratio(b.get("energy"), base.get("energy")),
                "edp_norm": _ratio(b.get("edp"), base.get("edp")),
            })
    return out


def _factors(parallel: str) -> tuple[str, int]:
    """The sites and the lanes of one graph: 'Y:i=4,Y:j=2' -> ('Y:i,Y:j', 8) (one tensor's
    indices nest in one graph: their factors multiply), 'Y:i=4,Z:j=4' -> ('Y:i,Z:j', 4)
    (two tensors' graphs run apart: the largest, not the product)."""
    sites = []
    per_tensor: dict[str, int] = {}
    for part in parallel.split(","):
        site, _, f = part.rpartition("=")
        sites.append(site)
        tensor = site.split(":", 1)[0]
        per_tensor[tensor] = per_tensor.get(tensor, 1) * (int(f) if f.isdigit() else 1)
    return ",".join(sites), max(per_tensor.values(), default=1)


def parallel_table(rows: list[dict]) -> list[dict]:
    """Cycles against the total parallel factor per (model, variant, data, site)."""
    out = []
    plain = _group([r for r in rows if not r["parallel"]],
                   lambda r: (r["model"], r["variant"], r["data"]))
    groups = _group([r for r in rows if r["parallel"]],
                    lambda r: (r["model"], r["variant"], r["data"], _factors(r["parallel"])[0]))
    for key in sorted(groups):
        model, variant, data, site = key
        by_f = _group(groups[key], lambda r: _factors(r["parallel"])[1])
        points = {f: _best(rs) for f, rs in by_f.items()}
        if (model, variant, data) in plain:
            points.setdefault(1, _best(plain[(model, variant, data)]))
        base = points[min(points)]["cycles"]
        for f in sorted(points):
            out.append({"model": model, "variant": variant, "data": data, "site": site,
                        "factor": f, "cycles": points[f]["cycles"], "id": points[f]["id"],
                        "speedup": _ratio(base, points[f]["cycles"])})
    return out


def _block_size(block: str) -> str:
    sizes = sorted({part.rpartition("=")[2] for part in block.split(",")})
    return sizes[0] if len(sizes) == 1 else block


def block_table(rows: list[dict]) -> list[dict]:
    """Cycles per block size per (model, data), against the best unblocked row."""
    out = []
    groups = _group(rows, lambda r: (r["model"], r["data"]))
    for key in sorted(groups):
        g = groups[key]
        if not any(r["block"] for r in g):
            continue
        unblocked = [r for r in g if not r["block"]]
        base = _best(unblocked)["cycles"] if unblocked else None
        cells = _group(g, lambda r: (r["variant"], _block_size(r["block"]) if r["block"]
                                     else "none"))

        def order(k):
            b = k[1]
            return (_variant_key(k[0]), -1 if b == "none" else int(b) if b.isdigit() else 1 << 30,
                    b)
        for variant, size in sorted(cells, key=order):
            b = _best(cells[(variant, size)])
            out.append({"model": key[0], "data": key[1], "variant": variant, "block": size,
                        "cycles": b["cycles"], "id": b["id"],
                        "speedup": _ratio(base, b["cycles"])})
    return out


def order_label(r: dict) -> str:
    """A row's dataflow order as text: its order index (`2`), or with `orders = "product"` each
    region's (`E#1 D#2`)."""
    if r.get("orders"):
        return " ".join(f"{region}#{k}" for region, k in r["orders"].items())
    return str(r["order"])


def _order_key(o) -> tuple:
    """Order indices ascending, then the named orders ("paper", a product label) by name."""
    return (0, o, "") if isinstance(o, int) else (1, 0, str(o))


def order_table(rows: list[dict]) -> list[dict]:
    """The spread over order indices of configurations otherwise equal (at least two
    orders): best, worst, median cycles and those normalized to the worst."""
    def key(r):
        flags = " ".join(f for f, on in (("inline-widened", r["inline_widened"]),
                                         ("free-input-order", r.get("free_input_order")),
                                         ("share", r.get("share")),
                                         ("unfused", r.get("unfused")))
                         if on)
        return (r["model"], r["variant"], flags, r["data"],
                json.dumps(r["params"], sort_keys=True), r["pipeline"] or "",
                _arch_label(r["arch"]), r["order_region"] or "",
                # per-region orders ("product") and order indices are not compared
                "product" if r.get("orders") else "")
    out = []
    groups = _group(rows, key)
    for k in sorted(groups):
        by_order = {r["order"] if not r.get("orders") else order_label(r): r["cycles"]
                    for r in groups[k]}
        if len(by_order) < 2:
            continue
        cycles = [by_order[o] for o in sorted(by_order, key=_order_key)]
        worst, best = max(cycles), min(cycles)
        med = statistics.median(cycles)
        out.append({
            "model": k[0], "variant": k[1], "flags": k[2], "data": k[3],
            "params": json.loads(k[4]), "pipeline": k[5], "arch": k[6], "region": k[7],
            "orders": len(cycles), "best": best, "worst": worst, "median": med,
            "best_norm": _ratio(best, worst), "median_norm": _ratio(med, worst),
            "best_order": min(by_order, key=lambda o: (by_order[o], _order_key(o))),
            "normalized": [c / worst for c in sorted(cycles)] if worst else [],
        })
    return out


def _err(est, sim) -> float | None:
    if est is None or sim is None or sim == 0:
        return None
    return abs(est - sim) / sim


def estimator_table(rows: list[dict]) -> dict:
    """Relative error of the estimate against the simulator, per model and over all rows."""
    def stats(rs):
        fe = [e for e in (_err(r["est_flops"], r["flops"]) for r in rs) if e is not None]
        be = [e for e in (_err(r["est_bytes"], r["bytes"]) for r in rs) if e is not None]
        ce = [e for e in (_err(r.get("est_cycles"), r["cycles"]) for r in rs) if e is not None]
        return {"rows": len(rs),
                "flops_mean": statistics.fmean(fe) if fe else None,
                "flops_max": max(fe) if fe else None,
                "bytes_mean": statistics.fmean(be) if be else None,
                "bytes_max": max(be) if be else None,
                "cycles_median": statistics.median(ce) if ce else None,
                "cycles_max": max(ce) if ce else None}
    with_est = [r for r in rows if r["est_flops"] is not None or r["est_bytes"] is not None]
    groups = _group(with_est, lambda r: r["model"])
    return {"per_model": [{"model": m, **stats(groups[m])} for m in sorted(groups)],
            "overall": stats(with_est) if with_est else None}


def ok_rows(rows: list[dict]) -> list[dict]:
    """The rows with status ok and a cycle count (the ones every table counts); their empty
    `parallel` and `block` cells are set to "" in place."""
    ok = [r for r in rows if r["status"] == "ok" and r["cycles"] is not None]
    for r in ok:
        r["parallel"] = r["parallel"] or ""
        r["block"] = r["block"] or ""
    return ok


def _setting_text(r: dict) -> str:
    """A failed row's parameters: everything but model, variant, data and order that sets it."""
    bits = [f"{k}={v}" for k, v in sorted((r.get("params") or {}).items())]
    for flag in ("inline_widened", "free_input_order", "share", "unfused"):
        if r.get(flag):
            bits.append(flag.replace("_", "-"))
    if r.get("pipeline"):
        bits.append(f"-p {r['pipeline']}")
    bits += [f"--set {a}" for a in r.get("arch") or []]
    return " ".join(bits) or "-"


def failed_status(statuses) -> str:
    """'timeout', 'error', or 'error/timeout' for a set of failed rows' statuses."""
    kinds = sorted(set(statuses))
    return kinds[0] if len(kinds) == 1 else "/".join(kinds)


def unfinished_table(rows: list[dict]) -> list[dict]:
    """Failed (error, timeout) configurations grouped by model, data set, arch, variant,
    parallel and block directives, for the plots to mark: each group with its status, the
    parallel site and total factor, block size, and whether the variant has no ok row at all."""
    ok_variants = {(r["model"], r["data"], _arch_label(r["arch"]), r["variant"])
                   for r in rows if r["status"] == "ok" and r["cycles"] is not None}
    groups = _group([r for r in rows if r["status"] in ("error", "timeout")],
                    lambda r: (r["model"], r["data"], _arch_label(r["arch"]), r["variant"],
                               r.get("parallel") or "", r.get("block") or ""))
    out = []
    for key in sorted(groups):
        model, data, arch, variant, parallel, block = key
        site, factor = _factors(parallel) if parallel else ("", 1)
        out.append({"model": model, "data": data, "arch": arch, "variant": variant,
                    "status": failed_status(r["status"] for r in groups[key]),
                    "count": len(groups[key]), "site": site, "factor": factor,
                    "block": _block_size(block) if block else "",
                    "variant_failed": (model, data, arch, variant) not in ok_variants})
    return out


def summarize(rows: list[dict]) -> dict:
    """The whole summary of a results file's rows."""
    status: dict[str, int] = {}
    for r in rows:
        status[r["status"] or "?"] = status.get(r["status"] or "?", 0) + 1
    ok = ok_rows(rows)
    failed = [{"id": r["id"], "model": r["model"], "variant": r["variant"],
               "order": order_label(r) if r.get("orders") else r["order"],
               "data": r["data"], "status": r["status"],
               "setting": _setting_text(r), "error": r["error"]}
              for r in rows if r["status"] in ("error", "timeout")]
    return {
        "rows": len(rows),
        "status": {k: status[k] for k in sorted(status, key=lambda k: (_STATUS_RANK.get(k, 9), k))},
        "fusion": fusion_table(ok), "parallel": parallel_table(ok), "block": block_table(ok),
        "orders": order_table(ok), "estimator": estimator_table(ok), "failed": failed,
        "unfinished": unfinished_table(rows),
    }


def clean_json(x):
    """Floats rounded to 6 significant digits (stable text), NaN/inf as null."""
    if isinstance(x, float):
        return None if not math.isfinite(x) else float(f"{x:.6g}")
    if isinstance(x, dict):
        return {k: clean_json(v) for k, v in x.items()}
    if isinstance(x, list):
        return [clean_json(v) for v in x]
    return x
