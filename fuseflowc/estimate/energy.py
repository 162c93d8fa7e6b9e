"""The estimated energy of a module: the estimator's expected counts priced by sim.energy, the
same function that prices the simulator's counters."""

from __future__ import annotations

from fuseflowc.sim.energy import PARTS, charge, configuration


def kernel_energy(name: str, cost, module, arch) -> dict:
    """Picojoules per part and in total (sim.energy.charge) of kernel `name` with the expected
    counts `cost` (an estimate.cost.Cost)."""
    return charge(arch, cost.flops, cost.hops, cost.onchip_bytes, cost.bytes,
                  *configuration(module, name))


def estimate_energy(kernels: dict, module, arch) -> tuple[dict, dict]:
    """({kernel: energy}, total energy) of `kernels` (name -> Cost, as Estimate.kernels)."""
    per = {name: kernel_energy(name, c, module, arch) for name, c in kernels.items()}
    total = {p: round(sum(e[p] for e in per.values()), 1)
             for p in [p for p, _ in PARTS] + ["total"]}
    return per, total
