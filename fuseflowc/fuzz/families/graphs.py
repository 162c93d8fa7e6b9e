"""The graph-reader families, each input made damaged in the ways the readers must refuse with
a message (never a traceback or an allocation past memory):

  graph-ogb        OGB raw directories, homogeneous (edge.csv.gz, num-node-list.csv.gz) and
                   heterogeneous (num-node-dict.csv.gz, triplet-type-list.csv.gz,
                   relations/...): node counts of 2^40, negative or of 5000 digits, lines of two
                   or four fields, node types missing from the dict, relation names with `..`,
                   ids out of range, missing files; with `,relation=NAME|all`;
  graph-pyg        PyG arrays (.npy edge_index, .npz with num_nodes, x, y): ids of 2^40, 2^63 - 1
                   and 2^64 - 1 (uint64), negative ids, E x 2 and 1-D shapes, float ids,
                   num_nodes of 2^40 or below the largest id, features and labels of the wrong
                   shape or not finite;
  graph-synthetic  `synthetic:` specs with keys and values good and bad (sizes past memory,
                   nan, 1e999, exponents at and near 2, unknown keys, presets in the wrong
                   place, a degrees file that is damaged).
"""

from __future__ import annotations

import gzip

import numpy as np

from ..datamut import mutate_tree, npy_bytes, npz_bytes

BIG_COUNTS = ("1099511627776", "-3", "9" * 5000, "0", "3.5", "x", "", "9223372036854775807")


def _gz(text: str) -> bytes:
    return gzip.compress(text.encode(), mtime=0)


def _hetero_files(root: str) -> dict[str, bytes]:
    """A small ogbn-mag-like layout: papers cite papers, authors write papers."""
    return {f"{root}/raw/num-node-dict.csv.gz": _gz("author,paper\n3,5\n"),
            f"{root}/raw/triplet-type-list.csv.gz":
                _gz("author,writes,paper\npaper,cites,paper\n"),
            f"{root}/raw/relations/paper___cites___paper/edge.csv.gz":
                _gz("0,1\n1,2\n3,4\n2,0\n"),
            f"{root}/raw/relations/paper___cites___paper/num-edge-list.csv.gz": _gz("4\n"),
            f"{root}/raw/relations/author___writes___paper/edge.csv.gz": _gz("0,1\n2,4\n"),
            f"{root}/raw/node-feat/paper/node-feat.csv.gz":
                _gz("".join(f"{i},0.5\n" for i in range(5))),
            f"{root}/raw/node-label/paper/node-label.csv.gz": _gz("0\n1\n0\n1\n1\n")}


def _damage_hetero(files: dict, root: str, rng) -> str:
    raw = f"{root}/raw"
    how = rng.choice(("two-fields", "four-fields", "unknown-type", "count", "counts-short",
                      "escape", "id-range", "missing-relation", "empty-triplets", "dup-type",
                      "one-line-dict"))
    if how == "two-fields":
        files[f"{raw}/triplet-type-list.csv.gz"] = _gz("paper,cites\nauthor,writes,paper\n")
    elif how == "four-fields":
        files[f"{raw}/triplet-type-list.csv.gz"] = _gz("paper,cites,paper,x\n")
    elif how == "unknown-type":
        files[f"{raw}/num-node-dict.csv.gz"] = _gz("author\n3\n")
    elif how == "count":
        files[f"{raw}/num-node-dict.csv.gz"] = _gz(f"author,paper\n3,{rng.choice(BIG_COUNTS)}\n")
    elif how == "counts-short":
        files[f"{raw}/num-node-dict.csv.gz"] = _gz("author,paper\n3\n")
    elif how == "escape":
        files[f"{raw}/triplet-type-list.csv.gz"] = _gz(rng.choice(
            ("paper,..,paper\n", "paper,../../x,paper\n", "paper,/etc,paper\n", ".,cites,.\n")))
    elif how == "id-range":
        files[f"{raw}/relations/paper___cites___paper/edge.csv.gz"] = _gz(
            rng.choice(("0,5\n", "-1,2\n", "0,1099511627776\n", "0,18446744073709551615\n")))
    elif how == "missing-relation":
        del files[f"{raw}/relations/paper___cites___paper/edge.csv.gz"]
    elif how == "empty-triplets":
        files[f"{raw}/triplet-type-list.csv.gz"] = _gz(rng.choice(("", "\n\n", ",,\n")))
    elif how == "dup-type":
        files[f"{raw}/num-node-dict.csv.gz"] = _gz("paper,paper\n3,5\n")
    elif how == "one-line-dict":
        files[f"{raw}/num-node-dict.csv.gz"] = _gz("author,paper\n")
    return how


def _damage_homo(files: dict, root: str, rng) -> str:
    raw = f"{root}/raw"
    how = rng.choice(("count", "two-graphs", "three-columns", "id-range", "edge-count",
                      "features", "labels", "many-lines"))
    if how == "count":
        files[f"{raw}/num-node-list.csv.gz"] = _gz(rng.choice(BIG_COUNTS) + "\n")
    elif how == "two-graphs":
        files[f"{raw}/num-node-list.csv.gz"] = _gz("34\n34\n")
    elif how == "three-columns":
        files[f"{raw}/edge.csv.gz"] = _gz("0,1,2\n1,2,3\n")
    elif how == "id-range":
        files[f"{raw}/edge.csv.gz"] = _gz(rng.choice(("0,34\n", "-1,2\n", "0,1099511627776\n",
                                                      "0,18446744073709551615\n", "0,1e3\n")))
    elif how == "edge-count":
        files[f"{raw}/num-edge-list.csv.gz"] = _gz(rng.choice(("1\n", "-1\n", "x\n")))
    elif how == "features":
        files[f"{raw}/node-feat.csv.gz"] = _gz(rng.choice(("1,2\n", "nan,1\n" * 34,
                                                          "1e999\n" * 34)))
    elif how == "labels":
        files[f"{raw}/node-label.csv.gz"] = _gz(rng.choice(("0.5\n" * 34, "nan\n", "")))
    elif how == "many-lines":   # 200,000 edges between two nodes: read, deduplicated
        files[f"{raw}/edge.csv.gz"] = _gz("0,1\n" * 200_000)
    return how


def ogb(b, fam) -> None:
    c = b.case
    c.command = "graph"
    homo = [s for s in b.corpus.seeds.get("graph", []) if s.path.endswith("/ogb")]
    if homo and b.chance(0.4):
        root = homo[0].path
        b.add_files(b.corpus.files(root))
        damage = _damage_homo
    else:
        root = "mag"
        c.files.update(_hetero_files(root))
        damage = _damage_hetero
    if b.chance(0.75):
        c.notes.append(f"{root}: {damage(c.files, root, b.rng)}")
        c.mutated.append(root)
    elif b.chance(0.5):
        c.notes.append(f"{root}: {mutate_tree(c.files, root, b.rng)}")
        c.mutated.append(root)
    c.inputs.append(root)
    arg = root
    if b.chance(0.4):
        arg += b.pick((",relation=all", ",relation=paper___cites___paper",
                       ",relation=author___writes___paper", ",relation=nope", ",x=1",
                       ",relation=../x"))
    c.args.append((arg,))
    _graph_options(b)


def _graph_options(b) -> None:
    c = b.case
    if b.chance(0.2):
        b.opt("--json")
    if b.chance(0.1):
        b.opt(b.pick(("-q", "--progress")))
    if b.chance(0.35):
        b.output("-o", "file", p_odd=0.3)
        a = c.args[-1]
        if a[1] == "out.txt":
            c.args[-1] = (a[0], "out.npz")
            c.outputs[-1] = "out.npz"
    b.stray()


def _edge_index(rng) -> tuple[np.ndarray, str]:
    good = np.array([[0, 1, 2, 3, 1], [1, 2, 3, 0, 3]], np.int64)
    how = rng.choice(("good", "good", "id-2^40", "id-max", "uint64-max", "negative", "Ex2",
                      "1-D", "float", "empty", "3xE", "int8", "bool"))
    if how == "id-2^40":
        good[1, 0] = 2**40
    elif how == "id-max":
        good[1, 0] = 2**63 - 1
    elif how == "uint64-max":
        good = good.astype(np.uint64)
        good[1, 0] = np.uint64(2**64 - 1)
    elif how == "negative":
        good[0, 2] = -5
    elif how == "Ex2":
        good = good.T.copy()
    elif how == "1-D":
        good = good.reshape(-1)
    elif how == "float":
        good = good.astype(np.float64)
    elif how == "empty":
        good = np.zeros((2, 0), np.int64)
    elif how == "3xE":
        good = np.vstack([good, good[:1]])
    elif how == "int8":
        good = good.astype(np.int8)
    elif how == "bool":
        good = good.astype(bool)
    return good, how


def pyg(b, fam) -> None:
    c = b.case
    c.command = "graph"
    e, how = _edge_index(b.rng)
    notes = [f"edge_index {how}"]
    if b.chance(0.35):
        c.files["g.npy"] = npy_bytes(e)
        path = "g.npy"
    else:
        arrays = {"edge_index": e}
        if b.chance(0.6):
            arrays["num_nodes"] = b.pick((np.array(4), np.array(10), np.array(2**40),
                                          np.array(-1), np.array([4, 5]), np.array(4.0),
                                          np.array(2), np.array(2**64 - 1, np.uint64)))
            notes.append(f"num_nodes {arrays['num_nodes']!r}")
        if b.chance(0.4):
            arrays["x"] = b.pick((np.ones((4, 3)), np.ones((3, 3)), np.full((4, 2), np.nan),
                                  np.ones(4), np.array([["a"] * 2] * 4)))
        if b.chance(0.3):
            arrays["y"] = b.pick((np.array([0, 1, 0, 1]), np.array([0.5] * 4), np.array([0])))
        c.files["g.npz"] = npz_bytes(arrays)
        path = "g.npz"
    c.notes.append(f"{path}: " + "; ".join(notes))
    c.mutated.append(path)
    c.inputs.append(path)
    c.args.append((path,))
    _graph_options(b)


SYN_GOOD = {"nodes": ("10", "40", "100"), "edges": ("0", "20", "60", "150"),
            "features": ("0", "3", "8"), "density": ("0", "0.1", "1"),
            "exponent": ("2.1", "2.5", "3"), "max_degree": ("1", "5", "30"),
            "seed": ("0", "1", "7")}
SYN_BAD = ("0", "-1", "1000000000", "1000000000000", "9223372036854775807",
           "1" + "0" * 5000, "nan", "inf", "1e999", "2", "2.0000001", "1.0000001", "", "x",
           "0x10", "1e3")


def synthetic(b, fam) -> None:
    c = b.case
    c.command = "graph"
    items = []
    if b.chance(0.15):
        items.append(b.pick(("collab", "mag")))
        # a preset's own size takes a minute: a case shrinks it (later keys win)
        items += ["nodes=60", "edges=100", "features=2"]
    keys = list(SYN_GOOD)
    for k in b.rng.sample(keys, b.rng.randint(1, len(keys))):
        items.append(f"{k}={b.pick(SYN_GOOD[k]) if b.good(0.8) else b.pick(SYN_BAD)}")
    if "nodes" not in " ".join(items) and b.good(0.9):
        items.insert(0, "nodes=30")
    if b.chance(0.1):
        items.append(b.pick(("nope=1", "collab", "nodes", "=3", ",", "nodes=1=2")))
    if b.chance(0.1):   # a degree sequence instead of nodes=
        items = [x for x in items if not x.startswith("nodes=")]
        deg = b.pick((np.array([3.0, 2, 2, 1, 1, 1]), np.array([np.nan, 1]), np.array([-1.0, 2]),
                      np.zeros(0), np.ones((2, 2)), np.array(["a", "b"])))
        c.files["deg.npy"] = npy_bytes(deg)
        c.inputs.append("deg.npy")
        items.append(b.pick(("degrees=deg.npy", "degrees=missing.npy", "degrees=/dev/zero",
                             "degrees=.")))
    b.rng.shuffle(items) if b.chance(0.1) else None
    spec = "synthetic:" + ",".join(items)
    c.notes.append(f"spec {spec[:120]}")
    c.args.append((spec,))
    if b.chance(0.2):
        b.opt("--seed", b.pick(("1", "2")) if b.good(0.7) else b.pick(("-1", "x")))
    _graph_options(b)
