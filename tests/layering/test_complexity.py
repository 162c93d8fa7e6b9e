"""`make lint`'s complexity check (.ci/complexity): the code kept thin (the Makefile's
THIN_CODE: the commands, the sweep, the SAMML verifier) stays at radon cc 15 or less per
function, and the check catches a function above its limit."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.support.golden import ROOT

CHECK = [sys.executable, str(ROOT / ".ci" / "complexity")]


def thin_code() -> list[str]:
    """The Makefile's THIN_CODE: the files and directories `make lint` keeps at 15."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    [line] = re.findall(r"^THIN_CODE :=(.*)$", text, flags=re.M)
    return line.split()


def test_the_thin_code_stays_thin():
    paths = thin_code()
    assert {"fuseflowc/commands", "fuseflowc/sweep/spec.py", "fuseflowc/samml/verify.py"} \
        <= set(paths)
    assert all((ROOT / p).exists() for p in paths), paths
    r = subprocess.run(CHECK + ["15"] + [str(ROOT / p) for p in paths],
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
