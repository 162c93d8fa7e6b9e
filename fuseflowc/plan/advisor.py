"""The decomposition advisor (`fuseflowc decompose-advisor`; docs/estimate.md, "Choosing a
decomposition"): every candidate decomposition of one matrix of a program, costed by the
estimator on that matrix, best first.

Candidates: one blocked part `bcsr(b) >= t` for every block size b that divides the matrix's
dims (and the other blocked dims) and every threshold t, then two blocked parts `bcsr(b1) >= t1,
bcsr(b2) >= t2` with b1 > b2 (thresholds from `pair_thresholds`), each followed by the residual
`csr`; and the program without decomposition. The threshold 1/b^2 takes every block holding an
entry (pure BCSR, an empty residual).

Each candidate is compiled (fuse, lower) and estimated (fuseflowc.estimate) with the parts
split exactly from the matrix; its cost is a cycle *proxy* from the estimate, since the estimator
counts FLOPs and bytes, not cycles: per graph, max(bytes / memory.bandwidth, FLOPs / rate), the
rate being 2 FLOPs a cycle for a scalar graph (a multiplier and an accumulator each taking one
element a cycle) and 2 b^2 for a graph of b x b blocks (a block matmul of 2 b^3 FLOPs every b
cycles, sim/arch.toml [block]); per step (permute, decompose), the step's own model without its
latency: max(bytes read, bytes written) / bandwidth + elements / permute.elements_per_cycle. With
`hoist`, the decompose step is left out (a static pattern is split once). The proxy ranks; the
simulator measures (docs/bench.md, "Format decomposition").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..diagnostics import UserError
from ..estimate.cost import Cost
from ..formats import shorthand
from ..lang import ast
from ..limits import MAX_ADVISOR_CANDIDATES


@dataclass
class Candidate:
    """One decomposition (`parts` = [(b, t)], empty: none) and what the estimate says."""

    parts: list[tuple[int, float]]
    cost: Cost
    proxy: float
    split_proxy: float
    blocked_share: float    # fraction of the matrix's stored entries in blocked parts
    kernels: int

    def directive(self, tensor: str) -> str:
        """The directive text (`decompose A: bcsr(8) >= 0.5, csr`), or `(none)`."""
        if not self.parts:
            return "(no decomposition)"
        return f"decompose {tensor}: " + ", ".join(
            f"bcsr({b}) >= {_num(t)}" for b, t in self.parts) + ", csr"

    def to_json(self, tensor: str) -> dict:
        return {"directive": self.directive(tensor),
                "parts": [{"block": b, "threshold": t} for b, t in self.parts],
                "cycles_proxy": round(self.proxy, 1),
                "split_cycles_proxy": round(self.split_proxy, 1),
                "blocked_share": round(self.blocked_share, 4), **self.cost.to_json()}


def _num(t: float) -> str:
    return repr(t)   # exact: the directive must name the threshold that was costed


DEFAULT_BLOCKS = (2, 4, 8, 16, 32)
DEFAULT_THRESHOLDS = (0.125, 0.25, 0.5, 0.75, 1.0)
PAIR_THRESHOLDS = (0.25, 0.5)


def candidates(shape: tuple[int, int], blocks, thresholds, pair_thresholds=PAIR_THRESHOLDS
               ) -> list[list[tuple[int, float]]]:
    """Every candidate's blocked parts (see the module docstring), no decomposition first."""
    bs = sorted({b for b in blocks if b >= 1 and shape[0] % b == 0 and shape[1] % b == 0})
    out: list[list[tuple[int, float]]] = [[]]
    for b in bs:
        for t in sorted(set(thresholds) | {1.0 / (b * b)}):
            out.append([(b, t)])
    for b1 in bs:
        for b2 in bs:
            if b2 < b1:
                for t1 in pair_thresholds:
                    for t2 in pair_thresholds:
                        out.append([(b1, t1), (b2, t2)])
    return out


def advise(program: ast.Program, tensor: str, matrix, sizes: dict[str, int], arch,
           blocks=DEFAULT_BLOCKS, thresholds=DEFAULT_THRESHOLDS, hoist: bool = False,
           element_bytes: int = 4) -> list[Candidate]:
    """Every candidate decomposition of input `tensor` (its data: FiberTensor `matrix`) in the
    checked `program` (without a decomposition of `tensor`), costed, best (lowest proxy) first;
    ties keep the candidates' order. `sizes`: the other dims' sizes."""
    from ..lang.checker import check
    base = replace(program, directives=[d for d in program.directives
                                        if not (isinstance(d, ast.Decompose)
                                                and d.tensor == tensor)])
    out: list[Candidate] = []
    sizes = dict(sizes)
    for d, n in zip(program.tensor(tensor).dims, matrix.shape):
        if isinstance(d, str):
            sizes[d] = n
    cands = candidates(matrix.shape, blocks, thresholds)
    if len(cands) > MAX_ADVISOR_CANDIDATES:
        raise UserError(f"--blocks and --thresholds make {len(cands):,} candidate "
                        f"decompositions of {tensor}; at most {MAX_ADVISOR_CANDIDATES} are "
                        f"costed (each is compiled): give fewer block sizes or thresholds")
    for parts in cands:
        prog = base
        if parts:
            d = ast.Decompose(tensor, tuple(
                ast.DecomposePart(shorthand("bcsr", 2), b, t) for b, t in parts)
                + (ast.DecomposePart(shorthand("csr", 2), None, None),))
            try:
                prog = check(replace(base, directives=base.directives + [d]))
            except UserError:
                continue   # a candidate the program cannot take (e.g. a dim b does not divide)
        out.append(_costed(prog, parts, tensor, matrix, sizes, arch, hoist, element_bytes))
    out.sort(key=lambda c: c.proxy)
    return out


def _costed(prog: ast.Program, parts: list, tensor: str, matrix, sizes: dict, arch,
            hoist: bool, element_bytes: int) -> Candidate:
    """One candidate (`prog`, the program with its decomposition), compiled and estimated."""
    from .. import pipeline
    from ..estimate import DataStats, estimate_module
    from ..estimate.stats import stats_of_fiber
    module = pipeline.compile(prog, pipeline.CompileOptions(verify=False)).module
    stats = DataStats.from_values(module, sizes, {}, element_bytes)
    stats.tensors[tensor] = stats_of_fiber(tensor, matrix)
    stats.fibers[tensor] = matrix
    est = estimate_module(module, stats, arch)   # Cost.cycles at the arch ranked for
    proxy, split, cost = 0.0, 0.0, Cost()
    for item in module.sequence():
        c = est.kernels.get(item.name)
        if c is None:
            continue
        p = _proxy(item, module, c, arch, element_bytes)
        if type(item).__name__ == "Decompose":
            split = p
            if hoist:
                continue
        proxy += p
        cost = cost + c
    return Candidate(parts, cost, proxy, split, _blocked_share(parts, tensor, matrix),
                     len(est.kernels))


def _blocked_share(parts: list, tensor: str, matrix) -> float:
    """The fraction of the matrix's stored entries the blocked parts take (0 without any)."""
    from ..data.decompose import split as split_matrix
    if not parts:
        return 0.0
    residual = split_matrix(matrix, [(shorthand("bcsr", 2), b, t) for b, t in parts]
                            + [(shorthand("csr", 2), None, None)], tensor)[-1]
    return 1.0 - residual.nnz / max(int(matrix.nnz), 1) if matrix.nnz else 0.0


def _proxy(item, module, c: Cost, arch, eb: int) -> float:
    """The cycle proxy of one kernel (see the module docstring)."""
    from ..samml.ir import Graph
    bw = arch.bandwidth
    if not isinstance(item, Graph):
        moved = max(c.bytes_read, c.bytes_written)
        return moved / bw + (c.write_vals / eb) / arch.permute_rate
    block = max((module.tensor(t).block or 1 for t in _tensors(item)
                 if module.tensor(t) is not None), default=1)
    rate = 2.0 * block * block
    return max(c.bytes / bw, c.flops / rate)


def _tensors(graph) -> set[str]:
    return {getattr(n, "tensor", None) for n in graph.nodes} - {None}
