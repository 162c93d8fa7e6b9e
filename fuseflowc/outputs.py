"""Every file and directory a command writes goes through here: checked first, all or nothing.

A command declares its outputs before it does its work (`Outputs.file`, `Outputs.directory`);
each is checked at once, so a bad `-o` fails before a long run instead of after it:

- a file output must not be an existing directory (or `.`, `..`, a name ending in `/`, or ''),
  its directory must exist, and a read-only file is not replaced;
- no output may be an input of the command, a directory output may not contain one
  (`simulate G --data D -o D`, `report D/r.csv -o D`), and no output may be inside an input
  directory (`estimate G --data D --json-out D/A.npz`); two outputs may not be the same file or
  one inside the other;
- an existing output directory is written into only if fuseflowc wrote it (see below).

Then, inside `with outputs:`, the command stages the content: a file goes to a temporary sibling
(`.NAME.XXXX.tmp`), a directory is filled in a temporary directory. Nothing the user sees has
changed yet. Leaving the block normally moves every staged output into place (SIGINT and SIGTERM
are held off from the first move to the last, then acted on); leaving it by an exception, Ctrl-C
or SIGTERM removes every temporary file and directory and changes nothing. Standard output
(`-` or no `-o`) is written last, after the files.

Modes are those of a plain `open(path, "w")` and `mkdir`: files 0666 & ~umask (also when an
existing file is replaced), new directories 0777 & ~umask. An existing non-regular file
(`/dev/null`, a FIFO, a terminal) is written in place, as `open` would, never replaced.

Output directories. fuseflowc recognizes a directory it wrote by its manifest, MANIFEST
(`.fuseflowc-manifest`): one `<sha256>  <path>` line per file it wrote (the format of sha256sum,
so `cd DIR && sha256sum -c .fuseflowc-manifest` checks it). An existing directory is accepted
as an output only when it is empty or holds nothing but the files its manifest lists, unchanged;
the command's files then replace those (files it no longer writes are removed), in place, so
`-o .` works and the directory keeps its own mode. Anything else in it (a user's file, a file
changed since fuseflowc wrote it, a subdirectory, a symbolic link) is refused with its name:
fuseflowc never deletes what it did not write. A new directory is filled beside its final place
and renamed into it whole.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import stat
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .diagnostics import UserError

MANIFEST = ".fuseflowc-manifest"
#: Prefix of the staging directory made inside an existing output directory.
STAGING = ".fuseflowc-staging."


def _umask() -> int:
    mask = os.umask(0o022)  # the only portable way to read it is to set it
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode `open(path, "w")` gives a new file: 0666 & ~umask."""
    return 0o666 & ~_umask()


def dir_mode() -> int:
    """The mode `mkdir` gives a new directory: 0777 & ~umask."""
    return 0o777 & ~_umask()


def _real(path: str) -> Path:
    return Path(os.path.realpath(path))


def _shown_parent(path: str) -> str:
    return os.path.dirname(path.rstrip("/")) or "."


def writable(path) -> bool:
    """Whether this process may write `path` (a file, or a directory's entries) and its mode
    says anyone may: root is allowed everything (os.access says yes), so a file whose mode has
    no write bit (chmod a-w) would be replaced by root although docs/outputs.md says a read-only
    file is not replaced; the mode bits are checked here as well."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return os.access(path, os.W_OK) and bool(mode & 0o222)


def _check_parent(path: str, option: str, target: Path) -> None:
    """The directory that will hold `target` exists and is writable."""
    parent = target.parent
    shown = _shown_parent(path)
    if not parent.exists():
        raise UserError(f"{option} {path}: directory {shown} does not exist")
    if not parent.is_dir():
        raise UserError(f"{option} {path}: {shown} is not a directory")
    if not (writable(parent) and os.access(parent, os.X_OK)):
        raise UserError(f"{option} {path}: cannot write in directory {shown} (permission denied)")


class OutFile:
    """One file output: a path, or standard output (`-` / None)."""

    def __init__(self, path: str | None, option: str):
        self.name = "-" if path is None else str(path)
        self.option = option
        self.stdout = self.name == "-"
        self.direct = False             # an existing device or FIFO: written in place
        self.target: Path | None = None
        self._tmp: Path | None = None
        self._data: bytes | None = None

    def resolve(self) -> None:
        """The path that will be written (a symbolic link is followed, as `open` does)."""
        if not self.stdout and self.name != "":
            self.target = _real(self.name)

    def check(self) -> None:
        """Refuse a file output that cannot be written as a file (see the module doc)."""
        if self.stdout:
            return
        p, opt = self.name, self.option
        if p == "":
            raise UserError(f"{opt} '': an empty file name")
        if p.endswith("/") or os.path.basename(p) in (".", ".."):
            raise UserError(f"{opt} {p}: is a directory; {opt} takes a file name")
        try:
            st = os.stat(p)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise UserError(f"{opt} {p}: cannot write: {e.strerror}") from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise UserError(f"{opt} {p}: is a directory; {opt} takes a file name")
        if st is not None and not stat.S_ISREG(st.st_mode):
            self.direct, self.target = True, Path(p)
            return
        if st is None and os.path.islink(p):
            raise UserError(f"{opt} {p}: is a symbolic link to a missing file")
        _check_parent(p, opt, self.target)
        if st is not None and not writable(self.target):
            raise UserError(f"{opt} {p}: the file is read-only; not replacing it")

    def write(self, content: str | bytes) -> None:
        """Stage the whole content of the file (a later call replaces it)."""
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        if self.stdout or self.direct:
            self._data = data
            return
        with open(self.staged_path(), "wb") as f:
            f.write(data)

    def staged_path(self) -> Path:
        """A temporary file beside the target, for a writer that needs a path (Graphviz)."""
        assert not self.stdout and not self.direct, "stdout and devices have no staged path"
        if self._tmp is None:
            fd, tmp = tempfile.mkstemp(prefix=f".{self.target.name}.", suffix=".tmp",
                                       dir=self.target.parent)
            self._tmp = Path(tmp)
            try:
                os.fchmod(fd, file_mode())  # mkstemp makes it 0600
            finally:
                os.close(fd)
        return self._tmp

    def commit(self) -> None:
        if self._tmp is not None:
            os.replace(self._tmp, self.target)
            self._tmp = None
        elif self._data is not None and self.direct:
            with open(self.target, "wb") as f:
                f.write(self._data)

    def commit_stdout(self) -> None:
        if self.stdout and self._data is not None:
            sys.stdout.flush()
            out = getattr(sys.stdout, "buffer", None)
            if out is not None:
                out.write(self._data)
                out.flush()
            else:  # a text-only stream (a test harness)
                sys.stdout.write(self._data.decode("utf-8"))
            sys.stdout.flush()

    def discard(self) -> None:
        if self._tmp is not None:
            _unlink(self._tmp)
            self._tmp = None
        self._data = None


class OutDir:
    """One directory output (see the module doc for when an existing directory is accepted)."""

    def __init__(self, path: str, option: str):
        self.name = str(path)
        self.option = option
        self.target: Path | None = None
        self.existing = False
        self._staging: Path | None = None

    def resolve(self) -> None:
        if self.name not in ("", "-"):
            self.target = _real(self.name)

    def check(self) -> None:
        p, opt = self.name, self.option
        if p == "":
            raise UserError(f"{opt} '': an empty directory name")
        if p == "-":
            raise UserError(f"{opt} -: a directory cannot be written to standard output")
        if os.path.islink(p) and not os.path.exists(p):
            raise UserError(f"{opt} {p}: is a symbolic link to a missing directory")
        try:
            exists = self.target.exists()
        except OSError as e:  # a name too long, a loop of links (Path.exists raises)
            raise UserError(f"{opt} {p}: cannot write: {e.strerror}") from None
        if exists:
            if not self.target.is_dir():
                raise UserError(f"{opt} {p}: exists and is not a directory")
            self.existing = True
            if not (writable(self.target) and os.access(self.target, os.X_OK)):
                raise UserError(f"{opt} {p}: cannot write in it (permission denied)")
            self.owned_files()
        else:
            self.existing = False
            _check_parent(p, opt, self.target)

    def owned_files(self) -> dict[str, str]:
        """The manifest of the existing directory; refuses it if it holds anything else."""
        listed, foreign = scan_output_dir(self.target)
        if foreign:
            shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more"
                                              if len(foreign) > 5 else "")
            why = "" if (self.target / MANIFEST).is_file() else f"; it has no {MANIFEST}"
            raise UserError(f"{self.option} {self.name}: the directory holds files fuseflowc "
                            f"did not write ({shown}{why}); fuseflowc writes only into a new or "
                            f"empty directory or one it wrote (docs/outputs.md), and never "
                            f"deletes anything else: move them away or choose another directory")
        return listed

    def path(self) -> Path:
        """The staging directory to fill (made on first use)."""
        if self._staging is None:
            if self.existing:
                self._staging = Path(tempfile.mkdtemp(prefix=STAGING, dir=self.target))
            else:
                self._staging = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.",
                                                      suffix=".tmp", dir=self.target.parent))
            os.chmod(self._staging, dir_mode())  # mkdtemp makes it 0700
        return self._staging

    def prepare(self) -> None:
        """Before any output moves: write the manifest; re-check an existing directory (a file
        may have appeared in it while the command ran)."""
        staging = self.path()
        files = _files_under(staging)
        lines = [f"{_sha256(staging / rel)}  {rel}\n" for rel in files]
        with open(staging / MANIFEST, "w", encoding="utf-8") as f:
            f.writelines(lines)
        self._old = self.owned_files() if self.existing else {}
        self._new = files

    def commit(self) -> None:
        staging, target = self._staging, self.target
        if not self.existing:
            try:
                os.rename(staging, target)
            except OSError as e:
                raise UserError(f"{self.option} {self.name}: cannot create it: {e.strerror} "
                                f"(did something else create it meanwhile?)") from None
            self._staging = None
            return
        new = set(self._new)
        for rel in self._old:
            if rel not in new:
                _unlink(target / rel)
        _prune_empty_dirs(target, [rel for rel in self._old if rel not in new])
        for rel in self._new:
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / rel, target / rel)
        os.replace(staging / MANIFEST, target / MANIFEST)
        shutil.rmtree(staging, ignore_errors=True)
        self._staging = None
        for leftover in target.glob(STAGING + "*"):  # of a run killed by SIGKILL
            shutil.rmtree(leftover, ignore_errors=True)

    def discard(self) -> None:
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None


class Outputs:
    """The outputs of one command: declared and checked first, written together or not at all.

    Typical use::

        out = Outputs(program, data_dir)          # the command's inputs
        tensors = out.directory(output)            # checked now
        stats = out.file(json_out, "--json-out")
        ...                                        # the work
        with out:                                  # staged, then moved into place on success
            save_tensors(tensors.path(), result)
            stats.write(text)
    """

    def __init__(self, *inputs: str | Path | None):
        self._inputs: list[str] = []
        self._items: list[OutFile | OutDir] = []
        self._old_term: list = []  # [the SIGTERM handler to restore] while inside `with`
        self.add_inputs(*inputs)

    def add_inputs(self, *paths: str | Path | None) -> None:
        """More inputs (e.g. found while reading): checked against every output on commit."""
        self._inputs += [str(p) for p in paths if p is not None and str(p) not in ("", "-")]

    def file(self, path: str | None, option: str = "-o") -> OutFile:
        """Declare a file output (`-`/None: standard output) and check it now."""
        return self._declare(OutFile(path, option))

    def directory(self, path: str, option: str = "-o") -> OutDir:
        """Declare a directory output and check it now."""
        return self._declare(OutDir(path, option))

    def _declare(self, item):
        item.resolve()
        self._check_against(item, self._items)  # first: "is an input" says more than "exists"
        item.check()
        self._items.append(item)
        return item

    def _check_against(self, item, others) -> None:
        if item.target is None or getattr(item, "direct", False):
            return
        is_dir = isinstance(item, OutDir)
        for inp in self._inputs:
            if not os.path.exists(inp):
                continue
            real = _real(inp)
            if real == item.target:
                raise UserError(f"{item.option} {item.name}: is also an input of this command "
                                f"({inp}); write to another {'directory' if is_dir else 'file'}")
            if is_dir and item.target in real.parents:
                raise UserError(f"{item.option} {item.name}: contains an input of this command "
                                f"({inp}); write to another directory")
            if real in item.target.parents and real.is_dir():
                # (found by fuzzing: estimate --data D --json-out D/A.npz replaced an input)
                raise UserError(f"{item.option} {item.name}: is inside {inp}, an input "
                                f"directory of this command; write it elsewhere")
        for other in others:
            if other is item or other.target is None or getattr(other, "direct", False):
                continue
            a, b = item.target, other.target
            if a == b:
                raise UserError(f"{item.option} {item.name} and {other.option} {other.name} "
                                "name the same output")
            for d, f, fo in ((a, b, other), (b, a, item)):
                if d in f.parents:
                    inner = fo
                    outer = other if fo is item else item
                    raise UserError(f"{inner.option} {inner.name}: is inside the output "
                                    f"directory {outer.option} {outer.name}; write it elsewhere")

    def __enter__(self) -> "Outputs":
        if threading.current_thread() is threading.main_thread():
            self._old_term = [signal.signal(signal.SIGTERM, _terminated)]
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if exc_type is None:
                self._commit()
        except BaseException:
            self._discard()
            raise
        else:
            if exc_type is not None:
                self._discard()
        finally:
            if self._old_term:
                old = self._old_term.pop()
                signal.signal(signal.SIGTERM, old if old is not None else signal.SIG_DFL)
        return False

    def _commit(self) -> None:
        for item in self._items:  # the inputs may have grown; directories may have changed
            self._check_against(item, self._items)
            if isinstance(item, OutDir):
                item.prepare()
        with _signals_deferred():
            for item in self._items:
                if not getattr(item, "stdout", False):
                    try:
                        item.commit()
                    except OSError as e:
                        raise UserError(f"{item.option} {item.name}: cannot write: "
                                        f"{e.strerror or e}") from None
        for item in self._items:
            if isinstance(item, OutFile):
                item.commit_stdout()

    def _discard(self) -> None:
        for item in self._items:
            item.discard()


def write_output(path: str | None, text: str, *inputs: str | Path | None,
                 option: str = "-o") -> None:
    """Write `text` to the file `path` atomically, or to stdout when `path` is None or `-`;
    `inputs` are the command's input files, which it refuses to overwrite."""
    out = Outputs(*inputs)
    f = out.file(path, option)
    with out:
        f.write(text)


@contextmanager
def output_dir(path: str, *inputs: str | Path | None, option: str = "-o") -> Iterator[Path]:
    """Yield a staging directory to fill; it becomes `path` only if the block succeeds (see the
    module doc for when an existing `path` is accepted)."""
    out = Outputs(*inputs)
    d = out.directory(path, option)
    with out:
        yield d.path()


def scan_output_dir(d: Path) -> tuple[dict[str, str], list[str]]:
    """(the manifest's entries {path: sha256}, what else the directory holds) of `d`.

    Staging directories of earlier runs count as fuseflowc's own. A listed file whose content
    changed counts as not fuseflowc's."""
    listed = read_manifest(d / MANIFEST)
    dirs_used = set()  # the directories that hold listed files, at any depth
    for rel in listed:
        parts = rel.split("/")[:-1]
        dirs_used.update("/".join(parts[:k]) for k in range(1, len(parts) + 1))
    foreign: list[str] = []
    for root, dirs, files in os.walk(d):
        here = Path(root).relative_to(d).as_posix()
        # (called only in this iteration, so the late binding of `here` is harmless)
        rel_of = (lambda n: n) if here == "." else (lambda n: f"{here}/{n}")  # noqa: B023
        for name in sorted(dirs):
            rel = rel_of(name)
            if here == "." and name.startswith(STAGING) and not os.path.islink(d / rel):
                dirs.remove(name)
            elif os.path.islink(d / rel) or rel not in dirs_used:
                foreign.append(rel + ("" if os.path.islink(d / rel) else "/"))
                dirs.remove(name)
        for name in sorted(files):
            rel = rel_of(name)
            path = d / rel
            if rel == MANIFEST:
                if os.path.islink(path):
                    foreign.append(rel)
                continue
            if rel not in listed or path.is_symlink() or not path.is_file():
                foreign.append(rel)
                continue
            try:
                same = _sha256(path) == listed[rel]
            except OSError as e:  # unreadable: not provably fuseflowc's
                foreign.append(f"{rel} ({e.strerror})")
                continue
            if not same:
                foreign.append(f"{rel} (changed since fuseflowc wrote it)")
    return {k: v for k, v in listed.items() if (d / k).is_file()}, sorted(foreign)


def read_manifest(path: Path) -> dict[str, str]:
    """{relative path: sha256} of a manifest file; lines that are not well formed (or name a
    path outside the directory) are ignored, so their files count as not fuseflowc's."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    out = {}
    for line in text.splitlines():
        digest, sep, rel = line.partition("  ")
        parts = rel.split("/")
        if (sep and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
                and rel and not rel.startswith("/") and ".." not in parts and "" not in parts
                and "." not in parts):
            out[rel] = digest
    return out


def _files_under(d: Path) -> list[str]:
    """Every file under `d` (relative, '/'-separated, sorted), the manifest excepted."""
    out = []
    for root, _dirs, files in os.walk(d):
        here = Path(root).relative_to(d).as_posix()
        for name in files:
            rel = name if here == "." else f"{here}/{name}"
            if rel != MANIFEST:
                out.append(rel)
    return sorted(out)


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _prune_empty_dirs(top: Path, removed: list[str]) -> None:
    """Remove the directories (below `top`) that held `removed` files and are now empty."""
    dirs = {Path(rel).parent for rel in removed}
    for rel in sorted({p for d in dirs for p in [d, *d.parents] if str(p) != "."},
                      key=lambda p: -len(p.parts)):
        try:
            (top / rel).rmdir()
        except OSError:
            pass  # not empty: it holds new files


def _terminated(signum, frame):
    raise SystemExit(128 + signum)  # unwinds through the staging clean-up, unlike the default


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM off while outputs move into place, then act on them."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    old = {s: signal.signal(s, lambda signum, frame: got.append(signum))
           for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h if h is not None else signal.SIG_DFL)
    if got:
        if got[0] == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + got[0])
