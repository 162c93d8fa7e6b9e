"""Reading the fused IR text (grammars/fused.lark) back into fuseflowc.fuse.ir objects.

Syntax errors and malformed formats are located UserErrors; structural checks (undefined views,
indices, instances, orders that are not linear extensions...) are the verifier's
(fuseflowc.fuse.verify), run by `parse_fused(..., verify=True)`. Text `fuse` printed is read
by fuse.fastlines and fuse.fastregions; Lark (fuse.lark_read) reads the rest, and is not even
imported when nothing is left to it.
"""

from __future__ import annotations

from ..diagnostics import Source, UserError
from ..formats import shorthand, shorthand_problem
from ..syntax import paused_gc
from . import fastlines, ir, rebind


@paused_gc()
def parse_fused(source: Source, verify: bool = True) -> ir.FusedProgram:
    """Parse fused-IR text; with `verify`, also check it (fuseflowc.fuse.verify)."""
    items = read_items(source)
    prog = ir.FusedProgram(None)
    rebound: list[tuple[int, tuple]] = []
    for item in items:
        if isinstance(item, tuple) and item[0] == "source":
            prog.source = item[1]
        elif isinstance(item, tuple) and item[0] == "reuse":
            _, var, k, names, loc = item
            its = next((x for v, x in prog.reuse if v == var), None)
            if its is None:
                its = []
                prog.reuse.append((var, its))
            if k < len(its):
                raise UserError(f"reuse {var} {k}: iterations are listed in increasing order",
                                loc)
            its.extend([] for _ in range(k - len(its)))
            its.append(names)
        elif isinstance(item, tuple) and item[0] == "rebound":
            rebound.append((len(prog.regions), item))
        elif isinstance(item, tuple) and item[0] == "wave":
            prog.waves[item[1]] = item[2]
        elif isinstance(item, tuple):
            prog.dims.append(item[1:])
        elif isinstance(item, ir.TensorInfo):
            prog.tensors.append(item)
        else:
            prog.regions.append(item)
    for t in prog.tensors:
        if isinstance(t.format, tuple):  # a shorthand: resolved once the order is known
            name, loc, arg = t.format
            problem = shorthand_problem(name, arg)
            if problem:
                raise UserError(problem, loc)
            fmt = shorthand(name, len(t.dims), arg)
            if fmt is None:
                raise UserError(f"format {name!r} does not fit a tensor of {len(t.dims)} "
                                f"dimension(s)", loc)
            t.format = fmt
    if rebound:
        _expand_rebound(prog, rebound)
    if verify:
        from .verify import verify_fused
        verify_fused(prog)
    return prog


def read_items(source: Source, fast: bool = True) -> list:
    """The top-level items of fused-IR text as the transformer makes them, in order (with
    `fast`, the plainest lines read by fuse.fastlines, the rest by Lark: the same items)."""
    if fast:
        try:
            return _read_items(source, True)
        except UserError:   # reported as Lark alone reports it (a blanked line shows in
            pass            # the text of an unexpected newline)
    return _read_items(source, False)


def _read_items(source: Source, fast: bool) -> list:
    text = source.text if source.text.endswith("\n") else source.text + "\n"
    lines, text = fastlines.split(text, source) if fast else ([], text)
    if lines and fastlines.nothing_left(text):
        return [item for _, item in lines]
    from . import lark_read
    items, starts = lark_read.read(source, text)
    return fastlines.merge(items, starts, lines) if lines else items


def _expand_rebound(prog: ir.FusedProgram, lines: list[tuple[int, tuple]]) -> None:
    """Put the regions of each `reuse l K = 0 {...}` line (iteration 0's regions renamed:
    fuseflowc.fuse.rebind) where the line stands, and record its binding."""
    its = dict(prog.reuse)
    computed = {t.name for t in prog.tensors if t.role not in ("input", "part")}
    inserted = []
    for pos, (_, var, k, of, pairs, loc) in lines:
        if var not in its:
            raise UserError(f"reuse {var} {k} = {of}: no `reuse {var} 0: ...` line lists the "
                            f"statements of loop {var}'s iterations", loc)
        if of != 0:
            raise UserError(f"reuse {var} {k} = {of}: a reused iteration rebinds iteration 0",
                            loc)
        if not 0 < k < len(its[var]) or not its[var][k]:
            raise UserError(f"reuse {var} {k} = 0: loop {var} has no iteration {k} (its "
                            f"`reuse {var} K: ...` lines list iterations 0 to "
                            f"{len(its[var]) - 1})", loc)
        if (var, k) in prog.bindings:
            raise UserError(f"reuse {var} {k} = 0 is given twice", loc)
        names: dict[str, str] = {}
        for a, b, at in pairs:
            if a in names:
                raise UserError(f"reuse {var} {k} = 0: {a} is bound twice", at)
            names[a] = b
        prog.bindings[(var, k)] = names
        templates = rebind.templates_of(prog.regions, its[var][0])
        renamed = [names.get(s, s) for s in its[var][0]]
        if not templates or renamed != its[var][k]:
            raise UserError(f"reuse {var} {k} = 0: iteration 0's statements renamed are "
                            f"{', '.join(renamed)}, not iteration {k}'s ("
                            f"{', '.join(its[var][k])})", loc)
        inserted.append((pos, [rebind.rename_region(r, names, computed, (var, k))
                               for r in templates]))
    for pos, regions in reversed(inserted):
        prog.regions[pos:pos] = regions
