"""The program language: AST, parser, semantic checker, printer (the grammar loader and syntax
errors are fuseflowc.syntax, shared with the fused-IR and SAMML parsers)."""
