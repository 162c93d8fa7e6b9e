"""What `fuseflowc gen-data` writes: random inputs for a program, or a graph data set's adjacency
and features for its graph inputs. Seeded and deterministic (each tensor has its own stream)."""

from __future__ import annotations

import math

from ..data.fibertree import FiberTensor
from ..diagnostics import UserError
from ..lang import ast


def _inputs_text(p: ast.Program) -> str:
    return ", ".join(p.inputs) or "(none)"


def _name_value(item: str, convert, last: bool = False) -> tuple[str, str, object]:
    """`NAME=VALUE` split at its first (`last`: its last) '=': (NAME stripped, the '=' or '' when
    there is none, VALUE converted by `convert` or None when it does not convert)."""
    name, eq, value = item.rpartition("=") if last else item.partition("=")
    try:
        converted = convert(value)
    except ValueError:
        converted = None
    return name.strip(), eq, converted


def parse_sizes(p: ast.Program, items) -> dict[str, int]:
    """`--size DIM=N` options: sizes of dims, checked against the program's declarations."""
    out: dict[str, int] = {}
    dims = {d.name: d for d in p.dims}
    example = next((d.name for d in p.dims), "N")
    for item in items:
        name, eq, n = _name_value(item, int)
        if not eq or not name or n is None:
            raise UserError(f"--size '{item}': expected DIM=N, e.g. --size {example}=100")
        if name not in dims:
            raise UserError(f"--size {item}: the program declares no dim {name}; its dims are "
                            f"{', '.join(dims) or '(none)'}")
        if n < 0:
            raise UserError(f"--size {item}: a size must be a non-negative integer")
        d = dims[name]
        if d.size is not None and d.size != n:
            raise UserError(f"--size {item}: the program fixes {name} = {d.size}").note(
                f"{name} is declared here", d.loc)
        out[name] = n
    return out


def parse_densities(p: ast.Program, items) -> tuple[float | None, dict[str, float]]:
    """`--density` options: (the default for every input, per-input densities)."""
    default = None
    per: dict[str, float] = {}
    inputs = set(p.inputs)
    example = next(iter(p.inputs), "A")
    for item in items:
        name, eq, d = _name_value(item, float, last=True)
        if d is None or (eq and not name):
            raise UserError(f"--density '{item}': expected T=FRACTION or FRACTION, e.g. "
                            f"--density {example}=0.1 or --density 0.1")
        if not 0.0 <= d <= 1.0:
            raise UserError(f"--density {item}: a density must be between 0 and 1")
        if not eq:
            default = d
            continue
        if name not in inputs:
            if name in set(p.assigned):
                raise UserError(f"--density {item}: {name} is computed by the program, not an "
                                f"input; inputs are {_inputs_text(p)}")
            raise UserError(f"--density {item}: the program has no tensor {name}; inputs are "
                            f"{_inputs_text(p)}")
        per[name] = d
    return default, per


def _input_decls(p: ast.Program) -> list[ast.TensorDecl]:
    return [p.tensor(n) for n in p.inputs]


def _pick_graph_tensor(p: ast.Program, name: str | None) -> ast.TensorDecl:
    if name is not None:
        return _named_matrix(p, name, "--graph-tensor")
    cands = [t for t in _input_decls(p) if t.order == 2 and t.dims[0] == t.dims[1]
             and not t.format.is_dense]
    if len(cands) == 1:
        return cands[0]
    if not cands:
        raise UserError("--graph: the program has no square sparse matrix input (like "
                        "`tensor A[N, N] : csr`) to receive the adjacency; name one with "
                        "--graph-tensor T")
    raise UserError(f"--graph: several square sparse matrix inputs could receive the adjacency "
                    f"({', '.join(t.name for t in cands)}); choose one with --graph-tensor T")


def _named_matrix(p: ast.Program, name: str, option: str) -> ast.TensorDecl:
    if name not in set(p.inputs):
        what = "is computed by the program, not an input" if name in set(p.assigned) else \
            "is not a tensor of the program"
        raise UserError(f"{option} {name}: {name} {what}; inputs are {_inputs_text(p)}")
    t = p.tensor(name)
    if t.order != 2:
        raise UserError(f"{option} {name}: {name} has {t.order} dim(s); it must be a matrix",
                        t.loc)
    return t


def _pick_feature_tensor(p: ast.Program, name: str | None, adj: ast.TensorDecl,
                         bound: dict[str, int]) -> ast.TensorDecl | None:
    if name is not None:
        t = _named_matrix(p, name, "--feature-tensor")
        if t.name == adj.name:
            raise UserError(f"--feature-tensor {name}: {name} already receives the adjacency")
        return t
    cands = [t for t in _input_decls(p) if t.order == 2 and t.name != adj.name
             and t.dims[0] == adj.dims[0] and isinstance(t.dims[1], str)
             and p.dim(t.dims[1]).size is None]
    if len(cands) > 1:
        raise UserError(f"--graph: several inputs could receive the node features "
                        f"({', '.join(t.name for t in cands)}); choose one with "
                        f"--feature-tensor T")
    return cands[0] if cands else None


def _bind(bound: dict[str, int], decl: ast.TensorDecl, shape, what: str) -> None:
    """Bind `decl`'s dims to the graph's `shape`, or report a conflict."""
    for dim, n in zip(decl.dims, shape):
        have = dim if isinstance(dim, int) else bound.get(dim)
        if have is not None and have != n:
            raise UserError(f"--graph: {what} {'x'.join(map(str, shape))} for {decl.name}"
                            f"[{', '.join(map(str, decl.dims))}], but {dim} = {have}", decl.loc)
        if isinstance(dim, str):
            bound[dim] = n


def _graph_inputs(p, graph, normalize, gt, ft, bound, seed, specs):
    """The adjacency and feature tensors from `graph`; binds their dims in `bound`."""
    from ..data import graphs
    from ..data.io import tensor_from_scipy

    adj_decl = _pick_graph_tensor(p, gt)
    feat_decl = _pick_feature_tensor(p, ft, adj_decl, bound)
    fdim = feat_decl.dims[1] if feat_decl is not None else None
    fsize = fdim if isinstance(fdim, int) else bound.get(fdim) if fdim else None
    kind = "random" if fsize is not None else "identity"
    g = graphs.load_graph(graph, features=kind, num_features=fsize or 16, seed=seed)
    adj = {"gcn": graphs.gcn_normalize, "mean": graphs.mean_normalize,
           "none": lambda a: a}[normalize](g.adj)
    _bind(bound, adj_decl, adj.shape, f"graph {graph} has adjacency")
    out = {adj_decl.name: tensor_from_scipy(adj, specs[adj_decl.name])}
    sources = {adj_decl.name: f"graph {graph}, adjacency ({normalize})"}
    if feat_decl is not None and g.features is not None:
        _bind(bound, feat_decl, g.features.shape, f"graph {graph} has features")
        out[feat_decl.name] = tensor_from_scipy(g.features, specs[feat_decl.name])
        sources[feat_decl.name] = f"graph {graph}, features"
    cls = _class_dim(p, adj_decl, bound)
    if cls is not None:
        if not g.num_classes:
            raise UserError(f"dim {cls} has no size, and graph {graph} has no labels to count "
                            f"the classes in: give it with --size {cls}=<N>", p.dim(cls).loc)
        bound[cls] = g.num_classes
        sources[f"dim {cls}"] = (f"{g.num_classes}, the number of classes in the labels of "
                                 f"graph {graph}")
    return out, sources


def _class_dim(p: ast.Program, adj: ast.TensorDecl, bound: dict[str, int]) -> str | None:
    """The program's class dim, for a graph's labels to size: the one dim still unsized (by the
    program, --size or the graph's adjacency and features) that indexes an output matrix
    together with the nodes, as the logits Y[N, C] do; None when there is no such single
    dim."""
    nodes = adj.dims[0]
    found = {d for name in p.outputs for t in [p.tensor(name)] if t.order == 2
             and nodes in t.dims for d in t.dims
             if d != nodes and isinstance(d, str) and d not in bound}
    return found.pop() if len(found) == 1 else None


def _require_sizes(p: ast.Program, bound: dict[str, int]) -> None:
    """Every dim of every input needs a size: say how to give one."""
    for t in _input_decls(p):
        for dim, _loc in zip(t.dims, t.dim_locs or [t.loc] * t.order):
            if isinstance(dim, str) and dim not in bound:
                d = p.dim(dim)
                raise UserError(f"dim {dim} has no size (tensor {t.name} needs it): give it with "
                                f"--size {dim}=<N> or declare `dim {dim} = <N>`", d.loc)


def generate(p: ast.Program, sizes: dict[str, int], density: tuple[float | None, dict],
             seed: int, graph: str | None = None, normalize: str = "gcn",
             graph_tensor: str | None = None, feature_tensor: str | None = None
             ) -> tuple[dict[str, FiberTensor], dict[str, str]]:
    """Input tensors for program `p` (name -> tensor in its declared format) and, for each, a
    short text saying where it came from (`sources`; also under "dim C" the size a graph's
    labels gave the program's class dim, see `_class_dim`)."""
    from ..data.gen import random_tensor, resolve_shape, tensor_rng

    if graph is None and (graph_tensor or feature_tensor):
        raise UserError("--graph-tensor and --feature-tensor need --graph")
    bound = {d.name: d.size for d in p.dims if d.size is not None}
    bound.update(sizes)
    specs = {s.name: s for s in p.specs()}
    out: dict[str, FiberTensor] = {}
    sources: dict[str, str] = {}
    if graph is not None:
        out, sources = _graph_inputs(p, graph, normalize, graph_tensor, feature_tensor, bound,
                                     seed, specs)
    _require_sizes(p, bound)
    default, per = density
    for name in p.inputs:
        if name in out:
            continue
        spec = specs[name]
        d = per.get(name, default)
        out[name] = random_tensor(spec, resolve_shape(spec, bound), d, tensor_rng(seed, name))
        sources[name] = "random" + (f", density {d:g}" if d is not None else "")
    return out, sources


def summary(p: ast.Program, tensors: dict[str, FiberTensor], sources: dict[str, str],
            output: str) -> str:
    """A table of what was written (stderr)."""
    head = ("tensor", "shape", "format", "stored", "source")
    rows = []
    for name in p.inputs:
        t = tensors[name]
        stored = t.entries * (t.block ** 2 if t.block else 1)
        rows.append((name, " x ".join(map(str, t.shape)), t.format.name(),
                     f"{stored}/{math.prod(t.shape)}", sources[name]))
    widths = [max(len(r[k]) for r in [head, *rows]) for k in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
             for r in [head, tuple("-" * w for w in widths), *rows]]
    lines += [f"{key} = {text}" for key, text in sources.items() if key.startswith("dim ")]
    lines.append(f"wrote {len(tensors)} tensor(s) to {output}")
    return "\n".join(lines)
