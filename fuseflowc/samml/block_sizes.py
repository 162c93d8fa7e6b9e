"""The data's dims against a module's block sizes: a decomposition's split and its inputs'
blocked copies need every dim of the input they block to be a multiple of the block size.

Checked where the data binds the dims (`simulate --data`, `estimate --data` or `--size`), so
that the error names the dim and the user's input, not a step's internal copy (`B__b2`).
"""

from __future__ import annotations

from ..diagnostics import UserError


def require_blocks(module, sizes: dict) -> None:
    """Raise a UserError naming the dim and the input when a block size of one of `module`'s
    blocking steps does not divide a dim of the input it blocks (`sizes`: dim name -> size)."""
    from .ir import Decompose, Permute
    for step in module.steps:
        if isinstance(step, Decompose):
            blocks = [getattr(module.tensor(p), "block", None) for p in step.parts]
        elif isinstance(step, Permute):
            blocks = [getattr(module.tensor(step.dst), "block", None)]
        else:
            continue
        decl = module.tensor(step.src)
        if decl is None or decl.role != "input":
            continue
        for b in sorted({b for b in blocks if b}):
            for dim in decl.dims:
                size = dim if isinstance(dim, int) else sizes.get(dim)
                if size is not None and size % b:
                    raise UserError(f"block size {b} of a decomposition's blocked part does not "
                                    f"divide dim {dim} = {size} of {step.src}, which the part "
                                    f"reads in {b} x {b} blocks: choose a block size that "
                                    f"divides {dim}, or pad the data")
