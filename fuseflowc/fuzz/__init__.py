"""fuseflowc's own fuzzer: `python -m fuseflowc.fuzz --cases N --seed S --out DIR` (`make fuzz`).

Each case is one run of the real `fuseflowc` entry point on mutated inputs, in a forked child of
the fuzzing process (no interpreter start-up per case), in a fresh working directory with its own
temporary directory, under a wall-clock and a memory limit. The pieces:

  corpus.py    the seeds: every example program, the fused IR and SAMML made from them, the
               hand-written SAMML graphs, sweep specs, results files, arch files, and data
               directories written by `gen-data` for the programs it can size small;
  textmut.py   grammar-aware (token stream of the Lark grammars) and byte-level mutations of
               text inputs;
  datamut.py   mutations of data directories (headers, shapes, dtypes, values, file kinds);
  cases.py     a case: a subcommand, its options (good and bad values), its input files;
  families/    the families of cases (one registry line each: name, subcommand, weight,
               builder) and the builders of the generated ones (plan, graph readers, formats,
               loops, sweeps, damaged results, the differential runs of both engines);
  twins.py     comparing a differential case's two runs (the two engines);
  execute.py   running a case in a forked child and recording what it did;
  classify.py  the outcome of a run (ok, user-error, internal, hang, crash, leftover, clobber,
               perm, silent) and the key that tells distinct failures apart;
  minimize.py  delta debugging of a failing case down to a small reproducer;
  driver.py    the loop, the table of outcomes and the reproducer directories.

Everything is determined by the seed: case K of seed S is the same case on every run.
"""
