"""Results files: one row per configuration, CSV or JSON lines (chosen by the file's extension).

Rows are appended and flushed one at a time (a complete line per write), so an interrupted sweep
leaves a valid file, and a later run skips the ids already present. In CSV, structured fields
(params, schedule, data_source, arch, kernel_cycles) are compact JSON text and a missing value
is an empty cell; in JSON lines every field keeps its JSON type. Lines starting with `#` are
comments in both.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..diagnostics import Source, UserError
from ..outputs import writable

# (name, type): type is one of str, int, float, bool, json, order (an integer K or "paper")
COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "str"), ("model", "str"), ("variant", "str"), ("program", "str"),
    ("inline_widened", "bool"), ("free_input_order", "bool"), ("share", "bool"), ("order", "order"),
    ("order_region", "str"),
    ("params", "json"), ("schedule", "json"), ("pipeline", "str"), ("data", "str"),
    ("data_source", "json"), ("arch", "json"),
    ("parallel", "str"), ("block", "str"),
    ("status", "str"), ("check", "str"),
    ("cycles", "int"), ("kernel_cycles", "json"), ("flops", "int"),
    ("bytes_read_seg", "int"), ("bytes_read_crd", "int"), ("bytes_read_vals", "int"),
    ("bytes_written_seg", "int"), ("bytes_written_crd", "int"), ("bytes_written_vals", "int"),
    ("bytes", "int"),
    ("est_flops", "float"), ("est_bytes", "float"), ("est_cycles", "float"),
    ("wall_seconds", "float"), ("error", "str"),
    # added later, at the end: files written before them read with these empty
    ("unfused", "bool"), ("orders", "json"),
    ("energy", "float"), ("edp", "float"),   # picojoules (sim.energy), and pJ x cycles
    ("reused", "str"),   # the id of the row whose run this one repeats (sweep.reuse)
)
NAMES = tuple(n for n, _ in COLUMNS)
#: The columns files written before `unfused` and `orders` existed have: a resumed sweep
#: appends to such a file (or one of any later layout, a prefix of NAMES) in its own layout
#: (and rewrites it in the new one when done).
OLD_NAMES = NAMES[:NAMES.index("unfused")]
TYPES = dict(COLUMNS)
STATUSES = ("ok", "error", "timeout", "pruned", "estimated")
#: Columns `report` needs filled with text in every row: what it groups and names rows by.
REPORT_COLUMNS = ("id", "model", "variant", "data", "status")
#: What each JSON column holds; an empty cell reads as an empty one.
JSON_SHAPES: dict[str, type] = {"params": dict, "schedule": list, "data_source": dict,
                                "arch": list, "kernel_cycles": dict, "orders": dict}


def results_kind(path: str) -> str:
    """'csv' or 'jsonl' from the file name; anything else is a UserError."""
    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    raise UserError(f"{path}: results files are .csv or .jsonl (JSON lines), not '{suffix}'")


def normalize_row(row: dict) -> dict:
    """A row with every column present (None where absent), in column order."""
    return {n: row.get(n) for n in NAMES}


def _cell(name: str, v) -> str:
    if v is None:
        return ""
    t = TYPES[name]
    if t == "json":
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    if t == "bool":
        return "true" if v else "false"
    if t == "float":
        return repr(float(v))
    return str(v)


def _type_problem(name: str, v) -> str | None:
    """What is wrong with value `v` of known column `name`, or None if it has its type."""
    t = TYPES[name]
    if t == "json":
        shape = JSON_SHAPES[name]
        if not isinstance(v, shape):
            return "a JSON " + ("object" if shape is dict else "array")
        if name in ("schedule", "arch") and not all(isinstance(x, str) for x in v):
            return "a JSON array of strings"
        return None
    is_int = isinstance(v, int) and not isinstance(v, bool)
    ok = {"str": isinstance(v, str), "bool": isinstance(v, bool), "int": is_int,
          "float": isinstance(v, (int, float)) and not isinstance(v, bool),
          "order": is_int or v == "paper"}[t]
    return None if ok else {"str": "text", "bool": "true or false", "int": "an integer",
                            "float": "a number", "order": 'an integer or "paper"'}[t]


def checked_row(path: str, line: int, row: dict, required: tuple[str, ...] = ()) -> dict:
    """`row` with every column present, after checking that the known ones have their types
    (JSON ones of their shape; an absent one reads as empty) and the `required` ones are
    non-empty text; a UserError locating the first that is not. Unknown extra columns are kept
    as they are."""
    out = {**normalize_row(row), **row}
    for name in NAMES:
        v = out[name]
        if v is None:
            if name in required:
                raise UserError(f"{path}:{line}: column {name}: every row needs one")
            if name in JSON_SHAPES:
                out[name] = JSON_SHAPES[name]()
            continue
        problem = _type_problem(name, v)
        if problem is None and name in required and not v:
            problem = "non-empty text"
        if problem:
            shown = json.dumps(v)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            raise UserError(f"{path}:{line}: column {name}: expected {problem}, not {shown}")
    return out


def _parse_cell(path: str, line: int, name: str, text: str):
    if text == "":  # CSV cannot tell an empty text from a missing one: both read as None
        return None
    t = TYPES[name]
    try:
        if t == "json":
            return json.loads(text)
        if t == "bool":
            if text not in ("true", "false"):
                raise ValueError(text)
            return text == "true"
        if t == "int" or (t == "order" and text != "paper"):
            return int(text)
        if t == "float":
            return float(text)
    except ValueError:
        raise UserError(f"{path}:{line}: column {name}: cannot read {text!r} as {t}") from None
    return text


def format_row(kind: str, row: dict, names: tuple[str, ...] = NAMES) -> str:
    """One row as one complete line of the file (with its newline); CSV cells of the columns
    `names` (a file's header)."""
    row = normalize_row(row)
    if not row["orders"]:   # (read back as {}) empty but for `orders = "product"` rows
        row["orders"] = None
    if kind == "jsonl":
        return json.dumps(row, separators=(", ", ": ")) + "\n"
    return _csv_line([_cell(n, row[n]) for n in names])


def _csv_line(cells: list[str]) -> str:
    # csv.writer leaves a lone \r unquoted when the line terminator is \n; quote it ourselves
    def q(c: str) -> str:
        return '"' + c.replace('"', '""') + '"' if any(ch in c for ch in ',"\r\n') else c
    return ",".join(q(c) for c in cells) + "\n"


def header(kind: str) -> str:
    """The first line of a new file (CSV only)."""
    if kind == "csv":
        return _csv_line(list(NAMES))
    return ""


def read_rows(path: str, required: tuple[str, ...] = ()) -> list[dict]:
    """Every row of a results file, typed (see COLUMNS; `checked_row`), with the `required`
    columns filled; unknown extra columns are kept."""
    kind = results_kind(path)
    try:
        with open(path, encoding="utf-8", newline="") as f:  # keep \r inside CSV cells
            text = f.read()
    except FileNotFoundError:
        raise UserError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"{path}: cannot read: {e}") from None
    rows: list[dict] = []
    if kind == "jsonl":
        for n, ln in enumerate(text.split("\n"), 1):
            if not ln.strip() or ln.lstrip().startswith("#"):
                continue
            try:
                row = json.loads(ln)
            except json.JSONDecodeError as e:
                raise UserError(f"{path}:{n}:{e.colno}: not a JSON row: {e.msg}") from None
            except ValueError:  # an integer of more digits than Python converts
                from ..limits import number_too_long
                raise number_too_long(Source(path, text)) from None
            if not isinstance(row, dict) or "id" not in row:
                raise UserError(f"{path}:{n}: a row is a JSON object with an id")
            rows.append(checked_row(path, n, row, required))
        return rows
    reader = csv.reader(io.StringIO(text, newline=""))
    head = None
    try:
        for cells in reader:
            n = reader.line_num
            if not cells or (len(cells) == 1 and not cells[0].strip()) or \
                    cells[0].lstrip().startswith("#"):
                continue
            if head is None:
                head = cells
                if "id" not in head:
                    raise UserError(f"{path}:{n}: the first row must be the header (with an "
                                    f"id column)")
                continue
            if len(cells) != len(head):
                raise UserError(f"{path}:{n}: {len(cells)} cells, but the header has "
                                f"{len(head)}")
            row = {name: _parse_cell(path, n, name, v) if name in TYPES else v
                   for name, v in zip(head, cells)}
            rows.append(checked_row(path, n, row, required))
    except csv.Error as e:
        raise UserError(f"{path}:{reader.line_num}: malformed CSV: {e}") from None
    return rows


class ResultsWriter:
    """Appends rows to a results file, one flushed line each. Opening an existing file checks
    its header (CSV) and drops a partial last line left by a killed run."""

    def __init__(self, path: str):
        self.path = path
        self.kind = results_kind(path)
        self.names = NAMES    # the CSV file's columns
        p = Path(path)
        parent = p.parent if str(p.parent) else Path(".")
        try:  # e.g. results/ in a fresh clone
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"{path}: cannot create directory {parent}: {e.strerror}") from None
        if p.is_dir():
            raise UserError(f"{path}: is a directory, expected a results file")
        if p.exists() and not writable(p):  # (root may write it: the mode bits decide)
            raise UserError(f"{path}: the file is read-only; not appending to it")
        fresh = not p.exists() or p.stat().st_size == 0
        if not fresh:
            self._repair_tail(p)
            if self.kind == "csv":
                lines = p.read_text(encoding="utf-8").split("\n")
                first = next((x for x in lines if x.strip() and not x.startswith("#")), "")
                head = next(csv.reader([first]), [])
                if len(head) >= len(OLD_NAMES) and head == list(NAMES[:len(head)]):
                    self.names = tuple(head)   # an older layout: columns were only appended
                elif head != list(NAMES):
                    raise UserError(f"{path}: its header is not the one this version writes; "
                                    f"write the results to a new file")
        try:
            self.f = open(p, "a", encoding="utf-8", newline="")
        except OSError as e:
            raise UserError(f"{path}: cannot write: {e.strerror}") from None
        if fresh:
            self._write(header(self.kind))

    @staticmethod
    def _repair_tail(p: Path) -> None:
        data = p.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with open(p, "r+b") as f:
                f.truncate(keep)

    def _write(self, text: str) -> None:
        if text:
            self.f.write(text)
            self.f.flush()  # no fsync: a row lost to a power cut is simply run again

    def append(self, row: dict) -> None:
        """Write one row (a complete line) and flush it. A row with a value for a column the
        file's (older) header lacks is a UserError, before anything is written."""
        lost = [n for n in NAMES if n not in self.names and row.get(n)]
        if lost:
            raise UserError(f"{self.path}: written by an older version, without the column "
                            f"{lost[0]} this sweep records; write the results to a new file")
        self._write(format_row(self.kind, row, self.names))

    def close(self) -> None:
        self.f.close()


def read_rows_if_any(path: str) -> list[dict]:
    """The rows of results file `path`, or none when it does not exist or is empty (a sweep
    that has not written yet)."""
    p = Path(path)
    return read_rows(path) if p.exists() and p.stat().st_size else []


def rewrite_sorted(path: str, order: list[str]) -> None:
    """Rewrite the file with its rows in `order` of ids (others after them, as they were), so a
    finished sweep's file does not depend on which worker finished first. Atomic."""
    from ..files import write_output
    kind = results_kind(path)
    rows = read_rows(path)
    rank = {i: k for k, i in enumerate(order)}
    rows.sort(key=lambda r: (rank.get(r["id"], len(rank)),))
    text = header(kind) + "".join(format_row(kind, {n: r.get(n) for n in NAMES}) for r in rows)
    write_output(path, text)
