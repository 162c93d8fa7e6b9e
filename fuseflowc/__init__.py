"""fuseflowc: a fusion-centric compiler for sparse ML on streaming dataflow (SAMML) hardware.

Stages, each a function from one IR to the next and a subcommand of the `fuseflowc` CLI:
program (fuseflowc.lang) -> fused einsum IR (fuse) -> SAMML graph (lower, opt) -> simulate (sim/).
"""

__version__ = "0.1.0"
