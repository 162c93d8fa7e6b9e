"""`plan --fabric`: candidates mapped onto a finite fabric (map splits what does not fit, each
configuration charged its load), ranked by cycles, energy or EDP."""

from __future__ import annotations

from pathlib import Path

from fuseflowc.plan.cost import Metrics, pipeline_of
from tests.support.golden import run_cli, run_pipeline

ROOT = Path(__file__).resolve().parents[2]
GCN = ROOT / "ir_examples" / "models" / "gcn" / "gcn.ff"
SIZES = ["--size", "N=60", "--size", "F=30", "--size", "C=4", "--density", "0.1"]


def _plan(fabric: str, *extra: str) -> str:
    r = run_cli(["plan", str(GCN), *SIZES, "--inline-widened", "--fabric", fabric, "-q", *extra])
    assert r.exit_code == 0, r.stderr
    return r.stdout


def _fits(program_text: str, tmp_path: Path, fabric: str) -> bool:
    """Whether every graph of the planned program fits `fabric` without splitting."""
    p = tmp_path / "planned.ff"
    p.write_text(program_text)
    r = run_pipeline(f"fuseflowc fuse {p} --inline-widened | fuseflowc lower | "
                     f"fuseflowc opt -p 'map{{fabric={fabric} split=false}}'")
    assert r.exit_code in (0, 1), r.stderr
    return r.exit_code == 0


def test_a_finite_fabric_chooses_the_fusion_that_fits(tmp_path):
    whole = _plan("unlimited")
    small = _plan("onyx-eighth")
    assert "# fabric: onyx-eighth: 3 configurations" in small
    # on the unlimited fabric the plan fuses a region onyx-eighth cannot hold in one
    # configuration; planned for onyx-eighth, every region fits
    assert not _fits(whole, tmp_path, "onyx-eighth")
    assert _fits(small, tmp_path, "onyx-eighth")


def test_the_edp_objective():
    out = _plan("onyx-eighth", "--objective", "edp")
    assert out.startswith("# planned by `fuseflowc plan` for edp")


def test_edp_is_the_product_and_the_pipeline_maps():
    m = Metrics(cycles=10.0, energy=3.0) + Metrics(cycles=5.0, energy=1.0)
    assert (m.value("edp"), m.value("energy"), m.value("cycles")) == (60.0, 4.0, 15.0)
    assert pipeline_of(True) == pipeline_of(True, "unlimited")
    assert pipeline_of(False, "onyx").endswith(",map{fabric=onyx}")


def test_an_unknown_fabric_is_a_usage_error():
    r = run_cli(["plan", str(GCN), *SIZES, "--fabric", "huge"])
    assert r.exit_code == 2 and "huge" in r.stderr and "Traceback" not in r.stderr
