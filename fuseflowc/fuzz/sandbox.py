"""A case's directory: writing its files, and what changed in it during a run.

A case's files map a path relative to its working directory to an Entry: bytes (a regular file,
mode 0644) or a Special (an empty directory, a symbolic link, a FIFO). `snapshot` records every
path under a directory with its type, mode and content hash, without following links or opening
anything that is not a regular file; `diff` compares two snapshots.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Special:
    """A file that is no plain file: kind 'dir' (empty directory), 'symlink' (to `target`) or
    'fifo'."""

    kind: str
    target: str = ""


Entry = bytes | Special


def materialize(root: Path, files: dict[str, Entry]) -> None:
    """Create `files` under `root` (directories as needed; regular files 0644, dirs 0755)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, entry in sorted(files.items()):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(entry, bytes):
            p.write_bytes(entry)
            os.chmod(p, 0o644)
        elif entry.kind == "dir":
            p.mkdir(exist_ok=True)
        elif entry.kind == "symlink":
            os.symlink(entry.target, p)
        elif entry.kind == "fifo":
            os.mkfifo(p, 0o644)


@dataclass(frozen=True)
class Stat:
    """One path as a snapshot sees it: kind (file, dir, symlink, other), permission bits, and a
    content hash (files), the link's target (symlinks) or ''."""

    kind: str
    mode: int
    digest: str


def snapshot(root: Path) -> dict[str, Stat]:
    """Every path under `root` (relative, '/'-separated), not following symbolic links."""
    out: dict[str, Stat] = {}
    if not root.exists():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            try:
                st = os.lstat(p)
            except OSError:
                continue
            mode = stat.S_IMODE(st.st_mode)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = Stat("symlink", mode, os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = Stat("dir", mode, "")
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.blake2b(digest_size=16)
                try:
                    with open(p, "rb") as f:
                        for chunk in iter(lambda: f.read(1 << 20), b""):
                            h.update(chunk)
                except OSError:
                    pass
                out[rel] = Stat("file", mode, h.hexdigest())
            else:
                out[rel] = Stat("other", mode, "")
    return out


@dataclass
class Changes:
    """Paths added, removed and modified (content, kind or mode) between two snapshots."""

    added: list[str]
    removed: list[str]
    modified: list[str]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.modified)


def diff(before: dict[str, Stat], after: dict[str, Stat]) -> Changes:
    """What changed from `before` to `after` (sorted paths)."""
    return Changes(added=sorted(set(after) - set(before)),
                   removed=sorted(set(before) - set(after)),
                   modified=sorted(p for p in set(before) & set(after) if before[p] != after[p]))
