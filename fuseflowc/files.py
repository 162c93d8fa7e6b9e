"""Reading inputs (a path or `-` for stdin) and writing outputs atomically.

An output file or directory is written to a temporary sibling and moved into place only when the
whole write succeeded, so a failed run never leaves half a file or clobbers a good one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Iterator

from .diagnostics import Source, UserError


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
    if len(data) > MAX_TEXT_BYTES:
        raise UserError(f"{name}: larger than {MAX_TEXT_BYTES >> 20} MiB, the most fuseflowc "
                        f"reads as text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UserError(f"{name}: not a UTF-8 text file ({e.reason} at byte {e.start})") from None
    return Source(name, text.replace("\r\n", "\n").replace("\r", "\n"))  # universal newlines


def write_output(path: str | None, text: str) -> None:
    """Write `text` to `path` atomically, or to stdout when `path` is None or `-`."""
    if path is None or path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    target = Path(path)
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"{path}: directory {parent} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def output_dir(path: str) -> Iterator[Path]:
    """Yield a temporary directory that replaces `path` only if the block succeeds.

    An existing directory at `path` is replaced whole (its old contents are removed) on success and
    left untouched on failure.
    """
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UserError(f"{path}: exists and is not a directory")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"{path}: parent directory {parent} does not exist")
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=parent))
        os.replace(target, old / "d")
        os.replace(tmp, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(tmp, target)


def recorded_path(recorded: str, holder: str) -> Path | None:
    """Find a path recorded inside the file `holder` (e.g. a module's `source "..."`).

    A relative path is tried first against the holder's directory (a file that moved with its
    program) and then against the current directory (the recording command wrote it relative to
    its own cwd, as `fuseflowc fuse prog.ff | fuseflowc lower > elsewhere/g.samml` does). `holder`
    '-' (stdin) has only the current directory. Returns the first that exists, else None.
    """
    path = Path(recorded)
    if path.is_absolute():
        return path if path.exists() else None
    bases = [Path(holder).parent] if holder != "-" else []
    bases.append(Path("."))
    for base in bases:
        if (base / path).exists():
            return base / path
    return None


def missing_recorded(what: str, recorded: str, holder: str) -> UserError:
    """The error for a recorded path that `recorded_path` did not find: says where it looked."""
    if Path(recorded).is_absolute() or holder == "-":
        return UserError(f"{what} {recorded}: no such file")
    here = Path(holder).parent
    return UserError(f"{what} {recorded}: no such file (looked beside {holder}, in {here}/, "
                     f"and in the current directory {os.getcwd()}/)")
