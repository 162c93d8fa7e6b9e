"""The primitive kind registry: every SAMML primitive kind by name, with its traits.

A kind is declared once, as its node class in fuseflowc.samml.ir, the way xDSL declares an op:
its name (`KIND`), ports (`INPUTS`/`OUTPUTS`, or `signature()` for the n-ary ones, which also
gives the arity an error message states), attributes (`attr()` fields, typed), its own
verifier rules (`verify_()`), and its `TRAITS` (fabric tile class, laned or serial under
`parallelize`, [block] timing class, accumulator order, how it carries tensor references). `ir.KINDS` lists the classes; nothing
else enumerates kinds. This module answers the layers' questions by kind name.

Each layer's implementation of a kind stays in its layer, found by kind name in one table
there, never an if-chain:

  Python engine node   fuseflowc.sim.build.NODES (kind -> sim/prims_*.py class and its maker)
  compiled engine      the C++ factory registry (sim/cpp/registry.hpp, `_fast.kinds()`)
  cost rule            fuseflowc.estimate.rules.RULES (kind -> rule)
  timing               sim/arch.toml: [default], optional [kind.<name>], [block] by `timing`
  verifier             the class's `verify_()`, and samml.verify's rule for its `refs` trait
                       (how it carries tensor references)
  fuzzing              fuseflowc.fuzz.textmut.WORDS (kind names a mutation may write)

tests/samml/test_kind_registry.py fails when a kind lacks any of them; docs/samml.md ("Adding a
primitive") walks through adding one.
"""

from __future__ import annotations

from .ir import KINDS, MAX_SPACC_ORDER, SPACC_KINDS, Node, Traits

__all__ = ["BUFFERED", "KINDS", "LANED", "MAX_SPACC_ORDER", "NAMES", "PLACEMENT", "SPACC_KINDS",
           "node_class", "traits"]

#: Every kind name, in documentation order.
NAMES: tuple[str, ...] = tuple(KINDS)


def node_class(kind: str) -> type[Node]:
    """The node class of kind `kind` (KeyError for an unknown name)."""
    return KINDS[kind]


def traits(kind: str) -> Traits:
    """The traits of kind `kind` (KeyError for an unknown name)."""
    return KINDS[kind].TRAITS


#: Kind -> the fabric tile class a node of it occupies ("" none, "pe" or "mem"). Scanners,
#: arrays and writers stream a tensor's levels through a memory tile; accumulators keep their
#: buffer in memory tiles (one or more by its bytes); everything else computes or routes tokens
#: in a PE tile; the root, the global controller's start token, occupies none. As on Onyx (Koul
#: et al., "Onyx: A 12nm 756 GOPS/W Coarse-Grained Reconfigurable Array for Accelerating Dense
#: and Sparse Applications", VLSI 2024), where level scanners, writers and value arrays sit in
#: MEM tiles and joiners, ALUs, reducers and repeaters in PE tiles.
PLACEMENT: dict[str, str] = {k: traits(k).tile for k in NAMES}
#: Kinds holding a buffer sized by the data (accumulators of order >= 1), in NAMES order.
BUFFERED: tuple[str, ...] = tuple(k for k in NAMES if traits(k).buffered)
#: Kinds `parallelize` may copy into lanes.
LANED: tuple[str, ...] = tuple(k for k in NAMES if traits(k).laned)
