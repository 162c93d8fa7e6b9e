"""The planner's search (docs/plan.md): fusion regions by SystemML's MPSkipEnum over interesting
points, then per region its dataflow order, parallel factor, block sizes, and the plan's
`locate` pass, all by the estimator's cost (cost.py).

1. The statement DAG: an edge per producer -> consumer. An edge is *fusable* when the pair
   fused alone compiles into one dataflow graph (fuse does not have to materialize the
   producer: a widened intermediate, conflicting orders). Fusable edges are the interesting
   points: each is fused or materialized. A multi-consumer intermediate has one point per
   consumer (SystemML's materialization-point consumers): fused into all of them it is
   recomputed per consumer (or, with --share, stored once inside the region); materialized for
   all of them it is computed once and read back; mixed, it is fused into some and written for
   the others.
2. Partitions: connected components of the statements under fusable edges; each is searched on
   its own (a plan's cost is the sum of its regions' costs).
3. Per partition with at most `max_points` points: MPSkipEnum (enumerate.py) over the 2^m
   assignments; the regions of an assignment are the components of its fused points; the cost
   is the sum of each region's best-order cost. The lower bound: every intermediate the plan
   must write (materialized ones, outputs, what other partitions read) is written at least once.
   Larger partitions: a bounded search, stated in the result: a dynamic program over contiguous
   runs of at most `segment` statements (in program order), plus the program's own regions,
   fuse-all and fuse-none as seeds.
4. Per region of the chosen plan: orders were chosen with the fusion (exact enumeration of the
   POG's linear extensions up to `max_orders`, else that many sampled evenly over the
   enumeration, stated); then the parallel factor (powers of two up to `lanes`, on each index
   of the region's written statement); block sizes of blocked inputs (with --size only: data
   files fix them); last, `opt -p locate` for the whole plan or not.
Deterministic: every choice is a minimum over candidates in a fixed order, ties to the first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from ..diagnostics import UserError
from ..lang import ast
from .cost import (
    OBJECTIVES,
    Budget,
    BudgetSpent,
    CostOptions,
    Evaluator,
    Memo,
    Metrics,
    Schedule,
    pipeline_of,
)
from .enumerate import EnumStats, skip_enum

#: Region compiles a search may make over all its fuse-flag combinations (each fuses, lowers
#: and estimates a cut-down program; about 5-20 ms each): then the search stops and returns the
#: best plan found so far, rather than running for hours (an unrolled RNN of 256 statements,
#: issue 23 item 4). A count, not seconds, so that a cut search plans the same on every machine.
MAX_COMPILES = 1500

#: Statements (after unrolling loops) above which a partition gets only the linear search:
#: its seeds (the program's regions, fuse-all, fuse-none) and runs of 2 statements.
MAX_STATEMENTS = 48


@dataclass
class PlanOptions:
    """Search settings (see the module docstring); `warehouse`: a Warehouse or None;
    `search`: False applies the program's regions with the warehouse's schedules only."""

    objective: str = "cycles"
    lanes: int = 1
    top: int = 5
    max_points: int = 12
    max_orders: int = 24
    segment: int = 6
    warehouse: object = None
    search: bool = True
    max_compiles: int = 0      # 0: MAX_COMPILES
    time_limit: float | None = None   # seconds of wall time (opt-in: --time-limit)
    clock: Callable[[], float] = time.monotonic   # the time limit's clock (tests: a fake)


@dataclass
class RegionPlan:
    """One region of a plan: its statements (program order), schedule, metrics, the pattern
    the warehouse matched (if any) and how its orders were searched."""

    statements: tuple[str, ...]
    schedule: Schedule
    metrics: Metrics
    pattern: str | None = None
    orders: str = ""
    name: str = ""


@dataclass
class PlanResult:
    regions: list[RegionPlan]
    locate: bool
    total: Metrics
    top: list[tuple[Metrics, tuple[tuple[str, ...], ...]]]
    stats: EnumStats
    partitions: list[dict]
    points: int
    seconds: float = 0.0
    objective: str = "cycles"
    note: str = ""        # why the plan is not the search's first choice (validate.py)
    compiles: int = 0     # region modules compiled and estimated, every flag combination's
    combinations: int = 1  # fuse-flag combinations searched (flags.py)
    cut: str = ""         # "" or the bound that stopped the search ("compiles", "time")

    @property
    def passes(self) -> str:
        """The opt pipeline the plan was costed with, and must be compiled with."""
        return pipeline_of(self.locate)


@dataclass
class _Choice:
    schedule: Schedule
    metrics: Metrics
    pattern: str | None
    orders: str


class Planner:
    """Plans one checked program (see the module docstring)."""

    def __init__(self, program: ast.Program, cost: CostOptions, options: PlanOptions,
                 memo: Memo | None = None):
        if options.objective not in OBJECTIVES:
            raise UserError(f"--objective {options.objective}: expected one of "
                            + ", ".join(OBJECTIVES))
        self.p = program
        self.o = options
        self.ev = Evaluator(program, cost, memo)  # memo: shared with other flag combinations
        # a large program (loops unrolled) gets the linear search: one order per region and
        # runs of at most 2 statements, so its compiles grow with its statements, not faster
        self.large = len(program.statements) > MAX_STATEMENTS
        self.max_orders = 1 if self.large else options.max_orders
        self.segment = 2 if self.large else options.segment
        if self.ev.shared.budget is None:  # one budget for every flag combination
            self.ev.shared.budget = Budget(options.max_compiles or MAX_COMPILES,
                                           options.time_limit, options.clock, options.clock())
        self.budget = self.ev.shared.budget
        self.index = {s.name: n for n, s in enumerate(program.statements)}
        self._best: dict[frozenset, _Choice | None] = {}
        self._errors: dict[frozenset, UserError] = {}  # why a region compiles in no schedule
        self._written: dict[str, float] = {}

    # -- regions ------------------------------------------------------------------------------
    def value(self, m: Metrics) -> tuple[float, float, float]:
        """The objective, then the other two figures as tie-breakers (a fusion that saves
        bytes at equal cycles is preferred)."""
        obj = self.o.objective
        rest = [k for k in ("cycles", "bytes", "flops") if k != obj]
        return (m.value(obj), m.value(rest[0]), m.value(rest[1]))


    def ordered(self, region) -> tuple[str, ...]:
        return tuple(sorted(region, key=self.index.__getitem__))

    def order_candidates(self, region: frozenset[str]) -> tuple[list[tuple[Schedule, str | None]],
                                                                 str]:
        """Schedules (orders only) to try for a region, the warehouse's first; and how the
        orders were chosen ('exact 3', 'sampled 24 of 5040')."""
        from ..fuse.orders import region_pog
        out: list[tuple[Schedule, str | None]] = []
        wh = self.o.warehouse
        if wh is not None:
            got = wh.match(self.p, self.ordered(region))
            if got is not None:
                out.append((Schedule(orders=got[1].orders), got[0]))
        fused = self.ev.fuse_region(region, Schedule())
        graphs = self.ev.region_graphs(fused, region)
        per_graph: list[list[tuple[str, ...]]] = []
        how = []
        for g in graphs:
            pog = region_pog(g)
            try:
                count = pog.count()
            except UserError:
                count = None
            names = g.index_names()
            if count is not None and count <= self.max_orders:
                orders = list(pog.orders(count))
                how.append(f"exact {count}")
            else:
                n = self.max_orders
                ks = sorted({k * count // n for k in range(n)}) if count else [0]
                orders = [pog.unrank(k) for k in ks]
                how.append(f"sampled {len(ks)} of {count if count else 'too many to count'}")
            per_graph.append([tuple(names[v] for v in o) for o in orders])
        # the cross product over the graphs of a split region, capped
        combos: list[list[tuple[str, ...]]] = [[]]
        for opts in per_graph:
            combos = [c + [o] for c in combos for o in opts][: self.max_orders]
        if len(combos) == 1:  # one valid order: nothing to say
            return out + [(Schedule(), None)], ", ".join(how)
        seen = {s for s, _ in out}
        for combo in combos:
            orders: dict[str, tuple[str, ...]] = {}
            for g, order in zip(graphs, combo):
                pos = {x: k for k, x in enumerate(order)}
                for inst in g.exprs:
                    if inst.statement in orders:
                        continue
                    locals_ = [a for a, _ in inst.index_map]
                    if len(set(locals_)) != len(locals_):
                        continue  # a name reduced twice: no order directive can say it
                    orders[inst.statement] = tuple(a for a, _ in sorted(
                        inst.index_map, key=lambda p: pos[p[1]]))
            s = Schedule(orders=tuple(sorted(orders.items(), key=lambda i: self.index[i[0]])))
            if s not in seen:
                seen.add(s)
                out.append((s, None))
        return out, ", ".join(how)

    def explicit_orders(self, region: frozenset[str], sched: Schedule) -> Schedule:
        """`sched` with every statement's order spelled out as the region compiles with it
        (a region with one valid order gets no order directives; a pattern names it)."""
        fused = self.ev.fuse_region(region, sched)
        orders: dict[str, tuple[str, ...]] = {}
        for g in self.ev.region_graphs(fused, region):
            pos = {x: k for k, x in enumerate(g.order)}
            for inst in g.exprs:
                if inst.statement not in orders:
                    orders[inst.statement] = tuple(a for a, _ in sorted(
                        inst.index_map, key=lambda p: pos[p[1]]))
        return Schedule(tuple(sorted(orders.items(), key=lambda i: self.index[i[0]])),
                        sched.parallel, sched.blocks)

    def best(self, region: frozenset[str]) -> _Choice | None:
        """The region's cheapest order schedule, or None when it does not compile."""
        if region in self._best:
            return self._best[region]
        key = (region, self.ev.flags(region))
        if key in self.ev.shared.best:  # another flag combination's, which no flag changes
            choice, error = self.ev.shared.best[key]
            if error is not None:
                self._errors[region] = error
            self._best[region] = choice
            return choice
        choice = None
        try:
            cands, how = self.order_candidates(region)
        except UserError as e:
            cands, how = [], ""
            self._errors[region] = e
        except BudgetSpent:  # not costed: the region is no candidate (nothing is compiled now)
            cands, how = [], ""
        if not self.o.search:  # the warehouse's schedule, else fuse's default order
            cands = [c for c in cands if c[1] is not None][:1] + [(Schedule(), None)]
            how = "warehouse" if cands[0][1] is not None else "default order 0"
        for k, (sched, pattern) in enumerate(cands):
            try:
                m = self.ev.measure(region, sched, True)
            except UserError as e:
                self._errors.setdefault(region, e)
                continue
            except BudgetSpent:  # the best of the schedules costed so far
                if choice is not None:
                    choice.orders += f" ({k} of {len(cands)} costed: the budget ran out)"
                break
            if choice is None or self.value(m) < self.value(choice.metrics):
                choice = _Choice(sched, m, pattern, how)
        self._best[region] = choice
        self.ev.shared.best[key] = (choice, self._errors.get(region))
        return choice

    def written(self, t: str) -> float:
        """The objective's cost of writing intermediate t once (the lower bound's unit)."""
        if t not in self._written:
            c = self.best(frozenset({t}))
            w = 0.0 if c is None else c.metrics.written
            obj = self.o.objective
            # energy: the DRAM bytes' price; EDP (a product of sums) gets no bound
            self._written[t] = (w / self.ev.opt.bandwidth if obj == "cycles"
                                else w if obj == "bytes"
                                else w * self.ev.arch.energy["dram_byte"] if obj == "energy"
                                else 0.0)
        return self._written[t]

    # -- fusion -------------------------------------------------------------------------------
    def fusable_edges(self) -> list[tuple[str, str]]:
        edges = []
        for s in self.p.statements:
            for prod in sorted(self.ev.producers[s.name], key=self.index.__getitem__):
                c = self.best(frozenset({prod, s.name}))
                if c is not None and c.metrics.graphs == 1:
                    edges.append((prod, s.name))
        return edges

    def components(self, stmts, fused_edges) -> list[frozenset[str]]:
        parent = {s: s for s in stmts}

        def find(x):
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x
        for a, b in fused_edges:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb, key=self.index.__getitem__)] = min(
                    ra, rb, key=self.index.__getitem__)
        groups: dict[str, set[str]] = {}
        for s in stmts:
            groups.setdefault(find(s), set()).add(s)
        return sorted((frozenset(g) for g in groups.values()),
                      key=lambda g: min(self.index[s] for s in g))

    def acyclic(self, regions: list[frozenset[str]]) -> bool:
        """Whether regions (the other statements alone) depend on each other without a cycle."""
        of = {s.name: s.name for s in self.p.statements}
        for k, r in enumerate(regions):
            for s in r:
                of[s] = f"#{k}"
        succ: dict[str, set[str]] = {}
        for s in self.p.statements:
            for prod in self.ev.producers[s.name]:
                a, b = of[prod], of[s.name]
                if a != b:
                    succ.setdefault(a, set()).add(b)
        state: dict[str, int] = {}
        for start in sorted(set(of.values())):
            if start in state:
                continue
            stack = [(start, iter(sorted(succ.get(start, ()))))]
            state[start] = 1
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    state[node] = 2
                    stack.pop()
                elif state.get(nxt) == 1:
                    return False
                elif nxt not in state:
                    state[nxt] = 1
                    stack.append((nxt, iter(sorted(succ.get(nxt, ())))))
        return True

    def plan_cost(self, regions: list[frozenset[str]]) -> tuple | None:
        total = Metrics()
        for r in regions:
            c = self.best(r)
            if c is None:
                return None
            total = total + c.metrics
        return self.value(total)

    def search_partition(self, stmts: list[str], points: list[tuple[str, str]],
                         seeds: list[list[frozenset[str]]]):
        """(best regions, statistics, mode, costed plans [(cost, regions)])."""
        must = {s for s in stmts if s in self.ev.outputs
                or any(c not in stmts for c in self.ev.consumers[s])
                or any((s, c) not in points for c in self.ev.consumers[s])}
        costed: list[tuple[float, list[frozenset[str]]]] = []

        def regions_of(q):
            regs = self.components(stmts, [pt for pt, mat in zip(points, q) if not mat])
            where = {s: k for k, r in enumerate(regs) for s in r}
            if any(mat and where[a] == where[b] for (a, b), mat in zip(points, q)):
                return None  # a materialized edge whose ends another path fuses
            return regs if self.acyclic(regs) else None

        best_seen: list = []

        def cost(q):
            regs = regions_of(q)
            if regs is None:
                return None
            # partial costing (SystemML): regions already costed first; stop before compiling
            # a new one once the sum exceeds the best plan's cost (the plan cannot win)
            known = [r for r in regs if r in self._best]
            total = Metrics()
            for r in known + [r for r in regs if r not in self._best]:
                if best_seen and self.value(total)[0] > best_seen[0][0]:
                    return self.value(total)
                c = self.best(r)
                if c is None:
                    return None
                total = total + c.metrics
            v = self.value(total)
            costed.append((v, regs))
            if not best_seen or v < best_seen[0]:
                best_seen[:] = [v]
            return v

        def lower_bound(q):
            targets = set(must) | {a for (a, _), mat in zip(points, q) if mat}
            return (sum(self.written(t) for t in sorted(targets)), 0.0, 0.0)

        m = len(points)
        spent = lambda: bool(self.budget.spent)  # noqa: E731
        if m <= self.o.max_points and not self.large:
            best_q, _, stats = skip_enum(m, cost, lower_bound, stop=spent)
            mode = f"exhaustive (2^{m})"
            if best_q is None and stats.unvisited:  # cut before any plan: each alone
                alone = [frozenset({s}) for s in stmts]
                if self.plan_cost(alone) is not None:
                    costed.append((self.plan_cost(alone), alone))
                    return alone, stats, mode + ", cut: each statement alone", costed
            if best_q is None:
                raise self.no_plan(stmts)
            return regions_of(best_q), stats, mode, costed
        # bounded: contiguous runs in program order, plus the seeds
        stats = EnumStats(space=1 << m)
        n = len(stmts)
        best: list[tuple[Metrics, list[frozenset[str]]] | None] = [None] * (n + 1)
        best[0] = (Metrics(), [])
        for i in range(1, n + 1):
            for j in range(max(0, i - self.segment), i):
                if best[j] is None:
                    continue
                run = set(stmts[j:i])
                regs = self.components(sorted(run, key=self.index.__getitem__),
                                       [pt for pt in points if pt[0] in run and pt[1] in run])
                if any(self.best(r) is None for r in regs):
                    continue
                m_run = Metrics()
                for r in regs:
                    m_run = m_run + self.best(r).metrics
                cand = (best[j][0] + m_run, best[j][1] + regs)
                if best[i] is None or self.value(cand[0]) < self.value(best[i][0]):
                    best[i] = cand
        cands = []
        if best[n] is not None and self.acyclic(best[n][1]):
            cands.append((self.value(best[n][0]), best[n][1]))
        for seed in seeds:
            c = self.plan_cost(seed) if self.acyclic(seed) else None
            if c is not None:
                cands.append((c, seed))
        for c, regs in cands:
            costed.append((c, regs))
        stats.costed = len(costed)
        stats.cut = bool(self.budget.spent)
        if not cands:
            raise self.no_plan(stmts)
        c, regs = min(cands, key=lambda x: x[0])
        why = (f"{len(self.p.statements)} statements > {MAX_STATEMENTS}" if self.large
               else f"{m} points > --max-points {self.o.max_points}")
        return regs, stats, (f"bounded: {why}; runs of at most {self.segment} statements and "
                             f"{len(seeds)} seeds"), costed

    def no_plan(self, stmts: list[str]) -> UserError:
        """The error for a partition no plan of which compiles: a statement that compiles in
        no schedule, alone, with its own (located) error, else a plain message."""
        for st in stmts:
            e = self._errors.get(frozenset({st}))
            if e is not None:
                e.note(f"plan: statement {st} compiles neither alone nor fused in any plan "
                       f"tried, so no plan of {', '.join(stmts)} exists",
                       self.p.statement(st).loc)
                return e
        return UserError("no plan of statements " + ", ".join(stmts) + " compiles (every "
                         "assignment of their interesting points fails to fuse or lower)",
                         self.p.statement(stmts[0]).loc)

    # -- the whole plan -----------------------------------------------------------------------
    def user_regions(self) -> list[frozenset[str]]:
        """The program's own regions (statements in no region alone)."""
        regs = [frozenset(f.statements) for f in self.p.regions()]
        inside = {s for r in regs for s in r}
        regs += [frozenset({s.name}) for s in self.p.statements if s.name not in inside]
        return sorted(regs, key=lambda g: min(self.index[s] for s in g))

    def run(self) -> PlanResult:
        """The plan (see the module docstring). Anytime: once the budget (Budget: region
        compiles, and --time-limit) is spent, no more region is compiled and every step keeps
        the best it has costed, so the result is the best plan found so far (`cut` says so);
        a UserError only when the budget does not cover costing each statement alone."""
        result = self._run()
        result.cut = self.budget.spent
        return result

    def costed_alone(self, stmts: list[str]) -> None:
        """Cost each statement alone first: the plan a cut search falls back on. A UserError
        when the budget runs out before that plan is costed."""
        for k, st in enumerate(stmts):
            if self.best(frozenset({st})) is None and self.budget.spent:
                raise self.budget_error(f"the plan that leaves each statement alone was "
                                        f"costed ({k} of {len(stmts)} statements")

    def budget_error(self, what: str) -> UserError:
        """The error of a budget spent before `what` (a phrase; its parenthesis left open)."""
        b = self.budget
        bound = (f"its budget of {b.compiles:,} region compiles (--max-compiles)"
                 if b.spent == "compiles" else f"its time limit of {b.seconds:g} s (--time-limit)")
        return UserError(
            f"plan: the search stopped at {bound} before {what}"
            f"{', loops unrolled' if self.p.looped is not None else ''}"
            + (f"; the search is linear above {MAX_STATEMENTS} statements, about "
               f"{self.segment * 2 + 2} compiles per statement" if self.large else "")
            + f"): raise {'--max-compiles' if b.spent == 'compiles' else '--time-limit'}"
            f", plan a smaller instance (fewer layers or time steps) and write its directives "
            f"for each, or keep your own regions (--warehouse DIR --no-search)")

    def _run(self) -> PlanResult:
        t0 = time.perf_counter()
        stmts = [s.name for s in self.p.statements]
        if not stmts:
            raise UserError("the program has no statements: nothing to plan")
        if not self.o.search:
            regions = self.user_regions()
            for k, r in enumerate(regions):
                if self.best(r) is None:
                    if self.budget.spent:
                        raise self.budget_error(f"the program's regions were costed ({k} of "
                                                f"{len(regions)} regions")
                    e = self._errors.get(r) or UserError("region " + ", ".join(
                        self.ordered(r)) + " does not compile")
                    raise e
            plan = self.finish(regions)
            total = plan[2]
            return PlanResult(plan[0], plan[1], total, [(total, tuple(
                self.ordered(r) for r in regions))], EnumStats(), [], 0,
                time.perf_counter() - t0, self.o.objective)
        self.costed_alone(stmts)
        points = self.fusable_edges()
        parts = self.components(stmts, points)
        user = self.user_regions()
        chosen: list[frozenset[str]] = []
        stats = EnumStats()
        info = []
        per_part = []
        for part in parts:
            ps = [pt for pt in points if pt[0] in part]
            ss = list(self.ordered(part))
            # fuse-all is a seed of a program that is not large: fusing a whole unrolled
            # loop inlines every step into the next (rnn_stacked: minutes in fuse alone)
            seeds = [[r & part for r in user if r & part],
                     *([] if self.large else [[part]]), [frozenset({s}) for s in ss]]
            seeds = [self.components_of_seed(sd, ps) for sd in seeds]
            regs, st, mode, costed = self.search_partition(ss, ps, seeds)
            chosen += regs
            stats = stats + st
            info.append({"statements": ss, "points": len(ps), "mode": mode, **st.to_json()})
            per_part.append((regs, costed))
        chosen.sort(key=lambda g: min(self.index[s] for s in g))
        unfused = [frozenset({s}) for s in stmts]
        # never a plan the model itself says is slower than leaving every statement alone
        # (the search's space holds fuse-none; this guards the bounded and linear modes too)
        mine, alone = self.plan_cost(chosen), self.plan_cost(unfused)
        if alone is not None and (mine is None or alone < mine):
            chosen = unfused
        regions, locate, total = self.finish(chosen)
        top = self.ranking(per_part)
        return PlanResult(regions, locate, total, top, stats, info, len(points),
                          time.perf_counter() - t0, self.o.objective)

    def rerun(self, regions, like: PlanResult) -> PlanResult:
        """The plan of the given regions (statement tuples), finished as the search's choice
        would be (parallel factors, blocks, locate); ranking and statistics from `like`."""
        regs = [frozenset(r) for r in regions]
        for r in regs:
            if self.best(r) is None:
                raise self._errors.get(r) or UserError(
                    "region " + ", ".join(self.ordered(r)) + " does not compile")
        regs.sort(key=lambda g: min(self.index[s] for s in g))
        plans, locate, total = self.finish(regs)
        return PlanResult(plans, locate, total, like.top, like.stats, like.partitions,
                          like.points, like.seconds, like.objective)

    def components_of_seed(self, seed: list[frozenset[str]], points) -> list[frozenset[str]]:
        """A seed's regions split into what fusable edges connect (a region of the program
        may join statements no fusable edge joins)."""
        out = []
        for r in seed:
            out += self.components(self.ordered(r), [pt for pt in points
                                                      if pt[0] in r and pt[1] in r])
        return out

    def ranking(self, per_part) -> list[tuple[Metrics, tuple[tuple[str, ...], ...]]]:
        """The best K plans: each partition's alternatives with the others at their best."""
        alts = []
        bests = [regs for regs, _ in per_part]
        for k, (_, costed) in enumerate(per_part):
            for _, regs in costed:
                plan = [r for j, b in enumerate(bests) for r in (regs if j == k else b)]
                alts.append(plan)
        seen, out = set(), []
        for plan in alts:
            key = tuple(sorted(self.ordered(r) for r in plan))
            if key in seen:
                continue
            seen.add(key)
            m = Metrics()
            for r in plan:
                m = m + self.best(r).metrics
            out.append((m, tuple(sorted((self.ordered(r) for r in plan),
                                        key=lambda t: self.index[t[0]]))))
        out.sort(key=lambda x: (self.value(x[0]), x[1]))
        return out[: self.o.top]

    def finish(self, regions: list[frozenset[str]]) -> tuple[list[RegionPlan], bool, Metrics]:
        """Per region: parallel factor and block sizes on top of the chosen order; then the
        plan's locate flag."""
        plans = []
        for r in regions:
            c = self.best(r)
            sched, m = c.schedule, c.metrics
            sched, m = self.parallelize(r, sched, m)
            sched, m = self.block(r, sched, m)
            plans.append(RegionPlan(self.ordered(r), sched, m, c.pattern, c.orders))
        # every candidate was costed as the default pipeline compiles it (with locate); the
        # plan's one other pipeline leaves locate out, for the whole module
        locate = True
        without = []
        try:
            for rp in plans:
                without.append(self.ev.measure(frozenset(rp.statements), rp.schedule, False))
        except (UserError, BudgetSpent):
            without = []
        if without:
            a, b = Metrics(), Metrics()
            for rp, m in zip(plans, without):
                a, b = a + rp.metrics, b + m
            if self.value(b) < self.value(a):
                locate = False
                for rp, m in zip(plans, without):
                    rp.metrics = m
        total = Metrics()
        for rp in plans:
            total = total + rp.metrics
        return plans, locate, total

    def _written_root(self, region: frozenset[str]) -> str:
        inside = [s for s in self.ordered(region)
                  if s in self.ev.outputs
                  or any(c not in region for c in self.ev.consumers[s])]
        return (inside or list(self.ordered(region)))[-1]

    def parallelize(self, region, sched: Schedule, m: Metrics) -> tuple[Schedule, Metrics]:
        wh = self.o.warehouse
        cands: list[Schedule] = []
        if wh is not None:
            got = wh.match(self.p, self.ordered(region))
            if got is not None and got[1].parallel:
                par = tuple((s, i, min(f, self.o.lanes)) for s, i, f in got[1].parallel)
                cands.append(Schedule(sched.orders, par, sched.blocks))
        root = self._written_root(region)
        f = 2 if self.o.search else self.o.lanes + 1
        while f <= self.o.lanes:
            for i in self.p.statement(root).lhs.indices:
                cands.append(Schedule(sched.orders, ((root, i, f),), sched.blocks))
            f *= 2
        return self._better(region, (sched, m), cands)

    def _better(self, region, best: tuple[Schedule, Metrics],
                cands) -> tuple[Schedule, Metrics]:
        """The cheapest of `best` and the candidate schedules that compile."""
        for s in cands:
            try:
                got = self.ev.measure(region, s, True)
            except UserError:
                continue
            except BudgetSpent:
                break
            if self.value(got) < self.value(best[1]):
                best = (s, got)
        return best

    def block(self, region, sched: Schedule, m: Metrics) -> tuple[Schedule, Metrics]:
        """Block sizes of blocked input tensors only this region reads (with --size: from
        --data the files fix the block size)."""
        if self.ev.opt.data_dir is not None:
            return sched, m
        best = (sched, m)
        for t in self.p.tensors:
            if not t.format.blocked or t.name in self.p.assigned:
                continue
            readers = {s for s, reads in self.ev.reads.items() if t.name in reads}
            if not readers or not readers <= region:
                continue
            sizes = []
            for d in t.dims:
                sz = d if isinstance(d, int) else self.ev.opt.sizes.get(d)
                if sz is None:
                    d0 = next((x for x in self.p.dims if x.name == d), None)
                    sz = d0.size if d0 is not None else None
                sizes.append(sz)
            if any(s is None for s in sizes):
                continue
            base = best[0]
            best = self._better(region, best, (
                Schedule(base.orders, base.parallel,
                         tuple(sorted(dict(base.blocks, **{t.name: b}).items())))
                for b in (2, 4, 8, 16, 32, 64) if not any(sz % b for sz in sizes)))
        return best
