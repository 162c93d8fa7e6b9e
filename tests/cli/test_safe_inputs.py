"""Issue #18, item 4, the input side: inputs that ended in a traceback (exit 3), ran for minutes
or for ever now end in a located error (exit 1) at once, through the real entry point. The
messages themselves are pinned by the goldens (tests/golden/{lang/limits.ff,
fuse/verify_lowerable.fused, samml/limits.invalid.samml, kinds/wrong_kind.run}); here the
cases that need generated inputs (thousands of digits, hundreds of levels), a patched machine
(its memory) or a clock."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.support.golden import ROOT, run_cli

EX = ROOT / "ir_examples"
SPMV = str(EX / "kernels" / "spmv.ff")
SPMV_SAMML = (EX / "samml" / "spmv_row.samml").read_text().replace(
    'source "../kernels/spmv.ff"\n', "")
BIG = "9" * 5000  # past Python's int-string limit (4300 digits): int() raised ValueError


def fused_spmv() -> str:
    r = run_cli(["fuse", SPMV])
    assert r.exit_code == 0
    return r.stdout.replace(f'source "{SPMV}"\n', "")


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def fails(args: list[str], where: str | None, *needles: str, code: int = 1) -> str:
    r = run_cli(args)
    assert r.exit_code == code, (r.exit_code, r.stderr[-2000:])
    if where is not None:
        assert r.stderr.startswith(where), r.stderr[:300]
    for n in needles:
        assert n in r.stderr, r.stderr[:2000]
    return r.stderr


# ---- numbers with thousands of digits -----------------------------------------------------------

@pytest.mark.parametrize("cmd", [["simulate", "--data", "d"], ["opt", "-p", "cleanup"],
                                 ["estimate", "--size", "N=4", "--size", "M=4"], ["dot"]])
def test_samml_attribute_of_5000_digits(tmp_path, cmd):
    f = write(tmp_path, "g.samml", SPMV_SAMML.replace("mode = 0, format = dense, index = i",
                                                      f"mode = {BIG}, format = dense, index = i"))
    fails([cmd[0], f, *cmd[1:]], f"{f}:9:43:", "mode = 999999999999...(5000 digits) is too large")


@pytest.mark.parametrize("cmd", [["lower"], ["fuse", "--verify-ir"],
                                 ["estimate", "--size", "I=4", "--size", "J=4"]])
def test_fused_order_number_of_5000_digits(tmp_path, cmd):
    f = write(tmp_path, "g.fused", fused_spmv().replace("order i -> u0 : 0",
                                                        f"order i -> u0 : {BIG}"))
    fails([*cmd, f], f"{f}:", "the order number 999999999999...(5000 digits) is too large")


@pytest.mark.parametrize("text, what", [
    (f"dim I = {BIG}\n", "a dimension size"),
    (f"dim I\ntensor x[I] : dense\ntensor y[I] : dense\ny[i] = x[i]\nparallelize y: i by {BIG}\n",
     "a parallel factor"),
    (f"dim I\ntensor x[{BIG}] : dense\n", "a dimension size"),
    (f"dim I\ntensor x[I] : (dense) order ({BIG})\n", "a mode number"),
    (f"dim I\ntensor x[I, I] : bcsr\nblock x: {BIG}\n", "a block size"),
    (f"dim I\ntensor x[I] : dense\ntensor y[I] : dense\ny[i] = x[i] * {BIG}\n", "number"),
])
def test_program_numbers_of_5000_digits(tmp_path, text, what):
    f = write(tmp_path, "p.ff", text)
    fails(["check", f], f"{f}:", f"{what} 999999999999...(5000 digits) is too large")


def test_pass_option_and_arch_value_of_5000_digits(tmp_path):
    f = write(tmp_path, "g.samml", SPMV_SAMML)
    fails(["opt", "-p", f"parallelize{{index=i,factor={BIG}}}", f], None,
          "(5000 digits) is too large", code=2)
    fails(["simulate", f, "--data", "d", "--depth", BIG], "fuseflowc: error:",
          "is too large")


# ---- nesting -------------------------------------------------------------------------------------

@pytest.mark.parametrize("expr", ["-" * 500 + "sum[u0](A[i,u0] * x[u0])",
                                  "sum[u0](A[i,u0] * (" + " + ".join(["x[u0]"] * 500) + "))"])
@pytest.mark.parametrize("cmd", [["lower"], ["fuse", "--verify-ir"],
                                 ["estimate", "--size", "I=4", "--size", "J=4"]])
def test_fused_ir_nested_500_deep(tmp_path, expr, cmd):
    f = write(tmp_path, "g.fused", fused_spmv().replace("sum[u0](A[i,u0] * x[u0])", expr))
    fails([*cmd, f], f"{f}:12:", "nested more than 100 levels deep")


def test_samml_lists_nested_500_deep(tmp_path):
    f = write(tmp_path, "g.samml", SPMV_SAMML.replace(
        "%ra = root {tensor = A}", "%ra = root {tensor = A, lane = " + "[" * 500 + "]" * 500 + "}"))
    fails(["dot", f], f"{f}:", "lists in lists) is nested more than 100 levels deep")


def _chain(n: int, depth: int) -> str:
    """n statements fused, each `depth` calls deep around the previous one."""
    lines = ["dim I", "tensor x[I] : dense"] + [f"tensor t{k}[I] : dense" for k in range(n)]
    prev = "x"
    for k in range(n):
        lines.append(f"t{k}[i] = " + "exp(" * depth + f"{prev}[i]" + ")" * depth)
        prev = f"t{k}"
    lines.append("fuse all: " + ", ".join(f"t{k}" for k in range(n)))
    return "\n".join(lines) + "\n"


def test_statements_within_the_limit_inlined_beyond_it(tmp_path):
    """Each statement is 40 deep; inlined into each other they were 320 deep and lowering
    recursed without bound. fuse (and estimate, which fuses) refuses at the statement."""
    f = write(tmp_path, "chain.ff", _chain(8, 40))
    fails(["fuse", f, "--inline-widened"], f"{f}:13:1:", "is nested 120 levels deep once lowered",
          "fuse fewer statements into region 'all'")
    fails(["estimate", f, "--inline-widened", "--size", "I=4"], f"{f}:13:1:")


def test_the_deepest_accepted_expression_runs_through_every_stage(tmp_path):
    """100 levels (the limit) of calls and of sums go through check, run, fuse, lower, opt,
    simulate --check and estimate: the limit leaves every recursive stage room."""
    body = "relu(" * 50 + " + ".join(["x[i]"] * 51) + ")" * 50
    f = write(tmp_path, "deep.ff", "dim I\ntensor x[I] : dense\ntensor y[I] : dense\n"
                                   f"y[i] = {body}\n")
    d = str(tmp_path / "d")
    assert run_cli(["gen-data", f, "-o", d, "--size", "I=5"]).exit_code == 0
    assert run_cli(["run", f, "--data", d, "-o", str(tmp_path / "out")]).exit_code == 0
    fused = run_cli(["fuse", f])
    assert fused.exit_code == 0, fused.stderr
    g = run_cli(["lower"], fused.stdout)
    assert g.exit_code == 0, g.stderr
    o = run_cli(["opt", "-p", "cse,cleanup", "-"], g.stdout)
    assert o.exit_code == 0, o.stderr
    sim = run_cli(["simulate", "-", "--data", d, "--check", "--expect", str(tmp_path / "out")],
                  o.stdout)
    assert sim.exit_code == 0, sim.stderr
    assert run_cli(["estimate", f, "--data", d, "-q"]).exit_code == 0
    deeper = write(tmp_path, "deeper.ff", f"dim I\ntensor x[I] : dense\ntensor y[I] : dense\n"
                                          f"y[i] = relu({body})\n")
    fails(["check", deeper], f"{deeper}:4:", "nested more than 100 levels deep")


# ---- parallel factors ----------------------------------------------------------------------------

def test_parallel_factor_and_nested_lanes_are_bounded(tmp_path):
    g = write(tmp_path, "g.samml", SPMV_SAMML)
    fails(["opt", "-p", "parallelize{index=i,factor=1025}", g], None,
          "option factor must be between 1 and 64", code=2)
    fused = run_cli(["fuse", str(EX / "models" / "bigbird_attention" / "attention.ff"),
                     "--order", "51"])
    lowered = run_cli(["lower"], fused.stdout)
    assert lowered.exit_code == 0
    r = run_cli(["opt", "-p", "parallelize{index=i,factor=16},parallelize{index=u0,factor=16}",
                 "-"], lowered.stdout)
    assert r.exit_code == 1
    assert "makes 256 lanes (16 from earlier splits times 16); at most 64" in r.stderr
    # what the benches use: 16 at one index (all three copies of j), and 4 x 4 nested
    for p in ("parallelize{index=u0,factor=16},parallelize{index=u1,factor=16},"
              "parallelize{index=u2,factor=16}",
              "parallelize{index=i,factor=4},parallelize{index=u0,factor=4}"):
        assert run_cli(["opt", "-p", p, "-"], lowered.stdout).exit_code == 0


# ---- arch values ---------------------------------------------------------------------------------

@pytest.mark.parametrize("opt, msg", [
    (["--depth", "99999999999999999999"], "channel.depth must be a whole number from 1 to 4611686018427387904"),
    (["--depth", "0"], "channel.depth must be a whole number from 1 to 4611686018427387904 or inf, not 0"),
    (["--set", "memory.latency=nan"], "memory.latency must be a whole number"),
    (["--set", "memory.element_bytes=nan"], "memory.element_bytes must be a whole number"),
    (["--set", "memory.bandwidth=nan"], "memory.bandwidth must be a number from 0.1"),
    (["--set", "memory.bandwidth=1e-300"], "memory.bandwidth must be a number from 0.1"),
    (["--set", "memory.window=0"], "memory.window must be a whole number from 1 to 65536"),
    (["--set", "kind.alu.ii=2.5"], "kind.alu.ii must be a whole number from 1 to 1024"),
    (["--set", "kind.alu.latency=-1"], "kind.alu.latency must be a whole number from 0"),
    (["--set", "permute.elements_per_cycle=inf"], "permute.elements_per_cycle must be a number"),
    (["--set", "block.bmm_ii=" + "b*" * 60 + "b"], "block.bmm_ii: a block cost expression is"),
    (["--set", "block.bmm_ii=b+"], "block.bmm_ii: bad block cost expression"),
])
def test_arch_values_are_finite_and_in_range(tmp_path, opt, msg):
    """nan bandwidth hung for ever, 1e-300 ran out of memory after 18 s, the others exit 3."""
    g = write(tmp_path, "g.samml", SPMV_SAMML)
    t0 = time.perf_counter()
    fails(["simulate", g, "--data", str(ROOT / "tests" / "golden" / "run" / "data_ok"), *opt],
          "fuseflowc: error:", msg)
    assert time.perf_counter() - t0 < 10


def test_arch_ranges_keep_the_defaults_and_whole_floats():
    from fuseflowc.sim.arch import Arch
    a = Arch.load(sets=("memory.latency=100.0", "channel.depth=inf", "memory.bandwidth=1e6"))
    assert a.mem_latency == 100 and isinstance(a.table["memory"]["latency"], int)
    assert a.depth is None and a.bandwidth == 1e6
    assert Arch.load().timing("alu", "bmm", 64) == (127, 64)
    from fuseflowc.diagnostics import UserError
    with pytest.raises(UserError, match="block.bmm_latency for block size 1024 must be"):
        Arch.load(sets=("block.bmm_latency=b*b*b",)).timing("alu", "bmm", 1024)


# ---- sizes ---------------------------------------------------------------------------------------

@pytest.fixture
def small_machine(monkeypatch):
    """A machine with 1 GiB of memory available (whatever the test machine has)."""
    import fuseflowc.limits as limits
    monkeypatch.setattr(limits, "available_memory", lambda: 1 << 30)


def test_estimate_of_absurd_sizes_is_refused_before_allocating(small_machine):
    fails(["estimate", SPMV, "--size", "I=99999999999999999999", "--size", "J=4"],
          "fuseflowc: error: estimating with --size I=99999999999999999999, --size J=4 needs",
          "and this machine has 1.0 GiB available")
    t0 = time.perf_counter()
    fails(["estimate", SPMV, "--size", "I=100000000", "--size", "J=100000000"], None,
          "needs about 14.9 GiB of memory, and this machine has 1.0 GiB available")
    assert time.perf_counter() - t0 < 10
    fails(["estimate", SPMV, "--size", "I=4", "--size", "J=4", "--density", "nan"], None,
          "--density nan: a density is in [0, 1]")


def test_gen_data_of_absurd_sizes_is_refused_before_allocating(tmp_path, small_machine):
    fails(["gen-data", SPMV, "-o", str(tmp_path / "d"), "--size", "I=100000",
           "--size", "J=100000", "--density", "A=0.5"], None,
          "tensor 'A' (100000 x 100000 csr, density 0.5, 5000000000 entries) needs about",
          "GiB of memory, and this machine has 1.0 GiB available")
    assert not (tmp_path / "d").exists()
    r = run_cli(["gen-data", SPMV, "-o", str(tmp_path / "d"), "--size", "I=4", "--size", "J=4",
             "--seed", "-1"])
    assert r.exit_code == 2 and "-1 is not in the range x>=0" in r.stderr, r.stderr


def test_a_dense_intermediate_too_large_to_store_is_refused(tmp_path):
    """run and simulate materialized T (200000 x 200000, dense): 298 GiB asked of numpy."""
    f = write(tmp_path, "p.ff", "dim N\ntensor A[N, N] : csr\ntensor T[N, N] : dense\n"
                                "tensor y[N] : dense\nT[i,j] = A[i,j] * 2\ny[i] = T[i,j]\n")
    d = str(tmp_path / "d")
    assert run_cli(["gen-data", f, "-o", d, "--size", "N=20000",
                    "--density", "A=0.000001"]).exit_code == 0
    msg = ("storing tensor 'T' (20000 x 20000) in format dense would need 400000000 stored "
           "values, more than the 268435456")
    fails(["run", f, "--data", d, "-o", str(tmp_path / "out")], None, msg)
    g = run_cli(["lower"], run_cli(["fuse", f]).stdout)
    r = run_cli(["simulate", "-", "--data", d], g.stdout)
    assert r.exit_code == 1 and msg in r.stderr


# ---- files that never end, slow detection --------------------------------------------------------

def test_text_inputs_are_read_up_to_a_limit(tmp_path, monkeypatch):
    import fuseflowc.limits as limits
    monkeypatch.setattr(limits, "MAX_TEXT_BYTES", 100)
    f = write(tmp_path, "p.ff", "# " + "x" * 200 + "\n")
    fails(["check", f], f"fuseflowc: error: {f}: larger than", "the most fuseflowc reads")
    r = run_cli(["check", "-"], "# " + "x" * 200 + "\n")
    assert r.exit_code == 1 and "<stdin>: larger than" in r.stderr
    inc = write(tmp_path, "inc.ff", 'include "p.ff"\n')
    fails(["check", inc], f"{inc}:1:9: error: cannot include 'p.ff'", "larger than")


def test_an_include_naming_a_nul_is_an_error(tmp_path):
    """Found by fuzzing: open() raises ValueError for a name holding a NUL (exit 3)."""
    f = write(tmp_path, "p.ff", 'include "a\0b.ff"\ndim I\n')
    fails(["check", f], f"{f}:1:9: error: cannot include 'a\\x00b.ff': ",
          "a\\0b.ff: not a file name (it holds a NUL character)")


def test_input_kind_detection_is_linear():
    """estimate sniffed the input kind with a regex quadratic in blank lines: 100,000 of them
    took 40 s (check: 0.2 s)."""
    from fuseflowc.ir_kind import sniff
    t0 = time.perf_counter()
    assert sniff("\n" * 100_000) == (None, None)
    assert sniff(" \n" * 100_000 + "graph g {\n}\n") == ("samml", 100_001)
    assert time.perf_counter() - t0 < 2
    r = run_cli(["estimate", "-"], "\n" * 100_000)
    assert r.exit_code == 1 and "the module has no graph" in r.stderr
    assert time.perf_counter() - t0 < 20


# ---- orders and sweeps: bounded work -------------------------------------------------------------

def test_counting_orders_of_a_wide_partial_order_is_bounded(monkeypatch):
    """Complete bipartite layers have exponentially many up-sets to memoize: the count stops
    at a stated amount of work instead of running for hours."""
    import fuseflowc.fuse.pog as pog
    from fuseflowc.diagnostics import UserError
    monkeypatch.setattr(pog, "MAX_ORDER_WORK", 20_000)
    w = 10
    p = pog.POG.from_edges(2 * w, [(a, w + b) for a in range(w) for b in range(w)])
    with pytest.raises(UserError, match="counting the dataflow orders of 20 indices needs more "
                                        "than 1,000 intermediate sets"):
        p.count()
    assert pog.POG.from_edges(2 * 4, [(a, 4 + b) for a in range(4) for b in range(4)]).count() \
        == 24 * 24


def test_orders_of_thousands_of_indices_without_recursion():
    from fuseflowc.fuse.pog import POG
    n = 1500  # more than Python's 1000 frames
    chain = POG.from_edges(n, [(i, i + 1) for i in range(n - 1)])
    assert list(chain.orders(2)) == [tuple(range(n))]
    ladder = POG.from_edges(100, [(i, i + 2) for i in range(98)]
                            + [(i, i + 1) for i in range(0, 99, 2)])
    count = ladder.count()
    first = list(ladder.orders(3))
    assert [ladder.rank(o) for o in first] == [0, 1, 2]
    assert ladder.unrank(count - 1) is not None


def test_listing_orders_is_bounded():
    """`orders --list N` kept N orders in memory: GPT-3 fused has 3.4e112 of them."""
    fails(["orders", SPMV, "--list", "99999999999999999999"], None,
          "--list 99999999999999999999: at most 100,000 orders are listed")


def test_sweep_grids_are_bounded(tmp_path):
    values = ", ".join(map(str, range(1, 1001)))
    spec = write(tmp_path, "s.toml", f'''
[[programs]]
path = "{EX / "kernels" / "spmm.ff"}"
schedule = ["parallelize y: i by {{a}}", "parallelize y: k by {{b}}"]
params = {{ a = [{values}], b = [{values}] }}
[[data]]
sizes = {{ I = 4, J = 4, K = 4 }}
''')
    t0 = time.perf_counter()
    fails(["sweep", spec, "-o", str(tmp_path / "r.csv"), "--dry-run"], None,
          "the sweep has more than 100,000 configurations (at least 1,000,000")
    assert time.perf_counter() - t0 < 10
    nan = write(tmp_path, "n.toml", f'programs = ["{SPMV}"]\ntimeout = nan\n[[data]]\n'
                                    'sizes = { I = 4, J = 4 }\n')
    fails(["sweep", nan, "-o", str(tmp_path / "r.csv"), "--dry-run"], f"{nan}:2:1:",
          "timeout: expected a positive finite number")


def test_max_cycles_past_64_bits_is_a_usage_error(tmp_path):
    """Found by the fuzzer: a 20-digit --max-cycles reached the compiled engine's 64-bit
    argument and failed there with a TypeError (exit 3)."""
    from click.testing import CliRunner

    from fuseflowc.cli import main
    g = Path(__file__).resolve().parents[2] / "ir_examples" / "samml" / "spmv_row.samml"
    r = CliRunner().invoke(main, ["simulate", str(g), "--data", str(tmp_path),
                                  "--max-cycles", "99999999999999999999"])
    assert r.exit_code == 2, r.output
    assert "max-cycles" in r.output


@pytest.mark.parametrize("name, text, message", [
    ("index", "dim I, L = 4\ntensor x[L; I] : dense\ntensor y[I] : dense\n"
              "y[i] = x[" + "2 * " * 3000 + "0; i]\n",
     "an expression (operators, calls, reductions) is nested more than 100 levels deep"),
    ("sum-of-indices", "dim I, L = 4\ntensor x[L; I] : dense\ntensor y[I] : dense\n"
                       "y[i] = x[" + "0 + " * 3000 + "0; i]\n", "nested more than 100 levels"),
    ("loops", "dim I, L = 2\ntensor x[I] : dense\ntensor y[I] : dense\n"
              + "".join(f"map l{k} in L {{\n" for k in range(400)) + "y[i] = x[i]\n"
              + "}\n" * 400, "nested more than 300 levels deep (loops in loops"),
])
def test_deep_list_indices_and_loops_are_located_errors(tmp_path, name, text, message):
    """Found by make fuzz N=10000 (case 4489): `i + i + ... + i` 3,000 deep in a list index
    (rules the nesting check did not know) was a RecursionError, an internal error."""
    p = tmp_path / f"{name}.ff"
    p.write_text(text)
    r = run_cli(["check", str(p)])
    assert r.exit_code == 1 and message in r.stderr and f"{name}.ff:" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_a_recorded_path_too_long_to_look_up_is_not_found():
    """Found by make fuzz N=10000 (case 4249): a fused IR's `source` path of 200,000 bytes made
    Path.exists raise (ENAMETOOLONG) while `lower` looked for it."""
    from fuseflowc.files import recorded_path
    assert recorded_path("a" * 200_000, "g.fused") is None
    assert recorded_path("/" + "a" * 300, "-") is None
