"""ONNX nodes to statements: one translator per operator (`OPS`), each writing the node's
statements with the model's dense semantics (docs/import.md, "What each operator becomes").

Every computed value is stored in a tensor declared `dense`, so it holds every coordinate; only
a model's sparse constants and inputs (compressed formats) store fewer. Wherever such a value
meets an operation whose dense result differs from its pattern result (a broadcast sum, a
function with f(0) != 0, a quotient, a max), the translator wraps it in `dense(...)`.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..diagnostics import UserError
from .program import Program, Val, index_names

#: Below this an additive mask value or a Where's other branch counts as -inf: exp of it minus
#: any finite row maximum is exactly 0 in double precision.
NEG_INF = -1e9


class Translator:
    def __init__(self, model, prog: Program, vals: dict[str, Val], dtype_of: dict):
        self.model, self.p, self.vals, self.dtype_of = model, prog, vals, dtype_of
        self.k = 0
        self.node = None
        self.made: dict[str, np.ndarray] = {}  # constants a translation adds (0/1 tensors)
        self.lazy: dict = {}  # constant name -> its Val, declared when a node reads it as a value
        self.constant_tensors: dict[str, np.ndarray] = {}  # program tensor -> the model's values
        self.users: dict[str, list[str]] = {}  # value -> the operators that read it

    @property
    def loc(self):
        return self.model.node_loc(self.k)

    def err(self, msg: str) -> UserError:
        return UserError(msg, self.loc)

    # ---- operands ---------------------------------------------------------------------------
    def arg(self, i: int, optional: bool = False) -> Val | None:
        ins = self.node.input
        if i >= len(ins) or ins[i] == "":
            if optional:
                return None
            raise self.err(f"input {i} is missing")
        v = self.vals.get(ins[i])
        if v is None and ins[i] in self.lazy:
            v = self.vals[ins[i]] = self.lazy.pop(ins[i])()
        if v is None:
            raise self.err(f"input '{ins[i]}' is not computed by any earlier node")
        if v.const is not None and not math.isfinite(v.const) and not (
                self.node.op_type == "Where" and i > 0):
            raise self.err(f"constant '{ins[i]}' is {v.const} (only Where(mask, x, -inf) before "
                           f"a Softmax may hold an infinity)")
        if v.masked and self.node.op_type != "Softmax":
            raise self.err(f"'{ins[i]}' is a score under a -inf mask (Where); only Softmax may "
                           f"read it")
        return v

    def const_array(self, i: int) -> np.ndarray:
        name = self.node.input[i] if i < len(self.node.input) else ""
        if name not in self.model.constants:
            raise self.err(f"input {i} ('{name}') must be a constant (an initializer)")
        return self.model.constants[name]

    def attr(self, name: str, default=None):
        import onnx
        for a in self.node.attribute:
            if a.name == name:
                return onnx.helper.get_attribute_value(a)
        return default

    def out(self, axes: list, suffix: str = "", fmt: str = "dense", full: bool = True,
            masked: bool = False) -> Val:
        if all(a is None for a in axes):
            raise self.err("a scalar result (scalars are not supported; fold constant "
                           "subgraphs before exporting, e.g. with onnxsim)")
        name = self.node.output[0] + suffix
        return self.p.new_val(name, axes, fmt, full=full, masked=masked)

    def bind(self, v: Val, idx: int = 0) -> None:
        self.vals[self.node.output[idx]] = v

    # ---- broadcasting -----------------------------------------------------------------------
    def broadcast(self, vals: list[Val]) -> list:
        """numpy broadcasting of the operands' axes (aligned at the right): the result's axes."""
        rank = max(v.rank for v in vals)
        axes = []
        for k in range(rank):
            got = None
            for v in vals:
                j = k - (rank - v.rank)
                if j < 0 or v.axes[j] is None:
                    continue
                got = v.axes[j] if got is None else self.p.unify(got, v.axes[j], self.loc)
            axes.append(got)
        return axes

    @staticmethod
    def names_for(v: Val, out_names: list[str]) -> list[str]:
        return out_names[len(out_names) - v.rank:]

    def wrap(self, v: Val, text: str) -> str:
        return text if v.full else f"dense({text})"

    # ---- translators --------------------------------------------------------------------------
    def additive_mask(self) -> bool:
        """Add(scores, M) read by a Softmax alone, M a constant of 0 and -inf (or values below
        NEG_INF): the masked scores, as Where(M == 0, scores, -inf) (see `where`)."""
        users = self.users.get(self.node.output[0], [])
        if users != ["Softmax"] or self.node.output[0] in {o.name for o in
                                                           self.model.graph.output}:
            return False
        for j in (0, 1):
            arr = self.model.constants.get(self.node.input[j])
            if arr is None or np.asarray(arr).size == 1:
                continue
            a = np.asarray(arr, dtype=np.float64)
            if not ((a == 0) | (a <= NEG_INF)).all() or not (a <= NEG_INF).any():
                continue
            x = self.arg(1 - j)
            keep = (a == 0).astype(np.float64)
            axes = [None if n == 1 else self.p.new_dim(n, f"{self.node.input[j]}_{k}")
                    for k, n in enumerate(a.shape)]
            m = self._constant_tensor(self.node.input[j] + "_keep",
                                      keep.reshape([n for n in a.shape if n != 1]),
                                      f"the entries {self.node.input[j]} does not mask")
            for k, ax in enumerate(a for a in axes if a is not None):
                self.p.unify(m.axes[k], ax, self.loc)
            mv = Val(m.tensor, axes, [None if ax is None else sum(
                x is not None for x in axes[:d]) for d, ax in enumerate(axes)], False)
            self.masked_scores(replace(mv, boolean=True), x)
            return True
        return False

    def masked_scores(self, c: Val, x: Val) -> None:
        axes = self.broadcast([c, x])
        names = index_names(len(axes))
        y = self.out(axes, fmt=_compressed_last(len([a for a in axes if a is not None])),
                     full=False, masked=True)
        self.p.assign(y, f"mask({self.wrap(x, x.access(self.names_for(x, names)))}, "
                         f"{c.access(self.names_for(c, names))})", names)
        self.bind(y)

    def elementwise(self, op: str) -> None:
        if op == "+" and self.additive_mask():
            return
        a, b = self.arg(0), self.arg(1)
        axes = self.broadcast([a, b])
        names = index_names(len(axes))
        ta, tb = a.access(self.names_for(a, names)), b.access(self.names_for(b, names))
        same = [x for x in a.axes if x is not None] == [x for x in b.axes if x is not None]
        if op in "+-":
            if not (same and a.rank == b.rank):
                ta, tb = self.wrap(a, ta), self.wrap(b, tb)
            rhs = f"{ta} {op} {tb}"
        elif op == "*":
            rhs = f"{ta} * {tb}"
        else:  # "/": 0/0 and x/0 are values a dense model computes
            rhs = f"{self.wrap(a, ta)} / ({self.wrap(b, tb)})"
        if a.const is not None and b.const is not None:
            raise self.err("an operation on two constants (fold it before exporting)")
        y = self.out(axes, full=True)
        self.p.assign(y, rhs, names)
        self.bind(y)

    def unary(self, func: str, zero_preserving: bool) -> None:
        a = self.arg(0)
        names = index_names(a.rank)
        t = a.access(names)
        if not zero_preserving:
            t = self.wrap(a, t)
        y = self.out(list(a.axes))
        self.p.assign(y, func.format(t), names)
        self.bind(y)

    def matmul(self) -> None:
        a, b = self.arg(0), self.arg(1)
        self._contract(a, b, False, False, None, 1.0, 1.0)

    def gemm(self) -> None:
        a, b, c = self.arg(0), self.arg(1), self.arg(2, optional=True)
        if a.rank != 2 or b.rank != 2:
            raise self.err("Gemm takes matrices")
        self._contract(a, b, bool(self.attr("transA", 0)), bool(self.attr("transB", 0)), c,
                       float(self.attr("alpha", 1.0)), float(self.attr("beta", 1.0)))

    def _contract(self, a: Val, b: Val, ta: bool, tb: bool, c: Val | None, alpha: float,
                  beta: float) -> None:
        if a.const is not None or b.const is not None:
            raise self.err("a product with a scalar operand")
        aa, ba = list(a.axes), list(b.axes)
        if ta:
            aa[-1], aa[-2] = aa[-2], aa[-1]
        if tb:
            ba[-1], ba[-2] = ba[-2], ba[-1]
        if len(aa) == 1:
            aa = [None] + aa
        if len(ba) == 1:
            ba = ba + [None]
        ka, kb = aa[-1], ba[-2]
        if (ka is None) != (kb is None):
            raise self.err("the contracted dimensions differ (1 against more)")
        k = None if ka is None else self.p.unify(ka, kb, self.loc)
        batch = self.broadcast([Val("", aa[:-2], [None] * (len(aa) - 2)),
                                Val("", ba[:-2], [None] * (len(ba) - 2))])
        axes = batch + [aa[-2], ba[-1]]
        names = index_names(len(axes) + 1)
        kname, onames = names[-1], names[:-1]
        bn = onames[:len(batch)]

        def view(v: Val, rows: str, cols: str, trans: bool, vec_axis: int | None) -> str:
            nb = v.rank - 2 if v.rank >= 2 else 0
            inner = [rows, cols]
            if v.rank == 1:
                inner = [inner[vec_axis]]
            elif trans:
                inner = inner[::-1]
            return v.access(bn[len(bn) - nb:] + inner)

        ta_ = view(a, onames[-2], kname, ta, 1)
        tb_ = view(b, kname, onames[-1], tb, 0)
        prod = f"{ta_} * {tb_}"
        expr = f"sum[{kname}]({prod})" if k is not None else prod
        full = a.full and b.full
        if alpha != 1.0:
            expr = f"{_num(alpha)} * {expr}"
        drop = [j for j, x in enumerate(axes) if x is None and j >= len(batch)]
        if c is not None:
            if not full:
                expr = f"dense({expr})"
            cnames = self.names_for(c, onames)
            ct = self.wrap(c, c.access(cnames))
            axes_c = self.broadcast([Val("", axes, [None] * len(axes)), c])
            axes = axes_c
            expr = f"{expr} + {ct}" if beta == 1.0 else f"{expr} + {_num(beta)} * {ct}"
        y = self.out(axes)
        self.p.assign(y, expr, onames)
        if drop and c is None:  # a vector operand: its unit axis is not in ONNX's result
            y = Val(y.tensor, [x for j, x in enumerate(y.axes) if j not in drop],
                    [p for j, p in enumerate(y.pos) if j not in drop])
        self.bind(y)

    def einsum(self) -> None:
        eq = self.attr("equation").decode() if isinstance(self.attr("equation"), bytes) \
            else str(self.attr("equation"))
        eq = eq.replace(" ", "")
        if "..." in eq:
            raise self.err("Einsum with an ellipsis is not supported")
        lhs, _, rhs = eq.partition("->")
        terms = lhs.split(",")
        ops = [self.arg(i) for i in range(len(terms))]
        if "->" not in eq:
            counts = {c: lhs.count(c) for c in lhs if c.isalpha()}
            rhs = "".join(sorted(c for c, n in counts.items() if n == 1))
        letter_dim: dict[str, int | None] = {}
        for term, v in zip(terms, ops):
            if len(term) != v.rank or len(set(term)) != len(term):
                raise self.err(f"Einsum term '{term}' does not fit its operand (rank {v.rank}; "
                               f"a repeated letter is a diagonal, not supported)")
            for c, d in zip(term, v.axes):
                if d is None:
                    letter_dim.setdefault(c, None)
                elif letter_dim.get(c) is None:
                    letter_dim[c] = d
                else:
                    letter_dim[c] = self.p.unify(letter_dim[c], d, self.loc)
        names = {c: n for c, n in zip(sorted(letter_dim), index_names(len(letter_dim)))}
        prod = " * ".join(v.access([names[c] for c in term]) for term, v in zip(terms, ops))
        red = [names[c] for c in sorted(letter_dim) if c not in rhs and letter_dim[c] is not None]
        expr = f"sum[{', '.join(red)}]({prod})" if red else prod
        y = self.out([letter_dim[c] for c in rhs])
        self.p.assign(y, expr, [names[c] for c in rhs])
        self.bind(y)

    def reduce(self, op: str) -> None:
        a = self.arg(0)
        axes_in = self.attr("axes")
        if axes_in is None and len(self.node.input) > 1 and self.node.input[1]:
            axes_in = [int(x) for x in self.const_array(1).reshape(-1)]
        if not axes_in:
            if self.attr("noop_with_empty_axes", 0):
                self.bind(a)
                return
            axes_in = list(range(a.rank))
        axes_r = sorted({x % a.rank if -a.rank <= x < a.rank else self._bad_axis(x, a)
                         for x in axes_in})
        keep = self.attr("keepdims", 1)
        names = index_names(a.rank)
        red = [names[j] for j in axes_r if a.axes[j] is not None]
        body = a.access(names)
        n = math.prod(self.p.size[self.p.find(a.axes[j])] for j in axes_r
                      if a.axes[j] is not None)
        if op == "max":
            body = self.wrap(a, body)
        expr = f"{op if op != 'mean' else 'sum'}[{', '.join(red)}]({body})" if red else body
        if op == "mean" and n != 1:
            expr = f"{expr} / {n}"
        out_axes = [None if j in axes_r else x for j, x in enumerate(a.axes)] if keep else \
            [x for j, x in enumerate(a.axes) if j not in axes_r]
        out_names = names if keep else [nm for j, nm in enumerate(names) if j not in axes_r]
        if all(x is None for x in out_axes):
            raise self.err("a reduction to a scalar (scalars are not supported)")
        y = self.out(out_axes)
        self.p.assign(y, expr, out_names)
        self.bind(y)

    def _bad_axis(self, x: int, a: Val):
        raise self.err(f"axis {x} is out of range for rank {a.rank}")

    def softmax(self) -> None:
        a = self.arg(0)
        axis = self.attr("axis", -1)
        if not -a.rank <= axis < a.rank:
            self._bad_axis(axis, a)
        axis %= a.rank
        if a.axes[axis] is None:
            raise self.err("Softmax over an axis of size 1")
        if a.masked and axis != a.rank - 1:
            raise self.err("a masked Softmax must be over the last axis")
        names = index_names(a.rank + 1)
        names, j2 = names[:-1], names[-1]
        row = [None if k == axis else x for k, x in enumerate(a.axes)]
        fmt = self.p.tensors[a.tensor].format if a.masked else "dense"
        x = a.access(names)
        x2 = a.access([j2 if k == axis else n for k, n in enumerate(names)])
        if not a.full and not a.masked:
            x, x2 = f"dense({x})", f"dense({x2})"
        mx = self.out(row, "_max")
        self.p.assign(mx, f"max[{j2}]({x2})", names)
        ex = self.out(list(a.axes), "_exp", fmt=fmt)
        self.p.assign(ex, f"exp({x} - {mx.access(names)})", names)
        den = self.out(row, "_sum")
        ex2 = ex.access([j2 if k == axis else n for k, n in enumerate(names)])
        self.p.assign(den, f"sum[{j2}]({ex2})", names)
        y = self.out(list(a.axes))
        self.p.assign(y, f"{ex.access(names)} / {den.access(names)}", names)
        self.bind(y)

    def layer_norm(self) -> None:
        a, s, b = self.arg(0), self.arg(1), self.arg(2, optional=True)
        self.broadcast([a, s] + ([b] if b is not None else []))
        axis = self.attr("axis", -1) % a.rank
        if axis != a.rank - 1:
            raise self.err("LayerNormalization over more than the last axis is not supported")
        eps = float(self.attr("epsilon", 1e-5))
        names = index_names(a.rank + 1)
        names, j2 = names[:-1], names[-1]
        row = list(a.axes[:-1]) + [None]
        n = self.p.size[self.p.find(a.axes[-1])] if a.axes[-1] is not None else 1
        x = self.wrap(a, a.access(names))
        x2 = self.wrap(a, a.access(names[:-1] + [j2]))
        mu = self.out(row, "_mean")
        self.p.assign(mu, f"sum[{j2}]({x2}) / {n}", names)
        xc = self.out(list(a.axes), "_centered")
        self.p.assign(xc, f"{x} - {mu.access(names)}", names)
        var = self.out(row, "_var")
        xc2 = xc.access(names[:-1] + [j2])
        self.p.assign(var, f"sum[{j2}]({xc2} * {xc2}) / {n}", names)
        y = self.out(list(a.axes))
        rhs = f"{xc.access(names)} * rsqrt({var.access(names)} + {_num(eps)}) * " \
              f"{self.wrap(s, s.access(self.names_for(s, names)))}"
        if b is not None:
            rhs += f" + {self.wrap(b, b.access(self.names_for(b, names)))}"
        self.p.assign(y, rhs, names)
        self.bind(y)

    def logical_not(self) -> None:
        a = self.arg(0)
        if not a.boolean:
            raise self.err("Not of a tensor that is not a boolean input or constant")
        self.bind(replace(a, negated=not a.negated))

    def where(self) -> None:
        cond, x, other = self.node.input[0], self.arg(1), self.arg(2)
        c = self.arg(0)
        if not c.boolean:
            raise self.err("Where's condition must be a boolean input or constant (or Not of "
                           "one)")
        if c.negated:  # Where(not c, x, y) = Where(c, y, x)
            c, x, other = replace(c, negated=False), other, x
        if other.const is not None and other.const <= NEG_INF and x.const is None:
            self.masked_scores(c, x)
            return
        for v, k in ((x, 1), (other, 2)):
            if v.const is not None and not math.isfinite(v.const):
                raise self.err(f"input {k} of Where is {v.const}; an infinity is read only as "
                               f"a mask before a Softmax (Where(mask, scores, -inf))")
        cond = c.tensor
        if cond not in self.made and cond not in self.constant_tensors:
            raise self.err("Where with a runtime condition is supported only as a -inf mask "
                           "before a Softmax (Where(mask, scores, -inf))")
        neg = self.p.fresh(cond + "_not")
        cv = self.constant_tensors[cond].astype(bool) if cond in self.constant_tensors \
            else self.made[cond].astype(bool)
        self.made[neg] = (~cv).astype(np.float64).reshape([n for n in cv.shape if n != 1])
        cn = Val(neg, list(c.axes), list(c.pos), False)
        self.p.declare(neg, list(self.p.tensors[cond].dims),
                       _compressed_last(sum(d is not None for d in c.axes)),
                       f"the complement of {cond}")
        axes = self.broadcast([c, x, other])
        names = index_names(len(axes))

        def branch(v: Val, m: Val) -> str:
            return f"mask({self.wrap(v, v.access(self.names_for(v, names)))}, " \
                   f"{m.access(self.names_for(m, names))})"
        y = self.out(axes)
        self.p.assign(y, f"{branch(x, c)} + {branch(other, cn)}", names)
        self.bind(y)

    # ---- views ----------------------------------------------------------------------------
    def transpose(self) -> None:
        a = self.arg(0)
        perm = self.attr("perm") or list(range(a.rank))[::-1]
        if sorted(perm) != list(range(a.rank)):
            raise self.err(f"perm {list(perm)} is not a permutation of {a.rank} axes")
        self.bind(Val(a.tensor, [a.axes[k] for k in perm], [a.pos[k] for k in perm], a.full,
                      a.masked, a.const))

    def identity(self) -> None:
        self.bind(self.arg(0))

    def squeeze(self, insert: bool) -> None:
        a = self.arg(0)
        axes = self.attr("axes")
        if axes is None and len(self.node.input) > 1 and self.node.input[1]:
            axes = [int(x) for x in self.const_array(1).reshape(-1)]
        ax, pos = list(a.axes), list(a.pos)
        if insert:
            rank = a.rank + len(axes)
            for k in sorted(x % rank for x in axes):
                ax.insert(k, None)
                pos.insert(k, None)
        else:
            drop = {x % a.rank for x in axes} if axes else {k for k, x in enumerate(ax)
                                                             if x is None}
            if any(ax[k] is not None for k in drop):
                raise self.err("Squeeze of an axis whose size is not 1")
            ax = [x for k, x in enumerate(ax) if k not in drop]
            pos = [x for k, x in enumerate(pos) if k not in drop]
        self.bind(Val(a.tensor, ax, pos, a.full, a.masked, a.const))

    def reshape(self) -> None:
        a = self.arg(0)
        shape = [int(x) for x in self.const_array(1).reshape(-1)]
        sizes = [self.p.size[self.p.find(x)] for x in a.axes if x is not None]
        want = []
        for k, s in enumerate(shape):
            if s == 0:
                s = 1 if k >= a.rank or a.axes[k] is None else self.p.size[self.p.find(a.axes[k])]
            want.append(s)
        if want.count(-1) > 1 or any(s < -1 for s in want):
            raise self.err(f"Reshape to {shape}: not a shape")
        if -1 in want:
            known = math.prod(s for s in want if s != -1)
            want[want.index(-1)] = math.prod(sizes) // max(known, 1)
        if math.prod(want) != math.prod(sizes):
            raise self.err(f"Reshape of {math.prod(sizes)} elements to {want}")
        out = [s for s in want if s != 1]
        if out == sizes:
            self._unit_reshape(a, want)
            return
        # A head split or merge: a product with a 0/1 re-indexing tensor (exact: one term).
        p = 0
        while p < min(len(sizes), len(out)) and sizes[p] == out[p]:
            p += 1
        q = 0
        while q < min(len(sizes), len(out)) - p and sizes[-1 - q] == out[-1 - q]:
            q += 1
        mid_in, mid_out = sizes[p:len(sizes) - q], out[p:len(out) - q]
        n = math.prod(mid_in)
        flat = np.arange(n)
        r = np.zeros(mid_in + mid_out)
        r[np.unravel_index(flat, mid_in) + np.unravel_index(flat, mid_out)] = 1.0
        rv = self._constant_tensor(self.node.output[0] + "_reindex", r,
                                   f"re-indexes {mid_in} as {mid_out} (Reshape)")
        stored = [x for x in a.axes if x is not None]
        new = [self.p.new_dim(sz, f"{self.node.output[0]}_{k}") for k, sz in enumerate(mid_out)]
        out_dims = stored[:p] + new + (stored[len(stored) - q:] if q else [])
        axes, k = [], 0
        for s in want:
            if s == 1:
                axes.append(None)
            else:
                axes.append(out_dims[k])
                k += 1
        names = index_names(len(axes) + len(mid_in))
        onames, red = names[:len(axes)], names[len(axes):]
        stored_names = [nm for nm, x in zip(onames, axes) if x is not None]
        in_names = stored_names[:p] + red + (stored_names[len(stored_names) - q:] if q else [])
        full_in, k = [], 0
        for x in a.axes:
            full_in.append("" if x is None else in_names[k])
            k += x is not None
        mid_names = stored_names[p:len(stored_names) - q]
        for d, (x, o) in enumerate(zip(rv.axes[len(mid_in):], new)):
            rv.axes[len(mid_in) + d] = self.p.unify(x, o, self.loc)
        for d, x in enumerate(rv.axes[:len(mid_in)]):
            self.p.unify(x, stored[p + d], self.loc)
        y = self.out(axes)
        self.p.assign(y, f"sum[{', '.join(red)}]({a.access(full_in)} * "
                         f"{rv.access(red + mid_names)})", onames)
        self.bind(y)

    def _constant_tensor(self, name: str, arr: np.ndarray, comment: str) -> Val:
        axes = [self.p.new_dim(n, f"{name}_{k}") for k, n in enumerate(arr.shape)]
        v = self.p.new_val(name, axes, compressed_format(arr.ndim), comment, full=False)
        self.made[v.tensor] = arr
        return v

    def _unit_reshape(self, a: Val, want: list[int]) -> None:
        stored = [(x, p) for x, p in zip(a.axes, a.pos) if x is not None]
        ax, pos, k = [], [], 0
        for s in want:
            if s == 1:
                ax.append(None)
                pos.append(None)
            else:
                ax.append(stored[k][0])
                pos.append(stored[k][1])
                k += 1
        self.bind(Val(a.tensor, ax, pos, a.full, a.masked, a.const))

    def _axis(self, a: Val) -> int:
        axis = self.attr("axis", 0)
        if not -a.rank <= axis < a.rank:
            self._bad_axis(axis, a)
        return axis % a.rank

    def split(self) -> None:
        a = self.arg(0)
        axis = self._axis(a)
        total = 1 if a.axes[axis] is None else self.p.size[self.p.find(a.axes[axis])]
        parts = self.attr("split")
        if parts is None and len(self.node.input) > 1 and self.node.input[1]:
            parts = [int(x) for x in self.const_array(1).reshape(-1)]
        if parts is None:
            k = self.attr("num_outputs", len(self.node.output))
            parts = [-(-total // k)] * (k - 1)
            parts.append(total - sum(parts))
        parts = list(parts)
        if sum(parts) != total or len(parts) != len(self.node.output) or min(parts) < 1:
            raise self.err(f"Split of {total} into {parts} for {len(self.node.output)} outputs")
        start = 0
        for k, size in enumerate(parts):
            sel = np.zeros((total, size))
            sel[np.arange(start, start + size), np.arange(size)] = 1.0
            start += size
            self._select(a, axis, sel, k, f"part {k} of Split")

    def _select(self, a: Val, axis: int, sel: np.ndarray, out_k: int, what: str) -> None:
        """Output `out_k` = a with axis `axis` re-indexed by the 0/1 matrix `sel` (old, new)."""
        name = self.node.output[out_k]
        axes = list(a.axes)
        new = None if sel.shape[1] == 1 else self.p.new_dim(sel.shape[1], f"{name}_{axis}")
        axes[axis] = new
        names = index_names(a.rank + 1)
        onames, r = names[:-1], names[-1]
        in_names = list(onames)
        in_names[axis] = r
        if a.axes[axis] is None:
            raise self.err("a Split or Concat along an axis of size 1")
        sv = self._constant_tensor(name + "_select", sel.reshape(
            [n for n in sel.shape if n != 1]), f"selects {what}")
        sv.axes[0] = self.p.unify(sv.axes[0], a.axes[axis], self.loc) if sel.shape[0] > 1 \
            else sv.axes[0]
        if new is not None:
            sv.axes[-1] = self.p.unify(sv.axes[-1], new, self.loc)
        sel_names = [r] + ([onames[axis]] if new is not None else [])
        y = self.p.new_val(name, axes)
        self.p.assign(y, f"sum[{r}]({a.access(in_names)} * {sv.access(sel_names)})", onames)
        self.vals[name] = y

    def concat(self) -> None:
        ins = [self.arg(i) for i in range(len(self.node.input))]
        axis = self._axis(ins[0])
        if any(v.rank != ins[0].rank for v in ins):
            raise self.err("Concat of operands of different ranks")
        sizes = [1 if v.axes[axis] is None else self.p.size[self.p.find(v.axes[axis])]
                 for v in ins]
        total = sum(sizes)
        others = self.broadcast([Val("", [None if k == axis else x for k, x in enumerate(v.axes)],
                                     [None] * v.rank) for v in ins])
        axes = list(others)
        axes[axis] = self.p.new_dim(total, f"{self.node.output[0]}_{axis}")
        names = index_names(ins[0].rank + len(ins))
        onames, red = names[:ins[0].rank], names[ins[0].rank:]
        terms, start = [], 0
        for k, (v, size) in enumerate(zip(ins, sizes)):
            sel = np.zeros((size, total))
            sel[np.arange(size), np.arange(start, start + size)] = 1.0
            start += size
            sv = self._constant_tensor(f"{self.node.output[0]}_part{k}",
                                       sel.reshape([n for n in sel.shape if n != 1]),
                                       f"places operand {k} of Concat")
            sv.axes[-1] = self.p.unify(sv.axes[-1], axes[axis], self.loc)
            if size > 1:
                sv.axes[0] = self.p.unify(sv.axes[0], v.axes[axis], self.loc)
            in_names = list(onames)
            in_names[axis] = red[k]
            x = v.access(in_names)
            # each operand placed by a statement of its own: lowering joins no reduction's
            # outer level with another operand
            part = self.out(axes, f"_at{k}")
            if size > 1:
                self.p.assign(part, f"sum[{red[k]}]({x} * {sv.access([red[k], onames[axis]])})",
                              onames)
            else:
                self.p.assign(part, f"{x} * {sv.access([onames[axis]])}", onames)
            terms.append(part.access(onames))
        y = self.out(axes)
        self.p.assign(y, " + ".join(terms), onames)
        self.bind(y)

    def pow(self) -> None:
        e = self.const_array(1).reshape(-1)
        if e.size != 1 or float(e[0]) not in (1.0, 2.0, 0.5, -0.5, -1.0):
            raise self.err("Pow with an exponent other than a constant 2, 1, 0.5, -0.5 or -1")
        form = {1.0: "{}", 2.0: "{0} * {0}", 0.5: "sqrt({})", -0.5: "rsqrt({})",
                -1.0: "1 / {}"}[float(e[0])]
        self.unary(form, float(e[0]) > 0)

    def gelu(self) -> None:
        if (self.attr("approximate", "none") or "none") not in ("none", b"none"):
            raise self.err("Gelu with approximate='tanh' is not supported (the exact form is)")
        self.unary("gelu({})", True)


def _num(x: float) -> str:
    r = repr(float(x))
    return f"({r})" if r.startswith("-") else r


def _compressed_last(order: int) -> str:
    if order == 1:
        return "sparse"
    if order == 2:
        return "csr"
    return "(" + ", ".join(["dense"] * (order - 1) + ["compressed"]) + ")"


def compressed_format(order: int) -> str:
    """The compressed format a sparse constant or input of `order` modes is declared with."""
    return _compressed_last(order)


#: Operator -> how it is translated. One place: docs/import.md's table is tested against it.
OPS = {
    "MatMul": lambda t: t.matmul(),
    "Gemm": lambda t: t.gemm(),
    "Einsum": lambda t: t.einsum(),
    "Add": lambda t: t.elementwise("+"),
    "Sub": lambda t: t.elementwise("-"),
    "Mul": lambda t: t.elementwise("*"),
    "Div": lambda t: t.elementwise("/"),
    "Relu": lambda t: t.unary("relu({})", True),
    "Gelu": lambda t: t.gelu(),
    "Sigmoid": lambda t: t.unary("sigmoid({})", False),
    "Tanh": lambda t: t.unary("tanh({})", True),
    "Exp": lambda t: t.unary("exp({})", False),
    "Sqrt": lambda t: t.unary("sqrt({})", True),
    "Reciprocal": lambda t: t.unary("1 / {}", False),
    "Neg": lambda t: t.unary("-{}", True),
    "Pow": lambda t: t.pow(),
    "Softmax": lambda t: t.softmax(),
    "LayerNormalization": lambda t: t.layer_norm(),
    "ReduceSum": lambda t: t.reduce("sum"),
    "ReduceMean": lambda t: t.reduce("mean"),
    "ReduceMax": lambda t: t.reduce("max"),
    "Where": lambda t: t.where(),
    "Not": lambda t: t.logical_not(),
    "Transpose": lambda t: t.transpose(),
    "Identity": lambda t: t.identity(),
    "Squeeze": lambda t: t.squeeze(False),
    "Unsqueeze": lambda t: t.squeeze(True),
    "Reshape": lambda t: t.reshape(),
    "Split": lambda t: t.split(),
    "Concat": lambda t: t.concat(),
}
