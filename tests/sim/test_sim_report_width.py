"""The simulate tables never cut a figure: at 80 and 120 columns (and the 110 used when stderr
is not a terminal) every number appears whole, however large."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from fuseflowc.sim.report import print_tables


def _kernel(name, base, nodes):
    b = lambda k: {"seg": base * k, "crd": base * k + 1, "vals": base * k + 2,  # noqa: E731
                   "total": 3 * base * k + 3}
    return {"graph": name, "cycles": base * 7 + 3, "flops": base * 5 + 1, "token_hops": base * 11,
            "bytes_read": b(3), "bytes_written": b(2),
            "nodes": [{"name": f"#{i} intersect(u{i})", "busy_cycles": base * 7 - i,
                       "stalled_cycles": base + i, "finish": base * 7 + i} for i in range(nodes)]}


def _stats(base):
    # five nodes in all: the busiest-nodes table shows them all
    ks = [_kernel("layer1_1", base, 3), _kernel("permute A -> A__T", base // 3 + 1, 2)]
    total = {"cycles": sum(k["cycles"] for k in ks), "flops": sum(k["flops"] for k in ks),
             "token_hops": sum(k["token_hops"] for k in ks)}
    for w in ("bytes_read", "bytes_written"):
        total[w] = {x: sum(k[w][x] for k in ks) for x in ("seg", "crd", "vals", "total")}
    return {"total": total, "kernels": ks}


def _figures(stats):
    out = set()
    for k in stats["kernels"] + [stats["total"]]:
        out |= {k["cycles"], k["flops"], k["token_hops"]}
        for w in ("bytes_read", "bytes_written"):
            out |= {k[w][x] for x in ("seg", "crd", "vals")}
    for k in stats["kernels"]:
        for n in k["nodes"]:
            out |= {n["busy_cycles"], n["stalled_cycles"], n["finish"]}
    return out


@pytest.mark.parametrize("width", [80, 110, 120])
@pytest.mark.parametrize("base", [7, 1_048_573, 12_345_678_901])
def test_every_figure_appears_whole(width, base):
    stats = _stats(base)
    buf = io.StringIO()
    print_tables(stats, Console(file=buf, width=width, color_system=None))
    text = buf.getvalue()
    assert "…" not in text
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width
    tokens = set(text.split())
    for f in _figures(stats):
        assert f"{f:,}" in tokens, f"{f:,} is not whole at width {width}:\n{text}"
    assert "permute A -> A__T" in text   # kernel names stay on one line


def test_one_table_when_it_fits():
    buf = io.StringIO()
    print_tables(_stats(7), Console(file=buf, width=120, color_system=None))
    assert "off-chip bytes" not in buf.getvalue()
    buf = io.StringIO()
    print_tables(_stats(12_345_678_901), Console(file=buf, width=80, color_system=None))
    assert "off-chip bytes" in buf.getvalue()
