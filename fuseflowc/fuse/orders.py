"""Order counts and listings per region, for `fuseflowc orders` (plain data, JSON-ready)."""

from __future__ import annotations

from ..diagnostics import UserError
from . import ir
from .pog import POG

#: The most orders `region_orders` lists (`fuseflowc orders --list N`).
MAX_LISTED = 100_000


def sci(n: int) -> str:
    """`n` in scientific notation with two significant decimals, exactly rounded from the int."""
    if n == 0:
        return "0"
    digits = len(str(n)) - 1
    mantissa = round(n / 10 ** digits, 1) if digits < 300 else int(str(n)[:2]) / 10
    if mantissa >= 10:
        mantissa, digits = mantissa / 10, digits + 1
    return f"{mantissa:.1f}e{digits}"


def region_pog(r: ir.Region) -> POG:
    """The POG of a region, nodes numbered by the canonical index order."""
    rank = {n: k for k, (n, _) in enumerate(r.indices)}
    return POG.from_edges(len(rank), {(rank[e.src], rank[e.dst]) for e in r.edges})


def region_orders(f: ir.FusedProgram, region: str | None = None, list_n: int = 0) -> list[dict]:
    """Per region (or only `region`, by name or fusion-group name): its size, POG edge count,
    exact order count, the first `list_n` orders of the enumeration and the program's names
    of its renamed indices."""
    if list_n > MAX_LISTED:
        raise UserError(f"--list {list_n}: at most {MAX_LISTED:,} orders are listed (a region "
                        f"may have 1e100 of them: the listing is kept in memory)")
    chosen = [r for r in f.regions if region is None or region in (r.name, r.group)]
    if not chosen:
        known = ", ".join(r.name for r in f.regions)
        raise UserError(f"no region named '{region}' (regions: {known})")
    rows = []
    for r in chosen:
        pog = region_pog(r)
        names = r.index_names()
        count = pog.count()
        rows.append({
            "region": r.name,
            "group": r.group,
            "indices": len(names),
            "edges": len({(e.src, e.dst) for e in r.edges}),
            "orders": count,
            "sci": sci(count),
            "index_order": names,
            # the program's names of the renamed indices (`orders` shows u0 as `u0(j)`)
            "source_names": {x: list(ns) for x, ns in r.source_names().items()},
            "listed": [[names[v] for v in o] for o in pog.orders(list_n)],
        })
    return rows
