"""The pass registry, the pipeline syntax and the `opt` command's options."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseflowc.opt import PASSES, ModulePass, PipelineError, parse_pipeline, run_pipeline
from fuseflowc.opt.base import option_specs
from tests.support.golden import run_cli

ROOT = Path(__file__).resolve().parents[2]
SPMV = str(ROOT / "ir_examples" / "samml" / "spmv_row.samml")


@dataclass(frozen=True)
class Toy(ModulePass):
    """A pass with one option of each type (for the parser tests)."""

    name: ClassVar[str] = "toy"
    factor: int = 2
    index: str = "i"
    deep_copy: bool = False

    def apply(self, module) -> None:
        pass


TOYS = {"toy": Toy, **PASSES}


def test_registered_names_match_classes():
    assert PASSES, "no pass registered"
    for name, cls in PASSES.items():
        assert cls.name == name
        assert (cls.__doc__ or "").strip(), f"{name} has no docstring"
        option_specs(cls)  # options are typed and defaulted
    assert {"dce", "cse", "cleanup"} <= set(PASSES)


def test_pipeline_syntax():
    assert parse_pipeline("") == []
    assert parse_pipeline(" cse , dce ") == [PASSES["cse"](), PASSES["dce"]()]
    assert parse_pipeline("toy{factor=4,index=j}", TOYS) == [Toy(4, "j")]
    assert parse_pipeline("toy{factor=-3 index=k deep-copy=true},cse", TOYS) == \
        [Toy(-3, "k", True), PASSES["cse"]()]
    assert parse_pipeline('toy{index="a b,}"}', TOYS) == [Toy(index="a b,}")]
    assert parse_pipeline("toy{}", TOYS) == [Toy()]
    assert parse_pipeline("dce{decls=false}") == [PASSES["dce"](decls=False)]


@pytest.mark.parametrize("text,words", [
    ("nosuch", ["unknown pass 'nosuch'", "toy{factor: int = 2, index: str = i, deep-copy: bool = "
                "false}", "cse"]),
    ("toy{color=red}", ["pass toy has no option 'color'", "factor: int"]),
    ("toy{factor=four}", ["pass toy: option factor expects int", "'four'"]),
    ("toy{factor=1.5}", ["option factor expects int"]),
    ("toy{deep-copy=yes}", ["option deep-copy expects bool", "true or false"]),
    ("toy{factor=1 factor=2}", ["option factor is given twice"]),
    ("toy{factor}", ["expected '=' after option factor"]),
    ("toy{factor=}", ["expected a value for option factor of toy (int)"]),
    ("toy{factor=1", ["missing '}'"]),
    ("toy cse", ["expected ',' between passes"]),
    ("cse,", ["expected a pass name"]),
    ('toy{index="open}', ["unterminated string"]),
])
def test_pipeline_errors(text, words):
    with pytest.raises(PipelineError) as e:
        parse_pipeline(text, TOYS)
    for w in words:
        assert w in str(e.value)


@given(st.integers(-10 ** 6, 10 ** 6), st.from_regex(r"[A-Za-z0-9_.]{1,8}", fullmatch=True),
       st.booleans())
def test_spelling_round_trips(factor, index, deep):
    p = Toy(factor, index, deep)
    assert parse_pipeline(p.spelling(), TOYS) == [p]


def test_cli_usage_errors_are_exit_2():
    r = run_cli(["opt", SPMV, "-p", "nosuch"])
    assert r.exit_code == 2 and "dce{decls: bool = true}" in r.stderr
    r = run_cli(["opt", SPMV, "-p", "dce{decls=2}"])
    assert r.exit_code == 2 and "option decls expects bool" in r.stderr


def test_cli_output_timing_and_stdin(tmp_path):
    out = tmp_path / "o.samml"
    r = run_cli(["opt", SPMV, "-p", "cse,dce", "-o", str(out), "--time-passes"])
    assert r.exit_code == 0 and r.stdout == ""
    rows = r.stderr.splitlines()
    assert rows[0].split() == ["pass", "ms"] and [x.split()[0] for x in rows[1:]] == \
        ["cse", "dce", "total"]
    text = out.read_text()
    r2 = run_cli(["opt", "-", "-p", "cleanup"], input=text)
    assert r2.exit_code == 0 and r2.stdout == text
    r3 = run_cli(["opt", SPMV])  # no passes: verify and print canonically
    assert r3.exit_code == 0
    # the same module; its source path is relative to where it goes (docs/samml.md, "Recorded
    # paths"): beside o.samml in the file, from the cwd on stdout
    body = [x for x in text.splitlines() if not x.startswith("source ")]
    assert [x for x in r3.stdout.splitlines() if not x.startswith("source ")] == body
    src = {x.split('"')[1] for x in text.splitlines() if x.startswith("source ")}
    assert {(out.parent / x).resolve() for x in src} == {
        Path(x.split('"')[1]).resolve() for x in r3.stdout.splitlines()
        if x.startswith("source ")}


def test_cli_help_and_list():
    r = run_cli(["opt", "--help"])
    assert r.exit_code == 0 and "fuseflowc opt g.samml -p cse,dce" in r.stdout
    r = run_cli(["opt", "--list-passes"])
    assert r.exit_code == 0 and all(name in r.stdout for name in PASSES)


@dataclass(frozen=True)
class Breaker(ModulePass):
    """Drops every writer (leaving dead code and unwritten outputs)."""

    name: ClassVar[str] = "breaker"

    def apply(self, module) -> None:
        for g in module.graphs:
            g.nodes = [n for n in g.nodes if n.outputs]


def test_verification_failure_names_the_pass(monkeypatch):
    monkeypatch.setitem(PASSES, "breaker", Breaker)
    r = run_cli(["opt", SPMV, "-p", "cse,breaker"])
    assert r.exit_code == 1
    assert r.stderr.startswith("fuseflowc: error: the module does not verify after pass breaker")
    assert "is never written" in r.stderr
    r = run_cli(["opt", SPMV, "-p", "breaker", "--no-verify"])
    assert r.exit_code == 0 and "write_vals" not in r.stdout


def test_run_pipeline_reports_each_pass():
    from fuseflowc.samml.load import load_module
    seen = []
    timings = run_pipeline(load_module(SPMV), parse_pipeline("cse,dce{decls=false},cleanup"),
                           after=lambda p, m: seen.append(p.name))
    assert seen == ["cse", "dce", "cleanup"]
    assert [t.name for t in timings] == ["cse", "dce{decls=false}", "cleanup"]


def test_run_pipeline_applies_the_registered_resolvers():
    """The runner names no pass: it applies every resolver registered with
    opt.base.pipeline_resolver (schedule's is one) before running anything."""
    from fuseflowc.opt import base
    from fuseflowc.opt.schedule import resolve_pipeline
    from fuseflowc.samml.load import load_module
    assert base.PIPELINE_RESOLVERS == [resolve_pipeline]
    try:
        base.pipeline_resolver(lambda module, passes: [p for p in passes if p.name != "dce"])
        timings = run_pipeline(load_module(SPMV), parse_pipeline("cse,dce,cleanup"))
        assert [t.name for t in timings] == ["cse", "cleanup"]
    finally:
        base.PIPELINE_RESOLVERS[:] = [resolve_pipeline]


def test_opt_imports_no_numpy():
    code = ("import sys, fuseflowc.opt, fuseflowc.commands.opt, fuseflowc.samml.load; "
            "bad = [m for m in ('numpy', 'scipy', 'networkx', 'rich') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_option_choices_are_checked_wherever_a_pass_is_made():
    """A str option with `choices` is checked by the base class: in a pipeline, and when the
    pass is made in Python (a typo must not silently mean the default)."""
    from dataclasses import field

    @dataclass(frozen=True)
    class Pick(ModulePass):
        name: ClassVar[str] = "pick"
        mode: str = field(default="a", metadata={"choices": ("a", "b")})

        def apply(self, module) -> None:
            pass

    assert option_specs(Pick)[0].describe() == "mode: a|b = a"
    assert Pick(mode="b").mode == "b"
    with pytest.raises(PipelineError, match=r"pass pick: option mode must be one of a, b, "
                                            r"got 'c'"):
        Pick(mode="c")
    with pytest.raises(PipelineError, match="must be one of a, b, got 'z'"):
        parse_pipeline("pick{mode=z}", {"pick": Pick})


def test_lower_verifies_the_default_pipelines_result(monkeypatch):
    """`lower` checks the optimized module once, not after each pass: a default pass that
    breaks a graph is still an error, and `lower -O0 | opt -p` names the pass."""
    from fuseflowc.opt.cleanup import Cleanup
    fused = run_cli(["fuse", str(ROOT / "ir_examples" / "kernels" / "spmv.ff")])
    assert fused.exit_code == 0
    good = run_cli(["lower", "-"], input=fused.stdout)
    assert good.exit_code == 0 and "write_vals" in good.stdout

    def drop_writers(self, g) -> None:
        g.nodes = [n for n in g.nodes if n.outputs]
    monkeypatch.setattr(Cleanup, "apply_graph", drop_writers)
    r = run_cli(["lower", "-"], input=fused.stdout)
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.startswith("fuseflowc: error: the module does not verify after the "
                               "pipeline `locate,schedule,cleanup`")
    assert "is never written" in r.stderr
    raw = run_cli(["lower", "-", "-O0"], input=fused.stdout)
    r = run_cli(["opt", "-", "-p", "locate,schedule,cleanup"], input=raw.stdout)
    assert r.exit_code == 1
    assert r.stderr.startswith("fuseflowc: error: the module does not verify after pass cleanup")
