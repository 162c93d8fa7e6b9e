"""The pass base class and the registry of passes by name.

A pass is a frozen dataclass subclassing `ModulePass`: a class attribute `name` (how pipelines
spell it), dataclass fields for its options (typed int, str or bool, each with a default; a str
option may list its allowed values: `field(default="a", metadata={"choices": ("a", "b")})`,
checked whenever the pass is made), and `apply(module)`, which changes the module in place. Options are spelled in pipelines with
dashes for underscores (`max_rounds` is `max-rounds=3`).

    @register
    @dataclass(frozen=True)
    class Unroll(ModulePass):
        '''Unroll something by `factor`.'''
        name: ClassVar[str] = "unroll"
        factor: int = 2

        def apply(self, module: Module) -> None:
            ...
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar

if TYPE_CHECKING:
    from ..samml.ir import Graph, Module

#: Option types a pass may declare, by their annotation text.
OPTION_TYPES: dict[str, type] = {"int": int, "str": str, "bool": bool}


class PipelineError(Exception):
    """A malformed pipeline, an unknown pass or option, or an ill-typed option value."""


@dataclass(frozen=True)
class ModulePass:
    """Base of every pass. Subclasses set `name` and implement `apply` (and call
    `super().__post_init__()` from a `__post_init__` of their own)."""

    name: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for spec in option_specs(type(self)):
            value = getattr(self, spec.field)
            if spec.choices and value not in spec.choices:
                raise PipelineError(f"pass {self.name}: option {spec.name} must be one of "
                                    f"{', '.join(spec.choices)}, got {value!r}")

    def apply(self, module: "Module") -> None:
        """Transform `module` in place."""
        raise NotImplementedError

    def graphs_touched(self, module: "Module") -> set[str] | None:
        """The names of the graphs `apply(module)` may change; None: any (the default)."""
        return None

    def summary(self) -> str:
        """The first line of the pass's docstring (for --list-passes)."""
        doc = (type(self).__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""

    def spelling(self) -> str:
        """The pass as a pipeline element, with options that differ from their defaults:
        `cse` or `unroll{factor=4}`."""
        parts = []
        for spec in option_specs(type(self)):
            value = getattr(self, spec.field)
            if value != spec.default:
                parts.append(f"{spec.name}={spec.show(value)}")
        return self.name + ("{" + " ".join(parts) + "}" if parts else "")


@dataclass(frozen=True)
class GraphPass(ModulePass):
    """Base of a pass that rewrites each graph on its own (`apply_graph`), by what the graph
    is up to the names of its tensors (renaming tensors one-to-one before or after the pass
    gives the same graph), then the module as a whole (`finish`). So a reused loop's graph
    that is its template with tensors renamed is not rewritten: it is the rewritten template,
    renamed (opt.pipeline.run_pipeline)."""

    def apply(self, module: "Module") -> None:
        for g in module.graphs:
            self.apply_graph(g)
        self.finish(module)

    def apply_graph(self, g: "Graph") -> None:
        """Rewrite graph `g` in place."""
        raise NotImplementedError

    def finish(self, module: "Module") -> None:
        """What the pass does to the module after its graphs (nothing by default)."""


@dataclass(frozen=True)
class OptionSpec:
    """One option of a pass: its pipeline `name` (dashed), dataclass `field`, `type` (int, str or
    bool), `default` and, for a str option, the `choices` it allows (empty: any)."""

    name: str
    field: str
    type: type
    default: Any
    choices: tuple[str, ...] = ()

    def show(self, value: Any) -> str:
        """`value` as it is spelled in a pipeline."""
        if self.type is bool:
            return "true" if value else "false"
        if self.type is str and value == "":
            return '""'
        return str(value)

    def describe(self) -> str:
        """`factor: int = 2`, or `reduce: serial|lanes = serial`."""
        kind = "|".join(self.choices) if self.choices else self.type.__name__
        return f"{self.name}: {kind} = {self.show(self.default)}"


def option_specs(cls: type[ModulePass]) -> tuple[OptionSpec, ...]:
    """The options of pass class `cls`, in declaration order."""
    out = []
    for f in dataclasses.fields(cls):
        ann = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        if ann not in OPTION_TYPES:
            raise TypeError(f"pass {cls.name}: option {f.name} has type {ann}; "
                            f"options are int, str or bool")
        if f.default is dataclasses.MISSING:
            raise TypeError(f"pass {cls.name}: option {f.name} needs a default")
        out.append(OptionSpec(f.name.replace("_", "-"), f.name, OPTION_TYPES[ann], f.default,
                              tuple(f.metadata.get("choices", ()))))
    return tuple(out)


#: Pass name -> class, in registration order (listed sorted by name).
PASSES: dict[str, type[ModulePass]] = {}


def register(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator: add pass `cls` to `PASSES` under `cls.name` (checking its options)."""
    if not cls.name:
        raise TypeError(f"pass class {cls.__name__} has no name")
    if cls.name in PASSES and PASSES[cls.name] is not cls:
        raise TypeError(f"two passes are named {cls.name}")
    option_specs(cls)
    PASSES[cls.name] = cls
    return cls


def describe_passes(registry: dict[str, type[ModulePass]] | None = None) -> str:
    """One line per registered pass (sorted by name) with its options and summary."""
    registry = PASSES if registry is None else registry
    lines = []
    for name in sorted(registry):
        cls = registry[name]
        opts = ", ".join(s.describe() for s in option_specs(cls))
        doc = (cls.__doc__ or "").strip().splitlines()
        head = name + (f"{{{opts}}}" if opts else "")
        lines.append(f"  {head:<34} {doc[0] if doc else ''}")
    return "\n".join(lines)


#: A resolver adjusts a pipeline to the module it is about to run on (returns the passes to run).
Resolver = Callable[["Module", list[ModulePass]], list[ModulePass]]

#: Resolvers `run_pipeline` applies, in registration order, before it runs any pass. A pass
#: module that needs to see the whole pipeline (opt.schedule: explicit `parallelize` passes
#: override the module's directives) registers one, so the runner names no pass itself.
PIPELINE_RESOLVERS: list[Resolver] = []


def pipeline_resolver(fn: Resolver) -> Resolver:
    """Decorator: add `fn` to `PIPELINE_RESOLVERS` (once)."""
    if fn not in PIPELINE_RESOLVERS:
        PIPELINE_RESOLVERS.append(fn)
    return fn
