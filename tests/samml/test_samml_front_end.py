"""The SAMML parser uses the front end shared with the program and fused-IR parsers
(fuseflowc.syntax), not the program language's package."""

import subprocess
import sys

from fuseflowc.diagnostics import UserError
from fuseflowc.samml.parser import parse_text


def test_samml_parser_does_not_import_the_program_language():
    code = ("import sys, fuseflowc.samml.parser\n"
            "print(sorted(m for m in sys.modules if m.startswith('fuseflowc.lang')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_samml_wording_lists_every_alternative():
    try:
        parse_text("graph g {\n  %a = root {tensor = A\n}\n")
    except UserError as e:
        text = str(e)
    else:
        raise AssertionError("no syntax error")
    assert "unexpected end of line; expected" in text and " or " in text
