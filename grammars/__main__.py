"""`python -m fuseflowc.grammars`: regenerate the prebuilt parsers (grammars/lalr_*.py) after a
grammar or the Lark version changed (fuseflowc.syntax; tests/lang/test_parse_tables.py says when)."""

from pathlib import Path

from fuseflowc.syntax import PARSERS, table_module, table_source


def main() -> None:
    here = Path(__file__).resolve().parent
    for grammar_file, start in PARSERS:
        path = here / f"{table_module(grammar_file, start)}.py"
        tmp = path.with_suffix(".py.tmp")
        tmp.write_text(table_source(grammar_file, start), encoding="utf-8")
        tmp.replace(path)
        print(f"wrote {path.relative_to(here.parent) if here.parent in path.parents else path}")


if __name__ == "__main__":
    main()
