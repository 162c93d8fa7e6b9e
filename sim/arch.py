"""The architecture file (sim/arch.toml): per-kind latency and initiation interval, channel depth,
block-operation costs and the memory model, with `--set key=value` overrides."""

from __future__ import annotations

import ast
import copy
import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

from fuseflowc.diagnostics import UserError
from fuseflowc.limits import MAX_INT, number_too_long, shown, whole_number

DEFAULT_ARCH = Path(__file__).with_name("arch.toml")

KINDS = ("root", "scan", "repsig", "repeat", "intersect", "union", "locate", "array", "alu",
         "reduce", "spacc1", "spacc2", "spacc3", "crddrop", "crdhold", "write_level", "write_vals", "fork",
         "join", "spill", "replay")
BLOCK_KEYS = tuple(f"{w}_{x}" for w in ("bmm", "elementwise", "load", "reduce")
                   for x in ("latency", "ii"))
#: The energy table's events (sim/energy.py charges them), each in picojoules.
ENERGY_KEYS = ("alu_op", "fifo_hop", "onchip_byte", "dram_byte", "reconfiguration", "config_node")
SCHEMA = {
    "channel": {"depth"},
    "default": {"latency", "ii"},
    "block": set(BLOCK_KEYS),
    "memory": {"bandwidth", "latency", "element_bytes", "window"},
    "permute": {"elements_per_cycle"},
    "config": {"base", "per_node", "rebind"},
    "energy": set(ENERGY_KEYS),
    "fabric": {"preset", "pe_tiles", "mem_tiles", "mem_tile_bytes"},
}

# The range of every value (documented in arch.toml): integers where the simulator counts
# cycles, entries or bytes, and bounds that keep a run finite and its memory small (a channel
# allocates the slots it uses; a request spans bytes / (bandwidth * window) calendar windows).
LATENCY = (0, 1_000_000)        # cycles
II = (1, 1024)                  # cycles between firings
RANGES = {
    "channel.depth": ("int", 1, 2**62),             # entries, or "inf"
    "memory.bandwidth": ("number", 0.1, 1e12),      # bytes per cycle
    "memory.latency": ("int", *LATENCY),
    "memory.element_bytes": ("int", 1, 64),         # bytes
    "memory.window": ("int", 1, 65536),             # cycles
    "permute.elements_per_cycle": ("number", 1e-3, 1e9),
    "config.base": ("int", *LATENCY),
    "config.per_node": ("int", *LATENCY),
    "config.rebind": ("int", *LATENCY),
    **{f"energy.{k}": ("number", 0, 1e9) for k in ENERGY_KEYS},   # picojoules
}
#: The most tiles of a class, and bytes of a memory tile, a fabric may have.
MAX_TILES = 1 << 40
#: Longest block-cost expression ("2*b-1"): its evaluation recurses over the expression.
MAX_BLOCK_EXPR = 100


def _load_toml(path: Path) -> dict:
    # read as every text input is (bounded size, UTF-8, a directory or /dev/zero refused)
    from fuseflowc.files import read_source
    src = read_source(str(path))
    try:
        return tomllib.loads(src.text)
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: not a valid TOML architecture file: {e}") from None
    except ValueError:  # tomllib's bare ValueError for an integer of thousands of digits
        raise number_too_long(src) from None


def _merge(base: dict, extra: dict, where: str) -> None:
    for sect, body in extra.items():
        if not isinstance(body, dict):
            raise UserError(f"{where}: `{sect}` must be a table like [{sect}]")
        if sect == "kind":
            for kind, kv in body.items():
                if kind not in KINDS:
                    raise UserError(f"{where}: unknown primitive kind `kind.{kind}` "
                                    f"(known: {', '.join(KINDS)})")
                if not isinstance(kv, dict):
                    raise UserError(f"{where}: `kind.{kind}` must be a table")
                for k in kv:
                    if k not in ("latency", "ii"):
                        raise UserError(f"{where}: unknown key `kind.{kind}.{k}` "
                                        "(known: latency, ii)")
                base.setdefault("kind", {}).setdefault(kind, {}).update(kv)
            continue
        if sect not in SCHEMA:
            raise UserError(f"{where}: unknown section [{sect}] "
                            f"(known: {', '.join(sorted(SCHEMA))}, kind.<kind>)")
        for k in body:
            if k not in SCHEMA[sect]:
                raise UserError(f"{where}: unknown key `{sect}.{k}` "
                                f"(known: {', '.join(sorted(SCHEMA[sect]))})")
        base.setdefault(sect, {}).update(body)


def _parse_value(text: str, where: str):
    """A `--set`/`--depth` value: inf (unbounded), an integer, a number, else the text."""
    t = text.strip()
    if t in ("inf", "none", "unbounded"):
        return "inf"
    if t.lstrip("+-").isdigit():  # at most MAX_DIGITS: the range check says more
        return whole_number(t, where, None, -MAX_INT, None)
    try:
        return float(t)
    except ValueError:
        return t


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def _checked(key: str, v, kind: str, lo, hi, alternative: str = ""):
    """`v` as the value of `key` if it is a finite `kind` ("int": a whole number, "number")
    in [lo, hi], else a UserError saying so (`alternative`: another value it may have)."""
    what = "a whole number" if kind == "int" else "a number"
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and \
        (isinstance(v, int) or math.isfinite(v) and (kind != "int" or v.is_integer())) \
        and lo <= v <= hi
    if not ok:
        got = shown(str(v)) if isinstance(v, int) and not isinstance(v, bool) else repr(v)
        raise UserError(f"{key} must be {what} from {_num(lo)} to {_num(hi)}{alternative}, "
                        f"not {got}")
    return int(v) if kind == "int" else v


def eval_block_expr(expr, b: int, where: str) -> int:
    """Evaluate a block-cost expression like "2*b-1" for block size b (ints, b, + - * ( ))."""
    if isinstance(expr, int) and not isinstance(expr, bool):
        return expr
    if not isinstance(expr, str) or len(expr) > MAX_BLOCK_EXPR:
        raise UserError(f"{where}: a block cost expression is a string of at most "
                        f"{MAX_BLOCK_EXPR} characters like \"2*b-1\", not {str(expr)[:40]!r}")

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name) and node.id == "b":
            return b
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult)):
            lhs, rhs = ev(node.left), ev(node.right)
            return lhs + rhs if isinstance(node.op, ast.Add) else \
                lhs - rhs if isinstance(node.op, ast.Sub) else lhs * rhs
        raise ValueError
    try:
        return int(ev(ast.parse(expr, mode="eval")))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise UserError(f"{where}: bad block cost expression {expr!r} "
                        "(use integers, b, +, -, * and parentheses)") from None


@dataclass
class Arch:
    """A loaded architecture: the merged TOML tables."""

    table: dict

    @classmethod
    def load(cls, path: str | Path | None = None, sets: list[str] | tuple = (),
             depth: str | int | None = None) -> "Arch":
        """Defaults from sim/arch.toml, then `path` (if given), then `sets` ("a.b=c"), then
        `depth` ("inf" or an int)."""
        table: dict = {}
        _merge(table, _load_toml(DEFAULT_ARCH), str(DEFAULT_ARCH))
        if path is not None:
            _merge(table, _load_toml(Path(path)), str(path))
        for item in sets:
            if "=" not in item:
                raise UserError(f"--set {item}: expected KEY=VALUE, e.g. channel.depth=8")
            key, value = item.split("=", 1)
            parts = key.strip().split(".")
            if len(parts) < 2:
                raise UserError(f"--set {item}: the key needs a section, e.g. memory.latency")
            tree: dict = {}
            cur = tree
            for p in parts[:-1]:
                cur = cur.setdefault(p, {})
            cur[parts[-1]] = _parse_value(value, f"--set {key.strip()}")
            _merge(table, tree, f"--set {item}")
        if depth is not None:
            table["channel"]["depth"] = _parse_value(str(depth), "--depth")
        arch = cls(table)
        arch.validate()
        return arch

    def validate(self) -> None:
        """Check every value is of its type and in its range (RANGES, LATENCY, II), and the
        block cost expressions parse; normalizes whole floats (`100.0`) to ints."""
        t = self.table
        for key, (kind, lo, hi) in RANGES.items():
            sect, k = key.split(".")
            v = t.get(sect, {}).get(k)
            if v is not None and not (key == "channel.depth" and v == "inf"):
                t[sect][k] = _checked(key, v, kind, lo, hi,
                                      " or inf" if key == "channel.depth" else "")
        for k, rng in (("latency", LATENCY), ("ii", II)):
            t["default"][k] = _checked(f"default.{k}", t["default"][k], "int", *rng)
        for kind, kv in t.get("kind", {}).items():
            for k, v in kv.items():
                kv[k] = _checked(f"kind.{kind}.{k}", v, "int", *(II if k == "ii" else LATENCY))
        for k, expr in t.get("block", {}).items():
            eval_block_expr(expr, 1, f"block.{k}")  # syntax now, ranges per block size
        _ = self.fabric  # the preset is known and the tile figures are in range

    @property
    def permute_rate(self) -> float:
        """Entries per cycle the sort of a `permute` step handles ([permute])."""
        return float(self.table.get("permute", {}).get("elements_per_cycle", 1))

    @property
    def depth(self) -> int | None:
        d = self.table["channel"]["depth"]
        return None if d == "inf" else int(d)

    @property
    def mem_latency(self) -> int:
        return int(self.table["memory"]["latency"])

    @property
    def bandwidth(self) -> float:
        return float(self.table["memory"]["bandwidth"])

    @property
    def element_bytes(self) -> int:
        return int(self.table["memory"]["element_bytes"])

    def timing(self, kind: str, op: str | None = None, block: int | None = None
               ) -> tuple[int, int]:
        """(latency, ii) of a primitive of `kind` (with ALU `op`) handling b x b blocks if
        `block` is set."""
        lat = self.table["default"]["latency"]
        ii = self.table["default"]["ii"]
        kv = self.table.get("kind", {}).get(kind, {})
        lat = kv.get("latency", lat)
        ii = kv.get("ii", ii)
        if block:
            which = None
            if kind == "alu":
                which = "bmm" if op == "bmm" else "elementwise"
            elif kind == "array":
                which = "load"
            elif kind in ("reduce", "spacc1", "spacc2", "spacc3"):
                which = "reduce"
            if which:
                blk = self.table["block"]
                lat = _checked(f"block.{which}_latency for block size {block}",
                               eval_block_expr(blk[f"{which}_latency"], block,
                                               f"block.{which}_latency"), "int", *LATENCY)
                ii = _checked(f"block.{which}_ii for block size {block}",
                              max(1, eval_block_expr(blk[f"{which}_ii"], block,
                                                     f"block.{which}_ii")), "int", *II)
        return int(lat), int(ii)

    def config_cycles(self, nodes: int) -> int:
        """Cycles to load the configuration of a graph of `nodes` nodes ([config])."""
        c = self.table.get("config", {})
        return int(c.get("base", 1000)) + int(c.get("per_node", 16)) * nodes

    def rebind_cycles(self, tensors: int) -> int:
        """Cycles to bind `tensors` other tensors to a loaded configuration ([config])."""
        return int(self.table.get("config", {}).get("rebind", 4)) * tensors

    @property
    def energy(self) -> dict[str, float]:
        """Picojoules per event ([energy]): ENERGY_KEYS -> float."""
        e = self.table.get("energy", {})
        return {k: float(e.get(k, 0.0)) for k in ENERGY_KEYS}

    @property
    def fabric(self):
        """The fabric ([fabric]): its preset (fuseflowc.fabric.PRESETS) with any of
        pe_tiles, mem_tiles, mem_tile_bytes overridden."""
        from fuseflowc.fabric import PRESETS
        f = self.table.get("fabric", {})
        name = f.get("preset", "unlimited")
        if name not in PRESETS:
            raise UserError(f"fabric.preset must be one of {', '.join(PRESETS)}, not "
                            f"{str(name)[:40]!r}")
        fig = {}
        for key, field in (("pe_tiles", "pe"), ("mem_tiles", "mem"),
                           ("mem_tile_bytes", "mem_bytes")):
            v = f.get(key)
            if v is not None and v != "inf":
                fig[field] = _checked(f"fabric.{key}", v, "int", 1, MAX_TILES, " or inf")
            elif v == "inf":
                fig[field] = "inf"
        base = PRESETS[name].with_overrides(**{k: v for k, v in fig.items() if v != "inf"})
        from dataclasses import replace
        return replace(base, **{k: None for k, v in fig.items() if v == "inf"})

    @property
    def mem_window(self) -> int:
        """Cycles per window of the bandwidth calendar (sim.memory)."""
        return int(self.table["memory"].get("window", 16))

    def as_dict(self) -> dict:
        return copy.deepcopy(self.table)
