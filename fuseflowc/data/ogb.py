"""Readers for the raw files of Open Graph Benchmark data sets (the `raw/` directory OGB's
loaders download and unpack), turned into a `Graph`: no ogb, torch or pandas needed.

Homogeneous data sets (ogbl-collab, ogbn-arxiv, ...): `raw/` holds
  - `edge.csv.gz`: one edge `src,dst` per line (0-based node ids, no header);
  - `num-node-list.csv.gz`: the node count of each graph, one per line (one line: one graph);
  - `num-edge-list.csv.gz` (optional here): the edge count of each graph;
  - `node-feat.csv.gz` (optional): one line of comma-separated numbers per node;
  - `node-label.csv.gz` (optional): one class per node.
Heterogeneous data sets (ogbn-mag): `raw/` holds
  - `num-node-dict.csv.gz`: a header line of node types and one line of their counts;
  - `triplet-type-list.csv.gz`: one relation `head,relation,tail` per line;
  - `relations/<head>___<relation>___<tail>/edge.csv.gz` (and `num-edge-list.csv.gz`);
  - `node-feat/<type>/node-feat.csv.gz` (ogbn-mag: papers only);
  - `node-label/<type>/node-label.csv.gz`.
Of a heterogeneous data set we read one relation between nodes of one type (default: the only
such relation, ogbn-mag's paper-cites-paper), or with `relation=all` every relation as one
homogeneous graph, node types stacked in sorted name order (OGB's own order), the features of
typed nodes without features being empty rows.

The graph is made undirected (the union of both directions), self loops and repeated edges
(ogbl-collab's repeated collaborations) kept once, every stored value 1: the layout of the
shared graph archives, and what GCN and GraphSAGE aggregate over.

Files are parsed in chunks with numpy's C reader, so ogbn-mag's 5.4 million citations read in
seconds; a malformed line is an error naming the file and line.
"""

from __future__ import annotations

import gzip
import io
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..diagnostics import UserError
from ..limits import check_memory
from .graph import Graph, check_graph_size, undirected_adjacency

_CHUNK = 1 << 24   # bytes of text parsed at a time: bounds memory, keeps line numbers


def _open(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


def read_csv_numbers(path: Path, dtype, columns: int | None = None) -> np.ndarray:
    """A headerless CSV file of numbers (gzip when it ends in .gz) as a 2-D array of `dtype`.

    Every line must have the same number of columns (`columns` when given); errors name the
    file and line."""
    parts: list[np.ndarray] = []
    held = 0
    line0 = 1
    tail = b""
    try:
        with _open(path) as f:
            while True:
                chunk = f.read(_CHUNK)
                data = tail + chunk
                if not chunk:
                    block, tail = data, b""
                else:
                    cut = data.rfind(b"\n") + 1
                    block, tail = data[:cut], data[cut:]
                if block.strip():
                    # what is held must fit once more (the concatenation): a file that unzips
                    # to more than memory holds is refused, not a MemoryError
                    held += len(block) * 2
                    check_memory(held, f"{path}: reading {line0 - 1:,} lines and more")
                    arr = _parse_block(path, block, line0, dtype)
                    if columns is None:
                        columns = arr.shape[1]
                    if arr.shape[1] != columns:
                        raise UserError(f"{path}:{line0}: expected {columns} columns, found "
                                        f"{arr.shape[1]}")
                    parts.append(arr)
                line0 += block.count(b"\n")
                if not chunk:
                    break
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, EOFError, zlib.error) as e:   # gzip.BadGzipFile is an OSError
        raise UserError(f"{path}: cannot read: {e}") from None
    if not parts:
        return np.zeros((0, columns or 0), dtype)
    return np.concatenate(parts)


def _parse_block(path: Path, block: bytes, line0: int, dtype) -> np.ndarray:
    if b"\r" in block:
        block = block.replace(b"\r\n", b"\n")
    try:
        arr = np.loadtxt(io.BytesIO(block), delimiter=",", dtype=dtype, ndmin=2,
                         encoding="ascii")
    except ValueError as e:
        raise UserError(f"{path}:{_bad_line(block, line0, dtype)}: not a line of "
                        f"comma-separated numbers ({e})") from None
    return arr


def _bad_line(block: bytes, line0: int, dtype) -> int:
    """The number of the first line of `block` numpy cannot read (only on the error path)."""
    width = None
    for k, ln in enumerate(block.split(b"\n")):
        if not ln.strip():
            continue
        try:
            row = np.array([dtype(x) if dtype is not np.int64 else int(x)
                            for x in ln.decode("ascii").split(",")])
        except (ValueError, UnicodeDecodeError):
            return line0 + k
        if width is None:
            width = row.size
        elif row.size != width:
            return line0 + k
    return line0


def _one_int_per_line(path: Path) -> list[int]:
    return [int(x) for x in read_csv_numbers(path, np.int64, 1)[:, 0]]


def raw_dir(path) -> Path:
    """The directory holding an OGB data set's raw files: `path/raw` or `path` itself."""
    p = Path(path)
    if (p / "raw").is_dir():
        return p / "raw"
    return p


def is_ogb_dir(path) -> bool:
    """Whether `path` is (or holds in raw/) an OGB raw directory."""
    d = raw_dir(path)
    return (d / "edge.csv.gz").is_file() or (d / "num-node-dict.csv.gz").is_file()


def _edges(path: Path, n: int, n_tail: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The edges of an edge.csv.gz: source ids below n, target ids below n_tail (default n)."""
    e = read_csv_numbers(path, np.int64, 2)
    limit = np.array([n, n if n_tail is None else n_tail])
    out = (e < 0) | (e >= limit)
    if out.any():
        bad, col = (int(x[0]) for x in np.nonzero(out))
        raise UserError(f"{path}:{bad + 1}: node id {e[bad, col]} outside 0..{limit[col] - 1}")
    return e[:, 0], e[:, 1]


def _features(path: Path, n: int) -> sp.csr_matrix | None:
    if not path.is_file():
        return None
    x = read_csv_numbers(path, np.float64)
    if x.shape[0] != n:
        raise UserError(f"{path}: {x.shape[0]} feature lines for {n} nodes")
    if not np.isfinite(x).all():
        raise UserError(f"{path}: features must be finite numbers")
    return sp.csr_matrix(x)


def _labels(path: Path, n: int) -> np.ndarray | None:
    """One integer class per node, or None when the file is absent or has unlabelled nodes."""
    if not path.is_file():
        return None
    y = read_csv_numbers(path, np.float64)
    if y.shape != (n, 1) or not np.isfinite(y).all() or (y != np.round(y)).any():
        return None
    return y[:, 0].astype(np.int64)


def load_ogb_graph(path, relation: str | None = None):
    """The Graph of an OGB raw directory (see the module docstring). `relation` picks a
    heterogeneous data set's relation (`paper___cites___paper`, or `all`)."""
    d = raw_dir(path)
    name = Path(path).name if Path(path).name != "raw" else Path(path).parent.name
    if (d / "num-node-dict.csv.gz").is_file():
        return _hetero(d, name, relation)
    if relation is not None:
        raise UserError(f"{path}: relation={relation}: a homogeneous OGB data set has one "
                        f"relation")
    if not (d / "edge.csv.gz").is_file():
        raise UserError(f"{path}: not an OGB raw directory (no raw/edge.csv.gz or "
                        f"raw/num-node-dict.csv.gz)")
    counts = _one_int_per_line(d / "num-node-list.csv.gz")
    if len(counts) != 1:
        raise UserError(f"{d / 'num-node-list.csv.gz'}: holds {len(counts)} graphs; only "
                        f"single-graph data sets (ogbn-*, ogbl-*) are graphs here")
    n = counts[0]
    if n < 0:
        raise UserError(f"{d / 'num-node-list.csv.gz'}:1: a node count must be >= 0, not {n}")
    check_graph_size(n, 0, str(d / "num-node-list.csv.gz"))  # before the edges are read
    u, v = _edges(d / "edge.csv.gz", n)
    if (d / "num-edge-list.csv.gz").is_file():
        m = _one_int_per_line(d / "num-edge-list.csv.gz")
        if m != [u.shape[0]]:
            raise UserError(f"{d / 'num-edge-list.csv.gz'}: says {m} edges, edge.csv.gz has "
                            f"{u.shape[0]}")
    return Graph(name, undirected_adjacency(n, u, v, str(d)), _features(d / "node-feat.csv.gz", n),
                 _labels(d / "node-label.csv.gz", n))


def _hetero(d: Path, name: str, relation: str | None):
    counts = _node_dict(d / "num-node-dict.csv.gz")
    triplets = _triplets(d / "triplet-type-list.csv.gz", counts)
    names = ["___".join(t) for t in triplets]
    if relation is None:
        same = [nm for nm, t in zip(names, triplets) if t[0] == t[2]]
        if len(same) != 1:
            raise UserError(f"{d}: name the relation to read with ,relation=NAME (one of "
                            f"{', '.join(names)}, or all)")
        relation = same[0]
    if relation == "all":
        order = sorted(counts)
        offset = dict(zip(order, np.cumsum([0] + [counts[t] for t in order])[:-1].tolist()))
        n = sum(counts.values())
        check_graph_size(n, 0, str(d / "num-node-dict.csv.gz"))  # before the edges are read
        us, vs = [], []
        for nm, (h, _, t) in zip(names, triplets):
            u, v = _edges(d / "relations" / nm / "edge.csv.gz", counts[h], counts[t])
            us.append(u + offset[h])
            vs.append(v + offset[t])
        adj = undirected_adjacency(n, np.concatenate(us), np.concatenate(vs), str(d))
        feats = _stacked_features(d, order, counts)
        return Graph(f"{name}-all", adj, feats, None)
    if relation not in names:
        raise UserError(f"{d}: no relation {relation}; it has {', '.join(names)} (or all)")
    h, _, t = triplets[names.index(relation)]
    if h != t:
        raise UserError(f"{d}: relation {relation} joins {h} and {t} nodes; a graph here is "
                        f"one node type (or relation=all)")
    n = counts[h]
    check_graph_size(n, 0, str(d / "num-node-dict.csv.gz"))  # before the edges are read
    u, v = _edges(d / "relations" / relation / "edge.csv.gz", n)
    return Graph(f"{name}-{relation.split('___')[1]}", undirected_adjacency(n, u, v, str(d)),
                 _features(d / "node-feat" / h / "node-feat.csv.gz", n),
                 _labels(d / "node-label" / h / "node-label.csv.gz", n))


def _node_dict(path: Path) -> dict[str, int]:
    """num-node-dict.csv.gz: a line of node types and a line of as many counts (>= 0)."""
    head = read_text_gz(path).strip().split("\n")
    if len(head) != 2:
        raise UserError(f"{path}: expected a line of node types and a line of counts")
    types = [t.strip() for t in head[0].split(",")]
    fields = [x.strip() for x in head[1].split(",")]
    if len(fields) != len(types) or len(set(types)) != len(types) or not all(types):
        raise UserError(f"{path}: expected {len(types)} distinct node types on line 1 and as "
                        f"many counts on line 2, found {len(set(types))} and {len(fields)}")
    bad = next((x for x in fields if not (x.isascii() and x.isdigit()) or len(x) > 30), None)
    if bad is not None:
        raise UserError(f"{path}:2: expected counts (whole numbers >= 0), found '{bad[:40]}'")
    return dict(zip(types, (int(x) for x in fields)))


def _triplets(path: Path, counts: dict[str, int]) -> list[tuple[str, str, str]]:
    """triplet-type-list.csv.gz: one relation `head,relation,tail` per line, sorted; each node
    type one of num-node-dict's (found by fuzzing: a line of two fields and an unknown type
    were an IndexError and a KeyError)."""
    out = []
    for k, ln in enumerate(read_text_gz(path).split("\n"), 1):
        if not ln.strip():
            continue
        t = tuple(x.strip() for x in ln.split(","))
        if len(t) != 3 or not all(t):
            raise UserError(f"{path}:{k}: expected head,relation,tail, found "
                            f"'{ln.strip()[:80]}'")
        if any("/" in x or "\\" in x or x in (".", "..") for x in t):
            # the names become a directory under relations/: they stay inside it
            raise UserError(f"{path}:{k}: a relation's names may not hold '/' or be '.' or "
                            f"'..', found '{ln.strip()[:80]}'")
        unknown = [x for x in (t[0], t[2]) if x not in counts]
        if unknown:
            raise UserError(f"{path}:{k}: node type '{unknown[0][:40]}' is not in "
                            f"num-node-dict.csv.gz (it has {', '.join(sorted(counts))})")
        out.append(t)
    if not out:
        raise UserError(f"{path}: no relations")
    return sorted(out)


def _stacked_features(d: Path, order: list[str], counts: dict) -> sp.csr_matrix | None:
    blocks = {t: _features(d / "node-feat" / t / "node-feat.csv.gz", counts[t]) for t in order}
    widths = {b.shape[1] for b in blocks.values() if b is not None}
    if not widths:
        return None
    if len(widths) > 1:
        raise UserError(f"{d}: node types have features of different widths {sorted(widths)}")
    f = widths.pop()
    return sp.vstack([b if b is not None else sp.csr_matrix((counts[t], f))
                      for t, b in blocks.items()], format="csr")


def read_text_gz(path: Path) -> str:
    """A small (gzip) text file, whole."""
    try:
        with _open(path) as f:
            return f.read().decode("utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as e:
        raise UserError(f"{path}: cannot read: {e}") from None
