"""The SAMML dataflow graph IR: one class per primitive kind, parser, printer, verifier, DOT."""
