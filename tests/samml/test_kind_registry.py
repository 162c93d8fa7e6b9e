"""The kind registry (fuseflowc.samml.kinds): every SAMML primitive kind has every layer's
implementation (a Python engine node, a C++ factory, a cost rule, timing, a verifier rule, a
fuzz mutation), found by kind name in each layer's one table; and the check itself notices when
any one of them is missing."""

from __future__ import annotations

import pytest

from fuseflowc.diagnostics import UserError
from fuseflowc.estimate import rules as estimate_rules
from fuseflowc.fabric import TILE_CLASSES
from fuseflowc.fuzz import textmut
from fuseflowc.samml import ir, kinds, verify
from fuseflowc.sim import arch as sim_arch
from fuseflowc.sim import build as sim_build
from fuseflowc.sim import engine_fast

# ---- the one lookup per layer that another branch may re-key (adapt these at merge) --------

def cxx_factory_name(kind: str) -> str:
    """The name the compiled engine's factory registry knows kind `kind` by: the kind's own
    (sim/cpp/registry.hpp keys factories by SAMML kind name)."""
    return kind


def cost_rule(kind: str):
    """The estimator's cost rule of kind `kind`, or None: its entry in the per-kind table
    fuseflowc.estimate.rules.RULES."""
    return estimate_rules.RULES.get(kind)


def cxx_kinds() -> set[str]:
    """The names the compiled engine has factories for (empty when it is not built)."""
    return set(engine_fast._fast.kinds()) if engine_fast.available() else set()


# ---- the check -----------------------------------------------------------------------------

def _timing_gap(kind: str) -> str | None:
    """Why sim/arch.toml cannot time `kind` (None when it can): [kind.NAME] must accept it, and
    its [block] cost class must have both entries."""
    try:
        lat, _ = sim_arch.Arch.load(sets=[f"kind.{kind}.latency=7"]).timing(kind)
    except UserError as e:
        return f"a timing entry (sim/arch.toml refuses [kind.{kind}]: {e})"
    if lat != 7:
        return f"a timing entry ([kind.{kind}] latency is not used: {lat})"
    which = kinds.traits(kind).timing
    block = sim_arch.Arch.load().table["block"]
    if which is not None and not {f"{which}_latency", f"{which}_ii"} <= set(block):
        return f"a timing entry (sim/arch.toml [block] has no {which}_latency/{which}_ii)"
    return None


def gaps(kind: str, compiled: set[str]) -> list[str]:
    """What kind `kind` lacks, one phrase per layer (empty: it has everything). `compiled`: the
    compiled engine's factory names."""
    out = []
    if kind not in sim_build.NODES:
        out.append("a Python engine node (fuseflowc.sim.build.NODES)")
    elif cxx_factory_name(kind) not in compiled:
        out.append(f"a C++ factory ({cxx_factory_name(kind)} in _fast.kinds())")
    if cost_rule(kind) is None:
        out.append("a cost rule (fuseflowc.estimate.rules.RULES)")
    timing = _timing_gap(kind)
    if timing:
        out.append(timing)
    rule = kinds.traits(kind).refs
    if not (rule in ("root", "writer") or hasattr(verify._Verifier, "_refs_" + rule)):
        out.append(f"a verifier rule (samml.verify has no rule `{rule}`)")
    if kind not in textmut.WORDS:
        out.append("a fuzz mutation (fuseflowc.fuzz.textmut.WORDS)")
    return out


@pytest.fixture(scope="module")
def compiled() -> set[str]:
    assert engine_fast.available(), engine_fast.unavailable_reason()
    return cxx_kinds()


def test_every_kind_has_every_layer(compiled):
    missing = {k: gaps(k, compiled) for k in kinds.NAMES}
    assert {k: g for k, g in missing.items() if g} == {}


def _drop(table: dict, key: str) -> dict:
    return {k: v for k, v in table.items() if k != key}


# Each way one layer can lose a kind, and the phrase the check must say for it.
LOSSES = {
    "python node": (lambda mp, k: mp.setattr(sim_build, "NODES", _drop(sim_build.NODES, k)),
                    "a Python engine node"),
    "cost rule": (lambda mp, k: mp.setattr(estimate_rules, "RULES",
                                           _drop(estimate_rules.RULES, k)),
                  "a cost rule"),
    "timing": (lambda mp, k: mp.setattr(sim_arch, "KINDS", tuple(x for x in sim_arch.KINDS
                                                                   if x != k)),
               "a timing entry"),
    "verifier": (lambda mp, k: mp.delattr(verify._Verifier, "_refs_" + kinds.traits(k).refs),
                 "a verifier rule"),
    "fuzz": (lambda mp, k: mp.setattr(textmut, "WORDS", tuple(w for w in textmut.WORDS
                                                              if w != k)),
             "a fuzz mutation"),
}


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("kind", ["spacc3", "fork"])
def test_the_check_notices_a_missing_layer(monkeypatch, compiled, loss, kind):
    assert gaps(kind, compiled) == []
    lose, phrase = LOSSES[loss]
    lose(monkeypatch, kind)
    found = gaps(kind, compiled)
    assert len(found) == 1 and found[0].startswith(phrase), found


def test_the_check_notices_a_missing_cxx_factory(compiled):
    assert gaps("spacc3", compiled - {cxx_factory_name("spacc3")}) == [
        f"a C++ factory ({cxx_factory_name('spacc3')} in _fast.kinds())"]


def test_the_check_notices_a_missing_block_timing(monkeypatch, compiled):
    real = sim_arch.Arch.load

    def load(*a, **kw):
        arch = real(*a, **kw)
        arch.table["block"].pop("reduce_ii")
        return arch
    monkeypatch.setattr(sim_arch.Arch, "load", load)
    assert gaps("spacc3", compiled)[0].startswith("a timing entry (sim/arch.toml [block]")


# ---- the registry's own consistency ---------------------------------------------------------

def test_every_kind_is_declared_once_with_its_traits():
    assert kinds.NAMES == tuple(ir.KINDS) and len(set(kinds.NAMES)) == len(kinds.NAMES)
    for name, cls in ir.KINDS.items():
        assert cls.KIND == name and kinds.node_class(name) is cls
        t = kinds.traits(name)
        assert t.tile in ("", *TILE_CLASSES) and t.timing in (None, *ir.TIMINGS)
        assert t.refs in ir.REFS
        assert isinstance(t.laned, bool)


def test_accumulators_are_numbered_by_order():
    # spacc k accumulates k inner levels (its buffer holds k levels), reduce none
    orders = {k: kinds.traits(k).accumulates for k in kinds.NAMES
              if kinds.traits(k).accumulates is not None}
    assert orders == {"reduce": 0, **{f"spacc{k}": k for k in range(1, kinds.MAX_SPACC_ORDER + 1)}}
    assert {k: c.KIND for k, c in kinds.SPACC_KINDS.items()} == \
        {k: f"spacc{k}" for k in range(1, kinds.MAX_SPACC_ORDER + 1)}
    assert kinds.BUFFERED == tuple(f"spacc{k}" for k in range(1, kinds.MAX_SPACC_ORDER + 1))


def test_the_traits_are_todays_hand_kept_lists():
    # What fabric.PLACEMENT/BUFFERED, sim.energy.BUFFER_KINDS, opt.parallelize._LANED_KINDS and
    # sim.arch.timing's block classes said before the registry replaced them (written out by
    # hand, so a changed trait is a visible decision).
    mem = {"scan", "array", "write_level", "write_vals", "spacc1", "spacc2", "spacc3",
           "spill", "replay"}
    assert {k for k, t in kinds.PLACEMENT.items() if t == "mem"} == mem
    assert {k for k, t in kinds.PLACEMENT.items() if t == ""} == {"root"}
    assert set(kinds.LANED) == set(kinds.NAMES) - {"root", "spacc3", "write_level", "write_vals",
                                                   "spill", "replay"}
    assert {k: kinds.traits(k).timing for k in kinds.NAMES if kinds.traits(k).timing} == {
        "array": "load", "alu": "elementwise", "reduce": "reduce", "spacc1": "reduce",
        "spacc2": "reduce", "spacc3": "reduce"}


def test_an_unknown_kind_is_refused_by_name():
    with pytest.raises(UserError, match=r"unknown primitive kind `kind.toy`.*known: root, scan"):
        sim_arch.Arch.load(sets=["kind.toy.latency=1"])


@pytest.mark.parametrize("bad", [{"tile": "gpu"}, {"tile": "pe", "timing": "bmm"},
                                 {"tile": "pe", "refs": "maybe"}])
def test_a_trait_outside_its_vocabulary_is_refused(bad):
    with pytest.raises(ValueError, match="not one of"):
        ir.Traits(**bad)
