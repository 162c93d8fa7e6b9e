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


def recorded_base(holder: str | None) -> Path:
    """The directory a path recorded inside `holder` is written relative to: the holder file's
    directory, or the current directory when the holder is a stream (`-` or None: stdin or
    stdout; the commands of a pipeline share one current directory).

    This is the one rule for recorded paths (a module's or a fused file's `source "..."`):
    `fuse`, `lower` and `opt` write them relative to their output this way, and `simulate`
    reads them back relative to their input the same way (docs/samml.md, "Recorded paths")."""
    if holder is None or holder == "-":
        return Path(".")
    return Path(holder).parent


def recorded_path(recorded: str, holder: str) -> Path | None:
    """Find a path recorded inside `holder` (e.g. a module's `source "..."`): relative to
    `recorded_base(holder)`, and for a file also relative to the current directory (a module
    written to stdout records a cwd-relative path, and `> elsewhere/g.samml` cannot tell the
    command where it goes). Returns the first that exists, else None."""
    path = Path(recorded)
    if path.is_absolute():
        return path if _exists(path) else None
    bases = [recorded_base(holder)]
    if holder not in (None, "-"):
        bases.append(Path("."))
    for base in bases:
        if _exists(base / path):
            return base / path
    return None


def rebase_recorded(recorded: str | None, holder_in: str | None,
                    holder_out: str | None) -> str | None:
    """A path recorded in `holder_in`, rewritten to name the same file from `holder_out` (see
    `recorded_base`; the file is the one `recorded_path` finds, or where the rule says it
    should be when it finds none). Absolute paths, and relative paths that name the same file
    from both, are kept as they are; others become a relative POSIX path from the output's
    directory, computed lexically (the same layout gives the same bytes)."""
    if recorded is None or os.path.isabs(recorded):
        return recorded
    found = recorded_path(recorded, holder_in or "-")
    where = os.path.abspath(found if found is not None
                            else os.path.join(recorded_base(holder_in), recorded))
    dst_base = os.path.abspath(recorded_base(holder_out))
    if where == os.path.normpath(os.path.join(dst_base, recorded)):
        return recorded
    return Path(os.path.relpath(where, dst_base)).as_posix()


def _exists(path: Path) -> bool:
    """Path.exists, False for a path the system cannot look up (a name too long, a loop of
    links: pathlib raises for those; found by fuzzing a recorded `source` path)."""
    try:
        return path.exists()
    except OSError:
        return False


def missing_recorded(what: str, recorded: str, holder: str, option: str = "") -> UserError:
    """The error for a recorded path that `recorded_path` did not find: says where it looked,
    and `option` (e.g. "--program PROG") names the way to give the file instead."""
    name = f"; name it with {option}" if option else ""
    if Path(recorded).is_absolute():
        return UserError(f"{what} {recorded}: no such file{name}")
    if holder == "-":
        return UserError(f"{what} {recorded}: no such file in the current directory "
                         f"{os.getcwd()}/ (read from stdin, the path is taken relative to the "
                         f"current directory){name}")
    here = Path(holder).parent
    return UserError(f"{what} {recorded}: no such file (looked beside {holder}, in {here}/, "
                     f"and in the current directory {os.getcwd()}/){name}")
