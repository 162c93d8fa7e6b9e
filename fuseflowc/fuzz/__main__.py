"""python -m fuseflowc.fuzz: run the fuzzer (see fuseflowc.fuzz.driver)."""

import os
import sys

# one BLAS thread per case: cases run side by side, and threads would only add address space
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

from .driver import main  # noqa: E402

sys.exit(main())
