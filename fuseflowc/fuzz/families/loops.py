"""The `loops` family: programs with list dims and loops (map, fold, scan; nested scans for
wavefront order), made from templates with list sizes good (1..6) and bad (0, past the
unrolling limit, 5000 digits), schedules `unroll`, `reuse`, `wavefront` (and ones that do not
apply or do not exist), shifted, reversed and fallback list accesses, and fusion regions inside
bodies; plus the loop models of the examples. `fuse` checks, unrolls and fuses them."""

from __future__ import annotations

MAP = """dim N = 3, T = {t}
tensor X[N] : dense
tensor W[T; N] : {fmt}
tensor Y[T; N] : dense
map t in T {{
  Y[t; i] = X[i] * W[t; i]
}}
"""
FOLD = """dim N = 4, F = 3, L = {t}
tensor A[N, N] : csr
tensor X[N, F] : dense
tensor W[L; F, F] : {fmt}
tensor T1[N, F] : dense
tensor H[N, F] : dense
H = fold l in L from X {{
  T1[i, h] = H[i, f] * W[l; f, h]
  H[i, h] = relu(sum[m](A[i, m] * T1[m, h]))
}}
"""
SCAN = """dim K = 3, T = {t}
tensor X[T; K] : dense
tensor h0[K] : dense
tensor Wh[K, K] : {fmt}
tensor Hs[T; K] : dense
scan t in T {{
  Hs[t; k] = tanh(X[t; k] + sum[j]((Hs[t - {shift}; j] else h0[j]) * Wh[j, k]))
}}
"""
WAVE = """dim K = 2, D = {t}, T = {t2}
tensor X[T; K] : dense
tensor h0[K] : dense
tensor Wx[D; K, K] : {fmt}
tensor Hs[D, T; K] : dense
scan d in D {{
  scan t in T {{
    Hs[d, t; k] = tanh(sum[j]((Hs[d - 1, t; j] else X[t; j]) * Wx[d; j, k])
                       + sum[j2](Hs[d, t - 1; j2] else h0[j2]))
  }}
}}
"""
TEMPLATES = {"map": (MAP, "t"), "fold": (FOLD, "l"), "scan": (SCAN, "t"), "wave": (WAVE, "t")}
GOOD_T = ("1", "2", "3", "4", "6")
BAD_T = ("0", "200000", "1000000000", "9" * 5000, "-1", "x")
MODES = ("unroll", "reuse", "wavefront")


def build(b, fam) -> None:
    c = b.case
    c.command = "fuse"
    models = [s for s in b.corpus.seeds.get("program", [])
              if any(m in s.path for m in ("gcn_deep", "rnn_stacked", "gpt3_layers"))]
    if models and b.chance(0.2):
        b.input(("program",), False) if b.chance(0.3) else _model(b, b.pick(models))
    else:
        kind = b.pick(sorted(TEMPLATES))
        text, var = TEMPLATES[kind]
        t = b.pick(GOOD_T) if b.good(0.85) else b.pick(BAD_T)
        prog = text.format(t=t, t2=b.pick(GOOD_T), shift=b.pick(("1", "1", "2", "0", "-1")),
                           fmt=b.pick(("dense", "dense", "csr", "coo")))
        if b.chance(0.6):
            mode = b.pick(MODES) if b.good(0.9) else b.pick(("spin", "", "reuse reuse"))
            inner = "t" if kind == "wave" and b.chance(0.7) else var
            prog += f"schedule {inner}: {mode}\n"
        if kind == "fold" and b.chance(0.3):
            prog += "fuse layer: T1, H\n"
        path = f"loop_{kind}.ff"
        c.files[path] = prog.encode()
        c.notes.append(f"{path}: generated, {var} in {t[:20]}")
        c.inputs.append(path)
        c.args.append((path,))
    if b.chance(0.1):
        b.opt("--unfused")
    if b.chance(0.1):
        b.opt("--share")
    if b.chance(0.3):
        b.output("-o", "file")
    b.stray()


def _model(b, seed) -> None:
    """A loop model of the examples with one more schedule directive (-s)."""
    c = b.case
    b.add_files(b.corpus.seed_files(seed))
    c.inputs.append(seed.path)
    c.args.append((seed.path,))
    var = b.pick(("l", "d", "t", "q", "zz"))
    b.opt("-s", f"schedule {var}: {b.pick(MODES)}")
