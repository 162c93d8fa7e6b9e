"""Families of generated programs over the storage formats:

  formats    a kernel (SpMV, SpMM, element-wise add and multiply, SDDMM) whose operands and
             result take level formats drawn from every kind: dense, compressed, compressed(c),
             singleton (COO), the shorthands (csr, csc, dcsr, dcsc, coo, ell(c)), blocked ones,
             mode orders, and malformed lists (singleton first, compressed(0), ...), then
             `estimate` compiles and costs it (fuse, lower, the cost model) at small sizes;
  decompose  the same kernels with a `decompose A: bcsr(b) >= t, ..., RESIDUAL` directive (good
             and bad parts, thresholds, block sizes) and the other operands in any format,
             through `fuse` (the rewrite, the blocked copies, lowering's checks in check).
"""

from __future__ import annotations

KERNELS = {
    "spmv": ("dim I, J\n", ("A[I, J]", "x[J]"), "y[I]", "y[i] = A[i,j] * x[j]\n"),
    "spmm": ("dim I, J, K\n", ("A[I, J]", "B[J, K]"), "C[I, K]",
             "C[i,k] = A[i,j] * B[j,k]\n"),
    "add": ("dim I, J\n", ("A[I, J]", "B[I, J]"), "C[I, J]", "C[i,j] = A[i,j] + B[i,j]\n"),
    "mul": ("dim I, J\n", ("A[I, J]", "B[I, J]"), "C[I, J]", "C[i,j] = A[i,j] * B[i,j]\n"),
    "sddmm": ("dim I, J, K\n", ("A[I, J]", "B[I, K]", "D[K, J]"), "C[I, J]",
              "C[i,j] = A[i,j] * sum[k](B[i,k] * D[k,j])\n"),
}
MATRIX = ("dense", "csr", "csc", "dcsr", "dcsc", "coo", "ell(2)", "ell(4)",
          "(dense, compressed(3))", "(compressed, singleton)", "(compressed, compressed(2))",
          "(compressed, singleton) order (1, 0)", "(dense, compressed) order (1, 0)",
          "sparse")
MATRIX_BAD = ("(singleton, dense)", "(dense, singleton)", "(compressed(0), dense)",
              "ell(0)", "ell(1048577)", "(compressed(2), singleton)", "coo(2)",
              "(dense, compressed) order (0, 0)", "(compressed, singleton) blocked", "csr(4)")
VECTOR = ("dense", "dense", "(compressed)", "sparse", "(compressed(2))", "(singleton)")
SIZES = (2, 3, 4, 6, 8)


def _format(b, decl: str) -> str:
    if decl.count(",") == 0:
        return b.pick(VECTOR)
    return b.pick(MATRIX) if b.good(0.85) else b.pick(MATRIX_BAD)


def _program(b, decompose: bool) -> tuple[str, str]:
    name = b.pick(sorted(KERNELS))
    dims, inputs, result, stmt = KERNELS[name]
    lines = [dims]
    for d in inputs:
        lines.append(f"tensor {d} : {_format(b, d)}\n")
    out_fmt = "dense" if decompose or b.chance(0.6) else _format(b, result)
    lines.append(f"tensor {result} : {out_fmt}\n")
    lines.append(stmt)
    if decompose:
        lines.append(_decompose(b) + "\n")
    if b.chance(0.08):  # a block size (its tensor blocked or not)
        blocked = [d.split("[")[0] for d in inputs]
        lines.append(f"block {b.pick(blocked)}: {b.pick(('2', '4', '0', '3'))}\n")
    return name, "".join(lines)


def _decompose(b) -> str:
    parts = []
    for _ in range(b.rng.randint(1, 3)):
        fmt = b.pick(("bcsr", "bdcsr", "bdense")) if b.good(0.9) else b.pick(("csr", "coo"))
        block = b.pick(("2", "4")) if b.good(0.85) else b.pick(("0", "3", "1024", "-1"))
        thr = b.pick(("0.25", "0.5", "1")) if b.good(0.85) else b.pick(("0", "1.5", "nan",
                                                                          "-0.5"))
        parts.append(f"{fmt}({block}) >= {thr}")
    residual = b.pick(("csr", "csr", "dcsr", "coo", "ell(4)", "(dense, compressed(2))",
                       "dense")) if b.good(0.85) else b.pick(("bcsr(2)", "csr >= 0.5", ""))
    parts.append(residual)
    tensor = "A" if b.good(0.9) else b.pick(("B", "C", "ZZ"))
    return f"decompose {tensor}: " + ", ".join(p for p in parts if p)


def _write(b, decompose: bool) -> list[str]:
    c = b.case
    name, text = _program(b, decompose)
    path = f"{'decomposed' if decompose else 'formats'}_{name}.ff"
    c.files[path] = text.encode()
    c.notes.append(f"{path}: generated")
    c.inputs.append(path)
    c.args.append((path,))
    dims = sorted({ch for ln in text.splitlines() if ln.startswith("dim ")
                   for ch in ln[4:].replace(",", " ").split()})
    return dims


def formats(b, fam) -> None:
    c = b.case
    c.command = "estimate"
    dims = _write(b, decompose=False)
    for d in dims:
        b.opt("--size", f"{d}={b.pick(SIZES) if b.good(0.95) else b.pick(('0', '-1', 'x'))}")
    if b.chance(0.6):
        b.opt("--density", str(b.pick((0.1, 0.3, 0.5, 1.0))))
    if b.chance(0.2):
        b.opt("--inline-widened")
    if b.chance(0.2):
        b.opt("--json")
    if b.chance(0.2):
        b.output("-o", "file")
    b.stray()


def decompose(b, fam) -> None:
    c = b.case
    c.command = "fuse"
    dims = _write(b, decompose=True)
    # decompose needs the sizes in the program for its checks: fix them on the dim line
    path = c.inputs[-1]
    text = c.files[path].decode()
    sizes = ", ".join(f"{d} = {b.pick((4, 8)) if b.good(0.9) else b.pick((3, 6))}" for d in dims)
    c.files[path] = text.replace(text.splitlines()[0], f"dim {sizes}", 1).encode()
    for flag in ("--unfused", "--inline-widened", "--share"):
        if b.chance(0.1):
            b.opt(flag)
    if b.chance(0.2):
        b.order()
    if b.chance(0.3):
        b.output("-o", "file")
    b.stray()
