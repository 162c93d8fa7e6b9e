# fuseflowc: every target creates/updates the virtual environment it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
FFC    := $(VENV)/bin/fuseflowc
STAMP  := $(VENV)/.installed
DATA   ?= ../shared/data

.PHONY: demo test lint venv clean bench-sim examples bench-compile wheel-check
.PHONY: bench-orders
.PHONY: bench-block bench-decompose
.PHONY: bench-estimate
.PHONY: bench-bigbird
.PHONY: fuzz

venv: $(STAMP)

# The compiled simulation engine (sim/cpp, built by setup.py into fuseflowc.sim._fast) is part of the
# editable install: changing its sources reinstalls (about a minute). Here a failing compile is
# an error (a plain `pip install` skips the extension instead); FUSEFLOWC_NO_EXT=1 make ...
# builds without it (the Python engine only).
FAST_SRC := setup.py $(wildcard sim/cpp/*.cpp sim/cpp/*.hpp)
export FUSEFLOWC_REQUIRE_EXT ?= 1

$(STAMP): pyproject.toml $(FAST_SRC)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The main job on a built-in example: GCN (2 layers) on KarateClub, fully fused, compiled to one
# SAMML graph, simulated, and checked against the reference evaluator.
DEMO := ir_examples/models/gcn/gcn_full.ff
demo: $(STAMP)
	@rm -rf out/demo && mkdir -p out/demo
	$(FFC) gen-data $(DEMO) --graph karate -o out/demo/data --seed 1
	$(FFC) fuse $(DEMO) --inline-widened -o out/demo/gcn.fused
	$(FFC) lower out/demo/gcn.fused -o out/demo/gcn.samml
	$(FFC) simulate out/demo/gcn.samml --data out/demo/data --check -o out/demo/result \
	  --json-out out/demo/sim.json --trace out/demo/gcn.trace.json
	$(FFC) dot out/demo/gcn.samml -o out/demo/gcn.dot
	$(FFC) dot out/demo/gcn.samml --load out/demo/sim.json -o out/demo/gcn-load.svg
	@echo "demo: outputs in out/demo (fused IR, SAMML graph, DOT picture, simulated tensors, sim.json," \
	  "gcn.trace.json: open it in ui.perfetto.dev; gcn-load.svg: the graph coloured by load)"

# One worker per core (pytest-xdist); a test file stays on one worker, so its module-level
# caches (lowered models, built data) are built once. `$(PY) -m pytest tests/x` runs serially.
# The 15 slowest tests are listed at the end: where the time goes, run by run.
test: $(STAMP) lint
	$(PY) -m pytest -n auto --dist loadfile --durations=15

# ruff (pinned in the `test` extra; rules and limits in pyproject.toml [tool.ruff]): pyflakes,
# import order, bugbear and a complexity limit. `make test` runs it first, so CI does too. Then
# radon's cyclomatic complexity, at most 15 per function where the code is kept thin
# (.ci/complexity), and lizard (pinned there too): no C++ function of the compiled engine
# (sim/cpp) above cyclomatic complexity 25, lizard's measure; it prints any function above it.
THIN_CODE := fuseflowc/commands fuseflowc/sweep/spec.py fuseflowc/samml/verify.py \
  fuseflowc/sweep/grid.py fuseflowc/sweep/runner.py fuseflowc/sweep/worker.py fuseflowc/sweep/cluster.py \
  fuseflowc/sweep/utilization.py
lint: $(STAMP)
	$(VENV)/bin/ruff check fuseflowc sim tests setup.py
	$(PY) .ci/complexity 15 $(THIN_CODE)
	$(VENV)/bin/lizard --CCN 25 --warnings_only sim/cpp

# The package as a user installs it: the wheel built as pyproject.toml says, installed into a
# fresh virtual environment outside the checkout and run from there (`fuseflowc --help`,
# `python -m fuseflowc --version`, gen-data | fuse | lower | simulate --check); see
# .ci/wheel-check. About 15 s with a warm pip cache.
wheel-check: $(STAMP)
	.ci/wheel-check $(PY)

clean:
	rm -rf $(VENV) out results .pytest_cache build sim/_fast*.so

# Simulator speed: SpMM (ikj) and SDDMM on real matrices, both engines (checked to agree); the
# last lines are `token-hops/s: N` (the compiled engine's median) and `speedup: N` (the median
# ratio over the Python engine). ENGINE=fast or ENGINE=python runs one engine only.
ENGINE ?= both
bench-sim: $(STAMP)
	$(PY) -m fuseflowc.bench.sim_speed --data $(DATA) --engine $(ENGINE)

# Every example program and fusion variant, up to 3 orders per region, through the pipeline
# fuse | lower | simulate --check (separate processes); ends with `examples: N passed, M failed`.
examples: $(STAMP)
	$(PY) -m fuseflowc.bench.examples --jobs 2

# Compile time of each model variant: `fuse | lower` as separate processes, Python start-up
# included, median of RUNS runs (budget: 750 ms); one line `compile-ms <model>: N` per model.
RUNS ?= 5
bench-compile: $(STAMP)
	$(PY) -m fuseflowc.bench.compile_time --runs $(RUNS)

# ---- data: the four models' full-size inputs (docs/data.md, "Model data sets") --------------
# Generated under out/data/ (git-ignored) from the shared data sets in $(DATA), never copied
# into the repository. Each data directory is a make target: rebuilt only when missing or
# older than its program; gen-data writes it atomically, so an interrupted run leaves nothing.
# `make data` builds all of them; `make data-gcn data-graphsage data-sae data-gpt3 data-mini`
# one family. Seed 1 throughout.
DDIR  := out/data
GEN    = mkdir -p $(@D) && $(FFC) gen-data --seed 1
GRAPHS := karate cora cora_ml
graph_src = $(if $(filter karate,$(1)),karate,$(DATA)/$(1).npz)

# GPT-3 Small: 12 heads of 64, hidden 768, FFN 3072 (the program's constants are these sizes').
GPT3_SIZES := --size E=768 --size NH=12 --size DH=64 --size FF=3072
# BigBird masks: 16 blocks per row at both lengths (block 64 at S=1024 as BigBird-base; block 4
# at S=64), window 3, global first/last block, 3 random blocks per row: density 55.5%.
GPT3_MASK_64   := M=bigbird:block=4,random=3
GPT3_MASK_1024 := M=bigbird:block=64,random=3
# The sparse autoencoder on ImageNet-size images: 224 x 224 = 50176 pixels, a batch of 5 sampled
# images (the paper's artifact), 50% of the pixels non-zero; hidden sizes 1024 and 256.
SAE_IMAGENET := --size Bt=5 --size P=50176 --size D1=1024 --size D2=256 --density X=0.5
# Reduced for simulation: ImageNet-size images with hidden sizes 64 / 16 (1/16 of the work).
SAE_IMAGENET_H64 := --size Bt=5 --size P=50176 --size D1=64 --size D2=16 --density X=0.5
# The small variant for tests and simulation: MNIST-size 28 x 28 = 784 pixels, hidden 256 / 64.
SAE_MNIST    := --size Bt=5 --size P=784 --size D1=256 --size D2=64 --density X=0.5
# Reduced-but-faithful GPT-3 layer (ir_examples/models/gpt3_mini): 4 heads of 16, hidden 64,
# FFN 256 (4 x hidden, as GPT-3), the same BigBird geometry (16 blocks per row, 3 random).
MINI_SIZES := --size E=64 --size NH=4 --size DH=16 --size FF=256

DATA_DIRS := $(foreach g,$(GRAPHS),$(DDIR)/gcn/$(g) $(DDIR)/graphsage/$(g)) \
             $(DDIR)/sae/imagenet $(DDIR)/sae/imagenet_h64 $(DDIR)/sae/mnist \
             $(DDIR)/gpt3/s64 $(DDIR)/gpt3/s1024 \
             $(DDIR)/gpt3_mini/s64 $(DDIR)/gpt3_mini/s256

.PHONY: data data-gcn data-graphsage data-sae data-gpt3 data-mini run-data models-cycles

data: $(DATA_DIRS)
data-gcn: $(foreach g,$(GRAPHS),$(DDIR)/gcn/$(g))
data-graphsage: $(foreach g,$(GRAPHS),$(DDIR)/graphsage/$(g))
data-sae: $(DDIR)/sae/imagenet $(DDIR)/sae/imagenet_h64 $(DDIR)/sae/mnist
data-gpt3: $(DDIR)/gpt3/s64 $(DDIR)/gpt3/s1024
data-mini: $(DDIR)/gpt3_mini/s64 $(DDIR)/gpt3_mini/s256

$(DDIR)/gcn/%: ir_examples/models/gcn/gcn.ff | $(STAMP)
	$(GEN) $< --graph $(call graph_src,$*) --normalize gcn -o $@
$(DDIR)/graphsage/%: ir_examples/models/graphsage/graphsage.ff | $(STAMP)
	$(GEN) $< --graph $(call graph_src,$*) --normalize mean -o $@
$(DDIR)/sae/imagenet: ir_examples/models/sae/sae.ff | $(STAMP)
	$(GEN) $< $(SAE_IMAGENET) -o $@
$(DDIR)/sae/imagenet_h64: ir_examples/models/sae/sae.ff | $(STAMP)
	$(GEN) $< $(SAE_IMAGENET_H64) -o $@
$(DDIR)/sae/mnist: ir_examples/models/sae/sae.ff | $(STAMP)
	$(GEN) $< $(SAE_MNIST) -o $@
$(DDIR)/gpt3/s64: ir_examples/models/gpt3_bigbird/gpt3_bigbird.ff | $(STAMP)
	$(GEN) $< $(GPT3_SIZES) --size S=64 --mask $(GPT3_MASK_64) -o $@
$(DDIR)/gpt3/s1024: ir_examples/models/gpt3_bigbird/gpt3_bigbird.ff | $(STAMP)
	$(GEN) $< $(GPT3_SIZES) --size S=1024 --mask $(GPT3_MASK_1024) -o $@
$(DDIR)/gpt3_mini/s64: ir_examples/models/gpt3_mini/gpt3_mini.ff | $(STAMP)
	$(GEN) $< $(MINI_SIZES) --size S=64 --mask $(GPT3_MASK_64) -o $@
$(DDIR)/gpt3_mini/s256: ir_examples/models/gpt3_mini/gpt3_mini.ff | $(STAMP)
	$(GEN) $< $(MINI_SIZES) --size S=256 --mask M=bigbird:block=16,random=3 -o $@

# The reference evaluator on every full-size data set (wall time per model and data set).
run-data: data
	@for d in $(DATA_DIRS); do \
	  m=$$(echo $$d | cut -d/ -f3); p=ir_examples/models/$$m; \
	  [ $$m = gpt3 ] && p=ir_examples/models/gpt3_bigbird/gpt3_bigbird.ff || p=$$p/$$m.ff; \
	  s=$$(date +%s%N); $(FFC) run $$p --data $$d > /dev/null 2>&1 || echo "run failed: $$d"; \
	  e=$$(date +%s%N); echo "run-ms $$d: $$(( (e - s) / 1000000 ))"; \
	done

# Sparsity blocking: BigBird attention (one head, S = 256) at b = 16, 32, 64 against the
# element-sparse program on the same mask; ends with a table of cycles and speed-ups.
bench-block: $(STAMP)
	$(PY) -m fuseflowc.bench.block --seq 256

# Format decomposition: SpMM and GCN aggregation on the real graphs, SpMM on BigBird masks, as
# CSR, pure BCSR(b), ELL and the advisor's 3 best decompositions (docs/bench.md); needs
# ../shared/data.
bench-decompose: $(STAMP)
	$(PY) -m fuseflowc.bench.decompose --top 3 --out out/bench_decompose.json

# Simulated cycles per model x fusion variant: one JSON per configuration under out/cycles/, one
# summary line each. GCN, GraphSAGE and SAE are fused with `fuse --inline-widened` (intermediates
# stay in the stream, as the paper fuses); the GPT-3 layers with plain `fuse` (their
# inline-widened regions do not lower yet: docs/lowering.md, "Limits"). CYCLES_SET picks the
# configurations as model:data-dir pairs, e.g. make models-cycles CYCLES_SET=gcn:gcn/cora_ml.
CYCLES_SET ?= gcn:gcn/cora graphsage:graphsage/cora sae:sae/mnist gpt3_mini:gpt3_mini/s64 \
              sae:sae/imagenet_h64 gpt3_mini:gpt3_mini/s256
models-cycles: $(STAMP)
	@mkdir -p out/cycles
	@for c in $(CYCLES_SET); do \
	  m=$${c%%:*}; d=$(DDIR)/$${c#*:}; $(MAKE) -s $$d >/dev/null; \
	  for v in unfused partial full; do \
	    p=ir_examples/models/$$m/$${m}_$$v.ff; [ $$m = gpt3 ] && p=ir_examples/models/gpt3_bigbird/gpt3_bigbird_$$v.ff; \
	    j=out/cycles/$$(echo $${c#*:} | tr / _)_$$v.json; \
	    iw=--inline-widened; case $$m in gpt3*) iw=;; esac; \
	    s=$$(date +%s%N); \
	    $(FFC) fuse $$p $$iw | $(FFC) lower | \
	      $(FFC) simulate - --data $$d --check --json-out $$j > /dev/null 2> $$j.log \
	      || { echo "$$c $$v: FAILED (see $$j.log)"; continue; }; \
	    e=$$(date +%s%N); \
	    $(PY) -c "import json,sys; t=json.load(open(sys.argv[1]))['total']; print(f\"{sys.argv[2]:28} {sys.argv[3]:8} cycles {t['cycles']:>12,} flops {t['flops']:>12,} bytes {t['bytes_read']['total'] + t['bytes_written']['total']:>12,} hops {t['token_hops']:>13,} wall-s {int(sys.argv[4]) / 1e9:.1f}\")" $$j $$c $$v $$((e - s)); \
	  done; \
	done

# The paper's Figure 17: every valid dataflow order of the nested matmul D = (A B) C on
# KarateClub (A: normalized adjacency, B: identity features, C: random 34 x 16 weights), fused
# and unfused, with --free-input-order (discordant inputs read through permuted copies), through
# fuse | lower | simulate, each checked against the reference evaluator: a sweep spec
# (orders = "product" crosses the unfused variant's two regions' orders) run afresh into
# out/bench-orders/ (progress and the sweep's summary on stderr), then one line per order
# (cycles normalized to the worst of its variant), then `orders: N, best/worst = X`.
ORDERS_SPEC := ir_examples/sweeps/bench_orders.toml
bench-orders: $(STAMP)
	@rm -f out/bench-orders/results.csv
	@$(FFC) sweep $(ORDERS_SPEC) -o out/bench-orders/results.csv -j 2
	$(PY) -m fuseflowc.bench.orders $(ORDERS_SPEC) out/bench-orders/results.csv

# The estimator's accuracy: FLOPs and bytes estimated (from the data, and from nnz only) against
# the simulator's counts for GCN and GraphSAGE (KarateClub, Cora; every fusion variant), BigBird
# attention, GPT-3 and SAE at small sizes; ends with the average errors (paper Table 2).
bench-estimate: $(STAMP)
	$(PY) -m fuseflowc.bench.estimate_accuracy --data $(DATA) -j 2

# ---- bench: the FuseFlow paper's Section 8 as one benchmark (docs/bench.md) ------------------
# `make bench`: Figures 12, 14-17, Tables 2-3 and compile times at a scale meant for ~30 min on
# 2 cores; `make bench-quick`: the same at toy sizes (~2 min). Each figure is a sweep spec in
# ir_examples/bench/ (quick/ for the toy sizes) run by `fuseflowc sweep` and `fuseflowc report`;
# results, per-sweep reports and SUMMARY.md (also printed) go to results/ (results/quick/).
# Sweeps resume: rerun to finish an interrupted run; `rm -rf results` to start over.
# The BigBird masks need `gen-data --mask`, so their data directories are made here.
.PHONY: bench bench-quick
BENCH_JOBS ?= 2
BDATA  := out/bench/data
BQDATA := out/bench/quick/data
BIGBIRD := ir_examples/models/bigbird_attention/attention.ff
MINI    := ir_examples/models/gpt3_mini/gpt3_mini.ff

$(BDATA)/bigbird_s64: $(BIGBIRD) | $(STAMP)
	$(GEN) $< --size S=64 --mask M=bigbird:block=4,random=3 -o $@ > /dev/null
$(BDATA)/bigbird_s128: $(BIGBIRD) | $(STAMP)
	$(GEN) $< --size S=128 --mask M=bigbird:block=64,random=3 -o $@ > /dev/null
$(BQDATA)/bigbird_s16: $(BIGBIRD) | $(STAMP)
	$(GEN) $< --size S=16 --mask M=bigbird:block=4,random=1 -o $@ > /dev/null
$(BQDATA)/bigbird_s64: $(BIGBIRD) | $(STAMP)
	$(GEN) $< --size S=64 --mask M=bigbird:block=32,random=1 -o $@ > /dev/null
$(BQDATA)/gpt3_mini_s16: $(MINI) | $(STAMP)
	$(GEN) $< --size E=16 --size NH=2 --size DH=8 --size FF=64 --size S=16 \
	  --mask M=bigbird:block=4,random=1 -o $@ > /dev/null

bench: $(STAMP) $(DDIR)/gpt3_mini/s64 $(BDATA)/bigbird_s64 $(BDATA)/bigbird_s128
	$(PY) -m fuseflowc.bench --specs ir_examples/bench --out results --jobs $(BENCH_JOBS) \
	  --compile-runs 3 --scale full

bench-quick: $(STAMP) $(BQDATA)/gpt3_mini_s16 $(BQDATA)/bigbird_s16 $(BQDATA)/bigbird_s64
	$(PY) -m fuseflowc.bench --specs ir_examples/bench/quick --out results/quick \
	  --jobs $(BENCH_JOBS) --compile-runs 1 --scale quick

# ---- bench-paper: Figure 12 at the paper's sizes (docs/bench.md, "Paper scale") ---------------
# GCN and GraphSAGE on the collab-size synthetic graph, SAE on ImageNet-size input (hidden
# 1024 / 256), a GPT-3 Small layer at S = 1024 with BigBird block 64 at the two ends of the
# paper's mask sparsity range (55.5% and 87.5% sparse); every configuration simulated and
# checked, or estimated where the spec says why (estimate_only). Results, per-sweep reports and
# PAPER.md (our speed-ups against the paper's, also printed) go to results/paper/. Resumable:
# rerun to finish. Two jobs by default (PAPER_JOBS), the 60-minute set (docs/bench.md, "The
# 60-minute set and the long set"); the rows that cannot fit (artifact/long/, paper/long/: the
# MAG-size graphs, whose runs peak at ~10.5 GB and go one at a time, `max_jobs = 1`, and the
# full fusions that recompute) are bench-paper-long's (end of this file). It runs
# bench-artifact first (the artifact's configuration, at the end of this file), so PAPER.md also
# has the table against the artifact's plotted figures. Both driver runs end with their wall
# time and peak RSS (`bench: wall H:MM:SS, peak RSS N GB`).
.PHONY: bench-paper
PAPER_JOBS ?= 2
PDATA := out/bench/paper/data
GPT3_PAPER := ir_examples/models/gpt3_bigbird/gpt3_bigbird.ff
$(PDATA)/gpt3_s1024_s55: $(GPT3_PAPER) | $(STAMP)
	$(GEN) $< $(GPT3_SIZES) --size S=1024 \
	  --mask M=bigbird:block=64,random=1,global=1,window=3 -o $@ > /dev/null
$(PDATA)/gpt3_s1024_s87: $(GPT3_PAPER) | $(STAMP)
	$(GEN) $< $(GPT3_SIZES) --size S=1024 \
	  --mask M=bigbird:block=64,random=1,global=0,window=1 -o $@ > /dev/null

bench-paper: $(STAMP) $(PDATA)/gpt3_s1024_s55 $(PDATA)/gpt3_s1024_s87 bench-artifact
	$(PY) -m fuseflowc.bench --specs ir_examples/bench/paper --out results/paper \
	  --jobs $(PAPER_JOBS) --scale paper

# The cycle model's accuracy (docs/estimate.md, "Cycles"): every configuration of the bench's
# sweep specs (full and quick scale) and of the held-back sweeps (models x fusion variants x
# orders x parallel factors x blocks) estimated and simulated (the compiled engine); per model the median and max
# |estimate - simulated| / simulated of total cycles and how the estimate ranks each data set's
# configurations against the simulator. About 1-2 minutes. CYCLES_SPECS picks other specs.
# (Not bench-orders' spec: it is that target's, not one of the held-back sweeps the figures in
# docs/estimate.md were taken on.)
.PHONY: bench-cycles
CYCLES_SPECS ?= $(sort $(wildcard ir_examples/bench/*.toml)) \
                $(sort $(wildcard ir_examples/bench/quick/*.toml)) \
                $(sort $(filter-out $(ORDERS_SPEC),$(wildcard ir_examples/sweeps/*.toml)))
bench-cycles: $(STAMP) $(DDIR)/gpt3_mini/s64 $(BDATA)/bigbird_s64 $(BDATA)/bigbird_s128 \
              $(BQDATA)/gpt3_mini_s16 $(BQDATA)/bigbird_s16 $(BQDATA)/bigbird_s64
	$(PY) -m fuseflowc.bench.estimate_cycles $(CYCLES_SPECS)

# One head of BigBird attention (DH 64, mask block 64, 3 random blocks, seed 1): the fusion
# variants (unfused, partial = fuse --share, full) of the element-sparse and the b16/b32/b64
# graphs at S=64 and S=1024, and the fully fused b16 graph at S=1024 parallelized at i and u0
# by 1..16 and 4 x 4 nested, with the default and an ideal memory; every run checked. One line
# per configuration: `cycles bigbird S=1024 <config>: N` (docs/opt.md, "Scaling"). About 25
# minutes with 2 jobs (the element-sparse graphs at S=1024 take ~6 minutes each);
# BIGBIRD_ARGS=--unblocked-full adds the fully fused element-sparse graph at S=1024 (it needs
# unbounded channels: ~12 min and ~11 GB on the Python engine, ~15 s and 1.7 GB compiled).
BIGBIRD_ARGS ?=
bench-bigbird: $(STAMP)
	$(PY) -m fuseflowc.bench.bigbird --jobs $(BENCH_JOBS) $(BIGBIRD_ARGS)

# ---- fuzz: the project's own fuzzer (docs/fuzz.md) --------------------------------------------
# N seeded cases of mutated programs, fused IR, SAMML graphs, data directories, sweep specs,
# results files and command-line options through the real entry point (forked, 10 s and 3 GiB
# per case). Prints a table of outcomes; a minimized reproducer per distinct failure goes to
# $(FUZZ_OUT)/failures/. Exit 1 if any case ended in a traceback, exit 3, hang, crash, leftover
# or clobbered file. Case K of seed S is always the same case: rerun one with
# `$(PY) -m fuseflowc.fuzz --seed S --show K`.
N ?= 1000
SEED ?= 1
FUZZ_JOBS ?= 1
FUZZ_OUT ?= out/fuzz
fuzz: $(STAMP)
	$(PY) -m fuseflowc.fuzz --cases $(N) --seed $(SEED) --jobs $(FUZZ_JOBS) --out $(FUZZ_OUT)

# ---- bench-plan: the planner against exhaustive sweeps (docs/plan.md, issue 14 item 4) ------
# Runs the fusion-variant sweeps of Figure 12 (GCN, GraphSAGE on Cora and Cora_ML; SAE;
# gpt3_mini), BigBird attention's variants and the nested matmul's orders (Figure 17), then
# plans each model from its program without directives, simulates the plan and prints one row
# per model: the sweep's best cycles, the plan's, their ratio and the planner's time.
# bench-plan-quick: the same at the quick bench's toy sizes (a few minutes).
.PHONY: bench-plan bench-plan-quick
bench-plan: $(STAMP) $(DDIR)/gpt3_mini/s64
	$(PY) -m fuseflowc.bench.plan --specs ir_examples/bench --out results/plan \
	  --bigbird ir_examples/sweeps/bigbird_fusion.toml --jobs $(BENCH_JOBS)
bench-plan-quick: $(STAMP) $(BQDATA)/gpt3_mini_s16
	$(PY) -m fuseflowc.bench.plan --specs ir_examples/bench/quick --out results/plan-quick \
	  --jobs $(BENCH_JOBS)

# ---- bench-plan-models: the planner on four models it never saw (docs/plan.md, issue 22) ----
# GIN, a GAT-style attention, a transform-first GCN and a pruned MLP on Cora and Citeseer: every
# valid fusion plan x fuse flags x (default pipeline, without locate) simulated, against the
# plan made from the program as written. PLAN_GRAPHS: NAME=PATH pairs (graph .npz files).
PLAN_GRAPHS ?= cora=../shared/data/cora.npz citeseer=../shared/data/citeseer.npz
.PHONY: bench-plan-models
bench-plan-models: $(STAMP)
	$(PY) -m fuseflowc.bench.plan_models $(foreach g,$(PLAN_GRAPHS),--graph $(g)) \
	  --out results/plan-models

# ---- gpt3-paper-order: GPT-3 fused as the paper fuses, in the paper's order (issue 25) ----
# gpt3_mini at S = 64, `fuse --inline-widened --order paper` (FuseFlow's first topological
# sort, docs/fused-ir.md "The paper's order"), partial and full, every run checked against the
# reference evaluator (about a minute each; docs/fused-ir.md has the measured cycles).
.PHONY: gpt3-paper-order
gpt3-paper-order: $(STAMP) $(DDIR)/gpt3_mini/s64
	for v in partial full; do \
	  $(FFC) fuse ir_examples/models/gpt3_mini/gpt3_mini_$$v.ff --inline-widened --order paper \
	    | $(FFC) lower | $(FFC) simulate - --data $(DDIR)/gpt3_mini/s64 --check || exit 1; \
	done

# ---- bench-artifact: Figure 12 in the FuseFlow artifact's configuration (issue 25) --------------
# docs/bench.md, "Against the artifact": the specs of ir_examples/bench/artifact/ (the artifact's
# data, sizes, weight sparsity and kernels; GPT-3 as components composed into 12 decoders as the
# artifact composes them), every configuration simulated and checked; results, reports and
# ARTIFACT.md (every bar of the artifact's plotted figures beside ours) in
# results/paper/artifact/, and the same table in results/paper/PAPER.md. The attention's masks
# (block 16, 32, 64 at S = 1024) are made here; the other data by the sweeps. Resumable.
.PHONY: bench-artifact
ADATA := out/bench/artifact/data
ATTN_ART := ir_examples/bench/artifact/programs/gpt3_art_attn.ff
$(ADATA)/attn_b%: $(ATTN_ART) | $(STAMP)
	$(GEN) $< --size S=1024 --size NH=12 --size DH=64 \
	  --mask M=bigbird:block=$*,random=2,global=1,window=3 -o $@ > /dev/null

bench-artifact: $(STAMP) $(ADATA)/attn_b16 $(ADATA)/attn_b32 $(ADATA)/attn_b64
	$(PY) -m fuseflowc.bench --specs ir_examples/bench/artifact --out results/paper/artifact \
	  --jobs $(PAPER_JOBS) --scale artifact
	$(PY) -m fuseflowc.bench --specs ir_examples/bench/paper --out results/paper --scale paper \
	  --summary-only > /dev/null

# ---- bench-fabric: Figure 12's models on finite fabrics (docs/fabric.md, issue 29) ------------
# GCN and GraphSAGE (Cora), SAE (MNIST sizes) and gpt3_mini (S = 64), unfused / partial / full,
# on the unlimited fabric and the onyx-quarter and onyx-eighth what-ifs: each variant mapped
# with `opt -p map{fabric=...}` (graphs that do not fit split into configurations, cut streams
# spilled to DRAM), simulated, its outputs compared with the unlimited run's; one line per run
# (cycles with configuration loads, energy, configurations, spilled bytes), the table in
# out/bench_fabric.md. About 15 minutes on 2 cores.
FABRIC_SPECS ?= $(foreach m,gcn graphsage sae gpt3,ir_examples/bench/fig12_$(m).toml)
.PHONY: bench-fabric
bench-fabric: $(STAMP) $(DDIR)/gpt3_mini/s64
	@mkdir -p out
	$(PY) -m fuseflowc.bench.fabric $(FABRIC_SPECS) --json out/bench_fabric.json \
	  --markdown out/bench_fabric.md

# The prebuilt parsers shipped next to the grammars (grammars/lalr_*.py, fuseflowc.syntax):
# regenerate after editing a grammar or moving to another Lark (tests/lang/test_parse_tables.py fails
# until then). Nothing is written at run time.
.PHONY: parse-tables
parse-tables: $(STAMP)
	$(PY) -m fuseflowc.grammars

# ---- bench-paper-long: the artifact's rows that do not fit bench-paper's 60 minutes ------------
# ir_examples/bench/artifact/long/ (docs/bench.md, "The long set"): the GCN and GraphSAGE full
# fusions on Cora, Cora-ML and DBLP (the paper's order recomputes layer 1 per stored entry
# of A: up to 2.7 hours a run), SAE on NIH-CXR (9.6 GB a run) and the MAG specs; and
# ir_examples/bench/paper/long/: the paper-size GPT-3 fused as the artifact fuses (37-40
# minutes a run). One run at a time, on a quiet machine, hours. Its rows go into bench-paper's
# results directories, and the tables (results/paper/artifact/ARTIFACT.md,
# results/paper/PAPER.md) take them in place of the "not simulated by make bench-paper" lines.
.PHONY: bench-paper-long
bench-paper-long: $(STAMP) $(PDATA)/gpt3_s1024_s55 $(PDATA)/gpt3_s1024_s87
	$(PY) -m fuseflowc.bench --specs ir_examples/bench/artifact/long --out results/paper/artifact \
	  --jobs 1 --scale artifact
	$(PY) -m fuseflowc.bench --specs ir_examples/bench/paper/long --out results/paper \
	  --jobs 1 --scale paper > /dev/null
	$(PY) -m fuseflowc.bench --specs ir_examples/bench/artifact --out results/paper/artifact \
	  --scale artifact --summary-only > /dev/null
	$(PY) -m fuseflowc.bench --specs ir_examples/bench/paper --out results/paper --scale paper \
	  --summary-only > /dev/null
