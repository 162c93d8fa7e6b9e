"""The Dask executor of `fuseflowc sweep --executor dask://HOST:PORT`: configurations run as
tasks on a dask.distributed cluster (the `dask` extra), each task `run_config` on one worker,
its row coming back to the client, which writes it like a local run.

What the workers need from the client's disk travels with the sweep, once per worker (a
scattered "bundle"): the program files (and the files they include), and each data directory
and graph file of the spec that is small (at most SHIP_MAX_BYTES). Each worker lays the bundle
out under a directory of its own temporary space, at the files' absolute client paths, and runs
there; error texts are mapped back to the client's paths, so rows are the same as a local run's.
Larger data stays where it is: the workers must see it at the same absolute path (a shared file
system), and the bundle holds a link to it there. Generated data (gen-data parameters) is made
by each worker itself, deterministically, into its own cache.

A worker lost mid-run (killed, out of memory, its machine gone) is the scheduler's business:
it reruns that worker's tasks elsewhere, and a task's row reaches the results file once, when
its future completes. A task that keeps killing workers ends, after the scheduler's
`allowed-failures` (3 by default), as an error row (`worker: KilledWorker ...`).

Timeouts: the task thread raises ConfigTimeout after the configuration's timeout, like the
SIGALRM of a local worker (worker.deadline).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from ..diagnostics import UserError
from .spec import MAX_TIMEOUT

#: Data directories and graph files up to this size go to the workers with the sweep.
SHIP_MAX_BYTES = 64 << 20
DEFAULT_CONNECT_TIMEOUT = 10.0
_INCLUDE = re.compile(r'^\s*include\s+"([^"]+)"', re.M)


def parse_executor(text: str) -> tuple[str, str | None, float]:
    """`local` -> ('local', None, 0); `dask://HOST:PORT[?connect-timeout=S]` -> ('dask',
    'tcp://HOST:PORT', S). Anything else is a UserError."""
    if text == "local":
        return "local", None, 0.0
    try:
        u = urlsplit(text)
        port, host = u.port, u.hostname
    except ValueError:  # a port not a number or past 65535, an unclosed `[` (found by
        u, port, host = None, None, None  # fuzzing: both were exit 3)
    if u is None or u.scheme != "dask" or not host or port is None:
        raise UserError(f"--executor {text}: expected local or dask://HOST:PORT (e.g. "
                        f"dask://127.0.0.1:8786)")
    timeout = DEFAULT_CONNECT_TIMEOUT
    for key, values in parse_qs(u.query, keep_blank_values=True).items():
        if key != "connect-timeout":
            raise UserError(f"--executor {text}: unknown option '{key}' (connect-timeout=S)")
        try:
            timeout = float(values[-1])
        except ValueError:
            timeout = -1.0
        if not 0 < timeout <= MAX_TIMEOUT:  # (nan and inf too: no wait without end)
            raise UserError(f"--executor {text}: connect-timeout must be a positive number "
                            f"of seconds, at most {MAX_TIMEOUT:g}")
    host = f"[{host}]" if ":" in host else host
    return "dask", f"tcp://{host}:{port}", timeout


# ---- the bundle: what the workers need from the client's disk ---------------------------------
def _program_files(path: Path, out: dict[str, bytes]) -> None:
    """The program file and, recursively, the files it includes (relative to the includer)."""
    path = Path(os.path.abspath(path))
    if str(path) in out or not path.is_file():
        return            # a missing file: the worker reports it as a local run would
    data = path.read_bytes()
    out[str(path)] = data
    for inc in _INCLUDE.findall(data.decode("utf-8", "replace")):
        _program_files(path.parent / inc, out)


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def make_bundle(configs: list[dict], base: str) -> dict:
    """{'cwd', 'files': {abs path: bytes}, 'links': {abs path: abs path}, 'token'} for the
    configurations of a sweep whose spec lives in `base`."""
    from ..data.graphs import is_named_source, split_options

    files: dict[str, bytes] = {}
    links: dict[str, str] = {}
    seen: set[str] = set()
    for c in configs:
        _program_files(Path(base) / c["program"], files)
        src = c["data_source"]
        where = src.get("dir") or (src.get("graph") if src.get("graph") and
                                   not is_named_source(src["graph"]) else None)
        if where is None:
            continue
        p = Path(os.path.abspath(Path(base) / split_options(where)[0]))
        if str(p) in seen or not p.exists():
            continue
        seen.add(str(p))
        if _size(p) > SHIP_MAX_BYTES:
            links[str(p)] = str(p)
        elif p.is_file():
            files[str(p)] = p.read_bytes()
        else:
            for f in sorted(p.rglob("*")):
                if f.is_file():
                    files[str(f)] = f.read_bytes()
    h = hashlib.sha256(os.getcwd().encode())
    for k in sorted(files):
        h.update(k.encode() + b"\0" + hashlib.sha256(files[k]).digest())
    for k in sorted(links):
        h.update(b"link\0" + k.encode())
    return {"cwd": os.getcwd(), "files": files, "links": links, "token": h.hexdigest()[:16]}


def _root(bundle: dict) -> Path:
    """The worker's copy of a bundle (made once per worker and bundle, atomically)."""
    root = Path(tempfile.gettempdir()) / f"fuseflowc-sweep-{bundle['token']}"
    if root.is_dir():
        return root
    tmp = Path(tempfile.mkdtemp(prefix=".fuseflowc-sweep-", dir=tempfile.gettempdir()))
    for name, data in bundle["files"].items():
        dest = tmp / name.lstrip(os.sep)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    for name, target in bundle["links"].items():
        dest = tmp / name.lstrip(os.sep)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if not dest.exists():
            os.symlink(target, dest)
    (tmp / "data").mkdir(exist_ok=True)
    try:
        os.rename(tmp, root)
    except OSError:  # another task of this worker was first
        shutil.rmtree(tmp, ignore_errors=True)
    return root


def _in_bundle(ctx: dict, bundle: dict) -> tuple[Path, dict]:
    """This worker's copy of the bundle, and `ctx` pointing into it."""
    from .worker import import_stages

    import_stages()
    root = _root(bundle)
    base = str(root) + os.path.normpath(os.path.join(bundle["cwd"], ctx["base"]))
    os.makedirs(base, exist_ok=True)  # so that `base/../data` resolves even with no file in it
    return root, {**ctx, "base": base, "data_cache": str(root / "data")}


def run_in_bundle(config: dict, ctx: dict, bundle: dict) -> dict:
    """The Dask task: run one configuration on this worker against its copy of the bundle,
    with paths in the row mapped back to the client's."""
    from .worker import run_config

    root, local = _in_bundle(ctx, bundle)
    row = run_config(config, local)
    if row.get("error"):
        # the client would have said `<base>/x` relative to its cwd, or its absolute path
        cwd = bundle["cwd"]
        row["error"] = row["error"].replace(str(root) + cwd + os.sep, "").replace(str(root), "")
    return row


def count_in_bundle(config: dict, ctx: dict, bundle: dict) -> dict[str, int] | None:
    """The Dask task of a pending configuration: count its orders on this worker
    (worker.count_orders) against its copy of the bundle."""
    from .worker import count_orders

    return count_orders(config, _in_bundle(ctx, bundle)[1])


def key_in_bundle(config: dict, ctx: dict, bundle: dict) -> str | None:
    """The Dask task of a configuration that may share its run: its run key
    (worker.compiled_key) on this worker against its copy of the bundle."""
    from .worker import compiled_key

    return compiled_key(config, _in_bundle(ctx, bundle)[1])


def remove_bundle(token: str) -> None:
    """Run on every worker at the end of a sweep: its copy of the bundle goes."""
    shutil.rmtree(Path(tempfile.gettempdir()) / f"fuseflowc-sweep-{token}", ignore_errors=True)


# ---- the executor --------------------------------------------------------------------------------
class DaskPool:
    """Runs configurations as tasks on a Dask cluster and yields their rows as they finish
    (the interface of the local pool: rows(configs, ctx), close(kill))."""

    def __init__(self, executor: str, address: str, connect_timeout: float):
        try:
            from dask.distributed import Client
        except ImportError:
            raise UserError(f"--executor {executor}: dask.distributed is not installed "
                            f"(pip install 'fuseflowc[dask]')") from None
        try:
            self.client = Client(address, timeout=connect_timeout, set_as_default=False)
        except Exception as e:  # OSError, TimeoutError, CommClosedError, ...: unreachable
            text = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise UserError(f"--executor {executor}: cannot reach a Dask scheduler at "
                            f"{address} within {connect_timeout:g} s ({text})") from None
        self.executor = executor
        self.futures: list = []
        self.tokens: set[str] = set()

    def rows(self, configs: list[dict], ctx: dict):
        for c, got in self._map(run_in_bundle, configs, ctx, lambda c: c["id"]):
            if isinstance(got, Exception):  # KilledWorker after repeated worker deaths, a
                got = {**c, "status": "error",  # lost client
                       "error": f"worker: {type(got).__name__}: {got}".rstrip(": ")}
            yield got

    def counts(self, tasks: list[dict], ctx: dict):
        """(task, its region counts) for each pending configuration, as they finish."""
        from .grid import task_key

        def name(t):
            return "count-" + hashlib.sha256(task_key(t).encode()).hexdigest()[:12]
        for t, got in self._map(count_in_bundle, tasks, ctx, name):
            if isinstance(got, Exception):
                raise UserError(f"{t['model']}/{t['variant']} {t['program']}: counting its "
                                f"orders: worker: "
                                f"{type(got).__name__}: {got}".rstrip(": ")) from None
            yield t, got

    def keys(self, configs: list[dict], ctx: dict):
        """(configuration, its run key or None) as they finish (a task that failed: None,
        and the configuration runs on its own)."""
        for c, got in self._map(key_in_bundle, configs, ctx, lambda c: "key-" + c["id"]):
            yield c, None if isinstance(got, Exception) else got

    def _map(self, fn, items: list[dict], ctx: dict, name):
        """(item, fn(item, ctx, bundle) or the exception it raised), as they finish; `name(item)`
        names its task."""
        if not items:
            return
        from dask.distributed import as_completed

        bundle = make_bundle(items, ctx["base"])
        self.tokens.add(bundle["token"])
        [shipped] = self.client.scatter([bundle], broadcast=True, hash=False)
        pending = []
        for x in items:
            # pure=False: a rerun of the same configuration is a new task, never a cached one
            f = self.client.submit(fn, x, ctx, shipped, pure=False,
                                   key=f"fuseflowc-{name(x)}-{os.urandom(4).hex()}")
            pending.append((f, x))
        self.futures += [f for f, _ in pending]
        item_of = {f.key: x for f, x in pending}
        for f in as_completed([f for f, _ in pending], loop=self.client.loop):
            x = item_of[f.key]
            try:
                got = f.result()
            except Exception as e:
                got = e
            f.release()
            yield x, got

    def close(self, kill: bool = False) -> None:
        """Cancel what is queued (with `kill`), or remove the workers' copies of the bundle;
        disconnect. Closing twice is harmless."""
        if self.client is None:
            return
        try:
            if kill:  # Ctrl-C: stop what is queued; leave the workers' copies (a rerun uses them)
                self.client.cancel(self.futures)
            else:
                for token in self.tokens:
                    self.client.run(remove_bundle, token)
        except Exception:  # the cluster went away meanwhile: nothing left to tidy
            pass
        finally:
            client, self.client = self.client, None
            client.close()
