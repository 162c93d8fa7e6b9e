"""Runs every golden case under tests/golden/ (see tests/support/golden.py for the format)."""

import pytest

from tests.support.golden import ROOT, check_case, golden_cases


@pytest.mark.parametrize("case", golden_cases(), ids=lambda p: p.relative_to(ROOT / "tests" / "golden").as_posix())
def test_golden(case, request):
    check_case(case, request.config.getoption("--update-goldens"))
