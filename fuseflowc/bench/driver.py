"""The benchmark driver: run every part of `make bench` as separate fuseflowc processes, time
each part, and write the summary.

    python -m fuseflowc.bench --specs ir_examples/bench --out results --jobs 2

Parts, in order (each one's wall time goes to OUT/timings.json):
- every spec SPECS/*.toml (sorted): `fuseflowc sweep SPEC -o OUT/<name>.csv -j JOBS`, then
  `fuseflowc report OUT/<name>.csv -o OUT/<name>` (tables and, with matplotlib, plots);
- `orders`: `fuseflowc orders P --json` with and without `--free-input-order` for the GNN
  variants (Table 3), into OUT/orders.json;
- `compile`: `python -m fuseflowc.bench.compile_time --runs N` (compile times), its lines in
  OUT/compile.txt;
- the summary: OUT/SUMMARY.md (fuseflowc.bench.summary), also printed; with `--scale paper`
  (`make bench-paper`: ir_examples/bench/paper/, Figure 12 at the paper's sizes) only the
  specs run, and the page is OUT/PAPER.md (fuseflowc.bench.paper) instead; with `--scale
  artifact` (`make bench-artifact`: ir_examples/bench/artifact/, the artifact's configuration)
  only the specs run, and the page is OUT/ARTIFACT.md (fuseflowc.bench.artifact), the table
  PAPER.md also shows when OUT is its `artifact/` directory.

A sweep resumes from the rows already in its results file, so an interrupted run continues
where it stopped; a part that fails is recorded in the timings and the summary, and the other
parts still run. `--only NAME` runs some parts (spec names, `orders`, `compile`);
`--summary-only` only rewrites the summary from what is in OUT.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from fuseflowc.bench.exe import fuseflowc_command

# Table 3: the GNN programs whose dataflow orders are counted, with the fuse flags the bench
# compiles them with (the paper's fusion: intermediates inlined and widened).
ORDER_PROGRAMS = [
    ("gcn partial", "ir_examples/models/gcn/gcn_partial.ff", ["--inline-widened"]),
    ("gcn full", "ir_examples/models/gcn/gcn_full.ff", ["--inline-widened"]),
    ("graphsage partial", "ir_examples/models/graphsage/graphsage_partial.ff",
     ["--inline-widened"]),
    ("graphsage full", "ir_examples/models/graphsage/graphsage_full.ff", ["--inline-widened"]),
    ("nested_matmul fused", "ir_examples/kernels/nested_matmul_sweep.ff", []),
]


def _timed(cmd: list[str], **kw) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, **kw)
    return time.perf_counter() - start, proc


def run_spec(spec: Path, out: Path, jobs: int) -> dict:
    """Sweep one spec into OUT/<name>.csv and report it into OUT/<name>/; returns its timing
    record {part, seconds, status}."""
    name = spec.stem
    results = out / f"{name}.csv"
    print(f"bench: {name}: fuseflowc sweep {spec} -o {results} -j {jobs}", file=sys.stderr,
          flush=True)
    secs, proc = _timed([*fuseflowc_command(), "sweep", str(spec), "-o", str(results), "-j", str(jobs)])
    status = "ok" if proc.returncode == 0 else f"sweep exit {proc.returncode}"
    if results.exists():
        rep = subprocess.run([*fuseflowc_command(), "report", str(results), "-o", str(out / name)],
                             capture_output=True, text=True)
        if rep.returncode != 0:
            status += f"; report exit {rep.returncode}"
    print(f"bench: {name}: {secs:.1f} s ({status})", file=sys.stderr, flush=True)
    return {"part": name, "seconds": round(secs, 1), "status": status}


def _order_product(text: str) -> tuple[int, int]:
    """(product of the regions' order counts, number of regions) from `orders --json`."""
    regions = json.loads(text)["regions"]
    total = 1
    for r in regions:
        total *= int(r["orders"])
    return total, len(regions)


def run_orders(out: Path, root: Path) -> dict:
    """Table 3: order counts with and without --free-input-order, into OUT/orders.json."""
    start = time.perf_counter()
    table, status = [], "ok"
    for label, path, flags in ORDER_PROGRAMS:
        entry = {"program": label, "path": path, "flags": flags}
        for key, extra in (("constrained", []), ("free", ["--free-input-order"])):
            proc = subprocess.run([*fuseflowc_command(), "orders", str(root / path), "--json", *flags, *extra],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                status = "error"
                entry[key] = None
                entry[f"{key}_error"] = proc.stderr.strip().splitlines()[:1]
                continue
            entry[key], entry["regions"] = _order_product(proc.stdout)
        table.append(entry)
    (out / "orders.json").write_text(json.dumps(table, indent=1) + "\n")
    secs = time.perf_counter() - start
    print(f"bench: orders: {secs:.1f} s ({status})", file=sys.stderr, flush=True)
    return {"part": "orders", "seconds": round(secs, 1), "status": status}


def run_compile(out: Path, runs: int) -> dict:
    """Compile times: bench_compile's lines into OUT/compile.txt."""
    print(f"bench: compile: python -m fuseflowc.bench.compile_time --runs {runs}",
          file=sys.stderr, flush=True)
    secs, proc = _timed([sys.executable, "-m", "fuseflowc.bench.compile_time", "--runs",
                         str(runs)], capture_output=True, text=True)
    (out / "compile.txt").write_text(proc.stdout)
    status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
    print(f"bench: compile: {secs:.1f} s ({status})", file=sys.stderr, flush=True)
    return {"part": "compile", "seconds": round(secs, 1), "status": status}


def _commit_line(root: Path) -> str:
    """'Commit abc1234 (date UTC).' of the checkout the driver runs from, when it is a git
    checkout (the page says what produced it)."""
    try:
        proc = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%h %cd",
                               "--date=format:%Y-%m-%d"], capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.SubprocessError):
        return ""
    if proc.returncode != 0 or not proc.stdout.strip():
        return ""
    commit, date = proc.stdout.split()
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return f"Commit {commit}{' (with uncommitted changes)' if dirty else ''} of {date}; run " \
           f"ended {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."


def _peak_rss_gb() -> float:
    """The largest resident set of any process this run waited for (sweeps and their workers:
    a sweep waits for its workers, so their peaks reach here), in GB."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20   # Linux: KB


def _clock(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    from .artifact import write_artifact
    from .paper import write_paper
    from .summary import write_summary

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--specs", default="ir_examples/bench", help="directory of sweep specs")
    ap.add_argument("--out", default="results", help="results directory")
    ap.add_argument("--jobs", "-j", type=int, default=2)
    ap.add_argument("--compile-runs", type=int, default=3)
    ap.add_argument("--scale", default="full",
                    help="a label for the summary (full, quick); `paper` runs only the specs "
                         "and writes OUT/PAPER.md (Figure 12 against the paper) instead; "
                         "`artifact` runs only the specs and writes OUT/ARTIFACT.md (Figure 12 "
                         "against the artifact's plotted figures)")
    ap.add_argument("--only", action="append", default=[],
                    help="run only these parts (spec names, orders, compile); repeatable")
    ap.add_argument("--summary-only", action="store_true")
    a = ap.parse_args(argv)

    root = Path(__file__).resolve().parent.parent.parent
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    specs = sorted(Path(a.specs).glob("*.toml"))
    if not specs:
        print(f"bench: no specs in {a.specs}", file=sys.stderr)
        return 1
    tfile = out / "timings.json"
    timings = json.loads(tfile.read_text()) if tfile.exists() else {}
    wanted = set(a.only)

    def want(part: str) -> bool:
        return not a.summary_only and (not wanted or part in wanted)

    start = time.perf_counter()
    for spec in specs:
        if want(spec.stem):
            timings[spec.stem] = run_spec(spec, out, a.jobs)
            tfile.write_text(json.dumps(timings, indent=1, sort_keys=True) + "\n")
    # the paper scale is Figure 12 alone: order counts and compile times do not depend on the
    # data's size (`make bench` has them)
    paper = a.scale in ("paper", "artifact")
    if want("orders") and not paper:
        timings["orders"] = run_orders(out, root)
    if want("compile") and not paper:
        timings["compile"] = run_compile(out, a.compile_runs)
    if not a.summary_only:
        secs = time.perf_counter() - start
        peak = _peak_rss_gb()
        # the long set (SPECS/long, `make bench-paper-long`) writes into the same directory:
        # its total is its own, beside the 60-minute set's
        total = "total-long" if Path(a.specs).name == "long" else "total"
        timings[total] = {"part": total, "seconds": round(secs, 1), "peak_rss_gb": peak,
                          "status": "ok" if not wanted else "partial (--only)"}
        print(f"bench: wall {_clock(secs)}, peak RSS {peak:.1f} GB (the largest process)",
              file=sys.stderr, flush=True)
    tfile.write_text(json.dumps(timings, indent=1, sort_keys=True) + "\n")
    if a.scale == "artifact":
        text = write_artifact(out, _commit_line(root))
    elif paper:
        # the long set's rows (SPECS/long/, `make bench-paper-long`) join the table once run
        text = write_paper(out, [s.stem for s in specs], a.jobs, _commit_line(root), specs,
                           sorted(Path(a.specs).joinpath("long").glob("*.toml")))
    else:
        text = write_summary(out, [s.stem for s in specs], a.scale, a.jobs)
    print(text)
    return 0
