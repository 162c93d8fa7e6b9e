"""What the estimator returns: FLOPs and off-chip bytes per kernel and in total.

The fields mirror the simulator's counters (sim/report.py): FLOPs as ALUs and reducers count
them, bytes read (seg, crd, vals fetched by scanners and arrays) and bytes written (the stored
arrays of every assembled output), all in bytes (elements x memory.element_bytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

_FIELDS = ("flops", "read_seg", "read_crd", "read_vals", "write_seg", "write_crd", "write_vals",
           "cycles", "hops", "onchip_bytes")


@dataclass
class Cost:
    """Expected FLOPs and bytes of one kernel (or a sum of kernels)."""

    flops: float = 0.0
    read_seg: float = 0.0
    read_crd: float = 0.0
    read_vals: float = 0.0
    write_seg: float = 0.0
    write_crd: float = 0.0
    write_vals: float = 0.0
    cycles: float = 0.0     # modelled cycles (timing.py); a sum over kernels run in sequence
    hops: float = 0.0       # tokens moved over channels (the simulator's token_hops)
    onchip_bytes: float = 0.0  # bytes accumulators move in and out of their buffers

    @property
    def bytes_read(self) -> float:
        """Bytes of seg, crd and vals read."""
        return self.read_seg + self.read_crd + self.read_vals

    @property
    def bytes_written(self) -> float:
        """Bytes of seg, crd and vals written."""
        return self.write_seg + self.write_crd + self.write_vals

    @property
    def bytes(self) -> float:
        """All off-chip bytes, read and written."""
        return self.bytes_read + self.bytes_written

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(*(getattr(self, f) + getattr(other, f) for f in _FIELDS))

    def to_json(self) -> dict:
        """The fields plus the byte totals, as plain floats (rounded to 0.1)."""
        out = {f.name: round(float(getattr(self, f.name)), 1) for f in fields(self)}
        out["bytes_read"] = round(float(self.bytes_read), 1)
        out["bytes_written"] = round(float(self.bytes_written), 1)
        out["bytes"] = round(float(self.bytes), 1)
        return out


@dataclass
class Estimate:
    """The estimate of a module: `kernels` (graph or permute-step name -> Cost, in execution
    order), `total` (their sum) and `ms`, the wall time the estimate took."""

    kernels: dict[str, Cost] = field(default_factory=dict)
    ms: float = 0.0
    # The statistics of every tensor after the module ran (inputs and what its graphs wrote):
    # `fuseflowc plan` costs a region on its own with its inputs' statistics from here.
    tensors: dict = field(default_factory=dict, repr=False, compare=False)
    #: graph -> (bytes its spills store, bytes its replays read): the cut streams of a graph
    #: split into configurations (opt -p map); only graphs that have any
    spills: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def total(self) -> Cost:
        """The sum over all kernels."""
        t = Cost()
        for c in self.kernels.values():
            t = t + c
        return t

    def to_json(self) -> dict:
        """{'total': ..., 'kernels': {name: ...}, 'ms': ...}."""
        return {"total": self.total.to_json(),
                "kernels": {k: c.to_json() for k, c in self.kernels.items()},
                "ms": round(self.ms, 3)}
