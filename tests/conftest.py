"""Shared pytest configuration: `--update-goldens` rewrites expected outputs of golden tests."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


def pytest_addoption(parser):
    parser.addoption("--update-goldens", action="store_true", default=False,
                     help="rewrite the .expected files of golden tests instead of comparing")


# CI runs the same hypothesis examples every time (a red run must be reproducible); local runs
# draw new ones, which is how the property tests keep finding bugs.
import os  # noqa: E402

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
