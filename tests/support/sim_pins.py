"""Pinned simulator figures: cycles, FLOPs, token-hops and bytes of every kernel of every
hand-written SAMML example and every lowered example program, on seeded random data.

The simulator's speed work must not move any of these numbers; `tests/sim/test_sim_pinned.py`
compares them with `tests/golden/sim/pinned.json`. Regenerate (only when a timing change is
intended, and say so in the commit) with:

    .venv/bin/python -m tests.support.sim_pins --update
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PINS = ROOT / "tests" / "golden" / "sim" / "pinned.json"
#: The size of every dim a program does not fix (small: the whole set runs in seconds; a multiple of the block sizes 4).
DIM = 12


def samml_examples() -> list[Path]:
    return sorted((ROOT / "ir_examples" / "samml").glob("*.samml"))


def program_examples() -> list[Path]:
    """Kernels and every model variant (files with fusion regions: name_variant.ff)."""
    return (sorted((ROOT / "ir_examples" / "kernels").glob("*.ff"))
            + sorted(f for f in (ROOT / "ir_examples" / "models").glob("*/*_*.ff")
                     if f.stem.rsplit("_", 1)[1] in ("full", "partial", "unfused")
                     and f.parent.name not in LOOP_MODELS))


# Models written as loops repeat one-layer models' graphs per layer (gcn, gpt3_mini are pinned);
# `make examples`, tests/e2e/test_lists.py and `python -m fuseflowc.bench.loops` run them.
LOOP_MODELS = ("gcn_deep", "gpt3_layers", "rnn_stacked")


def lowered_text(path: Path, pipeline: str = "") -> str:
    """`fuseflowc fuse PATH | fuseflowc lower -O0 [| fuseflowc opt -p PIPELINE]`, in-process."""
    from tests.support.golden import run_pipeline
    cmd = f"fuseflowc fuse {path} | fuseflowc lower -O0"
    if pipeline:
        cmd += f" | fuseflowc opt -p {pipeline}"
    r = run_pipeline(cmd)
    if r.exit_code != 0:
        raise RuntimeError(f"{cmd}: {r.stderr}")
    return r.stdout


def module_inputs(module, fixed: dict | None = None, seed: int = 3):
    """Seeded random inputs for a module's input tensors; sizes DIM unless `fixed`."""
    from fuseflowc.data.gen import random_inputs
    sizes = {}
    for t in module.tensors:
        for d in t.dims:
            if isinstance(d, str):
                sizes[d] = (fixed or {}).get(d, DIM)
    specs = [t.spec() for t in module.tensors if t.role == "input"]
    return random_inputs(specs, sizes, seed), sizes


#: Channel depths every case runs with: the default (deep), 2 (back-pressure everywhere) and
#: unbounded.
DEPTHS = (None, "2", "inf")


def figures(module, inputs, sizes, depth=None, engine="python") -> list[dict]:
    """Per kernel: name, cycles, flops, hops, bytes read and written (and the SimResult). The
    pins are the Python engine's; tests/sim/test_sim_fast.py holds the compiled engine to them."""
    from fuseflowc.sim.arch import Arch
    from fuseflowc.sim.build import Simulator
    res = Simulator(module, inputs, sizes, Arch.load(depth=depth), engine=engine).run()
    return kernel_figures(res), res


def kernel_figures(res) -> list[dict]:
    return [{"kernel": k.graph, "cycles": k.cycles, "flops": k.flops, "hops": k.hops,
             "read": k.bytes_read(), "written": k.bytes_written()} for k in res.kernels]


#: Sizes of dims the programs used to fix and now take from the data (the GNNs' class count,
#: sized by a graph's labels): kept at their old value so that the pinned figures stay put.
FORMERLY_FIXED = {"C": 4}


def program_sizes(path: Path) -> dict:
    from fuseflowc.lang.load import load_program
    p = load_program(str(path))
    return {**FORMERLY_FIXED, **{d.name: d.size for d in p.dims if d.size is not None}}


def pinned(module, inputs, sizes, depth):
    """figures(), or {"error": first line} when the run fails (a shallow depth may deadlock:
    that is pinned too)."""
    from fuseflowc.diagnostics import UserError
    try:
        return figures(module, inputs, sizes, depth)[0]
    except UserError as e:
        return {"error": e.diagnostics[0].message}


def outcome_figures(outcome) -> dict | list:
    """pinned()'s figures of a sim.differential.Outcome."""
    if outcome.error is not None:
        return {"error": outcome.error.diagnostics[0].message}
    return kernel_figures(outcome.result)


@functools.cache
def python_outcomes() -> dict:
    """name -> (module, inputs, sizes, depth, Outcome on the Python engine) of every pinned
    case, computed once per process: test_sim_pinned compares them with the pins and
    test_sim_fast the compiled engine with them."""
    from fuseflowc.sim.arch import Arch
    from fuseflowc.sim.differential import run
    return {name: (m, inputs, sizes, d, run(m, inputs, sizes, Arch.load(depth=d), "python"))
            for name, m, inputs, sizes, d in cases()}


def cases():
    """Every pinned case: (name, module, inputs, sizes, depth)."""
    from fuseflowc.diagnostics import Source
    from fuseflowc.samml.parser import parse_module
    for f in samml_examples():
        m = parse_module(Source(str(f), f.read_text()))
        inputs, sizes = module_inputs(m)
        for d in DEPTHS:
            yield f"samml/{f.name}" + (f" depth={d}" if d else ""), m, inputs, sizes, d
    for f in program_examples():
        m = parse_module(Source(str(f), lowered_text(f)))
        inputs, sizes = module_inputs(m, program_sizes(f))
        # models at the default depth only (depth 2 makes them slow to simulate)
        for d in DEPTHS if f.parent.name == "kernels" else DEPTHS[:1]:
            yield f"{f.parent.name}/{f.name}" + (f" depth={d}" if d else ""), m, inputs, sizes, d


def all_figures() -> dict:
    """name -> figures of every pinned case (the Python engine)."""
    return {name: outcome_figures(o[-1]) for name, o in python_outcomes().items()}


if __name__ == "__main__":
    if "--update" in sys.argv:
        PINS.write_text(json.dumps(all_figures(), indent=1, sort_keys=True) + "\n")
        print(f"wrote {PINS}")
    else:
        print(json.dumps(all_figures(), indent=1, sort_keys=True))
