"""`fuseflowc estimate`: FLOPs and off-chip bytes of a SAMML module, analytically (no simulation).

    from fuseflowc.estimate import estimate_module, DataStats
    stats = DataStats.from_dir("data/", module)          # or DataStats.from_values(module, sizes, densities)
    est = estimate_module(module, stats)
    est.total.flops, est.total.bytes, est.kernels["gcn"].read_crd

See docs/estimate.md for the model and its assumptions.
"""

from .cost import Cost, Estimate
from .model import estimate_module
from .stats import DataStats, LevelStats, TensorStats

__all__ = ["Cost", "DataStats", "Estimate", "LevelStats", "TensorStats", "estimate_module"]
