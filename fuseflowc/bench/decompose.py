"""Format decomposition benchmark (docs/bench.md, "Format decomposition"): two kernels, SpMM
C = A B and GCN's aggregation T = Â X, on every real graph, and SpMM with BigBird attention
masks, each with A as CSR, as pure BCSR(b) (every b of BLOCKS), as ELL (ell(c), c the longest
row) and decomposed (the advisor's best candidates), simulated and checked against the
reference evaluator of the CSR program.

Data (never copied into the repository): ../shared/data (SOURCES.md there): jazz, 1138_bus,
crack, ca-GrQc (Matrix Market) and Cora, Citeseer (npz adjacency). SpMM reads A as stored
(the file's values, 1 for pattern matrices and for the npz adjacencies); GCN's aggregation
reads Â = D^-1/2 (P + I) D^-1/2, P the graph's off-diagonal pattern made symmetric (the GCN
normalization, self loops added). Both are the same einsum (`C[i,k] = A[i,j] * B[j,k]`); they
differ in the matrix: Â has a full diagonal (one more entry a row, denser diagonal blocks) and
non-unit values. BigBird masks are made by fuseflowc.data.bigbird. Every matrix is padded with
empty rows and columns to a multiple of 16; B (or X) is N x K dense, seeded uniform, K = 16
(GCN's hidden width).

Every graph goes through `opt -p locate,cleanup` (dense operands located, not scanned). The
decomposed program is simulated twice: with the split (the `decompose` step counted) and with
--hoist (left out). Prints a markdown table and writes every figure as JSON.

With --rank it instead simulates every candidate the advisor costs (split hoisted) and compares
the top picks of the advisor's cycle proxy and of the estimator's Cost.cycles with the simulated
fastest.

Run: python -m fuseflowc.bench.decompose [--data ../shared/data] [--only NAME ...] [--kernel K]
[--top N] [--rank] [--set KEY=VALUE] [--out FILE] (or `make bench-decompose`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[2]
K = 16
PAD = 16
BLOCKS = (4, 8, 16)

SPMM = """dim I, J, K
tensor A[I, J] : {fa}
tensor B[J, K] : {fb}
tensor C[I, K] : {fb}
C[i,k] = A[i,j] * B[j,k]
"""

GRAPHS = [("jazz", "jazz.mtx"), ("1138_bus", "1138_bus.mtx"), ("crack", "crack.mtx"),
          ("ca-GrQc", "ca-GrQc.mtx"), ("cora", "cora.npz"), ("citeseer", "citeseer.npz")]
#: (name, kernel, source): SpMM then GCN's aggregation on every graph, then the BigBird masks.
SETS = ([(name, "spmm", src) for name, src in GRAPHS]
        + [(name, "gcn", src) for name, src in GRAPHS]
        + [("bigbird-512-b16", "bigbird", (512, 16, 3)), ("bigbird-512-b8", "bigbird", (512, 8, 3)),
           ("bigbird-512-b16+1%", "bigbird", (512, 16, 3, 0.01))])


def _pad(a: sp.csr_matrix) -> sp.csr_matrix:
    m = -(-a.shape[0] // PAD) * PAD
    n = -(-a.shape[1] // PAD) * PAD
    a = sp.csr_matrix(a)
    a.resize((m, n))
    return a


def _graph(source: str, data: Path) -> sp.csr_matrix:
    """The matrix of one graph file as stored (npz adjacency: its ones)."""
    if source.endswith(".npz"):
        z = np.load(data / source)
        n = int(z["adj_shape"][0])
        return sp.csr_matrix((np.ones(z["adj_indices"].shape[0]), z["adj_indices"],
                              z["adj_indptr"]), shape=(n, n))
    a = sp.csr_matrix(scipy.io.mmread(str(data / source)), dtype=np.float64)
    a.sum_duplicates()
    return a


def normalized_adjacency(a: sp.spmatrix) -> sp.csr_matrix:
    """GCN's Â = D^-1/2 (P + I) D^-1/2, P the off-diagonal pattern of `a` made symmetric and
    D the row sums of P + I (every degree at least 1: no division by zero)."""
    p = sp.csr_matrix(a, dtype=np.float64)
    p.data[:] = 1.0
    p = ((p + p.T) > 0).astype(np.float64)
    p.setdiag(0)
    p.eliminate_zeros()
    p = sp.csr_matrix(p + sp.identity(a.shape[0], format="csr"))
    d = np.asarray(p.sum(axis=1)).reshape(-1) ** -0.5
    out = sp.csr_matrix(sp.diags(d) @ p @ sp.diags(d))
    out.sort_indices()
    return out


def load(kind: str, source, data: Path) -> sp.csr_matrix:
    """The matrix A of one data set (padded)."""
    if kind == "spmm":
        return _pad(_graph(source, data))
    if kind == "gcn":
        return _pad(normalized_adjacency(_graph(source, data)))
    from fuseflowc.data.bigbird import bigbird_mask
    seq, block, n_random, *noise = source
    m = sp.csr_matrix(bigbird_mask(seq, block, n_random, seed=0), dtype=np.float64)
    if noise:   # plus token-level random attention: a uniform fraction of single entries
        extra = sp.random(seq, seq, density=noise[0], format="csr",
                          random_state=np.random.default_rng(7))
        extra.data[:] = 1.0
        m = sp.csr_matrix(((m + extra) > 0).astype(np.float64))
    m.data[:] = np.random.default_rng(3).uniform(-1, 1, m.nnz)   # attention probabilities
    return _pad(m)


def _program(text: str):
    from fuseflowc.diagnostics import Source
    from fuseflowc.lang.checker import check
    from fuseflowc.lang.parser import parse_program
    return check(parse_program(Source("<bench>", text)))


ARCH_SETS: list[str] = []   # --set KEY=VALUE overrides of sim/arch.toml


def simulate(text: str, a: sp.csr_matrix, b: np.ndarray, expected, hoist: bool = False) -> dict:
    """Compile (fuse, lower, opt locate,cleanup), simulate and check one program."""
    from fuseflowc import pipeline
    from fuseflowc.data.io import tensor_from_array, tensor_from_scipy
    from fuseflowc.sim.arch import Arch
    from fuseflowc.sim.report import result_stats
    prog = _program(text)
    specs = {s.name: s for s in prog.specs()}
    inputs = {"A": tensor_from_scipy(a, specs["A"]), "B": tensor_from_array(b, specs["B"])}
    module = pipeline.compile(prog, pipeline.CompileOptions(
        verify=False, passes="locate,cleanup")).module
    sizes = {"I": a.shape[0], "J": a.shape[1], "K": b.shape[1]}
    t0 = time.perf_counter()
    result = pipeline.simulate(module, inputs, sizes, Arch.load(None, ARCH_SETS), hoist=hoist)
    wall = time.perf_counter() - t0
    # C of the CSR program (the variants compute the same C)
    problems = pipeline.check(module, result, {"C": expected})
    if problems:
        raise SystemExit("check failed:\n" + "\n".join(problems))
    stats = result_stats(result)
    split = [k for k in stats["kernels"] if k["graph"].startswith("decompose ")]
    total = stats["total"]
    return {"cycles": total["cycles"],
            "bytes": total["bytes_read"]["total"] + total["bytes_written"]["total"],
            "flops": total["flops"],
            "split_cycles": sum(k["cycles"] for k in split),
            "split_bytes": sum(k["bytes_read"]["total"] + k["bytes_written"]["total"]
                               for k in split),
            "kernels": len(stats["kernels"]), "wall": round(wall, 2)}


def advise(a: sp.csr_matrix, top: int, blocks=BLOCKS) -> list[str]:
    """The advisor's best `top` decompositions of A for SpMM (split hoisted, as deployed)."""
    from fuseflowc.data.io import tensor_from_scipy
    from fuseflowc.plan.advisor import advise as rank
    from fuseflowc.sim.arch import Arch
    prog = _program(SPMM.format(fa="csr", fb="dense"))
    spec = next(s for s in prog.specs() if s.name == "A")
    ranked = rank(prog, "A", tensor_from_scipy(a, spec), {"K": K}, Arch.load(None, ARCH_SETS),
                  blocks, hoist=True)
    return [c.directive("A") for c in ranked if c.parts][:top]


def ell_width(a: sp.csr_matrix) -> int:
    """c of ell(c) for A: its longest row (ELL refuses a row longer than c); at least 1."""
    return max(1, int(np.diff(a.indptr).max())) if a.shape[0] else 1


def bench(name: str, kind: str, source, data: Path, top: int) -> dict:
    """Every variant of one data set."""
    return bench_matrix(name, kind, load(kind, source, data), top)


def bench_matrix(name: str, kind: str, a: sp.csr_matrix, top: int,
                 blocks=BLOCKS) -> dict:
    """Every variant (CSR, BCSR(b) for each b of `blocks`, ELL, the advisor's `top` best
    decompositions) of SpMM with one matrix A (rows and columns a multiple of every b),
    each simulated and checked against the reference evaluator of the CSR program."""
    from fuseflowc.data.io import tensor_from_scipy
    from fuseflowc.reference.evaluate import evaluate
    b = np.random.default_rng(1).uniform(-1, 1, (a.shape[1], K))
    csr_text = SPMM.format(fa="csr", fb="dense")
    prog = _program(csr_text)
    specs = {s.name: s for s in prog.specs()}
    from fuseflowc.data.io import tensor_from_array
    expected = evaluate(prog, {"A": tensor_from_scipy(a, specs["A"]),
                               "B": tensor_from_array(b, specs["B"])})["C"]
    row = {"name": name, "kind": kind, "n": a.shape[0], "nnz": int(a.nnz)}
    row["csr"] = simulate(csr_text, a, b, expected)
    row["ell"] = simulate(SPMM.format(fa=f"ell({ell_width(a)})", fb="dense"), a, b, expected)
    row["ell"]["width"] = ell_width(a)
    row["bcsr"] = {}
    for blk in blocks:
        text = SPMM.format(fa="bcsr", fb="bdense") + f"block A: {blk}\nblock B: {blk}\n" \
            f"block C: {blk}\n"
        row["bcsr"][blk] = simulate(text, a, b, expected)
    row["decomposed"] = []
    for directive in advise(a, top, blocks):
        text = csr_text + directive + "\n"
        r = simulate(text, a, b, expected)
        r["hoisted"] = simulate(text, a, b, expected, hoist=True)["cycles"]
        r["directive"] = directive
        row["decomposed"].append(r)
    row["checked"] = 2 + len(blocks) + 2 * len(row["decomposed"])   # every one: check match
    return row


KERNELS = {"spmm": "SpMM", "gcn": "GCN agg", "bigbird": "SpMM"}


def winner(row: dict) -> str:
    """The fastest of CSR, the best BCSR(b), ELL and the best hoisted decomposition (the first
    listed on a tie)."""
    bb = min(row["bcsr"], key=lambda k: row["bcsr"][k]["cycles"])
    cands = {"CSR": row["csr"]["cycles"], f"BCSR({bb})": row["bcsr"][bb]["cycles"]}
    if "ell" in row:
        cands[f"ELL({row['ell']['width']})"] = row["ell"]["cycles"]
    if row["decomposed"]:
        cands["decomposed"] = min(d["hoisted"] for d in row["decomposed"])
    return min(cands, key=cands.get)


def table(rows: list[dict]) -> str:
    """The markdown table of docs/bench.md."""
    out = ["| data | kernel | N | nnz | CSR cycles | CSR bytes | best BCSR(b) cycles | its bytes "
           "| ELL(c) cycles | its bytes | best decomposition | cycles (split) | split "
           "| cycles (hoisted) | bytes | wins |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        bb = min(r["bcsr"], key=lambda k: r["bcsr"][k]["cycles"])
        bc = r["bcsr"][bb]
        d = min(r["decomposed"], key=lambda x: x["hoisted"]) if r["decomposed"] else None
        dec = (f"`{d['directive'].split(': ', 1)[1]}` | {d['cycles']:,} | {d['split_cycles']:,} "
               f"| {d['hoisted']:,} | {d['bytes']:,}") if d else "- | - | - | - | -"
        ell = (f"{r['ell']['cycles']:,} (c={r['ell']['width']}) | {r['ell']['bytes']:,}"
               if "ell" in r else "- | -")
        out.append(f"| {r['name']} | {KERNELS.get(r['kind'], r['kind'])} | {r['n']} | "
                   f"{r['nnz']:,} | {r['csr']['cycles']:,} | "
                   f"{r['csr']['bytes']:,} | {bc['cycles']:,} (b={bb}) | {bc['bytes']:,} | "
                   f"{ell} | {dec} | {winner(r)} |")
    return "\n".join(out)


def rank_check(name: str, kind: str, a: sp.csr_matrix, blocks=BLOCKS) -> dict:
    """Every candidate the advisor costs for A (no decomposition included), simulated with the
    split hoisted and checked: the simulated fastest, the top pick of the advisor's cycle proxy
    and that of the estimator's cycle model (Cost.cycles), and each ranking's Spearman
    correlation with the simulated cycles."""
    from scipy.stats import spearmanr

    from fuseflowc.data.io import tensor_from_array, tensor_from_scipy
    from fuseflowc.plan.advisor import advise as rank
    from fuseflowc.reference.evaluate import evaluate
    from fuseflowc.sim.arch import Arch
    b = np.random.default_rng(1).uniform(-1, 1, (a.shape[1], K))
    csr_text = SPMM.format(fa="csr", fb="dense")
    prog = _program(csr_text)
    specs = {s.name: s for s in prog.specs()}
    expected = evaluate(prog, {"A": tensor_from_scipy(a, specs["A"]),
                               "B": tensor_from_array(b, specs["B"])})["C"]
    ranked = rank(prog, "A", tensor_from_scipy(a, specs["A"]), {"K": K},
                  Arch.load(None, ARCH_SETS), blocks, hoist=True)
    cands = []
    for c in ranked:
        text = csr_text + (c.directive("A") + "\n" if c.parts else "")
        cands.append({"directive": c.directive("A"), "proxy": c.proxy, "model": c.cost.cycles,
                      "simulated": simulate(text, a, b, expected, hoist=True)["cycles"]})
    sim_ = [c["simulated"] for c in cands]

    def top(key: str) -> dict:
        return min(cands, key=lambda c: c[key])   # first on a tie: the advisor's order

    def rho(key: str) -> float:
        r = spearmanr([c[key] for c in cands], sim_)[0] if len(cands) > 1 else 1.0
        return 1.0 if r != r else round(float(r), 2)   # NaN (constant ranks): no signal lost
    return {"name": name, "kind": kind, "candidates": cands, "best": top("simulated"),
            "proxy": top("proxy"), "model": top("model"),
            "rho_proxy": rho("proxy"), "rho_model": rho("model")}


def rank_table(rows: list[dict]) -> str:
    """The markdown table of rank_check rows: each ranking's top pick against the simulator."""
    def short(d: str) -> str:
        return d.split(": ", 1)[1] if ": " in d else d
    out = ["| data | kernel | candidates | simulated best | cycles | proxy's pick | cycles | "
           "Cost.cycles's pick | cycles | rank corr. proxy | rank corr. Cost.cycles |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = []
        for key in ("best", "proxy", "model"):
            cells += [f"`{short(r[key]['directive'])}`", f"{r[key]['simulated']:,}"]
        out.append(f"| {r['name']} | {KERNELS.get(r['kind'], r['kind'])} | "
                   f"{len(r['candidates'])} | " + " | ".join(cells)
                   + f" | {r['rho_proxy']} | {r['rho_model']} |")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(next(
        (p for p in (ROOT.parent / "shared" / "data", ROOT.parent.parent / "shared" / "data")
         if p.is_dir()), ROOT.parent / "shared" / "data")),
        help="the shared data directory (default ../shared/data)")
    ap.add_argument("--only", nargs="*", default=None,
                    help="data set names (jazz, cora, bigbird-512-b16, ...): both kernels of a graph")
    ap.add_argument("--kernel", choices=("spmm", "gcn"), default=None,
                    help="only this kernel on the graphs (BigBird masks count as SpMM)")
    ap.add_argument("--top", type=int, default=2, help="decompositions simulated per data set")
    ap.add_argument("--out", default=None, help="JSON file for every figure")
    ap.add_argument("--rank", action="store_true",
                    help="instead: simulate every candidate the advisor costs and compare the "
                         "top picks of its proxy and of Cost.cycles with the simulated best")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                    help="override an architecture value (as simulate --set)")
    args = ap.parse_args(argv)
    ARCH_SETS[:] = args.sets
    rows = []
    for name, kind, source in SETS:
        if args.only and name not in args.only:
            continue
        if args.kernel and (kind if kind != "bigbird" else "spmm") != args.kernel:
            continue
        t0 = time.perf_counter()
        if args.rank:
            rows.append(rank_check(name, kind, load(kind, source, Path(args.data))))
            print(f"{name} ({kind}): {len(rows[-1]['candidates'])} runs, check match, "
                  f"{time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
            continue
        rows.append(bench(name, kind, source, Path(args.data), args.top))
        print(f"{name} ({kind}): {rows[-1]['checked']} runs, check match, "
              f"{time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    print(rank_table(rows) if args.rank else table(rows))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
