"""The planner's cost model: what one fusion region costs under one schedule, by the estimator.

A region (a set of statements fused into one `fuse` region, or one statement alone) is costed
in isolation, as SystemML costs a fused operator: the program is cut down to the region's
statements, whatever they read from other statements becoming inputs with the statistics the
unfused program's writers give them (one estimate of the whole program, unfused, made first),
the region's statements get the schedule's directives, and the module is fused, lowered, run
through the opt pipeline and estimated (`estimate_module`); the region's cost is the sum over
its kernels (its dataflow graphs and the permute steps that feed them). A plan's cost is the sum over its regions. Region costs
are memoized by (statements, schedule, locate).

Objectives: `cycles` (default), `bytes`, `flops`. Cycles are the estimator's `Cost.cycles`
when it has them (the cycle model, issue 14 item 1); until then a roofline proxy per kernel:
max(bytes / memory.bandwidth, FLOPs / lanes), lanes being the product of the region's parallel
factors (one FLOP per cycle per lane, the bandwidth of the default arch). `Metrics.model` says
which one was used.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable

from ..diagnostics import UserError
from ..lang import ast

OBJECTIVES = ("cycles", "bytes", "flops", "energy", "edp")

#: The name the region under evaluation gets in the cut-down program (no statement has it).
REGION = "planned"


@dataclass(frozen=True)
class Schedule:
    """A region's schedule as program directives: `orders` (statement, local order),
    `parallel` (statement, index, factor), `blocks` (tensor, size); `locate`: run the opt
    pass `locate` (module-wide: it is one flag of the plan, see search.py)."""

    orders: tuple[tuple[str, tuple[str, ...]], ...] = ()
    parallel: tuple[tuple[str, str, int], ...] = ()
    blocks: tuple[tuple[str, int], ...] = ()

    def directives(self) -> list[ast.Directive]:
        out: list[ast.Directive] = [ast.Order(s, o) for s, o in self.orders]
        out += [ast.Parallelize(s, i, f) for s, i, f in self.parallel]
        out += [ast.Block(t, b) for t, b in self.blocks]
        return out

    @property
    def lanes(self) -> int:
        n = 1
        for _, _, f in self.parallel:
            n *= f
        return n


@dataclass
class Metrics:
    """Estimated FLOPs, bytes and cycles (`model`: 'estimator' or 'roofline proxy')."""

    flops: float = 0.0
    bytes: float = 0.0
    cycles: float = 0.0
    model: str = ""  # "estimator" or "roofline proxy" (empty: no kernel yet)
    kernels: list[str] = field(default_factory=list)
    written: float = 0.0   # bytes written (the lower bound's materialization cost)
    graphs: int = 0        # dataflow graphs (a fused region fuse had to split has several)
    energy: float = 0.0    # picojoules (sim.energy's prices of the expected counts)
    configurations: int = 0   # graphs after mapping onto the fabric (map splits what does not fit)

    def value(self, objective: str) -> float:
        """The figure an objective minimizes; `edp` the energy-delay product (pJ x cycles)."""
        if objective == "edp":
            return self.energy * self.cycles
        return float(getattr(self, objective))

    def __add__(self, other: "Metrics") -> "Metrics":
        return Metrics(self.flops + other.flops, self.bytes + other.bytes,
                       self.cycles + other.cycles,
                       (self.model or other.model) if not (self.model and other.model)
                       or self.model == other.model else "mixed",
                       self.kernels + other.kernels, self.written + other.written,
                       self.graphs + other.graphs, self.energy + other.energy,
                       self.configurations + other.configurations)

    def to_json(self) -> dict:
        return {"cycles": round(self.cycles, 1), "flops": round(self.flops, 1),
                "bytes": round(self.bytes, 1), "energy_pj": round(self.energy, 1),
                "configurations": self.configurations, "cycle_model": self.model}


@dataclass
class CostOptions:
    """How plans are compiled and measured: the fuse flags, `data_dir` or the --size/--density
    values, the element size and the arch's bandwidth (for the proxy)."""

    data_dir: str | None = None
    sizes: dict = field(default_factory=dict)
    densities: dict = field(default_factory=dict)
    default_density: float | None = None
    element_bytes: int = 4
    bandwidth: float = 256.0
    inline_widened: bool = False
    free_input_order: bool = False
    share: bool = False
    #: the fabric plans are mapped onto (fuseflowc.fabric.PRESETS): on a finite one every
    #: candidate is compiled through `map{fabric=...}` (a graph that does not fit is split into
    #: configurations) and charged each configuration's load (sim/arch.toml [config])
    fabric: str = "unlimited"


#: The default pipeline without `locate`: the one other pipeline a plan may choose.
NO_LOCATE_PIPELINE = "schedule,cleanup"


def pipeline_of(locate: bool, fabric: str = "unlimited") -> str:
    """The opt pipeline a plan is costed and compiled with: the default one (docs/opt.md,
    "The default pipeline"), or the same without `locate`; then `map{fabric=NAME}` on a
    finite fabric."""
    from ..opt.pipeline import DEFAULT_PIPELINE
    base = DEFAULT_PIPELINE if locate else NO_LOCATE_PIPELINE
    return base if fabric == "unlimited" else f"{base},map{{fabric={fabric}}}"


def kernel_cycles(cost, bandwidth: float, lanes: int) -> tuple[float, str]:
    """The cycles of one kernel's Cost: the estimator's when it has a cycle model, else the
    roofline proxy (see the module docstring)."""
    cyc = getattr(cost, "cycles", None)
    if cyc is not None:
        return float(cyc), "estimator"
    return max(float(cost.bytes) / bandwidth, float(cost.flops) / max(lanes, 1)), \
        "roofline proxy"


class BudgetSpent(Exception):
    """The search has spent its budget (Budget): no more region is compiled. Not a UserError,
    so that no search step takes it for a region that does not compile; each step keeps the
    best it has found (the search is anytime: search.py)."""


@dataclass
class Budget:
    """What one plan's search may spend, over every fuse-flag combination: `compiles` region
    compiles (the default bound: a count, so a cut search gives the same plan on every
    machine) and, when `seconds` is set (`plan --time-limit`, opt-in), that much wall time from
    `start` by `clock` (a cut then depends on the machine's speed). `spent` names the bound
    that ran out ("" while none has)."""

    compiles: int
    seconds: float | None = None
    clock: Callable[[], float] = time.monotonic
    start: float = 0.0
    spent: str = ""

    def check(self, compiled: int) -> None:
        """Raise BudgetSpent when a bound has run out (and from then on)."""
        if not self.spent:
            if compiled >= self.compiles:
                self.spent = "compiles"
            elif self.seconds is not None and self.clock() - self.start >= self.seconds:
                self.spent = "time"
        if self.spent:
            raise BudgetSpent(self.spent)


@dataclass
class Memo:
    """What the Evaluators of one program's flag combinations (flags.py) share: fused IR,
    metrics and search results of regions, keyed by the fuse flags that can change the region
    (Evaluator.flags), so a region no flag changes is fused, compiled and costed once for all
    combinations; and the unfused program's statistics."""

    fused: dict = field(default_factory=dict)
    measured: dict = field(default_factory=dict)
    best: dict = field(default_factory=dict)
    base: dict = field(default_factory=dict)
    compiles: int = 0  # region modules compiled and estimated, for every combination
    budget: Budget | None = None  # shared by every combination (set by the first Planner)


class Evaluator:
    """Compiles and estimates regions of one checked program (see the module docstring)."""

    def __init__(self, program: ast.Program, options: CostOptions, memo: Memo | None = None):
        self.program = program
        self.opt = options
        self.shared = memo if memo is not None else Memo()
        self.memo: dict[tuple, Metrics | UserError] = self.shared.measured
        self.compiled = 0  # modules compiled and estimated (for the statistics)
        from fuseflowc.sim.arch import Arch
        self.arch = Arch.load(None, ())  # loaded once: the estimator's timing defaults
        self._fused: dict[tuple, object] = self.shared.fused
        self._flags: dict[frozenset, tuple[bool, bool]] = {}
        self._decomposed = any(isinstance(d, ast.Decompose) for d in program.directives)
        self.outputs = frozenset(program.outputs)  # a property that walks every statement
        stmts = program.statements
        self.reads = {s.name: {a.tensor for a in s.rhs.walk() if isinstance(a, ast.Access)}
                      for s in stmts}
        assigned = set(program.assigned)
        self.producers = {s: {t for t in r if t in assigned} for s, r in self.reads.items()}
        self.consumers: dict[str, list[str]] = {s.name: [] for s in stmts}
        for s in stmts:
            for p in sorted(self.producers[s.name]):
                self.consumers[p].append(s.name)

    def flags(self, region: frozenset[str]) -> tuple[bool, bool]:
        """(inline_widened, share) as far as they can change how `region` fuses: a flag that
        cannot is False, so the combinations that differ only in it share the region's results
        (Memo). fuse (fuse.algorithm._fuse_group) reads --inline-widened only for a region of
        several statements with an intermediate lang.widen.must_materialize stores, --share
        only for a region of several statements one of which two others of it read (and
        that is not stored already as widened). A program with decompositions (which fuse
        rewrites first) keeps both flags as given."""
        got = self._flags.get(region)
        if got is None:
            o = self.opt
            if self._decomposed:
                got = (o.inline_widened, o.share)
            elif len(region) == 1 or not (o.inline_widened or o.share):
                got = (False, False)  # a flag not given changes nothing: no analysis
            else:
                from ..lang.widen import must_materialize
                kept = must_materialize(self.subprogram(region, Schedule()),
                                        self._in_order(region))
                stored = set() if o.inline_widened else kept  # what fuse materializes anyway
                shared = o.share and any(s not in stored and sum(
                    c in region for c in self.consumers[s]) > 1 for s in region)
                got = (o.inline_widened and bool(kept), shared)
            self._flags[region] = got
        return got

    def _in_order(self, region: frozenset[str]) -> list[str]:
        return [s.name for s in self.program.statements if s.name in region]

    # -- the cut-down program ---------------------------------------------------------------
    def subprogram(self, region: frozenset[str], sched: Schedule) -> ast.Program:
        """The region's statements alone, fused (if more than one), with `sched`'s directives;
        what they read from other statements becomes an input (its statistics: base_stats),
        their results that other statements read are kept as outputs."""
        p = self.program
        statements = [s for s in p.statements if s.name in region]
        used: set[str] = set()
        for s in statements:
            used.add(s.name)
            used |= self.reads[s.name]
        tensors = [t for t in p.tensors if t.name in used]
        dimnames = {d for t in tensors for d in t.dims if isinstance(d, str)}
        dims = [d for d in p.dims if d.name in dimnames]
        outs = sorted(s for s in region
                      if s in self.outputs or any(c not in region for c in self.consumers[s]))
        directives: list[ast.Directive] = []
        if len(region) > 1:
            directives.append(ast.Fuse(REGION, tuple(s.name for s in statements)))
        blocks = dict(sched.blocks)
        directives += [d for d in p.directives if isinstance(d, ast.Block)
                       and d.tensor in used and d.tensor not in blocks]
        # a decomposition constrains fusion (a blocked part's intermediate operand must come
        # from outside the region): the region is costed, and refused, as fuse will see it
        directives += [d for d in p.directives if isinstance(d, ast.Decompose)
                       and d.tensor in used]
        directives += sched.directives()
        if outs:
            directives.append(ast.Output(tuple(outs)))
        # a reused loop keeps the region's part of each iteration (fuse then fuses in full an
        # iteration the region holds only part of: fuse/rebind.py)
        reuse = [(var, [[n for n in names if n in region] for names in its])
                 for var, its in p.reuse]
        sub = replace(p, dims=dims, tensors=tensors, statements=statements,
                      directives=directives,
                      reuse=[(var, its) for var, its in reuse if any(its)])
        from ..lang.decompose import problems
        for d in directives:
            if isinstance(d, ast.Decompose):
                for msg, loc in problems(sub, statements, d):
                    raise UserError(msg, loc)  # the rule the checker applies to the program
        return sub

    def fuse(self, program: ast.Program):
        """The fused IR of a cut-down program, with the plan's fuse flags."""
        from .. import pipeline
        o = self.opt
        return pipeline.fuse(program, pipeline.CompileOptions(
            inline_widened=o.inline_widened, free_input_order=o.free_input_order,
            share=o.share))

    def fuse_region(self, region: frozenset[str], sched: Schedule):
        """The fused IR of the region's cut-down program under `sched` (memoized: listing a
        region's orders and costing its first schedule fuse the same program)."""
        key = (region, sched, self.flags(region))
        got = self._fused.get(key)
        if isinstance(got, UserError):
            raise got
        if got is None:
            self.check_budget()  # fusing is half a compile: none once the budget is spent
            try:
                got = self.fuse(self.subprogram(region, sched))
            except UserError as e:
                self._fused[key] = e
                raise
            self._fused[key] = got
        return got

    def compile(self, program: ast.Program, locate: bool, fused=None):
        """(fused program, module after the opt pipeline) of a cut-down program (`fused`: its
        fused IR, if already made). Not verified: lowering's output verifies (tested), and
        the planned program is verified when the user compiles it."""
        from .. import pipeline
        fused = fused if fused is not None else self.fuse(program)
        options = pipeline.CompileOptions(verify=False,
                                          passes=pipeline_of(locate, self.opt.fabric),
                                          verify_each=False)
        return fused, pipeline.compile(fused, options).module

    def base_stats(self):
        """Statistics of every input and of every intermediate as the unfused program writes
        it (one estimate of the whole program, unfused), from --data or --size/--density."""
        # no flag changes a lone statement; a decomposition's rewrite may fuse its parts
        key = (self.opt.inline_widened, self.opt.share) if self._decomposed else ()
        if key in self.shared.base:
            return self.shared.base[key]
        from ..estimate import DataStats, estimate_module
        o = self.opt
        p = self.program
        whole = replace(p, directives=[d for d in p.directives
                                       if isinstance(d, (ast.Block, ast.Output, ast.Decompose))])
        try:
            _, module = self.compile(whole, True)
        except UserError as unfused_error:
            module = self._base_module(unfused_error)
        if o.data_dir is not None:
            stats = DataStats.from_dir(o.data_dir, module, o.element_bytes)
        else:
            names = {t.name for t in module.tensors if t.role == "input"}
            dens = {k: v for k, v in o.densities.items() if k in names}
            stats = DataStats.from_values(module, o.sizes, dens, o.element_bytes,
                                          o.default_density)
        est = estimate_module(module, stats, arch=self.arch)
        self.shared.base[key] = DataStats(dict(stats.sizes), dict(est.tensors),
                                          stats.element_bytes, stats.origin, stats.fibers)
        return self.shared.base[key]

    def _base_module(self, unfused_error: UserError):
        """The module of base_stats when the unfused program does not compile (an
        intermediate that cannot be stored: attention-b16's row max, not blocked, inside
        blocked rows): the program's own regions, storing every intermediate that they can
        store too (one by one, in program order), so that a region reading it is estimated.
        Raises `unfused_error` when the program's regions do not compile either."""
        p = self.program
        outputs = list(p.outputs)

        def compiled(stored: list[str]):
            directives = [d for d in p.directives if not isinstance(d, ast.Output)]
            return self.compile(replace(p, directives=[*directives, ast.Output(
                tuple(stored))]), True)[1]
        try:
            module = compiled(outputs)
        except UserError:
            raise unfused_error from None
        for t in p.assigned:
            if t in outputs:
                continue
            try:
                module, outputs = compiled(outputs + [t]), outputs + [t]
            except UserError:
                continue
        return module

    def region_graphs(self, fused, region: frozenset[str]) -> list:
        """The fused IR regions (dataflow graphs) that compute `region`."""
        if len(region) > 1:
            return [r for r in fused.regions if r.group == REGION]
        (s,) = region
        return [r for r in fused.regions if r.group is None and r.statements == (s,)]

    def measure(self, region: frozenset[str], sched: Schedule, locate: bool) -> Metrics:
        """The region's metrics under `sched` (memoized). Raises UserError when the region
        does not compile with this schedule (the error is memoized too)."""
        key = (region, sched, locate, self.flags(region))
        got = self.memo.get(key)
        if isinstance(got, UserError):
            raise got
        if got is not None:
            return got
        try:
            m = self._measure(region, sched, locate)
        except UserError as e:
            self.memo[key] = e
            raise
        self.memo[key] = m
        return m

    def check_budget(self) -> None:
        """Raise BudgetSpent once the shared budget (Memo.budget) has run out."""
        if self.shared.budget is not None:
            self.shared.budget.check(self.shared.compiles)

    def _measure(self, region, sched, locate) -> Metrics:
        from ..estimate import estimate_module
        base = self.base_stats()
        self.check_budget()
        fused, module = self.compile(None, locate, self.fuse_region(region, sched))
        self.compiled += 1
        self.shared.compiles += 1
        est = estimate_module(module, base, arch=self.arch)
        graphs = self.region_graphs(fused, region)
        m = Metrics()
        models = set()
        # the cut-down module is the region's alone: every kernel is its own (graphs, and the
        # permute steps feeding them)
        for name, c in est.kernels.items():
            cyc, model = kernel_cycles(c, self.opt.bandwidth,
                                       1 if name.startswith("permute ") else sched.lanes)
            models.add(model)
            m.flops += float(c.flops)
            m.bytes += float(c.bytes)
            m.cycles += cyc
            m.written += float(c.bytes_written)
            m.kernels.append(name)
        m.graphs = len(graphs)
        from ..estimate.energy import estimate_energy
        m.energy = float(estimate_energy(est.kernels, module, self.arch)[1]["total"])
        m.configurations = len(module.graphs)
        if self.opt.fabric != "unlimited":  # what splitting costs: a load per configuration
            m.cycles += sum(self.arch.config_cycles(len(g.nodes)) for g in module.graphs
                            if g.template is None)
        m.model = models.pop() if len(models) == 1 else ("mixed" if models else "")
        return m
