"""The analytic model: expected stream lengths propagated through each SAMML graph, turned into
FLOPs, bytes and cycles the way the simulator counts them (sim/README.md, "Counters").

`estimate_module` walks the module's sequence: each graph through `graph.GraphModel` (every
node's cost rule, `rules.RULES`, over the stream-shape algebra of `shape` and `relation`), each
permute or decompose step through `steps`. Tensors written by a graph get statistics estimated
from what their writers receive (`written`), and later graphs read them like inputs.
docs/estimate.md gives the formulas and their assumptions.
"""

from __future__ import annotations

import time

from ..diagnostics import UserError
from . import timing
from .cost import Estimate
from .graph import GraphModel
from .stats import DataStats, shape_of
from .steps import decompose_step, permute_step
from .written import written_stats


def estimate_module(module, stats: DataStats, arch=None) -> Estimate:
    """Expected FLOPs, bytes and cycles of every graph (and permute step) of `module` on data
    described by `stats`, without simulating. Kernels are keyed by graph name (permute steps by
    `permute SRC -> DST`), in execution order. `arch` (a sim.arch.Arch; None: the defaults of
    sim/arch.toml) gives the timing the cycles are modelled with (timing.py); the total's
    cycles are the kernels' sum (they run one after another)."""
    from fuseflowc.sim.arch import Arch

    from ..samml.block_sizes import require_blocks
    from ..samml.ir import Decompose, Permute
    t0 = time.perf_counter()
    require_blocks(module, stats.sizes)
    if arch is None:
        arch = Arch.load(None)
    tensors = dict(stats.tensors)
    spilled: dict = {}
    est = Estimate()
    for item in module.sequence():
        if isinstance(item, Decompose):
            est.kernels[item.name] = decompose_step(item, tensors, module, stats, arch)
        elif isinstance(item, Permute):
            est.kernels[item.name] = permute_step(item, tensors, module, stats, arch)
        else:
            est.kernels[item.name] = _graph_cost(item, tensors, module, stats, arch, spilled,
                                                 est.spills)
    est.tensors = tensors
    est.ms = (time.perf_counter() - t0) * 1000.0
    return est


def _graph_cost(graph, tensors: dict, module, stats: DataStats, arch, spilled: dict,
                spills: dict):
    """The Cost of one graph, with the bytes of the tensors it writes (whose statistics go into
    `tensors`) and its cycles. `spilled` (buffer -> the StreamShape spilled to it) is shared by
    the module's graphs; a graph that spills or replays gets its bytes in `spills`."""
    eb = stats.element_bytes
    gm = GraphModel(graph, tensors, eb, arch, spilled)
    gm.run()
    for name in sorted(gm.writes):
        w = gm.writes[name]
        decl = module.tensor(name)
        if decl is None:
            raise UserError(f"estimate: graph {graph.name} writes undeclared tensor {name}")
        ts = written_stats(decl, shape_of(decl, stats.sizes), w["levels"], w["vals"], name)
        st = ts.stored()
        gm.cost.write_seg += st["seg"] * eb
        gm.cost.write_crd += st["crd"] * eb
        gm.cost.write_vals += st["vals"] * eb
        tensors[name] = ts
    gm.cost.cycles = max(gm.finish, timing.bandwidth_bound(gm.cost, arch))
    if any(gm.spill_io):
        spills[graph.name] = tuple(gm.spill_io)
    return gm.cost
