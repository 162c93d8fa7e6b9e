"""Running a sweep: skip the configurations already in the results file, optionally prune by
the estimate, run the rest in worker processes, append one row each, and finally put the file's
rows in grid order.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from ..diagnostics import UserError
from .grid import count_tasks, expand, is_pending, task_key
from .results import ResultsWriter, read_rows_if_any, rewrite_sorted
from .reuse import REUSABLE, candidates, leaders, repeated_row
from .spec import SweepSpec
from .summary import order_label
from .worker import ESTIMATE_KEYS, compiled_key, count_orders, run_config, worker_init


@dataclass
class SweepSummary:
    """What a run did: counts by status, and the rows that failed."""

    total: int = 0
    skipped: int = 0                                # already in the results file
    counts: dict = field(default_factory=dict)      # status -> rows written now
    failed: list = field(default_factory=list)      # rows with status error/timeout
    unapplied: int = 0     # rows whose parallelize directives no `schedule` pass applied
    unsuccessful: dict = field(default_factory=dict)  # status -> rows of the grid in the file
    reused: int = 0        # rows written now that repeat another's run (sweep.reuse)

    def add(self, row: dict) -> None:
        self.counts[row["status"]] = self.counts.get(row["status"], 0) + 1
        if row.get("reused"):
            self.reused += 1
        if row["status"] in ("error", "timeout"):
            self.failed.append(row)
        if row.get("parallel") and not re.search(r"(^|,)\s*schedule\b", row["pipeline"] or ""):
            self.unapplied += 1

    def text(self, results: str, strict: bool = False) -> str:
        """The closing lines on stderr (no wall times: the same sweep prints the same); under
        `strict` the last says the run exits 1, not that --strict would make it."""
        parts = [f"{self.counts.get(s, 0)} {s}"
                 for s in ("ok", "error", "timeout", "pruned", "estimated") if self.counts.get(s)]
        lines = [f"{describe(r)}: {r['status']}: {r['error']}" for r in self.failed]
        if self.unapplied:
            lines.append(f"note: {self.unapplied} configuration(s) parallelize in their schedule "
                         f"but their pipeline has no `schedule` pass, so the directives were not "
                         f"applied (add pipelines = [\"schedule\"]; see docs/opt.md)")
        reused = (f" ({self.reused} repeating another configuration's run, which compiles "
                  f"the same)" if self.reused else "")
        lines.append(f"sweep: {self.total} configurations: " + (", ".join(parts) or "none run")
                     + reused + f"; {self.skipped} already in {results}")
        if self.failures:
            what = ", ".join(f"{n} {s}" for s, n in sorted(self.unsuccessful.items()))
            lines.append(f"sweep: {self.failures} configuration(s) of the grid failed in "
                         f"{results} ({what})"
                         + ("; exit 1 (--strict)" if strict else "; --strict makes this exit 1"))
        return "\n".join(lines)

    @property
    def failures(self) -> int:
        """Rows of the grid (this run's and earlier ones') with status error or timeout."""
        return sum(self.unsuccessful.values())


def describe(config: dict) -> str:
    """A short human name of a configuration, e.g. `3f2a9c0d1e2b gcn/full order 1 karate`
    (a pending one, whose orders are not counted yet, has no id: `gcn/full order all
    karate`)."""
    bits = [] if is_pending(config) else [config["id"]]
    bits.append(f"{config['model']}/{config['variant']}")
    if config.get("inline_widened"):
        bits.append("inline-widened")
    if config.get("free_input_order"):
        bits.append("free-input-order")
    if config.get("share"):
        bits.append("share")
    if config.get("unfused"):
        bits.append("unfused")
    bits.append(f"order {order_label(config)}")
    if config.get("params"):
        bits.append(" ".join(f"{k}={v}" for k, v in sorted(config["params"].items())))
    if config.get("pipeline"):
        bits.append(f"-p {config['pipeline']}")
    bits.append(config["data"])
    if config.get("arch"):
        bits.append(" ".join(f"--set {a}" for a in config["arch"]))
    return " ".join(bits)


def _context(spec: SweepSpec, cache: str, timeout: float | None, estimate_only=False) -> dict:
    # paths as the user wrote them (relative to the current directory), so that error texts
    # in rows are the same wherever the repository lives
    return {"base": os.path.dirname(spec.path) or ".", "data_cache": cache,
            "check": spec.check, "timeout": timeout if timeout is not None else spec.timeout,
            "max_cycles": spec.max_cycles, "flops_per_cycle": spec.flops_per_cycle,
            "estimate_only": estimate_only}


def make_pool(executor: str, jobs: int):
    """The executor of `--executor`: `local` (a process pool of `jobs` workers, or this process
    when jobs == 1) or `dask://HOST:PORT` (fuseflowc.sweep.cluster)."""
    from .cluster import DaskPool, parse_executor

    kind, address, connect_timeout = parse_executor(executor)
    if kind == "dask":
        return DaskPool(executor, address, connect_timeout)
    return _Pool(jobs)


class _Pool:
    """Runs configurations in order (jobs == 1, in this process) or in worker processes, and
    yields rows as they finish. Ctrl-C stops the workers at once."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.pool = None
        if jobs > 1:
            import multiprocessing as mp
            method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
            self.pool = ProcessPoolExecutor(jobs, mp_context=mp.get_context(method),
                                            initializer=worker_init)

    def rows(self, configs: list[dict], ctx: dict):
        for c, got in self._map(run_config, configs, ctx, lambda c: c["id"]):
            if isinstance(got, Exception):  # a worker died (e.g. killed by the OS): still a row
                got = {**c, "status": "error",
                       "error": f"worker: {type(got).__name__}: {got}".rstrip(": ")}
            yield got

    def counts(self, tasks: list[dict], ctx: dict):
        """(task, its region counts) for each pending configuration (grid.count_tasks), as
        they finish: worker.count_orders in the workers."""
        for t, got in self._map(count_orders, tasks, ctx, task_key):
            if isinstance(got, BrokenProcessPool):  # a worker died (e.g. killed by the OS)
                raise UserError(f"{describe(t)}: counting its orders: worker: {got}") from None
            if isinstance(got, Exception):   # a bug in fuseflowc, as in this process
                raise got
            yield t, got

    def keys(self, configs: list[dict], ctx: dict):
        """(configuration, its run key: worker.compiled_key) as they finish; a worker that
        died gives None (the configuration then runs on its own, and its row says why)."""
        for c, got in self._map(compiled_key, configs, ctx, lambda c: c["id"]):
            if isinstance(got, BrokenProcessPool):
                got = None
            elif isinstance(got, Exception):  # a bug in fuseflowc, as in this process
                raise got
            yield c, got

    def _map(self, fn, items: list[dict], ctx: dict, key):
        """(item, fn(item, ctx)) as they finish (those finished together in `key` order); in
        a worker process, the exception it raised instead of a result."""
        if self.pool is None:
            for x in items:
                yield x, fn(x, ctx)
            return
        pending = {self.pool.submit(fn, x, ctx): x for x in items}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=lambda f: key(pending[f])):
                x = pending.pop(fut)
                try:
                    got = fut.result()
                except Exception as e:
                    got = e
                yield x, got

    def close(self, kill: bool = False) -> None:
        """Stop the workers (at once with `kill`); closing twice is harmless."""
        if self.pool is None:
            return
        pool, self.pool = self.pool, None
        if kill:
            for p in list(getattr(pool, "_processes", {}).values()):
                p.terminate()
        pool.shutdown(wait=not kill, cancel_futures=True)


class _Progress:
    """A rich progress bar on stderr, transient, only when stderr is a terminal."""

    def __init__(self, total: int, what: str):
        self.p = None
        if sys.stderr.isatty() and total:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )
            self.p = Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(),
                              TimeElapsedColumn(), TextColumn("{task.fields[last]}"),
                              transient=True, console=Console(file=sys.stderr))
            self.task = self.p.add_task(what, total=total, last="")
            self.p.start()

    def step(self, last: str) -> None:
        """One more done; `last` says what."""
        if self.p is not None:
            self.p.update(self.task, advance=1, last=last)

    def close(self) -> None:
        if self.p is not None:
            self.p.stop()


def _finished(row: dict) -> str:
    return f"{row['model']}/{row['variant']} {row['status']}"


def prune_rows(estimated: list[dict], done: list[dict], factor: float) -> dict[str, str]:
    """id -> reason for every estimated configuration whose estimated cycles exceed `factor`
    times the best estimate among configurations of the same model, data set and arch
    (estimated now or already in the results file). Rows without an estimate are kept."""
    best: dict[tuple, tuple[float, str]] = {}

    def group(r):
        return (r["model"], r["data"], json.dumps(r["arch"]))
    for r in list(done) + list(estimated):
        e = r.get("est_cycles")
        if e is None:
            continue
        g = group(r)
        if g not in best or (e, r["id"]) < best[g]:
            best[g] = (e, r["id"])
    out = {}
    for r in estimated:
        e = r.get("est_cycles")
        if e is None:
            continue
        b, bid = best[group(r)]
        if e > factor * b:
            out[r["id"]] = (f"estimated {e:.0f} cycles is {e / b:.2f}x the best estimate "
                            f"({b:.0f} cycles, {bid}) for {r['model']} on {r['data']}; "
                            f"--prune {factor:g}")
    return out


def run_sweep(spec: SweepSpec, results: str, jobs: int = 1, prune: float | None = None,
              timeout: float | None = None, executor: str = "local") -> SweepSummary:
    """Run every configuration of `spec` not yet in `results` on `executor` (`local`, or
    `dask://HOST:PORT`); returns the summary."""
    from .cluster import parse_executor
    parse_executor(executor)  # a bad --executor is an error before anything runs
    grid = expand(spec)  # (compiles nothing: orders = "all" and "product" are counted below)
    done_rows = read_rows_if_any(results)
    done = {r["id"] for r in done_rows}
    if prune is not None:
        try:
            import fuseflowc.estimate  # noqa: F401
        except ImportError:
            raise UserError("--prune needs the estimator (fuseflowc.estimate), which this "
                            "installation lacks") from None
    if spec.max_jobs is not None and jobs > spec.max_jobs:
        jobs = spec.max_jobs        # the spec's memory bound (its `max_jobs`) wins over -j
    # a cluster that cannot be reached is an error before the results file is touched
    pool = make_pool(executor, jobs)
    finished = False
    try:
        # so is a grid that counts too many orders
        configs = _counted(spec, grid, pool, timeout)
        todo = [c for c in configs if c["id"] not in done]
        summary = SweepSummary(total=len(configs), skipped=len(configs) - len(todo))
        writer = ResultsWriter(results)
        try:
            # the workers must be gone before the data cache is removed: stop them in the block
            with tempfile.TemporaryDirectory(prefix="fuseflowc-sweep-",
                                             ignore_cleanup_errors=True) as cache:
                try:
                    if prune is not None and todo:
                        todo = _prune_phase(spec, todo, done_rows, prune, pool, cache,
                                            timeout, writer, summary)
                    shared = _shared_runs(spec, configs, todo, done_rows, pool, timeout)
                    _run_rows(pool, *shared, _context(spec, cache, timeout), writer, summary)
                    finished = True
                finally:
                    pool.close(kill=not finished)
        finally:
            writer.close()
    finally:
        pool.close(kill=not finished)  # (a no-op when closed above)
    rewrite_sorted(results, [c["id"] for c in configs])
    ids = {c["id"] for c in configs}
    for r in read_rows_if_any(results):
        if r["id"] in ids and r["status"] in ("error", "timeout"):
            summary.unsuccessful[r["status"]] = summary.unsuccessful.get(r["status"], 0) + 1
    return summary


def _shared_runs(spec: SweepSpec, configs: list[dict], todo: list[dict], done_rows: list[dict],
                 pool, timeout: float | None
                 ) -> tuple[list[dict], dict[str, list[dict]], list[dict]]:
    """Which configurations of `todo` run, and which repeat another's run (sweep.reuse):
    (the configurations to run; leader id -> the configurations of `todo` repeating a leader
    that runs now, in grid order; the rows of those whose leader's row is in the results file
    already). A leader is the first configuration of its run key in grid order, so the same
    row is simulated in every run; a configuration whose leader neither runs now nor has a
    simulated row (pruned, estimated) runs itself."""
    cands = candidates(configs)
    pending = {c["id"] for c in todo}
    if not any(c["id"] in pending for c in cands):
        return todo, {}, []
    keys = dict((c["id"], k) for c, k in pool.keys(cands, _context(spec, "", timeout)))
    lead = leaders(configs, keys)
    done = {r["id"]: r for r in done_rows}
    runs = {c["id"] for c in todo if c["id"] not in lead}
    run, follow, copied = [], {}, []
    for c in todo:
        leader = lead.get(c["id"])
        if leader in runs:
            follow.setdefault(leader, []).append(c)
        elif leader in done and done[leader].get("status") in REUSABLE:
            copied.append(repeated_row(c, done[leader]))
        else:
            run.append(c)
    return run, follow, copied


def _run_rows(pool, todo: list[dict], follow: dict[str, list[dict]], copied: list[dict],
              ctx: dict, writer: ResultsWriter, summary: SweepSummary) -> None:
    """Write the rows `copied` (repeating a row already in the file), then run `todo`, writing
    each row as it finishes followed by the rows repeating it (`follow`)."""
    progress = _Progress(len(todo) + len(copied) + sum(map(len, follow.values())), "sweep")

    def emit(row):
        writer.append(row)
        summary.add(row)
        progress.step(_finished(row))
    try:
        for row in copied:
            emit(row)
        for row in pool.rows(todo, ctx):
            emit(row)
            for c in follow.pop(row["id"], []):
                emit(repeated_row(c, row))
    finally:
        progress.close()


def _counted(spec: SweepSpec, grid: list[dict], pool, timeout: float | None) -> list[dict]:
    """The configurations of `grid` (spec's expanded), its pending ones' orders counted by the
    pool: in its workers, once per program and schedule, so this process compiles nothing
    (with -j 1 the pool is this process)."""
    tasks = count_tasks(grid)
    if not tasks:
        return grid
    counts: dict[str, dict | None] = {}
    progress = _Progress(len(tasks), "orders")
    try:
        for task, got in pool.counts(tasks, _context(spec, "", timeout)):
            counts[task_key(task)] = got
            progress.step(f"{task['model']}/{task['variant']} counted")
    finally:
        progress.close()
    return expand(spec, lambda task: counts[task_key(task)])


def _prune_phase(spec, todo, done_rows, factor, pool, cache, timeout, writer, summary):
    """Estimate every configuration to run; write the pruned ones (and those that fail to
    compile: running them again would fail the same way); return the rest, each with its
    estimate (`ESTIMATE_KEYS`)."""
    ctx = _context(spec, cache, timeout, estimate_only=True)
    progress = _Progress(len(todo), "estimate")
    estimated: dict[str, dict] = {}
    try:
        for row in pool.rows(todo, ctx):
            estimated[row["id"]] = row
            progress.step(_finished(row))
    finally:
        progress.close()
    ok = [estimated[c["id"]] for c in todo if estimated[c["id"]].get("status") == "estimated"]
    reasons = prune_rows(ok, done_rows, factor)
    keep = []
    for c in todo:
        row = estimated[c["id"]]
        if row.get("status") != "estimated":
            writer.append(row)
            summary.add(row)
        elif c["id"] in reasons:
            row["status"] = "pruned"
            row["error"] = reasons[c["id"]]
            writer.append(row)
            summary.add(row)
        else:  # its estimate goes along, so that the run does not estimate it again
            keep.append({**c, **{k: row[k] for k in ESTIMATE_KEYS if k in row}})
    return keep
