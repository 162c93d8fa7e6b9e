"""The CLI's conventions: help, version, exit codes for unknown commands."""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from golden import ROOT, run_cli

from fuseflowc import __version__

SPMV = str(ROOT / "ir_examples" / "kernels" / "spmv.ff")


def test_version():
    r = run_cli(["--version"])
    assert r.exit_code == 0 and __version__ in r.stdout


def test_help_lists_commands():
    r = run_cli(["--help"])
    assert r.exit_code == 0
    assert "Commands" in r.stdout


def test_unknown_command_is_usage_error():
    r = run_cli(["no-such-command"])
    assert r.exit_code == 2
    assert "No such command" in r.stderr


# ---- installed as a package (issue 18, item 1) --------------------------------------------------
# An editable install's .pth file imports importlib.util at start-up, which hid a bare
# `import importlib` in cli.py; a wheel install has no such file. The child drops the module
# first, as a plain install starts. (`make wheel-check` tests the real wheel.)
_WITHOUT_IMPORTLIB_UTIL = """
import importlib, sys
sys.modules.pop("importlib.util", None)
if hasattr(importlib, "util"):
    del importlib.util
from fuseflowc.cli import main
main(sys.argv[1:], prog_name="fuseflowc")
"""


@pytest.mark.parametrize("args", [["--help"], ["check", SPMV]], ids=["help", "check"])
def test_cli_does_not_rely_on_importlib_util_being_loaded(args):
    r = subprocess.run([sys.executable, "-c", _WITHOUT_IMPORTLIB_UTIL, *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr


def test_python_dash_m_fuseflowc():
    r = subprocess.run([sys.executable, "-m", "fuseflowc", "--version"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == f"fuseflowc, version {__version__}\n", r.stderr
    r = subprocess.run([sys.executable, "-m", "fuseflowc", "check", SPMV], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("dim I, J"), r.stderr


def test_every_package_and_data_file_is_installed():
    """pyproject.toml lists its packages one by one: a new package directory must be listed,
    and every file read at run time (grammars, sim/*.toml) must be package data."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    dirs = {p.parent for p in (ROOT / "fuseflowc").rglob("__init__.py")} | {ROOT / "sim"}
    want = {".".join(d.relative_to(ROOT).parts) for d in dirs if "__pycache__" not in d.parts}
    assert want | {"fuseflowc.grammars"} == set(conf["packages"])
    assert conf["package-dir"]["fuseflowc.grammars"] == "grammars"
    data = conf["package-data"]
    for pattern, files in (("*.lark", (ROOT / "grammars").glob("*")),
                           ("*.toml", (ROOT / "sim").glob("*"))):
        for f in files:
            if f.suffix not in (".md", ".py") and f.is_file():
                assert f.match(pattern), f"{f} is read at run time but is not package data"
    assert data["fuseflowc.grammars"] == ["*.lark"] and "*.toml" in data["sim"]
