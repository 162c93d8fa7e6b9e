"""`fuseflowc decompose-advisor`: the best decompositions of one matrix for a program."""

from __future__ import annotations

import json

import click

from ..diagnostics import UserError
from .options import json_option, output_option, schedule_option


def _numbers(text: str | None, what: str, conv, default):
    if text is None:
        return default
    try:
        out = tuple(conv(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UserError(f"{what} {text}: expected numbers separated by commas") from None
    if not out:
        raise UserError(f"{what} {text}: give at least one")
    return out


@click.command("decompose-advisor")
@click.argument("matrix", metavar="MATRIX")
@click.option("--program", "program_path", required=True, metavar="PROGRAM",
              help="The program that reads the matrix (a .ff file).")
@click.option("--tensor", metavar="NAME",
              help="The program's input the matrix is (default: its only unblocked sparse "
                   "input matrix).")
@click.option("--size", "sizes", multiple=True, metavar="DIM=N",
              help="The size of another dim of the program (repeatable); the matrix gives its "
                   "own dims' sizes.")
@click.option("--blocks", metavar="B,B,...", help="Block sizes to try (default 2,4,8,16,32; "
              "those that divide the matrix's dims).")
@click.option("--thresholds", metavar="T,T,...",
              help="Fill thresholds to try (default 0.125,0.25,0.5,0.75,1, and 1/b^2: every "
                   "block holding an entry).")
@click.option("--pad", type=click.IntRange(min=1, max=4096), default=None, metavar="B",
              help="Pad the matrix with empty rows and columns to a multiple of B, so that "
                   "block sizes dividing B divide it (the data must be padded likewise).")
@click.option("--top", type=click.IntRange(min=1), default=5, show_default=True,
              help="How many candidates to list.")
@click.option("--hoist", is_flag=True,
              help="Leave the split of the matrix out of the cost (a static pattern, split "
                   "once, as `simulate --hoist`).")
@schedule_option
@json_option
@output_option
def cmd(matrix, program_path, tensor, sizes, blocks, thresholds, pad, top, hoist, schedule, as_json,
        output):
    """List the best decompositions of MATRIX (a .mtx, .npz or .npy file) for PROGRAM.

    Every candidate (one blocked part bcsr(b) >= t, or two with b1 > b2, each followed by a csr
    residual; and no decomposition) is compiled and estimated on the matrix, its parts split
    exactly; candidates are ranked by a cycle proxy from the estimate (per graph the larger of
    bytes / bandwidth and FLOPs / rate, a blocked graph's rate b^2 times a scalar one's; see
    docs/estimate.md, "Choosing a decomposition"). The `directive` column is the line to add
    to the program; `simulate` measures it.

    \b
    Examples:
      fuseflowc decompose-advisor ../shared/data/jazz.mtx --program spmm.ff --size K=16
      fuseflowc decompose-advisor A.mtx --program gcn_agg.ff --tensor A --blocks 4,8 --json
    """
    from fuseflowc.sim.arch import Arch

    from ..lang.load import load_program
    from ..outputs import Outputs
    from ..plan.advisor import DEFAULT_BLOCKS, DEFAULT_THRESHOLDS, advise
    out = Outputs(matrix, program_path)
    bs = _numbers(blocks, "--blocks", int, DEFAULT_BLOCKS)
    ts = _numbers(thresholds, "--thresholds", float, DEFAULT_THRESHOLDS)
    if any(b < 1 or b > 4096 for b in bs):
        raise UserError(f"--blocks {blocks}: a block size is 1 to 4096")
    if any(not 0 < t <= 1 for t in ts):
        raise UserError(f"--thresholds {thresholds}: a threshold is in (0, 1]")
    dest = out.file(output)
    program = load_program(program_path, schedule)
    tensor = _matrix_input(program, tensor)
    data, size_map = _load_matrix(program, tensor, matrix, sizes, pad)
    ranked = advise(program, tensor, data, size_map, Arch.load(), bs, ts, hoist)
    text = (_json(tensor, data, ranked, top, hoist) if as_json
            else _table(tensor, data, ranked, top, hoist))
    with out:
        dest.write(text)


def _matrix_input(program, tensor: str | None) -> str:
    """The input matrix to decompose: `tensor` (checked: an unblocked sparse input matrix), or
    the program's only one."""
    inputs = set(program.inputs)
    if tensor is None:
        cands = [t.name for t in program.tensors if t.name in inputs and t.order == 2
                 and not t.format.blocked and not t.format.is_dense]
        if len(cands) != 1:
            raise UserError("--tensor NAME: the program has " + (
                f"several sparse input matrices ({', '.join(cands)})" if cands
                else "no unblocked sparse input matrix"))
        tensor = cands[0]
    if tensor not in inputs:
        raise UserError(f"--tensor {tensor}: not an input of the program")
    decl = program.tensor(tensor)
    if decl.order != 2 or decl.format.blocked or decl.format.is_dense:
        raise UserError(f"--tensor {tensor}: not an unblocked sparse matrix "
                        f"({decl.format.name()})")
    return tensor


def _load_matrix(program, tensor: str, matrix: str, sizes, pad) -> tuple:
    """(the matrix read from MATRIX as `tensor` is declared, padded to `pad`; every dim's size:
    --size, the matrix's shape, the program's fixed sizes); UserError for a size missing or
    contradicting the matrix."""
    from pathlib import Path

    from ..data.io import load_tensor
    from .estimate import _pairs
    size_map, _ = _pairs(sizes, "--size", int)
    for k, v in size_map.items():  # (found by fuzzing: K=-1 was a ValueError in the model)
        if v < 1:
            raise UserError(f"--size {k}={v}: a size is at least 1")
    decl = program.tensor(tensor)
    fixed = {d.name: d.size for d in program.dims if d.size is not None}
    spec = next(s for s in program.specs() if s.name == tensor)
    shape = tuple(d if isinstance(d, int) else fixed.get(d) for d in decl.dims)
    data = load_tensor(Path(matrix), spec, shape)
    if pad is not None:
        from ..data.decompose import pad_matrix
        data = pad_matrix(data, pad)
    return data, _bind_sizes(program, decl, data.shape, size_map, fixed)


def _bind_sizes(program, decl, shape: tuple, size_map: dict, fixed: dict) -> dict:
    """Every dim's size: --size (`size_map`), the matrix's `shape` for its dims (a --size that
    contradicts it is an error), the program's `fixed` sizes; an unbound dim is an error."""
    for d, n in zip(decl.dims, shape):
        if isinstance(d, str):
            if size_map.get(d, n) != n:
                raise UserError(f"--size {d}={size_map[d]}: the matrix has {d} = {n}")
            size_map[d] = n
    for d, n in fixed.items():
        size_map.setdefault(d, n)
    missing = sorted(d.name for d in program.dims if d.name not in size_map)
    if missing:
        raise UserError("give the size of " + ", ".join(missing) + " with --size "
                        + " --size ".join(f"{m}=N" for m in missing))
    return size_map


def _json(tensor: str, data, ranked: list, top: int, hoist: bool) -> str:
    """--json: the matrix, the candidate count and the best `top` candidates."""
    return json.dumps({"tensor": tensor, "shape": list(data.shape), "nnz": data.nnz,
                       "hoist": hoist, "candidates": len(ranked),
                       "best": [c.to_json(tensor) for c in ranked[:top]]}, indent=1) + "\n"


def _table(tensor: str, data, ranked: list, top: int, hoist: bool) -> str:
    """The ranking as a table: the best `top` candidates, each with its directive."""
    rows = [("rank", "cycles~", "split~", "bytes", "FLOPs", "in blocks", "directive")]
    for k, c in enumerate(ranked[:top], 1):
        rows.append((str(k), f"{c.proxy:,.0f}", f"{c.split_proxy:,.0f}",
                     f"{c.cost.bytes:,.0f}", f"{c.cost.flops:,.0f}",
                     f"{100 * c.blocked_share:.1f}%", c.directive(tensor)))
    widths = [max(len(r[j]) for r in rows) for j in range(6)]
    lines = [f"{tensor}: {data.shape[0]} x {data.shape[1]}, {data.nnz} stored entries; "
             f"{len(ranked)} candidates" + (" (split hoisted)" if hoist else "")]
    for r in rows:
        lines.append("  ".join(x.rjust(w) for x, w in zip(r[:6], widths)) + "  " + r[6])
    return "\n".join(lines) + "\n"
