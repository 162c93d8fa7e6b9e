"""The attributes of `schedule` directives are declared once (`ir.Schedule` fields made with
`attr()`): the printer, the parser and the verifier all follow that declaration."""

from __future__ import annotations

import pytest

from fuseflowc.diagnostics import UserError
from fuseflowc.samml import ir
from fuseflowc.samml.parser import parse_text
from fuseflowc.samml.printer import print_module, print_schedule
from fuseflowc.samml.verify import verify
from tests.opt.test_opt_parallel_schedule import spmm

SPECS = ir.Schedule.attr_specs()
VALUES = {"graph": "C", "index": "i", "factor": 2, "statement": "C", "local": "i"}


def _module_with(attrs: dict) -> str:
    line = print_schedule(ir.Schedule("parallelize", **attrs))
    return print_module(spmm("")).replace("\ngraph C", line + "\n\ngraph C")


def test_declaration_is_the_dataclass():
    assert [s.name for s in SPECS] == ["graph", "index", "factor", "statement", "local"]
    assert sorted(VALUES) == sorted(s.name for s in SPECS)


def test_every_declared_attribute_prints_parses_and_verifies():
    text = _module_with(VALUES)
    m = parse_text(text)
    verify(m)
    assert m.schedules[0].attrs() == VALUES
    assert print_module(m) == text


@pytest.mark.parametrize("spec", [s for s in SPECS if s.required], ids=lambda s: s.name)
def test_every_required_attribute_is_required(spec):
    attrs = {k: v for k, v in VALUES.items() if k != spec.name}
    with pytest.raises(UserError) as e:
        verify(parse_text(_module_with(attrs)))
    text = str(e.value) + "".join(str(d) for d in e.value.diagnostics)
    assert f"needs attribute '{spec.name}'" in text


def test_unknown_attribute_lists_the_declared_ones():
    text = _module_with({}).replace("schedule parallelize {}",
                                    "schedule parallelize {graph = C, lanes = 2}")
    with pytest.raises(UserError) as e:
        parse_text(text)
    text = str(e.value) + "".join(str(d) for d in e.value.diagnostics)
    assert "its attributes: " + ", ".join(s.name for s in SPECS) in text
