"""Design-space sweeps: a spec file describes a grid of configurations (`spec`), expanded with
stable ids (`grid`), each run start to finish in a worker (`worker`) by the runner (`runner`),
one row each in a CSV or JSON-lines results file (`results`); `report` summarizes the file.

Public API: parse_spec, expand, run_sweep, read_rows, run_config, build_report.
"""

from __future__ import annotations

from .grid import config_id, expand
from .results import read_rows
from .runner import run_sweep
from .spec import parse_spec
from .worker import run_config

__all__ = ["config_id", "expand", "parse_spec", "read_rows", "run_config", "run_sweep"]
