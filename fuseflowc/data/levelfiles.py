"""SAM fiber-tree level files: one text file per array of a tensor's storage, one number a line.

For tensor T (k = storage level, 0 outermost):
  tensor_T_mode_shape    sizes of the storage levels' modes, in storage order (element extents)
  tensor_T_mode_<k>_seg  and tensor_T_mode_<k>_crd: level k is compressed (no files: dense)
  tensor_T_mode_<k>_crd  alone: level k is singleton (one coordinate per parent position); the
                         compressed level above it is then non-unique (COO)
  tensor_T_mode_<k>_width  with `_<k>_crd`: level k is compressed(c), c the one number in it;
                         crd holds c slots per parent, -1 (padding) after the fiber's coordinates
  tensor_T_mode_vals     values of the last level's positions (blocked: b*b each, row-major)
  tensor_T_mode_order    optional: the logical mode of each storage level (default 0, 1, ...)
  tensor_T_mode_block    optional: the block size of a blocked matrix
Every inconsistency is a UserError naming the file (and the line, for bad numbers).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..diagnostics import UserError
from ..formats import PAD, Format, fixed_level, format_problem
from .fibertree import FiberTensor, Level

LEVEL_PREFIX = "tensor_"
LEVEL_MARK = "_mode_"
LEVEL_FILE_RE = re.compile(r"^tensor_(.+)_mode_(?:vals|shape|order|block|\d+_(?:seg|crd|width))$")


def _err(path: Path | str, msg: str) -> UserError:
    return UserError(f"{path}: {msg}")


def _shape_text(shape) -> str:
    shape = tuple(shape)
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(s) for s in shape) + ")"


def level_file(directory: Path, name: str, what: str) -> Path:
    """Path of one level file: `what` is `<k>_seg`, `<k>_crd`, `vals`, `shape`, `order`, `block`."""
    return Path(directory) / f"{LEVEL_PREFIX}{name}{LEVEL_MARK}{what}"


def _read_numbers(path: Path, integer: bool) -> np.ndarray:
    """One number per line (blank lines ignored)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise _err(path, "not a text file") from None
    except OSError as e:
        raise _err(path, f"cannot read: {e.strerror}") from None
    lines = text.splitlines()
    tokens = text.split()
    v = None
    if len(tokens) == sum(1 for ln in lines if ln.strip()):  # one number per non-blank line
        try:
            v = np.array(tokens, dtype=str).astype(np.int64 if integer else np.float64)
        except (ValueError, OverflowError):
            v = None  # the slow path below finds the offending line
    if v is None:
        out = []
        for lineno, line in enumerate(lines, 1):
            s = line.strip()
            if not s:
                continue
            try:
                x = int(s) if integer else float(s)
            except ValueError:
                want = "an integer" if integer else "a number"
                raise _err(path, f"line {lineno}: expected {want}, found {s[:40]!r}") from None
            if integer and not -2**63 <= x < 2**63:
                raise _err(path, f"line {lineno}: integer {s[:40]} is out of range")
            out.append(x)
        v = np.array(out, dtype=np.int64 if integer else np.float64)
    if integer:
        return v.reshape(-1)
    bad = ~np.isfinite(v)
    if bad.any():
        lineno = [i for i, x in enumerate(lines, 1) if x.strip()][int(np.argmax(bad))]
        raise _err(path, f"line {lineno}: value {v[bad][0]} is not finite; inputs must be finite")
    return v


def level_files_present(directory: Path, name: str) -> list[Path]:
    prefix = f"{LEVEL_PREFIX}{name}{LEVEL_MARK}"
    return sorted(p for p in Path(directory).iterdir() if p.name.startswith(prefix)
                  and _level_suffix_ok(p.name[len(prefix):]))


def _level_suffix_ok(rest: str) -> bool:
    if rest in ("vals", "shape", "order", "block"):
        return True
    k, _, kind = rest.partition("_")
    return k.isdigit() and kind in ("seg", "crd", "width")


def read_level_files(directory: Path, name: str) -> FiberTensor:
    """Read SAM level files `tensor_<name>_mode_*` from `directory` into a FiberTensor.

    Files (one number per line):
      tensor_<name>_mode_shape    the size of each storage level's mode, in storage order
                                  (element extents, also for blocked tensors); required
      tensor_<name>_mode_<k>_seg  and `..._<k>_crd`: storage level k is compressed; a level with
                                  neither file is dense (a dense level stores every coordinate)
      tensor_<name>_mode_vals     the values of the last level's positions (blocked: b*b each,
                                  row-major within a block); required
      tensor_<name>_mode_order    optional: the logical mode stored by each level (default
                                  0, 1, ..., i.e. row-major)
      tensor_<name>_mode_block    optional: the block size b of a blocked tensor
    Without a block file the files are element level; `load_inputs` then converts to the
    declared format (and block size).
    """
    d = Path(directory)
    shape_p, vals_p = level_file(d, name, "shape"), level_file(d, name, "vals")
    for p in (shape_p, vals_p):
        if not p.is_file():
            raise _err(p, f"missing: level files of '{name}' need {shape_p.name} and "
                          f"{vals_p.name}")
    sshape = _read_numbers(shape_p, integer=True)
    order = int(sshape.shape[0])
    if (sshape < 0).any():
        raise _err(shape_p, "sizes must be non-negative")
    mode_order = _read_mode_order(d, name, order)
    b = _read_block(d, name, sshape, shape_p)
    _check_no_stray_level(d, name, order, shape_p)
    sizes = [int(s) // (b or 1) for s in sshape]
    fmt = Format(_level_kinds(d, name, order, b), mode_order, blocked=b is not None)
    levels, npos = _read_levels(d, name, fmt, sizes)
    vals = _read_values(vals_p, npos, b)
    shape = [0] * order
    for k, m in enumerate(mode_order):
        shape[m] = int(sshape[k])
    return FiberTensor(tuple(shape), fmt, levels, vals, b)


def _read_mode_order(d: Path, name: str, order: int) -> tuple[int, ...]:
    """The order file's modes (a permutation of 0..order-1), or row-major without one."""
    order_p = level_file(d, name, "order")
    if not order_p.is_file():
        return tuple(range(order))
    mode_order = _read_numbers(order_p, integer=True)
    if sorted(mode_order.tolist()) != list(range(order)):
        raise _err(order_p, f"must list the modes 0..{order - 1} once each, in storage "
                            f"order; found {' '.join(map(str, mode_order.tolist()))}")
    return tuple(int(m) for m in mode_order)


def _read_block(d: Path, name: str, sshape: np.ndarray, shape_p: Path) -> int | None:
    """The block file's size b (of a matrix whose sizes it divides), None without one or for
    b = 1."""
    block_p = level_file(d, name, "block")
    if not block_p.is_file():
        return None
    order = int(sshape.shape[0])
    bv = _read_numbers(block_p, integer=True)
    if bv.shape != (1,) or bv[0] < 1:
        raise _err(block_p, "must hold one positive block size")
    b = int(bv[0])
    if order != 2:
        raise _err(block_p, f"blocked level files need a matrix; the shape file has "
                            f"{order} sizes")
    if b > 1 and (sshape % b).any():
        raise _err(shape_p, f"shape {_shape_text(sshape.tolist())} is not divisible by the "
                            f"block size {b}")
    return None if b == 1 else b


def _check_no_stray_level(d: Path, name: str, order: int, shape_p: Path) -> None:
    """Any level index beyond the order is a stray file: say so rather than ignore it."""
    for p in level_files_present(d, name):
        rest = p.name[len(f"{LEVEL_PREFIX}{name}{LEVEL_MARK}"):]
        k, _, kind = rest.partition("_")
        if kind in ("seg", "crd", "width") and int(k) >= order:
            raise _err(p, f"level {k} does not exist: {shape_p.name} gives {order} level(s)")


def _level_kinds(d: Path, name: str, order: int, b: int | None) -> tuple:
    """Each storage level's kind, from the files present (seg and crd: compressed; crd
    alone: singleton; crd and width: compressed(c); none: dense), checked as a format."""
    levels_kinds = []
    for k in range(order):
        seg_p, crd_p = level_file(d, name, f"{k}_seg"), level_file(d, name, f"{k}_crd")
        width_p = level_file(d, name, f"{k}_width")
        has_seg, has_crd, has_width = seg_p.is_file(), crd_p.is_file(), width_p.is_file()
        if has_seg and not has_crd:
            raise _err(seg_p, f"{crd_p.name} is missing (a compressed level needs both)")
        if has_width and (has_seg or not has_crd):
            raise _err(width_p, f"a compressed(c) level has {crd_p.name} and no "
                                f"{seg_p.name}")
        if has_width:
            wv = _read_numbers(width_p, integer=True)
            if wv.shape != (1,) or wv[0] < 1:
                raise _err(width_p, "must hold one positive fixed length c")
            levels_kinds.append(fixed_level(int(wv[0])))
        else:
            levels_kinds.append("compressed" if has_seg else "singleton" if has_crd
                                else "dense")
    problem = format_problem(tuple(levels_kinds), b is not None)
    if problem:
        k = levels_kinds.index("singleton") if "singleton" in levels_kinds else 0
        raise _err(level_file(d, name, f"{k}_crd"), f"{level_file(d, name, f'{k}_seg').name} "
                   f"is missing (a compressed level needs both); as a singleton level (a crd "
                   f"file alone) it is not valid: {problem}")
    return tuple(levels_kinds)


def _read_levels(d: Path, name: str, fmt: Format, sizes: list[int]) -> tuple[list[Level], int]:
    """The levels of format `fmt` read from their files, and the last level's positions."""
    levels = []
    npos = 1
    for k, kind in enumerate(fmt.kinds):
        seg_p, crd_p = level_file(d, name, f"{k}_seg"), level_file(d, name, f"{k}_crd")
        if kind == "dense":
            levels.append(Level("dense", sizes[k]))
            npos *= sizes[k]
            continue
        crd = _read_numbers(crd_p, integer=True)
        if kind == "fixed":
            levels.append(_read_fixed(crd_p, crd, npos, k, sizes[k], fmt))
            npos = npos * levels[-1].width
            continue
        if kind == "singleton":
            if crd.shape[0] != npos:
                raise _err(crd_p, f"has {crd.shape[0]} entries; singleton level {k} has {npos} "
                                  f"parent position(s), one coordinate each")
            _check_range(crd_p, crd, k, sizes[k])
            _check_runs(crd_p, levels[k - 1].crd, crd)
            levels.append(Level("singleton", sizes[k], None, crd))
            continue
        seg = _read_seg(seg_p, crd_p, crd, k, npos)
        _check_range(crd_p, crd, k, sizes[k])
        _check_fibers(crd_p, seg, crd, kind)
        levels.append(Level(kind, sizes[k], seg, crd))
        npos = int(crd.shape[0])
    return levels, npos


def _read_seg(seg_p: Path, crd_p: Path, crd: np.ndarray, k: int, npos: int) -> np.ndarray:
    """Level k's seg file: npos + 1 monotone entries from 0 to the crd file's length."""
    seg = _read_numbers(seg_p, integer=True)
    if seg.shape[0] != npos + 1:
        raise _err(seg_p, f"has {seg.shape[0]} entries; level {k} has {npos} parent "
                          f"position(s), so it needs {npos + 1}")
    if seg[0] != 0:
        raise _err(seg_p, f"must start at 0, not {seg[0]}")
    steps = np.diff(seg)
    if (steps < 0).any():
        i = int(np.argmax(steps < 0))
        raise _err(seg_p, f"is not monotone: entry {i + 1} ({seg[i + 1]}) < entry {i} "
                          f"({seg[i]})")
    if seg[-1] != crd.shape[0]:
        raise _err(seg_p, f"ends at {seg[-1]} but {crd_p.name} has {crd.shape[0]} entries")
    return seg


def _check_fibers(crd_p: Path, seg: np.ndarray, crd: np.ndarray, kind: str) -> None:
    """Within a fiber, coordinates must be strictly increasing (SAM scanners rely on it);
    a non-unique level's repeat, one per entry beneath (non-decreasing)."""
    if crd.shape[0] > 1:
        inc = crd[1:] > crd[:-1] if kind == "compressed" else crd[1:] >= crd[:-1]
        starts = np.zeros(crd.shape[0], bool)
        starts[seg[:-1][seg[:-1] < crd.shape[0]]] = True
        ok = inc | starts[1:]
        if not ok.all():
            i = int(np.argmax(~ok)) + 1
            how = "strictly increasing" if kind == "compressed" else "non-decreasing"
            raise _err(crd_p, f"entries {i - 1} and {i} ({crd[i - 1]}, {crd[i]}) are not "
                              f"{how} within their fiber")


def _read_values(vals_p: Path, npos: int, b: int | None) -> np.ndarray:
    """The vals file: one value per position of the last level (b x b blocks if blocked)."""
    vals = _read_numbers(vals_p, integer=False)
    per = (b or 1) ** 2
    if vals.shape[0] != npos * per:
        extra = f" ({npos} blocks of {b} x {b})" if b else ""
        raise _err(vals_p, f"has {vals.shape[0]} values; the levels have {npos} position(s)"
                           f"{extra}, so it needs {npos * per}")
    if b:
        vals = vals.reshape(npos, b, b)
    return vals


def _check_range(crd_p: Path, crd: np.ndarray, k: int, size: int) -> None:
    bad = (crd < 0) | (crd >= size)
    if bad.any():
        i = int(np.argmax(bad))
        raise _err(crd_p, f"entry {i} is {crd[i]}, outside level {k}'s size {size}")


def _check_runs(crd_p: Path, parent_crd: np.ndarray, crd: np.ndarray) -> None:
    """Under a run of equal coordinates of the non-unique level above, a singleton level's
    coordinates must be strictly increasing (entries sorted, no duplicate)."""
    if crd.shape[0] > 1:
        same = parent_crd[1:] == parent_crd[:-1]
        ok = ~same | (crd[1:] > crd[:-1])
        if not ok.all():
            i = int(np.argmax(~ok)) + 1
            raise _err(crd_p, f"entries {i - 1} and {i} ({crd[i - 1]}, {crd[i]}) are not "
                              f"strictly increasing under the same coordinate of the level "
                              f"above (COO entries are sorted and unique)")


def _read_fixed(crd_p: Path, crd: np.ndarray, npos: int, k: int, size: int,
                fmt: Format) -> Level:
    """Check and make a compressed(c) level: c slots per parent, each fiber's coordinates
    strictly increasing, then only padding (-1)."""
    width = int(fmt.levels[k][len("compressed("):-1])
    if crd.shape[0] != npos * width:
        raise _err(crd_p, f"has {crd.shape[0]} entries; compressed({width}) level {k} has "
                          f"{npos} parent position(s), {width} slots each: it needs "
                          f"{npos * width}")
    pad = crd == PAD
    _check_range(crd_p, np.where(pad, 0, crd), k, size)
    if crd.shape[0] > 1:
        first = np.zeros(crd.shape[0], bool)
        first[::width] = True
        prev_pad = np.concatenate([[False], pad[:-1]])
        ok = first[1:] | np.where(pad[1:], True, ~prev_pad[1:] & (crd[1:] > crd[:-1]))
        if not ok.all():
            i = int(np.argmax(~ok)) + 1
            raise _err(crd_p, f"entries {i - 1} and {i} ({crd[i - 1]}, {crd[i]}): within a "
                              f"fiber, coordinates must be strictly increasing and padding "
                              f"(-1) only follow them")
    return Level("fixed", size, None, crd, width)


def write_level_files(directory: Path, name: str, t: FiberTensor) -> list[Path]:
    """Write `t` as SAM level files (see `read_level_files`); returns the paths written."""
    d = Path(directory)
    written = []

    def put(what: str, numbers) -> None:
        p = level_file(d, name, what)
        p.write_text("".join(f"{x}\n" for x in numbers), encoding="utf-8")
        written.append(p)

    mo = t.format.mode_order
    put("shape", [t.shape[m] for m in mo])
    if t.order >= 2:
        put("order", list(mo))
    if t.block is not None:
        put("block", [t.block])
    for k, lvl in enumerate(t.levels):
        if lvl.seg is not None:
            put(f"{k}_seg", [int(x) for x in lvl.seg])
        if lvl.kind == "fixed":
            put(f"{k}_width", [lvl.width])
        if lvl.crd is not None:
            put(f"{k}_crd", [int(x) for x in lvl.crd])
    put("vals", [repr(float(x)) for x in np.asarray(t.vals).reshape(-1)])
    return written
