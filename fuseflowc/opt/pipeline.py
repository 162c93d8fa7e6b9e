"""Pipeline strings and running them.

Syntax (xDSL's): passes separated by commas, each optionally followed by options in braces,
separated by spaces or commas:

    cse,dce
    cleanup,unroll{factor=4 index=i}
    unroll{factor=4,index=i,verbose=true,label="two words"}

Values are ints (`-3`), bools (`true`/`false`) or strings (bare up to a space, comma or brace,
or double-quoted). An empty pipeline runs nothing. Every mistake is a `PipelineError`, which the
command reports as a usage error (exit 2).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from ..limits import MAX_INT
from .base import (
    PASSES,
    PIPELINE_RESOLVERS,
    GraphPass,
    ModulePass,
    OptionSpec,
    PipelineError,
    describe_passes,
    option_specs,
)

if TYPE_CHECKING:
    from ..samml.ir import Module


#: The pipeline the project compiles with when the user names none (`fuseflowc lower` without
#: -O0, the planner's costs, the demo): random access into dense levels instead of scanning
#: them (13x on GCN over Citeseer), the program's `parallelize` directives, then cse and dce.
#: docs/opt.md, "The default pipeline".
DEFAULT_PIPELINE = "locate,schedule,cleanup"

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_BARE = re.compile(r"[^\s,{}=\"]+")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def parse_pipeline(text: str, registry: dict[str, type[ModulePass]] | None = None
                   ) -> list[ModulePass]:
    """The pass instances named by pipeline `text`, in order (see the module docstring).
    Raises PipelineError."""
    registry = PASSES if registry is None else registry
    return _Parser(text, registry).pipeline()


class _Parser:
    def __init__(self, text: str, registry: dict[str, type[ModulePass]]):
        self.text = text
        self.pos = 0
        self.registry = registry

    def error(self, message: str) -> PipelineError:
        return PipelineError(f"{message} (column {self.pos + 1} of pipeline '{self.text}')")

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def match(self, pattern: re.Pattern) -> re.Match | None:
        self.skip()
        m = pattern.match(self.text, self.pos)
        if m:
            self.pos = m.end()
        return m

    def pipeline(self) -> list[ModulePass]:
        passes: list[ModulePass] = []
        if not self.peek():
            return passes
        while True:
            passes.append(self.element())
            c = self.peek()
            if not c:
                return passes
            if c != ",":
                raise self.error(f"expected ',' between passes, found '{c}'")
            self.pos += 1

    def element(self) -> ModulePass:
        start = self.pos
        m = self.match(_NAME)
        if not m:
            raise self.error("expected a pass name")
        name = m.group()
        cls = self.registry.get(name)
        if cls is None:
            self.pos = start
            raise PipelineError(f"unknown pass '{name}'; the passes are:\n"
                                + describe_passes(self.registry))
        values: dict[str, Any] = {}
        if self.peek() == "{":
            self.pos += 1
            specs = {s.name: s for s in option_specs(cls)}
            while self.peek() != "}":
                if not self.peek():
                    raise self.error(f"missing '}}' after the options of {name}")
                key = self.match(_NAME)
                if not key:
                    raise self.error(f"expected an option name of {name}")
                spec = specs.get(key.group())
                if spec is None:
                    known = ", ".join(s.describe() for s in specs.values()) or "none"
                    raise PipelineError(f"pass {name} has no option '{key.group()}' "
                                        f"(its options: {known})")
                if spec.field in values:
                    raise PipelineError(f"pass {name}: option {spec.name} is given twice")
                if self.peek() != "=":
                    raise self.error(f"expected '=' after option {spec.name} of {name}")
                self.pos += 1
                values[spec.field] = _convert(name, spec, self.value(name, spec))
                if self.peek() == ",":
                    self.pos += 1
            self.pos += 1
        return cls(**values)

    def value(self, name: str, spec: OptionSpec) -> str:
        if self.peek() == '"':
            m = self.match(_QUOTED)
            if not m:
                raise self.error(f"unterminated string for option {spec.name} of {name}")
            return re.sub(r"\\(.)", r"\1", m.group(1))
        m = self.match(_BARE)
        if not m:
            raise self.error(f"expected a value for option {spec.name} of {name} "
                             f"({spec.type.__name__})")
        return m.group()


def _convert(name: str, spec: OptionSpec, text: str) -> Any:
    """`text` as a value of `spec`'s type, or PipelineError naming pass, option and type."""
    if spec.type is bool:
        if text in ("true", "false"):
            return text == "true"
    elif spec.type is int:
        if re.fullmatch(r"[+-]?[0-9]+", text):
            if len(text.lstrip("+-").lstrip("0")) > len(str(MAX_INT)):
                raise PipelineError(f"pass {name}: option {spec.name}: {text[:20]}... "
                                    f"({len(text)} digits) is too large")
            return int(text)
    else:
        return text
    return _bad(name, spec, text)


def _bad(name: str, spec: OptionSpec, text: str) -> Any:
    what = "true or false" if spec.type is bool else "an integer"
    raise PipelineError(f"pass {name}: option {spec.name} expects {spec.type.__name__} "
                        f"({what}), got '{text}'")


@dataclass(frozen=True)
class PassTiming:
    """How long one pass of a pipeline took (`seconds` of wall time)."""

    name: str
    seconds: float


def run_pipeline(module: "Module", passes: list[ModulePass], verify_each: bool = True,
                 after: Callable[[ModulePass, "Module"], None] | None = None
                 ) -> list[PassTiming]:
    """Apply `passes` to `module` in order, in place. Unless `verify_each` is False, verify the
    module after every pass; a failure is a UserError saying which pass broke it. `after` is
    called after each pass (and its verification). Returns the wall time of each pass.
    Passes are first adjusted to the module by the registered resolvers
    (base.PIPELINE_RESOLVERS; opt.schedule's: explicit `parallelize` passes override the
    module's schedule directives), so every caller, the command and sweeps alike, gets the same
    override rule.

    A reused loop's graph that is its template with tensors renamed (samml.rebound) is not
    rewritten by a GraphPass nor verified: it is made again from its rewritten template once
    the passes are done, or before a pass that may change it (whose result is then its own),
    or before `after` sees the module."""
    from ..diagnostics import UserError
    from ..samml.rebound import refresh, trusted
    from ..samml.verify import verify
    for resolve in PIPELINE_RESOLVERS:
        passes = resolve(module, passes)
    lazy = trusted(module) if after is None else {}
    stale: set[str] = set()   # copies whose templates were rewritten since they were made
    timings = []
    for p in passes:
        start = time.perf_counter()
        if isinstance(p, GraphPass):
            for g in module.graphs:
                if g.name in lazy:
                    stale.add(g.name)
                else:
                    p.apply_graph(g)
            if type(p).finish is not GraphPass.finish:   # it reads the graphs: make them
                refresh(module, stale, lazy)
                stale.clear()
            p.finish(module)
        else:
            touched = p.graphs_touched(module)
            mine = set(lazy) if touched is None else {
                n for n, (t, _) in lazy.items() if n in touched or t.name in touched}
            refresh(module, stale & mine, lazy)
            stale -= mine
            lazy = {n: b for n, b in lazy.items() if n not in mine}
            p.apply(module)
        timings.append(PassTiming(p.spelling(), time.perf_counter() - start))
        if verify_each:
            try:
                verify(module, lazy)
            except UserError as e:
                raise UserError(f"the module does not verify after pass {p.spelling()}",
                                diagnostics=e.diagnostics) from None
        if after is not None:
            after(p, module)
    refresh(module, stale, lazy)
    return timings

