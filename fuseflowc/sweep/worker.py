"""One configuration, start to finish, in whatever process runs it: load the program with the
configuration's schedule, fuse with its order index, lower, run its opt pipeline, make or find
its data, estimate, simulate, check against the reference evaluator. The result is always a row
(a dict of results-file columns): a failure at any stage is recorded, never raised.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from pathlib import Path

from .. import pipeline
from ..diagnostics import UserError


class ConfigTimeout(BaseException):
    """Raised by the alarm when a configuration runs past its --timeout (a BaseException, so no
    `except Exception` on the way can swallow it)."""


@contextlib.contextmanager
def deadline(seconds: float | None):
    """Raise ConfigTimeout in this thread after `seconds` of wall time: by SIGALRM in the main
    thread (the local worker processes), else (a Dask worker's task thread) by an exception a
    timer thread posts to this one. Both interrupt Python code, as a Ctrl-C would; a call into
    C that does not return to Python is interrupted when it returns. A block that ends after
    its deadline (normally or by an error) raises ConfigTimeout even where the exception was
    swallowed on the way, so the outcome does not depend on where the deadline went off."""
    if not seconds:
        yield
        return
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        fired = []

        def fire(signum, frame):
            fired.append(signum)
            raise ConfigTimeout()
        old = signal.signal(signal.SIGALRM, fire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        except Exception as e:  # an error after the deadline went off (and was swallowed)
            if fired:
                raise ConfigTimeout() from e
            raise
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        if fired:  # it went off where exceptions are ignored (a GC callback, a __del__)
            raise ConfigTimeout()
        return
    with _thread_deadline(seconds):
        yield


@contextlib.contextmanager
def _thread_deadline(seconds: float):
    import ctypes

    target = threading.get_ident()
    lock = threading.Lock()
    state = {"done": False, "fired": False}
    post = ctypes.pythonapi.PyThreadState_SetAsyncExc   # (thread id, exception or NULL)

    stop = threading.Event()

    def fire():
        # Posted again until the block ends: an exception posted while the thread runs a
        # garbage-collector callback or a __del__ is swallowed there ("Exception ignored").
        if stop.wait(seconds):
            return
        for _ in range(_REPOSTS):
            with lock:
                if state["done"]:
                    return
                state["fired"] = True
                post(ctypes.c_ulong(target), ctypes.py_object(ConfigTimeout))
            if stop.wait(0.05):
                return
    timer = threading.Thread(target=fire, daemon=True, name="fuseflowc-deadline")
    try:
        timer.start()   # (inside the try: with a tiny timeout the exception may come here)
        yield
    except Exception as e:  # an error after the deadline went off (and was swallowed)
        if state["fired"]:
            raise ConfigTimeout() from e
        raise
    finally:
        while True:
            try:
                with lock:
                    state["done"] = True
                    stop.set()
                    if state["fired"]:
                        # posted but maybe not raised yet (the block ended first): withdraw
                        # it, so that it cannot go off later in code that does not expect it
                        post(ctypes.c_ulong(target), None)
                break
            except ConfigTimeout:  # it went off here, before the lock: close again
                continue
    if state["fired"]:
        # the deadline passed, but the exception was swallowed where exceptions are ignored (a
        # GC callback: seen on CI with a 0.1 ms timeout) and the block ended before a repost:
        # it still ran past its deadline
        raise ConfigTimeout()


#: How often the timeout exception is posted (every 50 ms) before the deadline gives up.
_REPOSTS = 100


def worker_init() -> None:
    """Pool initializer: Ctrl-C is the parent's business (it stops the workers itself); the
    stages are imported once here, so a --timeout does not count a worker's start-up."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import_stages()


def import_stages() -> None:
    """Everything a configuration runs, imported before its deadline starts: the pipeline's
    stages and the estimator (each row's est_* columns)."""
    pipeline.import_stages()
    import fuseflowc.estimate  # noqa: F401


def _first_line(e: UserError) -> str:
    return e.format().split("\n", 1)[0].removeprefix("fuseflowc: ").removeprefix("error: ")


def schedule_facts(program) -> tuple[str, str]:
    """The effective parallelization and blocking of a checked program, as text:
    ('Y:i=4', 'A=16'), '' when there is none. (Sorted, so equal schedules read the same.)"""
    from ..lang import ast
    par = sorted(f"{d.statement}:{d.index}={d.factor}" for d in program.directives
                 if isinstance(d, ast.Parallelize))
    blk = sorted(f"{d.tensor}={d.size}" for d in program.directives if isinstance(d, ast.Block))
    return ",".join(par), ",".join(blk)


def data_dir_for(config: dict, program, ctx: dict) -> Path:
    """The directory holding the configuration's input data: the spec's `dir`, or data made by
    gen-data's generator into the sweep's cache (keyed by the program's input declarations and
    the data set's parameters)."""
    base = Path(ctx["base"])
    src = config["data_source"]
    if "dir" in src:
        return base / src["dir"]
    target = Path(ctx["data_cache"]) / _data_key(program, src)
    if not target.is_dir():
        _generate(program, src, base, target)
    return target


def _data_key(program, src: dict) -> str:
    """The cache key of a generated data set: what the generator reads of the program (its
    inputs' declarations and the dims' fixed sizes), not the program itself: the fusion
    variants of a model share one data set, made once (a MAG-size graph takes a minute and
    half a gigabyte)."""
    inputs = set(program.inputs)
    decls = [(t.name, [str(d) for d in t.dims], t.format.name(), t.block)
             for t in program.specs() if t.name in inputs]
    dims = [(d.name, d.size) for d in program.dims]
    return hashlib.sha256(json.dumps([decls, dims, src], sort_keys=True,
                                     default=str).encode()).hexdigest()[:16]


def _generate(program, src: dict, base: Path, target: Path) -> None:
    """Make the data set `src` of gen-data parameters for `program` at `target` (beside it
    first, then renamed: several workers may race to make it, the first complete directory
    wins)."""
    from ..data.graphs import is_named_source
    from ..data.io import save_tensors
    from ..reference.gendata import generate, parse_densities, parse_sizes

    # a data set serves every program of the grid: sizes of dims and densities of inputs a
    # program does not have are for the other programs
    dims = {d.name for d in program.dims}
    sizes = parse_sizes(program, [f"{k}={v}" for k, v in src.get("sizes", {}).items()
                                  if k in dims])
    dens = src.get("density")
    items = [] if dens is None else [str(dens)] if not isinstance(dens, dict) else \
        [f"{k}={v}" for k, v in dens.items() if k in set(program.inputs)]
    graph = src.get("graph")
    if graph is not None and not is_named_source(graph):
        graph = str(base / graph)
    tensors, _ = generate(program, sizes, parse_densities(program, items), src.get("seed", 0),
                          graph, src.get("normalize", "gcn"), src.get("graph_tensor"),
                          src.get("feature_tensor"))
    tmp = Path(tempfile.mkdtemp(prefix=".gen-", dir=target.parent))
    save_tensors(tmp, tensors)
    try:
        os.rename(tmp, target)
    except OSError:  # another worker made it first
        shutil.rmtree(tmp, ignore_errors=True)


#: The row columns `estimate_cost` fills, in its result's order.
ESTIMATE_KEYS = ("est_flops", "est_bytes", "est_cycles")


def estimate_cost(module, data_dir: Path, arch, flops_per_cycle: float = 1.0
                  ) -> tuple[float, float, float] | None:
    """(FLOPs, bytes, cycles) estimated without simulating, or None without the estimator.

    cycles are the estimator's cycle model (fuseflowc/estimate/timing.py: per kernel, the
    pipeline's busiest node and latencies, at least bytes / memory.bandwidth; kernels add) for
    the configuration's arch. `flops_per_cycle` (the spec key) is no longer used: the
    simulator's ALUs fire once per cycle whatever their FLOPs, and so does the model; it stays
    accepted so that older specs still load."""
    try:
        from fuseflowc.estimate import DataStats, estimate_module
    except ImportError:
        return None
    stats = DataStats.from_dir(data_dir, module, arch.element_bytes)
    est = estimate_module(module, stats, arch)
    return float(est.total.flops), float(est.total.bytes), float(est.total.cycles)


def run_config(config: dict, ctx: dict) -> dict:
    """Run one configuration (see the module docstring); returns its row. ctx: base (the spec's
    directory), data_cache, check, timeout, max_cycles, flops_per_cycle, estimate_only."""
    row = {k: v for k, v in config.items()}
    start = time.perf_counter()
    stage = ["load"]
    try:
        with deadline(ctx.get("timeout")):
            _run(config, ctx, row, stage)
    except ConfigTimeout:
        row["status"] = "timeout"
        row["error"] = f"timeout after {ctx['timeout']:g} s (during {stage[-1]})"
    except UserError as e:
        row["status"] = "error"
        row["error"] = f"{stage[-1]}: {_first_line(e)}"
    except Exception as e:  # a bug in fuseflowc: still one row, the sweep goes on
        row["status"] = "error"
        row["error"] = f"{stage[-1]}: internal error: {type(e).__name__}: {e}"
    if not ctx.get("estimate_only"):
        row["wall_seconds"] = round(time.perf_counter() - start, 3)
    return row


def _run(config: dict, ctx: dict, row: dict, stage: list) -> None:
    from fuseflowc.sim.arch import Arch

    path = os.path.normpath(os.path.join(ctx["base"], config["program"]))
    program = pipeline.load_program(path, tuple(config["schedule"]), config.get("unfused", False))
    row["parallel"], row["block"] = schedule_facts(program)
    module = pipeline.compile(program, compile_options(config), path, stage).module
    stage.append("arch")
    arch = Arch.load(None, tuple(config["arch"]))
    stage.append("data")
    data_dir = data_dir_for(config, program, ctx)
    stage.append("estimate")
    if not all(k in row for k in ESTIMATE_KEYS):  # else the --prune phase estimated it
        est = estimate_cost(module, data_dir, arch, ctx.get("flops_per_cycle", 1.0))
        if est is not None:
            row.update(zip(ESTIMATE_KEYS, est))
    if ctx.get("estimate_only"):
        row["status"] = "estimated"
        return
    if config.get("estimate_only"):
        # the spec says it is beyond simulation (too large for the machine or the budget):
        # the estimate is its result, and the reason is recorded with it
        if not all(row.get(k) is not None for k in ESTIMATE_KEYS[:2]):
            raise UserError("estimate_only: the estimator (fuseflowc.estimate) is not "
                            "installed, so there is nothing to record")
        row["status"] = "estimated"
        row["error"] = f"estimated, not simulated: {config['estimate_only']}"
        return
    stage.append("simulate")
    _simulate(module, program, data_dir, arch, ctx, row, stage)


def compiled_key(config: dict, ctx: dict) -> str | None:
    """The content hash of what a configuration's run depends on (sweep.reuse.run_key: its
    compiled module's text, its program's text, schedule, data set and arch), or None when it
    does not compile (its own run will say why). ctx: base (the spec's directory). No
    deadline: a configuration that compiles past its timeout times out in its own run."""
    from ..samml.printer import print_module
    from .reuse import run_key

    path = os.path.normpath(os.path.join(ctx["base"], config["program"]))
    try:
        program = pipeline.load_program(path, tuple(config["schedule"]),
                                        config.get("unfused", False))
        module = pipeline.compile(program, compile_options(config), path).module
        text = Path(path).read_text(encoding="utf-8")
    except (UserError, OSError, UnicodeDecodeError):
        return None
    return run_key(config, print_module(module), text)


def count_orders(config: dict, ctx: dict) -> dict[str, int] | None:
    """Region name -> its number of valid orders (of the chosen region only, with an
    order_region), in the fused program's order, of a pending configuration
    (fuseflowc.sweep.grid.is_pending); None when the program does not compile this far (its
    rows will say why). What `orders = "all"` and `"product"` count. ctx: base (the spec's
    directory). No deadline: the count is the grid, not one configuration's run."""
    path = os.path.normpath(os.path.join(ctx["base"], config["program"]))
    options = pipeline.CompileOptions(
        schedule=tuple(config["schedule"]), unfused=config["unfused"],
        inline_widened=config["inline_widened"], free_input_order=config["free_input_order"],
        share=config["share"])
    try:
        program = pipeline.load(path, options, "program").ir
        rows = pipeline.region_orders(program, options, path, config["order_region"])
    except UserError:
        return None
    return {r["region"]: r["orders"] for r in rows} or None


def compile_options(config: dict) -> "pipeline.CompileOptions":
    """How a configuration is compiled: its fuse options (the order index, or each region's
    with `orders = "product"`), lowering verified, its opt pipeline (run even when empty, as
    `fuseflowc opt` would)."""
    return pipeline.CompileOptions(
        order=config["order"], order_region=config["order_region"],
        orders=config.get("orders") or None,
        inline_widened=config["inline_widened"],
        free_input_order=config.get("free_input_order", False),
        share=config.get("share", False), passes=config["pipeline"])


def _simulate(module, program, data_dir: Path, arch, ctx: dict, row: dict, stage: list) -> None:
    from fuseflowc.sim.energy import add_energy
    from fuseflowc.sim.report import result_stats

    inputs, sizes = pipeline.load_data(module, data_dir)
    result = pipeline.simulate(module, inputs, sizes, arch, max_cycles=ctx.get("max_cycles"))
    stats = add_energy(result_stats(result), module, arch)
    total = stats["total"]
    row["energy"] = total["energy_pj"]["total"]
    row["edp"] = total["edp"]
    row["cycles"] = total["cycles"]
    row["kernel_cycles"] = {k["graph"]: k["cycles"] for k in stats["kernels"]}
    row["flops"] = total["flops"]
    for which, short in (("bytes_read", "read"), ("bytes_written", "written")):
        for part in ("seg", "crd", "vals"):
            row[f"bytes_{short}_{part}"] = total[which][part]
    row["bytes"] = total["bytes_read"]["total"] + total["bytes_written"]["total"]
    row["status"] = "ok"
    if not ctx.get("check", True):
        row["check"] = "skipped"
        return
    stage.append("check")
    # only the outputs are compared: the simulation's inputs and intermediates go before the
    # reference evaluator makes its own (at the paper's sizes each set is gigabytes)
    result.tensors = pipeline.written_outputs(module, result)
    del inputs
    declared = {t.name for t in module.tensors if t.role == "output"}
    problems = pipeline.check(module, result,
                              pipeline.reference(program, data_dir, sizes, keep=declared))
    if problems:
        row["check"] = "mismatch"
        row["status"] = "error"
        row["error"] = "check: outputs differ from the reference: " + "; ".join(problems[:3])
    else:
        row["check"] = "match"
