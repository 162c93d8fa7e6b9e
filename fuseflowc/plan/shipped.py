"""Regenerate the shipped warehouse (fuseflowc/plan/warehouse/): `python -m fuseflowc.plan.shipped`.

Each pattern is a region of a kernel or model program, scheduled by the planner's own order
search (`Planner.best`) at moderate uniform sizes (unsized dims 64, sparse inputs at density
0.1, the model's fixed sizes as declared), no parallelization (the lane budget is the user's:
`plan --lanes` searches factors on top of a pattern's order).
"""

from __future__ import annotations

import os
import sys
import tempfile

#: (pattern name, note, program text or repository path, region statements). GCN's second
#: aggregation (CSR adjacency times dense features) is spmm_csr: one signature, one pattern.
SPMM = """dim I, K, J
tensor A[I, K] : {fmt}
tensor B[K, J] : dense
tensor C[I, J] : dense
C[i,j] = A[i,k] * B[k,j]
"""

PATTERNS = [
    *[(f"spmm_{f}", f"SpMM C = A B, A in {f}, B and C dense", SPMM.format(fmt=f), ("C",))
      for f in ("csr", "csc", "dcsr", "dcsc", "dense")],
    ("sddmm", "SDDMM: U V^T sampled at a CSR mask's entries", "ir_examples/kernels/sddmm.ff",
     ("S",)),
    ("gcn_aggregate_sparse", "GNN aggregation: adjacency (CSR) times sparse features",
     "ir_examples/models/gcn/gcn.ff", ("AX1",)),
    ("gcn_layer1", "GCN layer 1 fused: relu(A X W1 + b1)", "ir_examples/models/gcn/gcn.ff",
     ("AX1", "Z1", "B1", "H1")),
    ("gcn_layer2", "GCN layer 2 fused: A H1 W2 + b2", "ir_examples/models/gcn/gcn.ff",
     ("AX2", "Z2", "Y")),
    ("graphsage_layer1", "GraphSAGE layer 1 fused", "ir_examples/models/graphsage/graphsage.ff",
     ("AX1", "N1", "S1", "P1", "B1", "H1")),
    ("graphsage_layer2", "GraphSAGE layer 2 fused", "ir_examples/models/graphsage/graphsage.ff",
     ("AX2", "N2", "S2", "P2", "Y")),
    ("sae_enc1", "SAE encoder layer 1 fused", "ir_examples/models/sae/sae.ff", ("Z1", "B1", "H1")),
    ("sae_enc2", "SAE encoder layer 2 fused", "ir_examples/models/sae/sae.ff", ("Z2", "B2", "H2")),
    ("sae_dec", "SAE decoder fused", "ir_examples/models/sae/sae.ff", ("Z3", "B3", "R")),
    ("masked_attention_bigbird", "BigBird masked attention, one head, fused",
     "ir_examples/models/bigbird_attention/attention.ff", ("Sc", "mx", "Ex", "den", "O")),
    ("gpt3_attention", "GPT-3 layer's masked multi-head attention fused (scores to output)",
     "ir_examples/models/gpt3_mini/gpt3_mini.ff", ("Sc", "mx", "Sh", "Ex", "den", "P", "O")),
    ("gpt3_pre", "GPT-3 layer: layer norm 1 and the Q, K, V projections fused",
     "ir_examples/models/gpt3_mini/gpt3_mini.ff",
     ("mu1", "xc1", "var1", "rs1", "xn1", "ln1", "Qm", "Q", "Km", "K", "Vm", "V")),
    ("gpt3_post", "GPT-3 layer: output projection, residual, layer norm 2 and the FFN fused",
     "ir_examples/models/gpt3_mini/gpt3_mini.ff",
     ("Om", "At", "a", "mu2", "xc2", "var2", "rs2", "xn2", "ln2", "F1m", "F1", "G", "F2m",
      "F2", "y")),
]


def build(repo: str, out: str) -> list[str]:
    from ..lang.load import load_program
    from .cost import CostOptions
    from .patterns import pattern_of
    from .search import Planner, PlanOptions
    written = []
    for name, note, prog, stmts in PATTERNS:
        if "\n" in prog:
            with tempfile.NamedTemporaryFile("w", suffix=".ff", delete=False) as f:
                f.write(prog)
            path = f.name
        else:
            path = os.path.join(repo, prog)
        p = load_program(path)
        if "\n" in prog:
            os.unlink(path)
        sizes = {d.name: d.size or 64 for d in p.dims}
        sizes.update({d.name: 4 for d in p.dims if d.name in ("NH",) and d.size is None})
        sizes.update({d.name: 16 for d in p.dims if d.name in ("DH",) and d.size is None})
        pl = Planner(p, CostOptions(sizes=sizes), PlanOptions())
        c = pl.best(frozenset(stmts))
        if c is None:
            raise SystemExit(f"{name}: the region does not compile")
        pat = pattern_of(p, stmts, pl.explicit_orders(frozenset(stmts), c.schedule), False,
                         name, note)
        target = os.path.join(out, f"{name}.toml")
        with open(target, "w", encoding="utf-8") as f:
            f.write(pat.to_toml())
        written.append(target)
    return written


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    for t in build(repo, os.path.join(here, "warehouse")):
        print(t)
    return 0


if __name__ == "__main__":
    sys.exit(main())
