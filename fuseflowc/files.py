"""Reading inputs (a path or `-` for stdin) and finding paths recorded in them.

Outputs are written by fuseflowc.outputs (checked first, atomic, all or nothing); `write_output`
and `output_dir` are re-exported here for the modules that import them from this one.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .diagnostics import Source, UserError
from .outputs import output_dir, write_output  # noqa: F401  (re-exported)


def read_source(path: str) -> Source:
    """Read a text input: a file path, or `-` for standard input. At most MAX_TEXT_BYTES are
    read (from /dev/zero too): a larger input is an error, not a MemoryError."""
    from .limits import MAX_TEXT_BYTES
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            stream = getattr(sys.stdin, "buffer", None)
            data = stream.read(MAX_TEXT_BYTES + 1) if stream is not None else \
                sys.stdin.read(MAX_TEXT_BYTES + 1).encode("utf-8", "surrogateescape")
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_TEXT_BYTES + 1)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a file") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read: {e.strerror}") from None
    except ValueError:  # a NUL in the name (from a file: an include, a recorded source)
        shown = path.replace("\0", "\\0")
        raise UserError(f"{shown}: not a file name (it holds a NUL character)") from None
    if len(data) > MAX_TEXT_BYTES:
        raise UserError(f"{name}: larger than {MAX_TEXT_BYTES >> 20} MiB, the most fuseflowc "
                        f"reads as text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"{name}: not a UTF-8 text file ({e.reason} at byte {e.start})") from None
    return Source(name, text.replace("\r\n", "\n").replace("\r", "\n"))  # universal newlines


def recorded_path(recorded: str, holder: str) -> Path | None:
    """Find a path recorded inside the file `holder` (e.g. a module's `source "..."`).

    A relative path is tried first against the holder's directory (a file that moved with its
    program) and then against the current directory (the recording command wrote it relative to
    its own cwd, as `fuseflowc fuse prog.ff | fuseflowc lower > elsewhere/g.samml` does). `holder`
    '-' (stdin) has only the current directory. Returns the first that exists, else None.
    """
    path = Path(recorded)
    if path.is_absolute():
        return path if _exists(path) else None
    bases = [Path(holder).parent] if holder != "-" else []
    bases.append(Path("."))
    for base in bases:
        if _exists(base / path):
            return base / path
    return None


def _exists(path: Path) -> bool:
    """Path.exists, False for a path the system cannot look up (a name too long, a loop of
    links: pathlib raises for those; found by fuzzing a recorded `source` path)."""
    try:
        return path.exists()
    except OSError:
        return False


def missing_recorded(what: str, recorded: str, holder: str) -> UserError:
    """The error for a recorded path that `recorded_path` did not find: says where it looked."""
    if Path(recorded).is_absolute() or holder == "-":
        return UserError(f"{what} {recorded}: no such file")
    here = Path(holder).parent
    return UserError(f"{what} {recorded}: no such file (looked beside {holder}, in {here}/, "
                     f"and in the current directory {os.getcwd()}/)")
