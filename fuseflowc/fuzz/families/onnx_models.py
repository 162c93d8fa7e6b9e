"""The fuzz family of `fuseflowc import`: mutated ONNX models.

A case takes a model of the ONNX zoo (fuseflowc.importer.zoo, built in memory, float64 or
float32), and maybe breaks it in one way a user's file or a broken exporter could: in its bytes
(truncated, bytes flipped, garbage appended, empty, a directory where the file should be), or in
its structure (an operator no one imports, another domain, an old or unknown opset, a symbolic,
zero, negative or huge input dim, an initializer whose dims lie about its data, a missing
initializer or node input, a wrong element type, odd attribute values (axes, perms, epsilons,
transposes), NaN in a weight, external data pointing outside the model's directory or nowhere).
Then `import MODEL [-o FILE] [--data DIR] [--size ...] [--format ...] [--sparse-threshold D]`
with good or bad option values. The classifier's rules hold as for every command: no traceback,
no hang, nothing written by a failed import.

Registered in fuseflowc/fuzz/families (the `import` family); `build` is its builder.
"""

from __future__ import annotations

import random

MODEL = "model.onnx"
_ODD_OPS = ("Cos", "Conv", "LSTM", "Foo", "", "Loop", "If", "Scan", "Gather", "Shape")
_ODD_DIMS = ("sym", 0, -1, 10**12, 2**62, 1)


def _proto(rng: random.Random):
    import numpy as np

    from ...importer.zoo import ZOO
    name = rng.choice(sorted(ZOO))
    build, opts, sizes = ZOO[name]
    return name, build(rng.choice((np.float64, np.float32)), rng.randrange(4)), opts, sizes


def _mutate_proto(m, rng: random.Random) -> str:
    """Break the model `m` in place in one way; returns what was done."""
    from onnx import TensorProto, helper
    g = m.graph
    how = rng.choice(("op", "domain", "opset", "dim", "init-dims", "drop-init", "input-name",
                      "elem-type", "attr", "nan", "external", "dup-output", "no-output"))
    node = rng.choice(list(g.node))
    if how == "op":
        node.op_type = rng.choice(_ODD_OPS)
    elif how == "domain":
        node.domain = rng.choice(("com.microsoft", "ai.onnx.ml", "x"))
        m.opset_import.append(helper.make_opsetid(node.domain, 1))
    elif how == "opset":
        m.opset_import[0].version = rng.choice((1, 7, 11, 12, 99, 10**6))
    elif how == "dim":
        inp = rng.choice(list(g.input))
        dims = inp.type.tensor_type.shape.dim
        if dims:
            d = rng.choice(list(dims))
            v = rng.choice(_ODD_DIMS)
            if v == "sym":
                d.dim_param = rng.choice(("batch", "N", "", "a b", "9x"))
            else:
                d.dim_value = v
    elif how == "init-dims" and g.initializer:
        t = rng.choice(list(g.initializer))
        del t.dims[:]
        t.dims.extend(rng.choice(([3, 3], [10**9, 10**9], [0], [2, 2, 2], [])))
    elif how == "drop-init" and g.initializer:
        del g.initializer[rng.randrange(len(g.initializer))]
    elif how == "input-name" and node.input:
        node.input[rng.randrange(len(node.input))] = rng.choice(("missing", "", node.output[0]))
    elif how == "elem-type":
        inp = rng.choice(list(g.input))
        inp.type.tensor_type.elem_type = rng.choice((TensorProto.INT64, TensorProto.STRING,
                                                     TensorProto.FLOAT16, TensorProto.BOOL, 99))
    elif how == "attr":
        del node.attribute[:]
        key, val = rng.choice((("axis", 7), ("axis", -9), ("perm", [0, 0]), ("epsilon", float("nan")),
                               ("transA", 2), ("keepdims", 5), ("alpha", float("inf")),
                               ("equation", "ij,jk->ikk"), ("axes", [9])))
        node.attribute.append(helper.make_attribute(key, val))
    elif how == "nan" and g.initializer:
        from onnx import numpy_helper
        t = rng.choice(list(g.initializer))
        a = numpy_helper.to_array(t).copy()
        if a.size and a.dtype.kind == "f":
            a.reshape(-1)[0] = rng.choice((float("nan"), float("inf")))
            t.CopyFrom(numpy_helper.from_array(a, t.name))
    elif how == "external" and g.initializer:
        t = rng.choice(list(g.initializer))
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        e = t.external_data.add()
        e.key, e.value = "location", rng.choice(("../outside.bin", "/etc/hostname", "nowhere.bin",
                                                 "weights.bin"))
        t.ClearField("raw_data")
    elif how == "dup-output":
        g.output.add().CopyFrom(g.output[0])
    elif how == "no-output":
        del g.output[:]
    return how


def build(b, family) -> object:
    """Fill the case of the fuzz builder `b` (fuseflowc.fuzz.cases._Builder) for `import`."""
    c = b.case
    c.command = family.command
    rng = b.rng
    name, m, opts, sizes = _proto(rng)
    c.notes.append(f"zoo model {name}")
    data = m.SerializeToString()
    if b.chance(0.35):
        c.notes.append(f"{MODEL}: {_mutate_proto(m, rng)}")
        data = m.SerializeToString()
    if b.chance(0.15):
        how = rng.choice(("truncate", "flip", "garbage", "empty"))
        if how == "truncate":
            data = data[:rng.randrange(len(data))]
        elif how == "flip":
            data = bytearray(data)
            for _ in range(rng.randint(1, 8)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            data = bytes(data)
        elif how == "garbage":
            data = data + bytes(rng.randrange(256) for _ in range(16))
        else:
            data = b""
        c.notes.append(f"{MODEL}: bytes {how}")
    c.files[MODEL] = data
    if b.chance(0.05):
        from ..sandbox import Special
        c.files[MODEL] = Special("dir")
        c.notes.append(f"{MODEL}: a directory")
    c.files["weights.bin"] = bytes(64)
    c.inputs.append(MODEL)
    c.args.append((MODEL,))
    for dim, n in sizes.items():
        if b.good(0.8):
            b.opt("--size", f"{dim}={n if b.good(0.8) else b.int_value()}")
    for t, fmt in opts.get("formats", {}).items():
        if b.good(0.8):
            b.opt("--format", f"{t}={fmt if b.good(0.8) else rng.choice(('nope', 'coo', ''))}")
    if b.chance(0.3):
        b.opt("--sparse-threshold", b.float_value())
    if b.chance(0.2):
        b.opt("--unfused")
    if b.chance(0.3):
        b.opt("--seed", b.int_value())
    if b.chance(0.7):
        b.output("-o", "file")
    if b.chance(0.5):
        b.output("--data", "dir")
    return c
