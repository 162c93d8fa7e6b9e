"""The fuzzer's seeds: valid inputs of every kind a fuseflowc command reads.

The corpus is a directory laid out like a user's checkout: `ir_examples/` (a copy of the
repository's), `seeds/fused/` and `seeds/samml/` (made by `fuse` and `lower` from the examples,
and `opt` from those), `seeds/specs/` (small sweep specs), `seeds/results/` (results files for
`report`), `seeds/arch/` (arch files for `simulate --arch`) and `data/` (data directories written
by `gen-data` for every program it can size small). Paths recorded in seeds (a fused file's
`source "ir_examples/..."`) are relative to the corpus root, so a case that copies a seed and
the files it needs into a fresh directory, at the same relative paths, works there too.

Building runs the real commands (forked, like cases); the result is kept with a stamp of the
project's sources and reused while they do not change.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from .execute import SANDBOX_FAILED, Limits, run_command

#: Every kind of seed (a `graph` seed is a file, an OGB directory, or a source name such as
#: karate or synthetic:...).
KINDS = ("program", "fused", "samml", "spec", "results", "arch", "graph")
#: Graph sources that are names, not files (small: a case must stay cheap).
GRAPH_NAMES = ("karate", "synthetic:nodes=40,edges=60,features=4,density=0.2,seed=2",
               "synthetic:nodes=30,edges=20", "synthetic:mag,nodes=50,edges=90,features=3")
INCLUDE_RE = re.compile(rb'^\s*include\s+"([^"\n]*)"', re.M)
SOURCE_RE = re.compile(rb'^\s*source\s+"([^"\n]*)"', re.M)
SPEC_PATH_RE = re.compile(rb'^\s*(path|dir)\s*=\s*"([^"\n]*)"', re.M)
#: A data directory is paired with a program only if simulating the program on it (fused and
#: lowered as is) took less than this many seconds when the corpus was built: cases stay cheap.
DATA_BUDGET = 1.5
#: A SAMML seed's data for the differential family (which runs every case on the Python engine
#: too, an order of magnitude slower) is the seed's own if the Python engine simulates it within
#: this many seconds, else data made at TWIN_SIZES if that does (the seed is no differential
#: seed otherwise): a mutated graph or arch then still leaves the twin well inside the case limit.
TWIN_BUDGET = 1.5
TWIN_SIZES = (2, 3)
#: The sizes tried, in turn, for every dim a program leaves unsized (blocked formats need sizes
#: divisible by their block).
TRY_SIZES = (6, 16, 64)
#: Programs whose inputs take a graph (`gen-data --graph karate`).
GRAPH_MODELS = ("gcn", "graphsage")

SMALL_SPEC = """\
# A small sweep for the fuzzer: SpMV and SpMM at tiny sizes, two orders, two pipelines.
timeout = 5
max_jobs = 2
orders = [0, 1]
pipelines = ["", "locate"]

[[programs]]
path = "../../ir_examples/kernels/spmv.ff"
model = "spmv"
variant = "plain"

[[programs]]
path = "../../ir_examples/kernels/spmm.ff"
model = "spmm"
variant = "plain"
schedule = ["parallelize C: i by {factor}"]
params = { factor = [1, 2] }

[[data]]
name = "tiny"
sizes = { I = 6, J = 5, K = 4 }
density = 0.3
seed = 1
"""

FAILING_SPEC = """\
# A sweep whose configurations fail (a schedule naming no index): rows with status error,
# and `--strict` exits 1.
timeout = 5

[[programs]]
path = "../../ir_examples/kernels/spmv.ff"
schedule = ["parallelize y: zz by 2"]

[[data]]
name = "tiny"
sizes = { I = 4, J = 3 }
"""

DIR_SPEC = """\
# A sweep over an existing data directory (made by gen-data when the corpus was built).
[[programs]]
path = "../../ir_examples/kernels/spmv.ff"

[[data]]
dir = "../../data/kernels/spmv"
"""

SMALL_ARCH = """\
# A small arch file overriding a few values.
[channel]
depth = 4

[memory]
bandwidth = 64
latency = 10
"""


@dataclass(frozen=True)
class Seed:
    """One seed: its kind (KINDS), its path relative to the corpus root, the other files it reads
    (`needs`, relative paths of files or directories), and the data directory made for its
    program (or None); `twin`: the data a differential case simulates it on (TWIN_BUDGET), or
    None."""

    kind: str
    path: str
    needs: tuple[str, ...] = ()
    data: str | None = None
    twin: str | None = None


@dataclass
class Corpus:
    """The seeds by kind, the data directories, and a cache of file contents."""

    root: Path
    seeds: dict[str, list[Seed]]
    data_dirs: list[str]
    _cache: dict[str, dict[str, bytes]] = field(default_factory=dict, repr=False)

    def files(self, rel: str) -> dict[str, bytes]:
        """Every regular file at or under `rel` (relative to the root): relative path -> bytes."""
        if rel not in self._cache:
            p = self.root / rel
            out: dict[str, bytes] = {}
            if p.is_file():
                out[rel] = p.read_bytes()
            elif p.is_dir():
                for f in sorted(p.rglob("*")):
                    if f.is_file():
                        out[f.relative_to(self.root).as_posix()] = f.read_bytes()
            self._cache[rel] = out
        return self._cache[rel]

    def seed_files(self, seed: Seed) -> dict[str, bytes]:
        """The seed's file and everything it needs."""
        out: dict[str, bytes] = {}
        for rel in (seed.path, *seed.needs):
            out.update(self.files(rel))
        return out


def _stamp(repo: Path, scope: str) -> str:
    """A hash of everything the corpus is made from: the project's code, grammars, examples."""
    h = hashlib.sha256(f"corpus {scope}".encode())
    h.update(Path(__file__).read_bytes())  # how the corpus is made (not the rest of the fuzzer)
    for sub in ("fuseflowc", "sim", "grammars", "ir_examples"):
        for f in sorted((repo / sub).rglob("*")):
            if f.is_file() and f.suffix != ".pyc" and "__pycache__" not in f.parts \
                    and "fuzz" not in f.relative_to(repo).parts[:2]:
                h.update(f.relative_to(repo).as_posix().encode())
                h.update(hashlib.sha256(f.read_bytes()).digest())
    h.update((repo / "tests/golden/sweep/fixture.jsonl").read_bytes())
    for f in sorted((repo / "fuseflowc/plan/warehouse").glob("*.toml")):
        h.update(f.read_bytes())
    return h.hexdigest()


def _includes(root: Path, rel: str, seen: set[str]) -> None:
    """Add `rel` and every program it includes (transitively) to `seen`."""
    if rel in seen:
        return
    p = root / rel
    if not p.is_file():
        return
    seen.add(rel)
    for m in INCLUDE_RE.finditer(p.read_bytes()):
        target = (p.parent / m.group(1).decode(errors="replace")).resolve()
        try:
            _includes(root, target.relative_to(root.resolve()).as_posix(), seen)
        except ValueError:
            pass


def program_needs(root: Path, rel: str) -> tuple[str, ...]:
    """The program files `rel` includes, transitively (without `rel` itself)."""
    seen: set[str] = set()
    _includes(root, rel, seen)
    seen.discard(rel)
    return tuple(sorted(seen))


def _recorded(root: Path, holder: str, recorded: str) -> str | None:
    """A path recorded in `holder` (relative to it, else to the root), relative to the root."""
    for base in ((root / holder).parent, root):
        p = (base / recorded).resolve()
        if p.exists():
            try:
                return p.relative_to(root.resolve()).as_posix()
            except ValueError:
                return None
    return None


def ir_needs(root: Path, rel: str) -> tuple[str, ...]:
    """The source program (and its includes) a fused IR or SAMML file records."""
    m = SOURCE_RE.search((root / rel).read_bytes())
    if not m:
        return ()
    prog = _recorded(root, rel, m.group(1).decode(errors="replace"))
    return () if prog is None else (prog, *program_needs(root, prog))


def spec_needs(root: Path, rel: str) -> tuple[str, ...]:
    """The programs (with includes) and data directories a sweep spec names."""
    out: list[str] = []
    for m in SPEC_PATH_RE.finditer((root / rel).read_bytes()):
        p = _recorded(root, rel, m.group(2).decode(errors="replace"))
        if p is None:
            continue
        out.append(p)
        if m.group(1) == b"path":
            out.extend(program_needs(root, p))
    return tuple(dict.fromkeys(out))


class _Builder:
    """Runs the commands that make the corpus, in forked children, in the corpus root."""

    def __init__(self, root: Path):
        self.root = root
        self.n = 0
        self.failed = 0
        self.limits = Limits(seconds=60)

    def cheap(self, argv: list[str], budget: float = DATA_BUDGET) -> bool:
        """Whether `fuseflowc ARGV` succeeds within `budget` seconds."""
        ok, secs = self.run(argv, Limits(seconds=max(2 * budget, 1.0)))
        return ok and secs <= budget

    def run(self, argv: list[str], limits: Limits | None = None) -> tuple[bool, float]:
        self.n += 1
        io = self.root / ".build" / str(self.n)
        tmp = self.root / ".build" / "tmp"
        tmp.mkdir(parents=True, exist_ok=True)
        r = run_command(argv, self.root, tmp, io, limits=limits or self.limits)
        if r.exit_code == SANDBOX_FAILED:  # the fuzzer's own bug: never a refused variant
            raise RuntimeError(f"fuzz: the sandbox failed building the corpus "
                               f"({' '.join(argv)}):\n{r.stderr}")
        ok = r.exit_code == 0
        if not ok:
            self.failed += 1
        shutil.rmtree(io, ignore_errors=True)
        return ok, r.seconds


#: The programs of the 'small' corpus (the quick run inside the test suite).
SMALL_PROGRAMS = ("kernels/add.ff", "kernels/mul.ff", "kernels/residual.ff", "kernels/sddmm.ff",
                  "kernels/spmm.ff", "kernels/spmv.ff", "models/gcn/gcn_full.ff")


def _programs(root: Path, scope: str) -> list[str]:
    if scope == "small":
        return ["ir_examples/" + p for p in SMALL_PROGRAMS]
    return sorted(p.relative_to(root).as_posix() for p in (root / "ir_examples").rglob("*.ff"))


def _slug(rel: str) -> str:
    return rel.removeprefix("ir_examples/").removesuffix(".ff").replace("/", "_")


#: The extra `fuse` flags of a program's second fused seed, in rotation over the programs.
FUSE_VARIANTS = (["--inline-widened"], ["--unfused"], ["--share"], ["--free-input-order"])
#: Pipelines applied to some SAMML seeds to make more (parallel, located, cleaned-up graphs).
OPT_VARIANTS = ("parallelize{index=i,factor=2}", "locate,cse,dce,cleanup", "schedule,locate")


def _make_data(b: _Builder, prog: str, sizes: tuple[int, ...] = TRY_SIZES,
               suffix: str = "") -> str | None:
    """gen-data for `prog` at small sizes into data/<dir>/<name><suffix>; its path, or None.
    Graph models take the karate club's graph, unless `suffix` asks for other sizes."""
    from fuseflowc.diagnostics import UserError
    from fuseflowc.lang.load import load_program

    try:
        program = load_program(str(b.root / prog))
    except UserError:
        return None
    out = "data/" + prog.removeprefix("ir_examples/").removesuffix(".ff") + suffix
    unsized = [d.name for d in program.dims if d.size is None]
    graph = ["--graph", "karate"] if not suffix and any(f"/{m}/" in prog
                                                        for m in GRAPH_MODELS) else []
    (b.root / out).parent.mkdir(parents=True, exist_ok=True)
    if graph:  # the graph binds the node count and features
        made = b.run(["gen-data", prog, "-o", out, "--seed", "1", *graph])[0]
    else:
        for n in sizes:
            opts = [a for d in unsized for a in ("--size", f"{d}={n}")]
            made = b.run(["gen-data", prog, "-o", out, "--seed", "1", *opts])[0]
            if made:
                break
    # the reference evaluator must be quick on it too (cases `run` the program on its data)
    return out if made and b.cheap(["run", prog, "--data", out]) else None


def _twin_data(b: _Builder, prog: str | None, samml: str, data: str | None,
               smaller: dict[str, str | None]) -> str | None:
    """The data a differential case simulates `samml` on (see TWIN_BUDGET): `data` if the
    Python engine is quick on it, else data of `prog` at TWIN_SIZES (made once per program,
    `smaller`) if it is quick on that; None otherwise."""
    def quick(d):
        return d is not None and b.cheap(["simulate", samml, "--data", d, "--engine", "python"],
                                         TWIN_BUDGET)
    if quick(data):
        return data
    if prog is None:
        return None
    if prog not in smaller:
        smaller[prog] = _make_data(b, prog, TWIN_SIZES, ".twin")
    return smaller[prog] if quick(smaller[prog]) else None


def build_corpus(repo: Path, root: Path, scope: str = "full", log=None) -> Corpus:
    """Make (or reuse, if its stamp matches) the corpus for `repo` in `root`. scope 'full' takes
    every example; 'small' a few kernels and GCN (for the quick run inside the test suite)."""
    root = root.resolve()  # the builder's children run in `root`: relative paths would break
    stamp = _stamp(repo, scope)
    index = root / "corpus.json"
    if index.is_file():
        try:
            saved = json.loads(index.read_text())
            if saved.get("stamp") == stamp:
                return Corpus(root, {k: [Seed(**s) for s in v] for k, v in saved["seeds"].items()},
                              saved["data_dirs"])
        except (ValueError, KeyError, TypeError):
            pass
    # built beside its place and swapped in whole: a run still reading the old one (or one
    # interrupted while building) never sees half a corpus
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{root.name}.new.", dir=root.parent))
    try:
        seeds, data_dirs = _build(repo, tmp, scope, log)
        (tmp / "corpus.json").write_text(json.dumps(
            {"stamp": stamp, "data_dirs": data_dirs,
             "seeds": {k: [asdict(s) for s in v] for k, v in seeds.items()}}, indent=1))
        if root.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{root.name}.old.", dir=root.parent))
            os.replace(root, old / "corpus")
            shutil.rmtree(old, ignore_errors=True)
        os.replace(tmp, root)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Corpus(root, seeds, data_dirs)


def _build(repo: Path, root: Path, scope: str, log) -> tuple[dict[str, list[Seed]], list[str]]:
    """Make the seeds in the empty directory `root`; (seeds by kind, data directories)."""
    shutil.copytree(repo / "ir_examples", root / "ir_examples")
    b = _Builder(root)
    seeds: dict[str, list[Seed]] = {k: [] for k in KINDS}
    programs = _programs(root, scope)

    data_of: dict[str, str] = {}
    for prog in programs:
        d = _make_data(b, prog)
        if d:
            data_of[prog] = d

    fused_dir = root / "seeds/fused"
    samml_dir = root / "seeds/samml"
    smaller: dict[str, str | None] = {}  # program -> its data at TWIN_SIZES (_twin_data)
    fused_dir.mkdir(parents=True)
    samml_dir.mkdir(parents=True)
    for k, prog in enumerate(programs):
        seeds["program"].append(Seed("program", prog, program_needs(root, prog),
                                     data_of.get(prog)))
        for flags in ([], FUSE_VARIANTS[k % len(FUSE_VARIANTS)]):
            name = _slug(prog) + "".join(f.replace("--", ".") for f in flags)
            fused = f"seeds/fused/{name}.fused"
            if not b.run(["fuse", prog, *flags, "-o", fused])[0]:
                continue
            seeds["fused"].append(Seed("fused", fused, ir_needs(root, fused), data_of.get(prog)))
            samml = f"seeds/samml/{name}.samml"
            if not b.run(["lower", fused, "-o", samml])[0]:
                continue
            data = data_of.get(prog)
            if data and scope != "small" and not b.cheap(["simulate", samml, "--data", data]):
                data = None  # too slow for a case: this seed goes without data
                if not flags:  # and if the plain variant is, the program too
                    data_of.pop(prog)
            twin = data if scope == "small" else _twin_data(b, prog, samml, data, smaller)
            seeds["samml"].append(Seed("samml", samml, ir_needs(root, samml), data, twin))
            if not flags and "/kernels/" in prog and scope != "small":
                pipe = OPT_VARIANTS[k % len(OPT_VARIANTS)]
                opted = f"seeds/samml/{name}.opt.samml"
                if b.run(["opt", samml, "-p", pipe, "-o", opted])[0]:
                    twin = _twin_data(b, prog, opted, data, smaller)
                    seeds["samml"].append(Seed("samml", opted, ir_needs(root, opted), data,
                                               twin))
    for s in sorted((root / "ir_examples/samml").glob("*.samml"))[::2 if scope == "small" else 1]:
        rel = s.relative_to(root).as_posix()
        needs = ir_needs(root, rel)  # its source program's data, if it records one
        data = data_of.get(needs[0]) if needs else None
        twin = data if scope == "small" else _twin_data(
            b, needs[0] if needs and needs[0].endswith(".ff") else None, rel, data, smaller)
        seeds["samml"].append(Seed("samml", rel, needs, data, twin))
    # the seeds made before a data directory was dropped for being slow lose it too
    for kind in ("program", "fused", "samml"):
        seeds[kind] = [s if s.data is None or s.data in data_of.values() else
                       replace(s, data=None) for s in seeds[kind]]

    specs = root / "seeds/specs"
    specs.mkdir(parents=True)
    (specs / "small.toml").write_text(SMALL_SPEC)
    (specs / "failing.toml").write_text(FAILING_SPEC)
    if "data/kernels/spmv" in data_of.values():
        (specs / "dir.toml").write_text(DIR_SPEC)
    spec_files = sorted(p.relative_to(root).as_posix() for p in specs.glob("*.toml"))
    if scope == "full":
        spec_files += sorted(p.relative_to(root).as_posix() for p in
                             (root / "ir_examples").rglob("*.toml"))
    seeds["spec"] = [Seed("spec", s, spec_needs(root, s)) for s in spec_files]

    results = root / "seeds/results"
    results.mkdir(parents=True)
    shutil.copy(repo / "tests/golden/sweep/fixture.jsonl", results / "fixture.jsonl")
    _jsonl_to_csv(results / "fixture.jsonl", results / "fixture.csv")
    seeds["results"] = [Seed("results", f"seeds/results/{n}")
                        for n in ("fixture.csv", "fixture.jsonl")]

    arch = root / "seeds/arch"
    arch.mkdir(parents=True)
    shutil.copy(repo / "sim/arch.toml", arch / "arch.toml")
    (arch / "small.toml").write_text(SMALL_ARCH)
    seeds["arch"] = [Seed("arch", f"seeds/arch/{n}") for n in ("arch.toml", "small.toml")]

    seeds["graph"] = _make_graphs(b, root)
    seeds["matrix"] = _make_matrices(root)
    wh = root / "seeds/warehouse"
    wh.mkdir(parents=True)
    for f in sorted((repo / "fuseflowc/plan/warehouse").glob("*.toml"))[:3]:
        shutil.copy(f, wh / f.name)
    seeds["warehouse"] = [Seed("warehouse", "seeds/warehouse")]

    shutil.rmtree(root / ".build", ignore_errors=True)
    if log:
        log(f"corpus: {sum(map(len, seeds.values()))} seeds and {len(data_of)} data directories "
            f"made ({b.n} commands, {b.failed} of them refused: variants that do not apply)")
    return seeds, sorted(set(data_of.values()))


def _make_graphs(b: _Builder, root: Path) -> list[Seed]:
    """Graph sources in every form `graph` and `gen-data --graph` read, made from KarateClub:
    a graph archive, a PyG edge_index (.npy) and PyG arrays (.npz), Matrix Market, and an OGB
    raw directory (gzip CSV, fixed timestamps); each kept only if `graph` reads it."""
    import gzip

    import numpy as np
    import scipy.sparse as sp

    from .datamut import npy_bytes, npz_bytes

    d = root / "seeds/graphs"
    (d / "ogb/raw").mkdir(parents=True)
    if not b.run(["graph", "karate", "-o", "seeds/graphs/karate.npz"])[0]:
        return [Seed("graph", g) for g in GRAPH_NAMES]
    with np.load(d / "karate.npz") as z:
        n = int(z["adj_shape"][0])
        adj = sp.csr_matrix((np.ones(z["adj_indices"].size), z["adj_indices"], z["adj_indptr"]),
                            shape=tuple(z["adj_shape"]))
        labels = z["labels"]
    coo = sp.triu(adj, 1).tocoo()
    edges = np.stack([coo.row, coo.col]).astype(np.int64)
    feats = np.round(np.random.default_rng(1).uniform(-1, 1, (n, 3)), 3)
    (d / "edge_index.npy").write_bytes(npy_bytes(edges))
    (d / "pyg.npz").write_bytes(npz_bytes({"edge_index": edges, "x": feats, "y": labels,
                                           "num_nodes": np.array(n)}))
    (d / "karate.mtx").write_text(
        f"%%MatrixMarket matrix coordinate pattern symmetric\n{n} {n} {edges.shape[1]}\n"
        + "".join(f"{c + 1} {r + 1}\n" for r, c in edges.T))
    raw = {"edge.csv.gz": "".join(f"{r},{c}\n" for r, c in edges.T),
           "num-node-list.csv.gz": f"{n}\n", "num-edge-list.csv.gz": f"{edges.shape[1]}\n",
           "node-feat.csv.gz": "".join(",".join(map(str, row)) + "\n" for row in feats),
           "node-label.csv.gz": "".join(f"{y}\n" for y in labels)}
    for name, text in raw.items():
        (d / "ogb/raw" / name).write_bytes(gzip.compress(text.encode(), mtime=0))
    files = [f"seeds/graphs/{f}" for f in ("karate.npz", "edge_index.npy", "pyg.npz",
                                           "karate.mtx", "ogb")]
    return [Seed("graph", g) for g in (*GRAPH_NAMES, *files) if b.run(["graph", g])[0]]


def _make_matrices(root: Path) -> list[Seed]:
    """Matrix Market files for `decompose-advisor`: a 16 x 16 matrix with dense 2 x 2 and
    4 x 4 blocks and scattered entries, a 12 x 12 symmetric pattern, an 8 x 8 integer one."""
    import numpy as np

    d = root / "seeds/matrices"
    d.mkdir(parents=True)
    rng = np.random.default_rng(3)
    dense = np.zeros((16, 16))
    dense[0:4, 0:4] = 1.5
    dense[8:10, 6:8] = -2.0
    mask = rng.random((16, 16)) < 0.08
    dense[mask] = np.round(rng.uniform(-1, 1, mask.sum()), 3) + 0.001
    rows, cols = np.nonzero(dense)
    (d / "blocks.mtx").write_text(
        f"%%MatrixMarket matrix coordinate real general\n16 16 {rows.size}\n"
        + "".join(f"{r + 1} {c + 1} {dense[r, c]:g}\n" for r, c in zip(rows, cols)))
    pairs = sorted({(max(a, b), min(a, b)) for a, b in rng.integers(0, 12, (20, 2))})
    (d / "sym.mtx").write_text(
        f"%%MatrixMarket matrix coordinate pattern symmetric\n12 12 {len(pairs)}\n"
        + "".join(f"{a + 1} {b + 1}\n" for a, b in pairs))
    (d / "ints.mtx").write_text("%%MatrixMarket matrix coordinate integer general\n8 8 5\n"
                                "1 1 3\n2 5 -1\n4 4 7\n8 1 2\n8 8 1\n")
    return [Seed("matrix", f"seeds/matrices/{n}") for n in ("blocks.mtx", "sym.mtx",
                                                            "ints.mtx")]


def _jsonl_to_csv(src: Path, dst: Path) -> None:
    """The same rows as a CSV results file (the other format `report` reads)."""
    from fuseflowc.sweep.results import format_row, header, read_rows

    rows = read_rows(str(src))
    dst.write_text(header("csv") + "".join(format_row("csv", r) for r in rows))
