"""The `sweep-executor` family: the corpus's small sweeps run for real on each executor:
`local` (one or two worker processes), `dask://` addresses that are malformed (usage errors)
or where no scheduler listens (a connection error within the connect timeout), with
`--strict` (exit 1 when a configuration failed; the corpus has a spec whose configurations
fail) and resumed results files.

(A live Dask cluster is not started: a LocalCluster costs seconds per case and threads in the
fuzzing process, which forks its cases; tests/sweep/test_sweep_dask.py runs sweeps on one.)"""

from __future__ import annotations

EXECUTORS_GOOD = ("local", "local", "dask://127.0.0.1:9?connect-timeout=0.5",
                  "dask://[::1]:9?connect-timeout=0.3")
EXECUTORS_BAD = ("dask://[::1", "dask://", "dask://host:port", "dask://h:99999", "ray://x",
                 "dask://h:1?connect-timeout=inf", "dask://h:1?connect-timeout=0",
                 "dask://h:1?nope=1", "", "LOCAL", "dask://h:1?connect-timeout=nan")


def executor(b, fam) -> None:
    c = b.case
    c.command = "sweep"
    specs = [s for s in b.corpus.seeds.get("spec", []) if s.path.startswith("seeds/specs/")]
    if not specs:
        c.args.append(("nonexistent.toml",))
        return
    s = b.pick(specs)
    b.add_files(b.corpus.seed_files(s))
    c.inputs.append(s.path)
    c.args.append((s.path,))
    ex = b.pick(EXECUTORS_GOOD) if b.good(0.7) else b.pick(EXECUTORS_BAD)
    b.opt("--executor", ex)
    c.notes.append(f"--executor {ex!r}")
    if b.chance(0.5):
        b.opt("--strict")
    if b.chance(0.3):
        b.opt("-j", b.pick(("1", "2")))
    if b.chance(0.2):
        b.opt("--timeout", b.float_value((2.0, 5.0)))
    if b.chance(0.15):
        b.opt("--dry-run")
    b.output("-o", "file", p_odd=0.2)
    a = c.args[-1]
    if a[1] == "out.txt":
        ext = b.pick((".csv", ".jsonl"))
        c.args[-1] = (a[0], "out" + ext)
        c.outputs[-1] = "out" + ext
    b.stray()
