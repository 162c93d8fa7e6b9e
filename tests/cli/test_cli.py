"""The CLI's conventions: help, version, exit codes for unknown commands."""

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from fuseflowc import __version__
from tests.support.golden import ROOT, run_cli

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
    dirs = {p.parent for p in (ROOT / "fuseflowc").rglob("__init__.py")}
    want = {".".join(d.relative_to(ROOT).parts) for d in dirs if "__pycache__" not in d.parts}
    assert want | {"fuseflowc.grammars", "fuseflowc.sim"} == set(conf["packages"])
    # the two top-level directories installed under fuseflowc (no top-level `sim` package)
    assert conf["package-dir"] == {"fuseflowc.grammars": "grammars", "fuseflowc.sim": "sim"}
    data = conf["package-data"]
    for pattern, files in (("*.lark", (ROOT / "grammars").glob("*")),
                           ("*.toml", (ROOT / "sim").glob("*"))):
        for f in files:
            # (.so/.pyd: the compiled engine fuseflowc.sim._fast, an extension module setup.py builds)
            if f.suffix not in (".md", ".py", ".so", ".pyd") and f.is_file():
                assert f.match(pattern), f"{f} is read at run time but is not package data"
    assert data["fuseflowc.grammars"] == ["*.lark"] and "*.toml" in data["fuseflowc.sim"]


# ---- one --json convention (item 6) -----------------------------------------------------------
def _gen(tmp_path) -> tuple[Path, Path]:
    d, g = tmp_path / "d", tmp_path / "g.samml"
    assert run_cli(["gen-data", SPMV, "-o", str(d), "--size", "I=6", "--size", "J=5"]
                   ).exit_code == 0
    fused = run_cli(["fuse", SPMV]).stdout
    assert run_cli(["lower", "-", "-o", str(g)], input=fused).exit_code == 0
    return d, g


def test_json_is_a_flag_and_json_out_a_file_in_every_command(tmp_path):
    d, g = _gen(tmp_path)
    results = ROOT / "tests" / "golden" / "sweep" / "fixture.jsonl"
    commands = {
        "run": ["run", SPMV, "--data", str(d)],
        "simulate": ["simulate", str(g), "--data", str(d)],
        "orders": ["orders", SPMV],
        "estimate": ["estimate", str(g), "--data", str(d)],
        "report": ["report", str(results)],
    }
    for name, args in commands.items():
        out = tmp_path / f"{name}.json"
        r = run_cli([*args, "--json", "--json-out", str(out)])
        assert r.exit_code == 0, (name, r.stderr)
        assert json.loads(r.stdout) == json.loads(out.read_text()), name  # the same JSON
        assert r.stdout == out.read_text(), name
        human = run_cli([*args, "--json-out", str(out)])  # the human output is unchanged
        assert human.exit_code == 0 and not human.stdout.lstrip().startswith("{"), name
        help_text = run_cli([args[0], "--help"]).stdout
        assert "--json " in help_text and "--json-out FILE" in help_text, name


def test_the_old_json_file_spelling_still_works(tmp_path):
    d, g = _gen(tmp_path)
    for args in (["simulate", str(g), "--data", str(d)], ["run", SPMV, "--data", str(d)]):
        out = tmp_path / "old.json"
        r = run_cli([*args, "--json", str(out)])
        assert r.exit_code == 0, r.stderr
        assert "`--json-out " in r.stderr and json.loads(out.read_text())
        out.unlink()
        r = run_cli([*args, "--json", "-"])
        assert r.exit_code == 0 and json.loads(r.stdout)


def _on_a_terminal(args: list[str]) -> str:
    """Run the installed `fuseflowc` with stdout and stderr on one pseudo-terminal."""
    import pty
    ffc = Path(sys.executable).with_name("fuseflowc")
    main, child = pty.openpty()
    p = subprocess.Popen([str(ffc), *args], stdin=subprocess.DEVNULL, stdout=child,
                         stderr=child, env={**os.environ, "COLUMNS": "200"})
    os.close(child)
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    assert p.wait(60) == 0, out.decode(errors="replace")
    return out.decode(errors="replace")


def test_estimate_shows_each_number_once(tmp_path):
    d, g = _gen(tmp_path)
    args = ["estimate", str(g), "--data", str(d)]
    screen = _on_a_terminal(args)
    assert "estimate (" in screen and "kernel\tflops" not in screen  # the table alone
    assert _on_a_terminal([*args, "-q"]).count("kernel\tflops") == 1  # -q: the lines alone
    log = tmp_path / "log"
    with open(log, "w") as f:  # `> log 2>&1`: the lines once, no table
        subprocess.run([str(Path(sys.executable).with_name("fuseflowc")), *args], stdout=f,
                       stderr=subprocess.STDOUT, check=True)
    text = log.read_text()
    assert text.count("kernel\tflops") == 1 and "estimate (" not in text
    r = run_cli(args)  # stdout and stderr apart (a pipe): the lines and the table
    assert r.stdout.startswith("kernel\tflops") and "estimate (" in r.stderr


def test_gen_data_refuses_a_negative_seed(tmp_path):
    """Found by fuzzing: numpy refuses a negative seed (ValueError, exit 3)."""
    r = run_cli(["gen-data", SPMV, "-o", str(tmp_path / "d"), "--size", "I=3", "--size", "J=2",
                 "--seed", "-1"])
    assert r.exit_code == 2 and "'--seed': -1 is not in the range x>=0" in r.stderr, r.stderr
    assert not (tmp_path / "d").exists()


def test_simulate_max_cycles_is_a_64_bit_count(tmp_path):
    """Found by fuzzing: the compiled engine takes a 64-bit budget; a larger --max-cycles was a
    TypeError (exit 3)."""
    samml = str(ROOT / "ir_examples" / "samml" / "spmv_row.samml")
    r = run_cli(["simulate", samml, "--data", str(tmp_path), "--max-cycles",
                 "99999999999999999999"])
    assert r.exit_code == 2 and "is not in the range 1<=x<=4611686018427387904" in r.stderr, \
        r.stderr
