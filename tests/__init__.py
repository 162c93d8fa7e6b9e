"""The test suite: one package per fuseflowc package (tests/<package>/), shared helpers in
tests/support, expected outputs in tests/golden."""
