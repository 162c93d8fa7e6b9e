"""`make bench`: the FuseFlow paper's Section 8 as one reproducible benchmark.

`fuseflowc.bench.driver` runs the parts (each a composition of existing commands: `fuseflowc
sweep` and `fuseflowc report` on the specs in ir_examples/bench/, `fuseflowc orders --json`,
`python -m fuseflowc.bench.compile_time`), timing each; `fuseflowc.bench.summary` turns their
outputs into results/SUMMARY.md. See docs/bench.md.
"""
