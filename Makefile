# fuseflowc: every target creates/updates the virtual environment it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
FFC    := $(VENV)/bin/fuseflowc
STAMP  := $(VENV)/.installed
DATA   ?= ../shared/data

.PHONY: demo test venv clean bench-sim examples bench-compile bench-estimate

venv: $(STAMP)

$(STAMP): pyproject.toml
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
	$(FFC) simulate out/demo/gcn.samml --data out/demo/data --check -o out/demo/result --json out/demo/sim.json
	$(FFC) dot out/demo/gcn.samml -o out/demo/gcn.dot
	@echo "demo: outputs in out/demo (fused IR, SAMML graph, DOT picture, simulated tensors, sim.json)"

test: $(STAMP)
	$(PY) -m pytest

clean:
	rm -rf $(VENV) out results .pytest_cache

# Simulator speed: SpMM (ikj) and SDDMM on real matrices; the last line is `token-hops/s: N`.
bench-sim: $(STAMP)
	$(PY) -m sim.bench --data $(DATA)

# Every example program and fusion variant, up to 3 orders per region, through the pipeline
# fuse | lower | simulate --check (separate processes); ends with `examples: N passed, M failed`.
examples: $(STAMP)
	$(PY) -m fuseflowc.lower.examples --jobs 2

# Compile time of each model variant: `fuse | lower` as separate processes, Python start-up
# included (budget: 750 ms).
bench-compile: $(STAMP)
	@for m in ir_examples/models/*/*_*.ff; do \
	  s=$$(date +%s%N); \
	  $(FFC) fuse $$m | $(FFC) lower > /dev/null || echo "compile failed: $$m"; \
	  e=$$(date +%s%N); \
	  echo "compile-ms $$(basename $$m .ff): $$(( (e - s) / 1000000 ))"; \
	done

# The estimator's accuracy: FLOPs and bytes estimated (from the data, and from nnz only) against
# the simulator's counts for GCN and GraphSAGE (KarateClub, Cora; every fusion variant), BigBird
# attention, GPT-3 and SAE at small sizes; ends with the average errors (paper Table 2).
bench-estimate: $(STAMP)
	$(PY) -m fuseflowc.estimate.bench --data $(DATA) -j 2
