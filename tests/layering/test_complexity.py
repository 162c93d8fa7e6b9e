"""`make lint`'s complexity check (.ci/complexity): the commands and the sweep spec's parser stay
at radon cc 15 or less per function, and the check catches a function above its limit."""

from __future__ import annotations

import subprocess
import sys

from tests.support.golden import ROOT

CHECK = [sys.executable, str(ROOT / ".ci" / "complexity")]


def test_the_thin_code_stays_thin():
    r = subprocess.run(CHECK + ["15", str(ROOT / "fuseflowc" / "commands"),
                                str(ROOT / "fuseflowc" / "sweep" / "spec.py")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_the_check_catches_a_function_above_the_limit(tmp_path):
    branches = "".join(f"    if x == {k}:\n        return {k}\n" for k in range(15))
    (tmp_path / "fat.py").write_text(f"def f(x):\n{branches}    return -1\n\n\n"
                                     "class C:\n    def g(self):\n        return 0\n")
    r = subprocess.run(CHECK + ["15", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.strip() == f"{tmp_path / 'fat.py'}:1: f: complexity 16 > 15"
    assert subprocess.run(CHECK + ["16", str(tmp_path)]).returncode == 0
