"""How human-facing views name a fused index: `u0(j)`.

`fuse` renames index variables apart (every reduction gets a fresh `u0`, `u1`, ...; a clash adds
`_2`), and every later IR uses those global names. The pictures (`fuseflowc dot`), the order
listings (`fuseflowc orders --list`) and the simulator's node tables show each one with the
name(s) the program wrote for it, taken from the fused instances' index maps (`{j=u0}`) and
carried into SAMML by a graph's `names` line. The IR texts keep the global names only.
"""

from __future__ import annotations

from typing import Iterable, Mapping


def source_names(pairs: Iterable[tuple[str, str]]) -> dict[str, tuple[str, ...]]:
    """From (program name, global name) pairs, the program's names of each global index that
    the program did not write itself, in order of first appearance: {"u0": ("j",),
    "u1": ("i", "k"), "s": ("i",)} (an index kept under its own name is listed only when
    another statement calls it something else)."""
    out: dict[str, list[str]] = {}
    for local, glob in pairs:
        if local != glob and local not in out.setdefault(glob, []):
            out[glob].append(local)
    return {g: tuple(ns) for g, ns in out.items() if ns}


def shown(index: str, names: Mapping[str, tuple[str, ...]] | None) -> str:
    """`u0(j)` (`u1(i/k)` for several program names), or the index alone when it has none."""
    ns = (names or {}).get(index)
    return f"{index}({'/'.join(ns)})" if ns else index
