"""Build script for the optional compiled simulation engine (everything else is in
pyproject.toml).

`fuseflowc.sim._fast` (sources in sim/cpp/, one translation unit: sim/cpp/all.cpp) is a C++17 pybind11
extension. It is optional: when it cannot be built (no C++ compiler, a failing compile, or
FUSEFLOWC_NO_EXT=1 in the environment) fuseflowc installs without it and `fuseflowc simulate`
runs the Python engine, saying so in one line. FUSEFLOWC_REQUIRE_EXT=1 (set by the Makefile:
developers must see a failing compile) makes a failed build an error.
"""

import os
from pathlib import Path

from setuptools import setup

ext_modules = []
if os.environ.get("FUSEFLOWC_NO_EXT", "") not in ("", "0"):
    print("FUSEFLOWC_NO_EXT is set: not building the compiled simulation engine (fuseflowc.sim._fast)")
else:
    try:
        from pybind11.setup_helpers import Pybind11Extension
    except ImportError:   # a build without build isolation and without pybind11
        print("pybind11 is not installed: not building the compiled simulation engine")
    else:
        here = Path(__file__).parent
        ext_modules.append(Pybind11Extension(
            "fuseflowc.sim._fast",
            ["sim/cpp/all.cpp"],
            depends=sorted(str(p.relative_to(here)) for p in (here / "sim" / "cpp").glob("*.?pp")),
            cxx_std=17,
            # floating point exactly as Python computes it: no contraction into FMAs, no
            # fast-math reassociation (results must equal the Python engine's bit for bit)
            extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math"],
            optional=os.environ.get("FUSEFLOWC_REQUIRE_EXT", "") in ("", "0"),
        ))

setup(ext_modules=ext_modules)
