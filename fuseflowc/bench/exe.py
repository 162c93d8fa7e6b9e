"""How the harnesses run `fuseflowc` as a separate process, as a user's shell pipeline does."""

from __future__ import annotations

import sys
from pathlib import Path


def fuseflowc_command() -> list[str]:
    """The command that runs this installation's `fuseflowc`: the console script next to this
    Python (the project's virtualenv) when it exists, else `python -m fuseflowc` with this
    Python (an environment without scripts, e.g. a plain `python -m` checkout run).

    Compile-time figures include the script's start-up, so harnesses that time commands
    (bench/compile_time.py) see what a user's shell sees."""
    script = Path(sys.executable).with_name("fuseflowc")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "fuseflowc"]
