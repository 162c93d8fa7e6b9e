"""`python -m fuseflowc`: the `fuseflowc` command, for when its script is not on PATH."""

from .cli import main

if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess
    main(prog_name="fuseflowc")
