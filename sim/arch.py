"""The architecture file (sim/arch.toml): per-kind latency and initiation interval, channel depth,
block-operation costs and the memory model, with `--set key=value` overrides."""

from __future__ import annotations

import ast
import copy
import tomllib
from dataclasses import dataclass
from pathlib import Path

from fuseflowc.diagnostics import UserError

DEFAULT_ARCH = Path(__file__).with_name("arch.toml")

KINDS = ("root", "scan", "repsig", "repeat", "intersect", "union", "locate", "array", "alu",
         "reduce", "spacc1", "spacc2", "crddrop", "crdhold", "write_level", "write_vals", "fork",
         "join")
BLOCK_KEYS = tuple(f"{w}_{x}" for w in ("bmm", "elementwise", "load", "reduce")
                   for x in ("latency", "ii"))
SCHEMA = {
    "channel": {"depth"},
    "default": {"latency", "ii"},
    "block": set(BLOCK_KEYS),
    "memory": {"bandwidth", "latency", "element_bytes", "window"},
    "permute": {"elements_per_cycle"},
}


def _load_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise UserError(f"{path}: no such architecture file") from None
    except tomllib.TOMLDecodeError as e:
        raise UserError(f"{path}: not a valid TOML architecture file: {e}") from None


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


def _parse_value(text: str):
    t = text.strip()
    if t in ("inf", "none", "unbounded"):
        return "inf"
    try:
        return int(t)
    except ValueError:
        pass
    try:
        return float(t)
    except ValueError:
        return t


def eval_block_expr(expr, b: int, where: str) -> int:
    """Evaluate a block-cost expression like "2*b-1" for block size b (ints, b, + - * ( ))."""
    if isinstance(expr, int):
        return expr

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
        return int(ev(ast.parse(str(expr), mode="eval")))
    except (ValueError, SyntaxError):
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
            cur[parts[-1]] = _parse_value(value)
            _merge(table, tree, f"--set {item}")
        if depth is not None:
            table["channel"]["depth"] = _parse_value(str(depth))
        arch = cls(table)
        arch.validate()
        return arch

    def validate(self) -> None:
        d = self.table["channel"]["depth"]
        if not (d == "inf" or (isinstance(d, int) and d >= 1)):
            raise UserError(f"channel depth must be a positive integer or inf, not {d!r}")
        for kind, kv in self.table.get("kind", {}).items():
            for k, v in kv.items():
                if not isinstance(v, int) or v < (1 if k == "ii" else 0):
                    raise UserError(f"kind.{kind}.{k} must be an integer >= "
                                    f"{1 if k == 'ii' else 0}, not {v!r}")
        for k in ("latency", "ii"):
            v = self.table["default"][k]
            if not isinstance(v, int) or v < (1 if k == "ii" else 0):
                raise UserError(f"default.{k} must be an integer, not {v!r}")
        rate = self.table.get("permute", {}).get("elements_per_cycle", 1)
        if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not rate > 0:
            raise UserError(f"permute.elements_per_cycle must be a positive number, not {rate!r}")
        mem = self.table["memory"]
        for k in ("bandwidth", "latency", "element_bytes"):
            v = mem[k]
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0 or \
                    (k != "latency" and v <= 0):
                raise UserError(f"memory.{k} must be a positive number, not {v!r}")
        w = mem.get("window", 16)
        if not isinstance(w, int) or isinstance(w, bool) or w < 1:
            raise UserError(f"memory.window must be a positive integer (cycles), not {w!r}")

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
            elif kind in ("reduce", "spacc1", "spacc2"):
                which = "reduce"
            if which:
                blk = self.table["block"]
                lat = eval_block_expr(blk[f"{which}_latency"], block, f"block.{which}_latency")
                ii = max(1, eval_block_expr(blk[f"{which}_ii"], block, f"block.{which}_ii"))
        return int(lat), int(ii)

    @property
    def mem_window(self) -> int:
        """Cycles per window of the bandwidth calendar (sim.memory)."""
        return int(self.table["memory"].get("window", 16))

    def as_dict(self) -> dict:
        return copy.deepcopy(self.table)
