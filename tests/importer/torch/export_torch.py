"""Export the committed PyTorch models (tests/importer/torch/*.onnx) with torch.onnx.export.

PyTorch is not a dependency of fuseflowc (its wheels pull in CUDA); this script was run once, in
a scratch virtual environment outside the repository, with torch's CPU wheel:

    python3 -m venv /tmp/torchenv
    /tmp/torchenv/bin/pip install torch==2.13.0 onnx onnxscript   # the +cpu wheel
    /tmp/torchenv/bin/python tests/importer/torch/export_torch.py tests/importer/torch

It writes small float32 models: a magnitude-pruned MLP (nn.Linear, torch.nn.utils.prune), a GCN
layer pair on a dense adjacency input, and a two-head masked self-attention block (view /
transpose head split, masked_fill(-inf), softmax, LayerNorm, GELU). tests/importer/test_torch.py
imports each and compares it with onnxruntime.
"""

import sys
from pathlib import Path

import torch
from torch import nn
from torch.nn.utils import prune


class PrunedMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 6), nn.Linear(6, 3)
        prune.l1_unstructured(self.fc1, "weight", amount=0.6)
        prune.ln_structured(self.fc1, "weight", amount=0.34, n=1, dim=0)  # pruned neurons
        prune.remove(self.fc1, "weight")

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(8, 6), nn.Linear(6, 3)

    def forward(self, a, x):
        h = torch.relu(a @ self.l1(x))
        return a @ self.l2(h)


class MaskedAttention(nn.Module):
    def __init__(self, e=8, heads=2):
        super().__init__()
        self.h, self.d = heads, e // heads
        self.ln1, self.ln2 = nn.LayerNorm(e), nn.LayerNorm(e)
        self.qkv, self.proj = nn.Linear(e, 3 * e), nn.Linear(e, e)
        self.ff1, self.ff2 = nn.Linear(e, 2 * e), nn.Linear(2 * e, e)

    def forward(self, x, mask):
        s, e = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(e, dim=1)
        q = q.view(s, self.h, self.d).transpose(0, 1)
        k = k.view(s, self.h, self.d).transpose(0, 1)
        v = v.view(s, self.h, self.d).transpose(0, 1)
        scores = (q @ k.transpose(1, 2)) / self.d ** 0.5
        p = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        o = (p @ v).transpose(0, 1).reshape(s, e)
        x = x + self.proj(o)
        return x + self.ff2(nn.functional.gelu(self.ff1(self.ln2(x))))


def main(out: str) -> None:
    torch.manual_seed(0)
    d = Path(out)
    models = {
        "torch_pruned_mlp": (PrunedMLP(), (torch.randn(5, 8),), ["x"]),
        "torch_gcn": (GCN(), (torch.rand(12, 12), torch.randn(12, 8)), ["a", "x"]),
        "torch_attention": (MaskedAttention(), (torch.randn(16, 8),
                                                torch.rand(16, 16) < 0.4), ["x", "mask"]),
    }
    for name, (model, args, names) in models.items():
        model.eval()
        torch.onnx.export(model, args, str(d / f"{name}.onnx"), input_names=names,
                          output_names=["y"], dynamo=True, external_data=False)
        print(d / f"{name}.onnx")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).parent))
