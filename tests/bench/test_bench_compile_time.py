"""`make bench-compile` (fuseflowc.bench.compile_time): the figures lines, and the bytecode cache
its processes run with (an installed fuseflowc's), kept out of the checkout and removed."""

from __future__ import annotations

from pathlib import Path

from fuseflowc.bench import compile_time

ROOT = Path(__file__).resolve().parents[2]


def test_compile_time_runs_with_a_temporary_bytecode_cache(monkeypatch, capsys):
    seen = []
    real = compile_time.compile_once

    def spy(ffc, model, env=None):
        got = real(ffc, model, env)
        cache = Path(env["PYTHONPYCACHEPREFIX"])
        seen.append((cache, "PYTHONDONTWRITEBYTECODE" in env, any(cache.rglob("*.pyc"))))
        return got

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setattr(compile_time, "compile_once", spy)
    model = ROOT / "ir_examples" / "kernels" / "spmv.ff"
    assert compile_time.main(["--runs", "1", str(model)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [x.split(":")[0] for x in out] == ["compile-ms spmv", "compile-cpu-ms spmv"]
    assert len(seen) == 2   # the warm-up, then the counted run
    assert all(written and not off for _, off, written in seen)
    assert seen[0][0] == seen[1][0] and not seen[0][0].exists()
    assert ROOT not in seen[0][0].parents
