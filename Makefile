# fuseflowc: every target creates/updates the virtual environment it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
FFC    := $(VENV)/bin/fuseflowc
STAMP  := $(VENV)/.installed
DATA   ?= ../shared/data

.PHONY: demo test venv clean bench-sim examples bench-compile

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# The main job on a built-in example: evaluate GCN on KarateClub with the reference evaluator.
demo: $(STAMP)
	@rm -rf out/demo && mkdir -p out/demo
	$(FFC) gen-data ir_examples/models/gcn/gcn_full.ff --graph karate -o out/demo/data --seed 1
	$(FFC) run ir_examples/models/gcn/gcn_full.ff --data out/demo/data -o out/demo/result

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
