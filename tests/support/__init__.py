"""Helpers shared by the tests: goldens, the lowering harness, pinned simulator figures, hand-made
primitive streams, and the repository's paths."""
