"""Sweep spec files: a small TOML (or JSON) description of a grid of configurations.

    [[programs]]                       # or: programs = ["a.ff", "b.ff"]
    path = "../models/gcn/gcn_full.ff" # relative to the spec file
    model = "gcn"                      # default: the file name up to its last '_'
    variant = "full"                   # default: the file name after its last '_'
    inline_widened = true              # fuse --inline-widened (default false)
    share = true                       # fuse --share (default false)
    free_input_order = false           # fuse --free-input-order (default false)
    unfused = true                     # fuse --unfused: drop every fusion region (default false)
    estimate_only = "why"              # estimate, do not simulate (status estimated, the
                                       # reason in the row's error column)

    orders = [0, 1]                    # dataflow order indices, or "all" (up to max_orders),
                                       # or "product" (every region's orders crossed)
    schedule = ["parallelize Y: i by {factor}"]   # --schedule directive templates
    [params]
    factor = [1, 2, 4]                 # template parameters, swept
    pipelines = ["", "cleanup"]        # opt pipelines ("": none, the raw graph; default:
                                       # opt.pipeline.DEFAULT_PIPELINE, as `lower` runs)
    [[data]]                           # data sets: a directory, or gen-data parameters
    name = "karate"
    graph = "karate"
    arch = [[], ["memory.latency=0"]]  # alternatives of --set overrides

Everything a user can get wrong is a UserError located at file:line:col (TOML syntax, JSON
syntax) or naming the file and key (`spec.toml: orders: ...`). See docs/sweep.md.
"""

from __future__ import annotations

import json
import math
import re
import string
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import Loc, Source, UserError
from ..files import read_source
from ..fuse.paper_order import PAPER
from ..limits import number_too_long

# keys a spec may hold at the top level, and in one [[programs]] / [[data]] entry
TOP_KEYS = ("programs", "orders", "max_orders", "order_region", "schedule", "params",
            "pipelines", "data", "arch", "check", "timeout", "max_cycles", "flops_per_cycle",
            "max_jobs")
PROGRAM_KEYS = ("path", "model", "variant", "inline_widened", "free_input_order", "share", "orders",
                "order_region", "schedule", "params", "estimate_only", "unfused")
#: The words `orders` may be instead of a list of indices: "all" (one index applied to every
#: region, or to order_region), "product" (every combination of every region's indices).
ORDER_WORDS = ("all", "product")
DATA_KEYS = ("name", "dir", "graph", "normalize", "sizes", "density", "seed",
             "graph_tensor", "feature_tensor")
NORMALIZATIONS = ("gcn", "mean", "none")
DEFAULT_MAX_ORDERS = 64
#: The longest per-configuration timeout, in seconds (115 days; the alarm timer's range is
#: finite, and a longer limit is no limit).
MAX_TIMEOUT = 1e7
#: The most worker processes a sweep starts.
MAX_JOBS = 256


@dataclass
class ProgramEntry:
    """One program (a fusion variant of a model) of the grid."""

    path: str                 # as written in the spec (the configuration records this)
    file: Path                # resolved against the spec's directory
    model: str
    variant: str
    inline_widened: bool = False
    free_input_order: bool = False
    share: bool = False
    unfused: bool = False
    orders: list[int] | str = field(default_factory=lambda: [0])
    order_region: str | None = None
    schedule: list[str] = field(default_factory=list)
    params: dict[str, list] = field(default_factory=dict)
    # why this program is estimated instead of simulated (None: simulated)
    estimate_only: str | None = None


@dataclass
class DataEntry:
    """One data set: an existing directory, or gen-data parameters."""

    name: str
    gen: dict = field(default_factory=dict)   # as written: dir, or graph, sizes, density, seed...

    def describe(self) -> dict:
        """What identifies the data set in a configuration (JSON-ready, paths as written)."""
        return {"name": self.name, **self.gen}


@dataclass
class SweepSpec:
    """A parsed spec: the grid's axes and per-configuration limits."""

    path: str
    programs: list[ProgramEntry]
    data: list[DataEntry]
    pipelines: list[str]
    arch: list[list[str]]
    max_orders: int = DEFAULT_MAX_ORDERS
    check: bool = True
    timeout: float | None = None
    max_cycles: int | None = None
    flops_per_cycle: float = 1.0
    # the most configurations run at once, whatever `-j` asks (None: -j's): a spec whose runs
    # each need a large share of the machine's memory says so here
    max_jobs: int | None = None


# ---- reading ---------------------------------------------------------------------------------
_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")


def read_spec_table(path: str) -> tuple[dict, Source]:
    """The raw table of a spec file (TOML, or JSON when it ends in .json), with its source."""
    src = read_source(path)
    if path.endswith(".json"):
        try:
            table = json.loads(src.text)
        except json.JSONDecodeError as e:
            raise UserError(f"invalid JSON: {e.msg}", Loc(src, e.lineno, e.colno)) from None
        except ValueError:  # an integer of more digits than Python converts
            raise number_too_long(src) from None
    else:
        import tomllib
        try:
            table = tomllib.loads(src.text)
        except ValueError as e:
            if not isinstance(e, tomllib.TOMLDecodeError):
                raise number_too_long(src) from None
            msg = str(e)
            m = _TOML_POS.search(msg)
            text = _TOML_POS.sub("", msg).replace("(at end of document)", "").strip()
            loc = Loc(src, int(m.group(1)), int(m.group(2))) if m else None
            if loc is None and "end of document" in msg:
                lines = src.text.rstrip("\n").split("\n")
                loc = Loc(src, len(lines), len(lines[-1]) + 1)
                text += " (at the end of the file)"
            if loc is None:
                raise UserError(f"{path}: invalid TOML: {text}") from None
            raise UserError(f"invalid TOML: {text}", loc) from None
    if not isinstance(table, dict):
        raise UserError(f"{path}: a spec is a table (a JSON object) of keys such as programs, "
                        f"orders, data")
    return table, src


class _Keys:
    """Type-checked access to a spec table; errors name the file and the key path, and point
    at the key's line when it can be found in the text."""

    def __init__(self, src: Source, prefix: str = ""):
        self.src = src
        self.prefix = prefix

    def error(self, key: str, message: str) -> UserError:
        loc = _find_key(self.src, key)
        where = f"{self.prefix}{key}"
        if loc is not None:
            return UserError(f"{where}: {message}", loc)
        return UserError(f"{self.src.name}: {where}: {message}")

    def unknown(self, table: dict, allowed: tuple[str, ...], where: str = "") -> None:
        for k in table:
            if k not in allowed:
                raise self.error(f"{where}{k}", "unknown key; expected one of "
                                 + ", ".join(allowed))


def _loc_at(src: Source, start: int, length: int) -> Loc:
    line = src.text.count("\n", 0, start) + 1
    col = start - (src.text.rfind("\n", 0, start) + 1) + 1
    return Loc(src, line, col, length)


def _find_key(src: Source, key: str) -> Loc | None:
    """Where key path `key` (e.g. `orders`, `data[1].seed`) is written in the text, as well as
    a text search can tell: `name =` (TOML) or `"name":` (JSON) after the k-th `[[table]]`
    header for an entry of an array of tables; None when not found."""
    m = re.fullmatch(r"(\w+)\[(\d+)\](?:\.(\w+))?.*", key)
    start = 0
    if m:
        table, k, name = m.group(1), int(m.group(2)), m.group(3)
        heads = list(re.finditer(r"^[ \t]*\[\[[ \t]*(" + re.escape(table) + r")[ \t]*\]\]",
                                 src.text, re.M))
        if k >= len(heads):
            return _find_key(src, table)
        if name is None:
            h = heads[k]
            return _loc_at(src, h.start(1), len(table))
        start = heads[k].end()
    else:
        name = key.split(".")[-1]
    for pat in (r'^[ \t]*"?(' + re.escape(name) + r')"?[ \t]*=',
                r'^[ \t]*\[\[?[ \t]*(' + re.escape(name) + r')[ \t]*\]',
                r'"(' + re.escape(name) + r')"[ \t]*:'):
        found = re.compile(pat, re.M).search(src.text, start)
        if found:
            return _loc_at(src, found.start(1), len(name))
    return None


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _str_list(keys: _Keys, key: str, v, allow_str: bool = True) -> list[str]:
    if allow_str and isinstance(v, str):
        return [v]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise keys.error(key, "expected a list of strings")
    return list(v)


def _orders(keys: _Keys, key: str, v) -> list[int | str] | str:
    """A program's `orders`: "all", "product", or a list of order indices and "paper" (the
    order FuseFlow's compiler picks), "paper" first, then the indices ascending."""
    if isinstance(v, str) and v in ORDER_WORDS:
        return v
    if _is_int(v) or v == PAPER:
        v = [v]
    if not isinstance(v, list) or not v or not all((_is_int(x) and x >= 0) or x == PAPER
                                                   for x in v):
        raise keys.error(key, 'expected "all", "product" or a non-empty list of order indices '
                              '(integers >= 0) and "paper" (FuseFlow\'s order), e.g. '
                              '["paper", 0, 1, 2]')
    return [PAPER] * (PAPER in v) + sorted({x for x in v if x != PAPER})


def _params(keys: _Keys, key: str, v) -> dict[str, list]:
    if not isinstance(v, dict):
        raise keys.error(key, "expected a table of parameter lists, e.g. factor = [1, 2, 4]")
    out = {}
    for name in sorted(v):
        vals = v[name]
        if not isinstance(vals, list):
            vals = [vals]
        if not vals or not all(isinstance(x, (str, int, float)) and not isinstance(x, bool)
                               for x in vals):
            raise keys.error(f"{key}.{name}", "expected a non-empty list of numbers or strings")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise keys.error(f"{key}.{name}", "a parameter name is a word (letters, digits, _)")
        out[name] = list(vals)
    return out


def template_fields(template: str) -> list[str]:
    """The `{name}` fields of a schedule template (`{{`/`}}` are literal braces)."""
    return [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]


def _check_templates(keys: _Keys, key: str, templates: list[str], params: dict) -> None:
    for t in templates:
        try:
            names = template_fields(t)
        except ValueError as e:
            raise keys.error(key, f"bad template '{t}': {e}") from None
        for n in names:
            if n not in params:
                known = ", ".join(sorted(params)) or "(none)"
                raise keys.error(key, f"template '{t}' uses {{{n}}}, which [params] does not "
                                      f"define (parameters: {known})")


def _split_name(stem: str) -> tuple[str, str]:
    model, sep, variant = stem.rpartition("_")
    return (model, variant) if sep and model else (stem, stem)


def _program(keys: _Keys, k: int, v, base: Path, defaults: dict) -> ProgramEntry:
    where = f"programs[{k}]"
    if isinstance(v, str):
        v = {"path": v}
    if not isinstance(v, dict):
        raise keys.error("programs", "expected a list of paths or of tables with a path")
    keys.unknown(v, PROGRAM_KEYS, f"{where}.")
    if not isinstance(v.get("path"), str) or not v["path"]:
        raise keys.error(f"{where}.path", "every program needs a path (a .ff file)")
    model, variant = _split_name(Path(v["path"]).stem)
    _check_program_types(keys, where, v)
    schedule, params = _program_schedule(keys, where, v, defaults)
    file = base / v["path"]
    if not _probe(keys, f"{where}.path", v["path"], file, Path.is_file):
        raise keys.error(f"{where}.path", f"{v['path']}: no such file (relative to the spec "
                                          f"file's directory {base})")
    orders, order_region = _program_orders(keys, where, v, defaults)
    return ProgramEntry(
        path=v["path"], file=file, model=v.get("model", model),
        variant=v.get("variant", variant), inline_widened=v.get("inline_widened", False),
        free_input_order=v.get("free_input_order", False), share=v.get("share", False),
        unfused=v.get("unfused", False), orders=orders, order_region=order_region,
        schedule=schedule, params=params, estimate_only=v.get("estimate_only"))


def _check_program_types(keys: _Keys, where: str, v: dict) -> None:
    """A program table's names are strings, its flags booleans, its estimate_only a reason."""
    for key in ("model", "variant", "order_region"):
        if key in v and not isinstance(v[key], str):
            raise keys.error(f"{where}.{key}", "expected a string")
    for key in ("inline_widened", "free_input_order", "share", "unfused"):
        if key in v and not isinstance(v[key], bool):
            raise keys.error(f"{where}.{key}", "expected true or false")
    if "estimate_only" in v and (not isinstance(v["estimate_only"], str)
                                 or not v["estimate_only"].strip()):
        raise keys.error(f"{where}.estimate_only", "expected the reason it is not simulated "
                                                   "(a non-empty string)")


def _program_schedule(keys: _Keys, where: str, v: dict, defaults: dict
                      ) -> tuple[list[str], dict[str, list]]:
    """(the program's schedule templates, the parameters they use: only those are swept for
    it, so that no configuration runs twice)."""
    params = _params(keys, f"{where}.params", v["params"]) if "params" in v \
        else defaults["params"]
    schedule = _str_list(keys, f"{where}.schedule", v["schedule"]) if "schedule" in v \
        else defaults["schedule"]
    _check_templates(keys, f"{where}.schedule" if "schedule" in v else "schedule", schedule,
                     params)
    used = {f for t in schedule for f in template_fields(t)}
    return schedule, {k: vals for k, vals in params.items() if k in used}


def _program_orders(keys: _Keys, where: str, v: dict, defaults: dict
                    ) -> tuple[list[int] | str, str | None]:
    """(the program's orders, its order_region); "product" takes no order_region."""
    orders = _orders(keys, f"{where}.orders", v["orders"]) if "orders" in v \
        else defaults["orders"]
    order_region = v.get("order_region", defaults["order_region"])
    if orders == "product" and order_region is not None:
        key = f"{where}.orders" if "orders" in v else "orders"
        raise keys.error(key, f'"product" sweeps the orders of every region; it does not go '
                              f'with order_region ({order_region}): use orders = "all" for the '
                              f'orders of one region')
    return orders, order_region


def _density(keys: _Keys, key: str, v):
    def ok(x):
        return isinstance(x, (int, float)) and not isinstance(x, bool) and 0 <= x <= 1
    if ok(v):
        return float(v)
    if isinstance(v, dict) and all(ok(x) for x in v.values()):
        return {n: float(v[n]) for n in sorted(v)}
    raise keys.error(key, "expected a fraction between 0 and 1, or a table T = fraction")


def _graph_name(source: str) -> str:
    """A data set's default name: synthetic:collab -> synthetic-collab, a path -> its stem."""
    from ..data.graphs import is_named_source, split_options
    if is_named_source(source):
        return source.replace(":", "-").replace(",", "-").replace("=", "")
    return Path(split_options(source)[0]).stem



def _probe(keys, where: str, shown: str, path: Path, test) -> bool:
    """`test(path)` (Path.is_file, is_dir, exists) for a path a spec names; a path the system
    cannot look up (a name too long, a loop of links: pathlib raises for those) is the spec's
    error at `where`, with the system's reason (found by fuzzing)."""
    try:
        return test(path)
    except OSError as e:
        raise keys.error(where, f"{shown}: {e.strerror or e}") from None


def _data(keys: _Keys, k: int, v, base: Path) -> DataEntry:
    where = f"data[{k}]"
    if not isinstance(v, dict):
        raise keys.error("data", "expected a list of tables (dir = ..., or graph/sizes/density/"
                                 "seed for generated data)")
    keys.unknown(v, DATA_KEYS, f"{where}.")
    if "dir" in v:
        return _data_dir(keys, where, v, base)
    gen = _generated(keys, where, v, base)
    name = v.get("name")
    if name is None:
        name = _graph_name(v["graph"]) if "graph" in v else f"random-{gen['seed']}"
    if not isinstance(name, str) or not name:
        raise keys.error(f"{where}.name", "expected a non-empty string")
    return DataEntry(name, gen)


def _data_dir(keys: _Keys, where: str, v: dict, base: Path) -> DataEntry:
    """A data set that is an existing directory (`dir`, and at most a `name`)."""
    if not isinstance(v["dir"], str):
        raise keys.error(f"{where}.dir", "expected a path")
    extra = [x for x in v if x not in ("name", "dir")]
    if extra:
        raise keys.error(f"{where}.{extra[0]}", "a data set is either a directory (dir) or "
                                               "generated (graph, sizes, ...), not both")
    d = base / v["dir"]
    if not _probe(keys, f"{where}.dir", v["dir"], d, Path.is_dir):
        raise keys.error(f"{where}.dir", f"{v['dir']}: no such directory (relative to the "
                                         f"spec file's directory {base})")
    return DataEntry(v.get("name", Path(v["dir"]).name), {"dir": v["dir"]})


def _generated(keys: _Keys, where: str, v: dict, base: Path) -> dict:
    """gen-data's parameters of a generated data set, checked (as written, seed 0 by
    default)."""
    gen: dict = {}
    if "graph" in v:
        gen["graph"] = _graph_source(keys, where, v["graph"], base)
    if "normalize" in v:
        if v["normalize"] not in NORMALIZATIONS:
            raise keys.error(f"{where}.normalize", "expected one of " + ", ".join(NORMALIZATIONS))
        gen["normalize"] = v["normalize"]
    if "sizes" in v:
        gen["sizes"] = _sizes(keys, f"{where}.sizes", v["sizes"])
    if "density" in v:
        gen["density"] = _density(keys, f"{where}.density", v["density"])
    gen["seed"] = v.get("seed", 0)
    if not _is_int(gen["seed"]) or gen["seed"] < 0:  # numpy seeds are non-negative
        raise keys.error(f"{where}.seed", "expected a non-negative integer")
    for key in ("graph_tensor", "feature_tensor"):
        if key in v:
            if not isinstance(v[key], str):
                raise keys.error(f"{where}.{key}", "expected a tensor name")
            gen[key] = v[key]
    return gen


def _sizes(keys: _Keys, key: str, s) -> dict[str, int]:
    """A data set's `sizes`: a table DIM = N (N >= 0), sorted by dim."""
    if not isinstance(s, dict) or not all(_is_int(x) and x >= 0 for x in s.values()):
        raise keys.error(key, "expected a table DIM = N, e.g. { N = 100 }")
    return {n: s[n] for n in sorted(s)}


def _graph_source(keys: _Keys, where: str, g, base: Path) -> str:
    """A data set's `graph`: a named source, or a file relative to the spec's directory."""
    if not isinstance(g, str):
        raise keys.error(f"{where}.graph", "expected karate, synthetic:..., an OGB "
                                           "directory, PATH.npz, PATH.npy or PATH.mtx")
    from ..data.graphs import is_named_source, split_options
    if not is_named_source(g) and not _probe(keys, f"{where}.graph", g,
                                             base / split_options(g)[0], Path.exists):
        raise keys.error(f"{where}.graph", f"{g}: no such file or directory (relative to "
                                           f"the spec file's directory {base})")
    return g


def _arch(keys: _Keys, v) -> list[list[str]]:
    if not isinstance(v, list) or not v:
        raise keys.error("arch", 'expected a list of alternatives, each a list of KEY=VALUE '
                                 'overrides, e.g. [[], ["memory.latency=0"]]')
    out = []
    for alt in v:
        items = [alt] if isinstance(alt, str) else alt
        if isinstance(items, dict):
            items = [f"{k}={json.dumps(x) if isinstance(x, str) else x}" for k, x in
                     sorted(items.items())]
        if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
            raise keys.error("arch", "each alternative is a list of KEY=VALUE strings")
        for x in items:
            if "=" not in x or "." not in x.split("=", 1)[0]:
                raise keys.error("arch", f"'{x}': expected SECTION.KEY=VALUE, e.g. "
                                         f"memory.latency=0")
        out.append(list(items))
    return out


def parse_spec(path: str) -> SweepSpec:
    """Read and check a spec file; every mistake is a located UserError."""
    table, src = read_spec_table(path)
    keys = _Keys(src)
    keys.unknown(table, TOP_KEYS)
    base = Path(path).parent
    defaults = _program_defaults(keys, table)
    pipelines = _pipelines(keys, table)
    arch = _arch(keys, table["arch"]) if "arch" in table else [[]]
    spec = SweepSpec(path, [], [], pipelines, arch)
    _limits(keys, table, spec)
    spec.programs = _programs(keys, table, path, base, defaults)
    spec.data = _datasets(keys, table, path, base)
    return spec


def _program_defaults(keys: _Keys, table: dict) -> dict:
    """The top-level orders, order_region, schedule and params every program starts from."""
    params = _params(keys, "params", table.get("params", {}))
    defaults = {
        "orders": _orders(keys, "orders", table["orders"]) if "orders" in table else [0],
        "order_region": table.get("order_region"),
        "schedule": _str_list(keys, "schedule", table.get("schedule", [])),
        "params": params,
    }
    if defaults["order_region"] is not None and not isinstance(defaults["order_region"], str):
        raise keys.error("order_region", "expected a region name")
    _check_templates(keys, "schedule", defaults["schedule"], params)
    return defaults


def _pipelines(keys: _Keys, table: dict) -> list[str]:
    """The opt pipelines, each parsed (no key: what `lower` compiles with; "" spelled out: the
    raw graph, no pass)."""
    from ..opt.pipeline import DEFAULT_PIPELINE, PipelineError, parse_pipeline
    pipelines = _str_list(keys, "pipelines", table.get("pipelines", [DEFAULT_PIPELINE]))
    if not pipelines:
        raise keys.error("pipelines", "expected at least one pipeline ('' runs no pass)")
    for p in pipelines:
        try:
            parse_pipeline(p)
        except PipelineError as e:
            # one line: the list of passes that may follow grows with every new pass
            first = str(e).split("\n")[0].removesuffix("; the passes are:")
            if first != str(e):
                first += " (`fuseflowc opt --list-passes` lists them)"
            raise keys.error("pipelines", first) from None
    return pipelines


def _limits(keys: _Keys, table: dict, spec: SweepSpec) -> None:
    """max_orders, check, timeout, max_cycles, flops_per_cycle and max_jobs, checked, into
    `spec`."""
    if "max_orders" in table:
        if not _is_int(table["max_orders"]) or table["max_orders"] < 1:
            raise keys.error("max_orders", "expected a positive integer")
        spec.max_orders = table["max_orders"]
    if "check" in table:
        if not isinstance(table["check"], bool):
            raise keys.error("check", "expected true or false")
        spec.check = table["check"]
    for key, kind in (("timeout", float), ("max_cycles", int), ("flops_per_cycle", float)):
        if key in table:
            setattr(spec, key, kind(_positive(keys, key, table[key], kind)))
    if "max_jobs" in table:
        spec.max_jobs = int(_positive(keys, "max_jobs", table["max_jobs"], int))
        if spec.max_jobs > MAX_JOBS:
            raise keys.error("max_jobs", f"at most {MAX_JOBS}")


def _positive(keys: _Keys, key: str, v, kind: type):
    """`v` when it is a positive integer (`kind` int) or finite number (a timeout at most
    MAX_TIMEOUT), else the spec's error at `key`."""
    good = _is_int(v) if kind is int else \
        (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))
    if not good or v <= 0:
        what = "integer" if kind is int else "finite number"
        raise keys.error(key, f"expected a positive {what}")
    if key == "timeout" and v > MAX_TIMEOUT:
        raise keys.error(key, f"{v:g} seconds is more than the longest timeout, "
                              f"{MAX_TIMEOUT:g}")
    return v


def _programs(keys: _Keys, table: dict, path: str, base: Path, defaults: dict
              ) -> list[ProgramEntry]:
    """The [[programs]] entries (or paths), each a distinct model and variant."""
    progs = table.get("programs")
    if isinstance(progs, str):
        progs = [progs]
    if progs is None:
        raise UserError(f"{path}: programs: missing; a spec needs at least one program "
                        f"(programs = [\"prog.ff\"] or a [[programs]] table)")
    if not isinstance(progs, list) or not progs:
        raise keys.error("programs", "a spec needs programs: a list of .ff paths or of "
                                     "[[programs]] tables")
    programs = [_program(keys, k, v, base, defaults) for k, v in enumerate(progs)]
    seen: dict[tuple, int] = {}
    for k, p in enumerate(programs):
        key = (p.model, p.variant)
        if key in seen:
            raise keys.error(f"programs[{k}]", f"model {p.model} variant {p.variant} appears "
                                               f"twice (programs[{seen[key]}]); give one a "
                                               f"distinct variant name")
        seen[key] = k
    return programs


def _datasets(keys: _Keys, table: dict, path: str, base: Path) -> list[DataEntry]:
    """The [[data]] entries, each with a distinct name."""
    data = table.get("data")
    if data is None:
        raise UserError(f"{path}: data: missing; a spec needs at least one data set "
                        f"([[data]] with dir = ..., or graph/sizes/density/seed)")
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not data:
        raise keys.error("data", "expected a non-empty list of data sets")
    datasets = [_data(keys, k, v, base) for k, v in enumerate(data)]
    names = [d.name for d in datasets]
    for n in names:
        if names.count(n) > 1:
            raise keys.error("data", f"two data sets are named '{n}'; give each a distinct name")
    return datasets
