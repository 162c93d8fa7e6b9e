"""The fuse-flag combinations of one plan share what no flag changes (plan/cost.py `Memo`,
issue 23: `plan` on GPT-3 programs searched up to four combinations, each compiling every
region again). The oracle is each combination searched alone, with nothing shared: the shared
search must choose the same plan, with the same figures, in fewer region compiles."""

from __future__ import annotations

from fuseflowc.diagnostics import Source
from fuseflowc.lang.load import program_from_source
from fuseflowc.plan.cost import CostOptions
from fuseflowc.plan.emit import program_text
from fuseflowc.plan.flags import flag_choices, plan_over_flags
from fuseflowc.plan.search import Planner, PlanOptions
from fuseflowc.plan.validate import validated

# T is read by two statements (--share can store it once) and is declared dense though its
# computed pattern is A's (exp tells a stored zero from an absent one: --inline-widened)
SIZES = {"I": 4, "J": 4}
PROGRAM = """\
dim I = 4, J = 4
tensor A[I, J] : csr
tensor B[I, J] : dense
tensor T[I, J] : dense
tensor U[I, J] : dense
tensor V[I, J] : dense
T[i,j] = A[i,j] * B[i,j]
U[i,j] = exp(T[i,j])
V[i,j] = T[i,j] * U[i,j]
"""


def test_flag_combinations_share_the_regions_no_flag_changes():
    p = program_from_source(Source("m.ff", PROGRAM))
    cost, options = CostOptions(sizes=SIZES, densities={"A": 0.5}), PlanOptions()
    choices = flag_choices(p, cost)
    assert [(c.inline_widened, c.share) for c in choices] == [
        (False, False), (True, False), (False, True), (True, True)]
    planner, result, chosen = plan_over_flags(p, cost, options)
    alone = []
    for c in choices:
        pl = Planner(p, c, options)
        r = validated(pl, pl.run(), c)
        alone.append((pl.value(r.total), pl.ev.compiled, r, c))
    _, _, want, want_cost = min(alone, key=lambda a: a[0])  # ties to the first, as flags.py
    assert chosen == want_cost
    assert program_text(p, result, []) == program_text(p, want, [])
    assert result.total == want.total
    assert result.combinations == 4
    separate = sum(a[1] for a in alone)
    # every lone statement and every region no flag acts on is compiled once, not four times
    assert result.compiles < separate, (result.compiles, separate)
    memo = planner.ev.shared
    lone = [k for k in memo.measured if len(k[0]) == 1]
    assert lone and all(k[3] == (False, False) for k in lone)
    assert len({k[:3] for k in lone}) == len(lone)


def test_a_region_is_keyed_by_the_flags_fuse_acts_on():
    p = program_from_source(Source("m.ff", PROGRAM))
    both = Planner(p, CostOptions(sizes=SIZES, densities={"A": 0.5}, inline_widened=True,
                               share=True), PlanOptions()).ev
    assert both.flags(frozenset({"T"})) == (False, False)
    assert both.flags(frozenset({"T", "U"})) == (True, False)      # T widened; one reader
    assert both.flags(frozenset({"T", "U", "V"})) == (True, True)  # T read by U and V
    share_only = Planner(p, CostOptions(sizes=SIZES, densities={"A": 0.5}, share=True),
                           PlanOptions()).ev
    # without --inline-widened fuse stores T anyway: --share has nothing left to do
    assert share_only.flags(frozenset({"T", "U", "V"})) == (False, False)
