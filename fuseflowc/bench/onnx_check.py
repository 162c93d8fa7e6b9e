"""Each model of the ONNX zoo imported, compiled unfused and fused, simulated with the reference
check, and its output compared with onnxruntime's on random inputs with pruned (all-zero) rows
and empty graph rows (a node without neighbours, a query with only its own key).

    python -m fuseflowc.bench.onnx_check            # a markdown table of every model

onnxruntime is the oracle (a test dependency, `fuseflowc[test]`): no one here wrote it.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

from ..importer.zoo import ZOO

#: Compiled variants: name -> pipeline.CompileOptions keyword arguments.
VARIANTS = {"unfused": {"unfused": True}, "fused": {},
            "fused, inline-widened": {"inline_widened": True}}


def model_inputs(imported, seed: int) -> dict[str, np.ndarray]:
    """Random inputs (program tensor name -> array in the ONNX shape) with an all-zero row in
    every float input of two or more dims (a pruned row; in an adjacency, a node without
    neighbours) and, in a boolean mask, a row holding only its diagonal."""
    from ..importer.data import random_inputs
    vals = random_inputs(imported.inputs, seed)
    for a in vals.values():
        if a.ndim >= 2 and a.shape[-2] > 1:
            if a.dtype == bool:
                a[..., 1, :] = False
                if a.shape[-1] == a.shape[-2]:
                    a[..., 1, 1] = True
            else:
                a[..., 1, :] = 0
    return vals


def check_model(name: str, dtype=np.float64, seed: int = 1, variants=VARIANTS,
                optional=None) -> dict:
    """Import zoo model `name`, compile each variant, simulate with --check, compare with
    onnxruntime. Returns {"ops", "cycles": {variant: cycles}, "diff": largest |ours - ort| /
    (1 + |ort|), "problems": [...]}."""
    build, opts, sizes = ZOO[name]
    return check_proto(build(dtype), sizes, seed, variants, optional, **opts)


def check_proto(proto, sizes: dict, seed: int = 1, variants=VARIANTS, optional=None,
                **opts) -> dict:
    """`check_model` for an ONNX model (a ModelProto); `opts`: import_model's keywords;
    `optional`: variants that may be refused by the compiler (their cycles are then None)."""
    from ..diagnostics import UserError
    optional = optional or {}
    import onnx
    import onnxruntime as ort

    from .. import pipeline
    from ..importer.build import import_model
    from ..importer.data import write_data
    from ..importer.model import read_model

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.onnx"
        onnx.save(proto, str(path))
        imported = import_model(read_model(str(path)), sizes, **opts)
        (Path(tmp) / "model.ff").write_text(imported.text)
        data = Path(tmp) / "data"
        data.mkdir()
        values = model_inputs(imported, seed)
        write_data(data, imported, values)
        feeds = {imported.inputs[k][0]: v for k, v in values.items()}
        so = ort.SessionOptions()
        so.log_severity_level = 3  # no warnings about initializers a test model leaves unused
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        want = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
        out = {"ops": sorted(set(imported.ops)), "cycles": {}, "diff": 0.0, "problems": []}
        for variant, kw in variants.items():
            inp = pipeline.load(str(Path(tmp) / "model.ff"), pipeline.CompileOptions(**kw))
            try:
                compiled = pipeline.compile(inp, pipeline.CompileOptions(**kw))
            except UserError as e:
                if not optional.get(variant):
                    raise
                out["cycles"][variant] = None  # a variant the compiler refuses, with its reason
                out["refused"] = out.get("refused", []) + [f"{variant}: {e}"]
                continue
            inputs, sz = pipeline.load_data(compiled.module, str(data))
            result = pipeline.simulate(compiled.module, inputs, sz)
            ref = pipeline.reference(compiled.program, str(data), sz)
            out["problems"] += [f"{variant}: {p}" for p in
                                pipeline.check(compiled.module, result, ref)]
            out["cycles"][variant] = int(result.cycles)
            for oname, (tensor, _) in imported.outputs.items():
                got = result.tensors[tensor].to_dense()
                ref_v = np.asarray(want[oname], dtype=np.float64).reshape(got.shape)
                out["diff"] = max(out["diff"], difference(got, ref_v))
        return out


def difference(got: np.ndarray, want: np.ndarray) -> float:
    """The largest |got - want| / (1 + |want|); NaN and infinities must be in the same places
    (inf where NaN is)."""
    same_special = (np.isnan(got) & np.isnan(want)) | (np.isinf(got) & (got == want))
    if (~np.isfinite(got) | ~np.isfinite(want))[~same_special].any():
        return float("inf")
    g, w = got[~same_special], want[~same_special]
    return float(np.max(np.abs(g - w) / (1 + np.abs(w)), initial=0.0))


#: The real `torch.onnx.export` outputs committed in the checkout (tests/importer/torch, made by
#: export_torch.py there), with their import options: the GCN's adjacency input stored as CSR,
#: the pruned MLP's weights (dense initializers with zeros) compressed below density 0.6.
TORCH_DIR = Path(__file__).resolve().parents[2] / "tests" / "importer" / "torch"
TORCH_MODELS = {
    "torch_pruned_mlp": {"threshold": 0.6},
    "torch_gcn": {"formats": {"a": "csr"}},
    "torch_attention": {},
}

#: onnxruntime has no double-precision Erf, which its Gelu expands to: these run in float32.
NO_FLOAT64 = {"gpt3_bigbird"}


#: Variants the compiler may refuse for a model (lowering cannot order every widened graph).
OPTIONAL = {"fused, inline-widened": True}


def _cycles(r: dict) -> str:
    for why in r.get("refused", []):
        print(f"  refused: {why.splitlines()[0][:200]}", file=sys.stderr)
    return " | ".join("refused" if r["cycles"][v] is None else f"{r['cycles'][v]:,}"
                      for v in VARIANTS)


def main(argv=None) -> int:
    print("| model | operators | " + " | ".join(f"cycles {v}" for v in VARIANTS)
          + " | max diff float64 | max diff float32 |")
    print("|---|---|" + "---:|" * (len(VARIANTS) + 2))
    for name in ZOO:
        r32 = check_model(name, np.float32, variants=VARIANTS if name in NO_FLOAT64 else
                          {"fused": {}}, optional=OPTIONAL)
        r64 = r32 if name in NO_FLOAT64 else check_model(name, np.float64, optional=OPTIONAL)
        cyc = _cycles(r64)
        d64 = "n/a" if name in NO_FLOAT64 else f"{r64['diff']:.1e}"
        print(f"| {name} | {', '.join(r64['ops'])} | {cyc} | {d64} | {r32['diff']:.1e} |",
              flush=True)
        for p in r64["problems"] + r32["problems"]:
            print(f"  problem: {p}", file=sys.stderr)
    if TORCH_DIR.is_dir():
        import onnx
        for name, opts in TORCH_MODELS.items():
            r = check_proto(onnx.load(str(TORCH_DIR / f"{name}.onnx")), {}, 3, VARIANTS,
                            OPTIONAL, **opts)
            cyc = _cycles(r)
            print(f"| {name} (float32) | {', '.join(r['ops'])} | {cyc} | n/a | "
                  f"{r['diff']:.1e} |", flush=True)
            for p in r["problems"]:
                print(f"  problem: {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
