"""lang.widen.must_materialize (which fused intermediates fuse stores, issue 23): linear in the
group's reads. It searched every chain of safe uses separately, exponential in the layers of an
unrolled RNN (`plan` on rnn_stacked.ff spent minutes in it); each tensor's answer is now found
once, and agrees with the per-path search on every example program's groups."""

from __future__ import annotations

from pathlib import Path

import pytest

from fuseflowc.diagnostics import Source, UserError
from fuseflowc.lang import widen
from fuseflowc.lang.load import load_program, program_from_source

ROOT = Path(__file__).resolve().parents[2]


def _per_path(p, group):
    members = set(group)
    pos = p.positions()
    inside = [p.statement(n) for n in sorted(members & pos.keys(), key=pos.__getitem__)]
    return widen._must_materialize_paths(p, group, inside, set(p.outputs), p.readers(), members)


def _groups():
    for f in sorted((ROOT / "ir_examples").rglob("*.ff")):
        try:
            p = load_program(str(f))
        except UserError:
            continue
        names = [s.name for s in p.statements]
        if len(names) <= 24:  # the per-path search is exponential on the unrolled ones
            for g in [names] + [list(r.statements) for r in p.regions()]:
                yield f.stem, p, g


def test_agrees_with_the_per_path_search_on_every_example():
    groups = list(_groups())
    assert len(groups) > 80 and sum(bool(_per_path(p, g)) for _, p, g in groups) > 40
    for name, p, g in groups:
        assert widen.must_materialize(p, g) == _per_path(p, g), (name, g)


def _diamonds(levels: int, last: str) -> str:
    """x(k+1) = (x(k) * 2) * (x(k) * 3): 2^levels chains of safe uses from x0, all dense (each
    widens), then y = `last` of the last x."""
    text = "dim I = 4\n" + "".join(f"tensor x{k}[I] : dense\ntensor a{k}[I] : dense\n"
                                    f"tensor b{k}[I] : dense\n" for k in range(levels + 1))
    text += "tensor y[I] : dense\n"
    for k in range(levels):
        text += (f"a{k}[i] = x{k}[i] * 2\nb{k}[i] = x{k}[i] * 3\n"
                 f"x{k + 1}[i] = a{k}[i] * b{k}[i]\n")
    return text + f"y[i] = {last.format(f'x{levels}[i]')}\n"


@pytest.mark.parametrize("last, stored", [("exp({})", "all"), ("{} * 2", "none")])
def test_linear_in_the_reads_of_a_chain_of_diamonds(monkeypatch, last, stored):
    """exp at the end is unsafe: every tensor before it is stored; * 2 is safe: none is. The
    per-path search made 2^12 chains (about 10^5 walks); each tensor's answer once is a few
    walks per read."""
    p = program_from_source(Source("d.ff", _diamonds(12, last)))
    calls = []
    real = widen.path_safe
    monkeypatch.setattr(widen, "path_safe", lambda *a: calls.append(1) or real(*a))
    group = [s.name for s in p.statements]
    got = widen.must_materialize(p, group)
    assert got == (set(group) - {"y"} if stored == "all" else set())
    assert len(calls) < 40 * len(group)
