"""A short seeded run of the project's fuzzer (fuseflowc.fuzz; `make fuzz N=...` runs more).

Every subcommand (and nearly every family: fuseflowc/fuzz/families) on mutated programs, fused
IR, SAMML graphs, data directories, sweep specs, results files, graph sources, matrices and
options, from the small corpus (a few kernels and GCN): no case may end in a
traceback, exit 3, a hang, a crash, a leftover or clobbered file, an output with the wrong mode,
or a failure without a message. The table of outcomes is printed (pytest -s shows it).
"""

from __future__ import annotations

import json
from pathlib import Path

from fuseflowc.cli import COMMANDS
from fuseflowc.fuzz.classify import FAILURES
from fuseflowc.fuzz.driver import fuzz, table
from fuseflowc.fuzz.execute import Limits

ROOT = Path(__file__).resolve().parents[2]
CASES = 200
SEED = 18
LIMITS = Limits(seconds=10, memory_mb=3072)


def test_fuzz_smoke(tmp_path_factory, monkeypatch):
    where = tmp_path_factory.mktemp("fuzz")
    monkeypatch.chdir(where)     # a relative output directory, as `make fuzz` passes it
    summary = fuzz(CASES, SEED, Path("out"), LIMITS, jobs=1, minimize_seconds=0, scope="small")
    corpus = json.loads((where / "out" / "corpus" / "corpus.json").read_text())
    assert corpus["data_dirs"], "the corpus has data directories (its commands ran)"
    text = table(summary, SEED, LIMITS, 1)
    print(text)
    assert summary.cases == CASES
    assert set(summary.commands) == set(COMMANDS), "every subcommand ran"
    assert len(summary.counts) >= 20, "(nearly) every family ran"
    total = summary.total()
    assert total["ok"] >= CASES // 10 and total["user-error"] >= CASES // 4, text
    # building a case never fails, whatever it draws: 2,000 fuse cases built, not run (a
    # --verify-ir case whose program had gone to stdin popped an input it had not named)
    from fuseflowc.fuzz.cases import make_case
    from fuseflowc.fuzz.corpus import build_corpus
    built = build_corpus(ROOT, where / "out" / "corpus", scope="small")
    cases = [make_case(built, SEED, k, ("fuse",)) for k in range(2000)]
    assert sum("--verify-ir" in str(c.args) for c in cases) > 50
    bad = [k for k in summary.failures if k[0] in FAILURES]
    assert not bad, f"failures (reproduce: python -m fuseflowc.fuzz --scope small --seed " \
                    f"{SEED} --show K):\n{text}"
