"""python -m fuseflowc.bench: run the benchmark (see fuseflowc.bench.driver)."""

import sys

from .driver import main

sys.exit(main())
