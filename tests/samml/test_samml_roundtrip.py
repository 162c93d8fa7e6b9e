"""Every SAMML file in the repository parses, verifies and round-trips through the printer."""

from pathlib import Path

import pytest

from fuseflowc.diagnostics import Source
from fuseflowc.samml.parser import parse_module
from fuseflowc.samml.printer import print_module
from fuseflowc.samml.verify import verify

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {".venv", ".git", "node_modules", "out", "results"}


def samml_files() -> list[Path]:
    """Every *.samml file of the repository, except the deliberately broken inputs of the error
    goldens (named *.invalid.samml)."""
    out = []
    for p in sorted(ROOT.rglob("*.samml")):
        rel = p.relative_to(ROOT)
        if rel.parts[0] in SKIP_DIRS or p.name.endswith(".invalid.samml"):
            continue
        out.append(p)
    return out


FILES = samml_files()


def test_there_are_samml_files():
    assert len(FILES) >= 2


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_round_trip(path):
    m = parse_module(Source(str(path), path.read_text(encoding="utf-8")))
    once = print_module(m)
    twice = print_module(parse_module(Source("<printed>", once)))
    assert twice == once


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_verifies(path):
    m = parse_module(Source(str(path), path.read_text(encoding="utf-8")))
    verify(m)
    # The printed form verifies too (canonical renaming keeps the graph intact).
    verify(parse_module(Source("<printed>", print_module(m))))
