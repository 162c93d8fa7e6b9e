"""Lowering fused einsum regions to SAMML dataflow graphs with fusion tables (`fuseflowc lower`).

Modules: `expr` (the expression DAG in global index names), `adapt` (programs -> regions),
`build` (iteration spaces, loops and join trees: the fusion table's content), `table` (the
fusion table grid), `codegen` (graph generation from the table's cells), `dump` (the
`--dump-table` text), `driver` (a whole program -> a SAMML module).
"""
