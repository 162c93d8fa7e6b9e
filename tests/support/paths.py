"""The repository's directories, for tests wherever they live under tests/."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
GOLDEN = TESTS / "golden"
SHARED_DATA = ROOT.parent / "shared" / "data"
