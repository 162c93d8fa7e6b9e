"""The program language: grammar loading, AST, parser, semantic checker, printer."""
