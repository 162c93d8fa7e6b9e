"""Lowering fused einsum regions to SAMML dataflow graphs with fusion tables (`fuseflowc lower`).

Modules: `expr` (the expression trees in global index names), `adapt_fused` (fused IR ->
regions: lowering reads only the fused IR of `fuseflowc fuse`; which fused intermediates must
be seen as declared is `lang.widen`, shared with fuse), `build` (the fusion table's content: iteration spaces,
shared loops, join trees, accumulators), `codegen` (the table's cells as memoized lazy
generators, writers last), `dump` (the `--dump-table` grid), `driver` (a whole program -> a
SAMML module, with the distribution fallback).
See docs/lowering.md.
"""
