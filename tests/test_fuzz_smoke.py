"""A short seeded run of the project's fuzzer (fuseflowc.fuzz; `make fuzz N=...` runs more).

Every subcommand on mutated programs, fused IR, SAMML graphs, data directories, sweep specs,
results files and options, from the small corpus (a few kernels and GCN): no case may end in a
traceback, exit 3, a hang, a crash, a leftover or clobbered file, an output with the wrong mode,
or a failure without a message. The table of outcomes is printed (pytest -s shows it).
"""

from __future__ import annotations

from fuseflowc.fuzz.cases import COMMANDS
from fuseflowc.fuzz.classify import FAILURES
from fuseflowc.fuzz.driver import fuzz, table
from fuseflowc.fuzz.execute import Limits

CASES = 200
SEED = 18
LIMITS = Limits(seconds=10, memory_mb=3072)


def test_fuzz_smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("fuzz")
    summary = fuzz(CASES, SEED, out, LIMITS, jobs=1, minimize_seconds=0, scope="small")
    text = table(summary, SEED, LIMITS, 1)
    print(text)
    assert summary.cases == CASES
    assert set(summary.counts) == set(COMMANDS), "every subcommand ran"
    total = summary.total()
    assert total["ok"] >= CASES // 10 and total["user-error"] >= CASES // 4, text
    bad = [k for k in summary.failures if k[0] in FAILURES]
    assert not bad, f"failures (reproduce: python -m fuseflowc.fuzz --scope small --seed " \
                    f"{SEED} --show K):\n{text}"
