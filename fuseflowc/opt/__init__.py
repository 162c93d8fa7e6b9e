"""Passes over SAMML modules and the pipelines that run them (`fuseflowc opt`).

Modules:
  - `base`: `ModulePass` (a frozen dataclass with a `name` and typed options) and the registry
    of passes by name (`PASSES`, `register`, `option_specs`).
  - `pipeline`: parsing `-p 'pass-a,pass-b{factor=4 index=i}'` into pass instances
    (`parse_pipeline`, `PipelineError`) and running them with verification (`run_pipeline`).
  - `dce`, `cse`, `cleanup`: the clean-up passes.
  - `locate`: intersections with a dense level scan become `locate` nodes.
  - `parallelize` (with `samml.analysis`, the loop nest of each stream): fork/lanes/join.
  - `map`: checks every graph fits a fabric's tiles (fuseflowc.fabric, samml.tiles).
  - `schedule`: applies the module's `schedule parallelize` directives (`resolve_pipeline` lets
    explicit `parallelize` passes override them).

A pass mutates the module in place: `apply(module) -> None`. Nothing here imports numpy or
scipy: `opt` is on the compile path.
"""

# Importing a pass module registers it.
from . import cleanup, cse, dce, locate, map, parallelize, schedule  # noqa: E402,F401  (registration side effect)
from .base import PASSES, ModulePass, OptionSpec, option_specs, register
from .pipeline import PassTiming, PipelineError, parse_pipeline, run_pipeline

__all__ = ["PASSES", "ModulePass", "OptionSpec", "option_specs", "register", "PassTiming",
           "PipelineError", "parse_pipeline", "run_pipeline"]
