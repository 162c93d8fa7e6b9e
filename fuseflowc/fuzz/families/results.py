"""The `report-damaged` family: `report` on results files damaged the ways a killed or edited
sweep leaves them: a partial last line, a row with a cell too many or too few, a header with a
column dropped or renamed, numbers that are no numbers (nan, -1, 1e999, 5000 digits, text),
duplicate ids, an unknown status, a line that is no JSON object, an empty file, only a header,
a byte-order mark, CR line ends, a NUL byte."""

from __future__ import annotations

NUMERIC = ("cycles", "flops", "wall_seconds", "order", "bytes_read")
ODD_NUMBERS = ("nan", "-1", "1e999", "inf", "9" * 5000, "abc", "", "1e-320", "0x10", "-0")


def _damage_csv(text: str, rng) -> tuple[str, str]:
    lines = text.split("\n")
    head = lines[0].split(",") if lines else []
    body = [ln for ln in lines[1:] if ln]
    how = rng.choice(("partial", "cells+", "cells-", "header-drop", "header-rename", "number",
                      "dup-id", "status", "empty", "header-only", "bom", "crlf", "nul",
                      "swap-rows"))
    if how == "partial" and body:
        body[-1] = body[-1][:rng.randint(1, max(1, len(body[-1]) - 1))]
        return "\n".join([lines[0], *body]), how   # no newline at the end
    if how in ("cells+", "cells-") and body:
        k = rng.randrange(len(body))
        cells = body[k].split(",")
        body[k] = ",".join(cells + ["extra"] if how == "cells+" else cells[:-1])
    elif how == "header-drop" and len(head) > 1:
        head.pop(rng.randrange(len(head)))
    elif how == "header-rename" and head:
        head[rng.randrange(len(head))] = rng.choice(("cycle", "", "id", "ID", "x" * 200))
    elif how == "number" and body:
        cols = [i for i, h in enumerate(head) if h in NUMERIC] or [0]
        k = rng.randrange(len(body))
        cells = body[k].split(",")
        i = rng.choice(cols)
        if i < len(cells):
            cells[i] = rng.choice(ODD_NUMBERS)
        body[k] = ",".join(cells)
    elif how == "dup-id" and body:
        body.append(rng.choice(body))
    elif how == "status" and body and "status" in head:
        k = rng.randrange(len(body))
        cells = body[k].split(",")
        i = head.index("status")
        if i < len(cells):
            cells[i] = rng.choice(("weird", "", "OK", "error\x00"))
        body[k] = ",".join(cells)
    elif how == "empty":
        return "", how
    elif how == "header-only":
        body = []
    elif how == "bom":
        return "\ufeff" + text, how
    elif how == "crlf":
        return text.replace("\n", "\r\n"), how
    elif how == "nul" and body:
        body[0] = body[0][:5] + "\0" + body[0][5:]
    elif how == "swap-rows" and len(body) > 1:
        rng.shuffle(body)
    return "\n".join([",".join(head), *body]) + "\n", how


def _damage_jsonl(text: str, rng) -> tuple[str, str]:
    lines = [ln for ln in text.split("\n") if ln]
    how = rng.choice(("partial", "not-object", "number", "drop-key", "dup", "empty", "nul",
                      "null-row"))
    if how == "partial" and lines:
        lines[-1] = lines[-1][:rng.randint(1, max(1, len(lines[-1]) - 1))]
        return "\n".join(lines), how
    if how == "not-object" and lines:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(("[1, 2]", "42", '"x"', "{",
                                                                 "null")))
    elif how == "number" and lines:
        k = rng.randrange(len(lines))
        key = rng.choice(NUMERIC)
        lines[k] = lines[k].replace(f'"{key}": ', f'"{key}": {rng.choice(("NaN", "-1", "1e999", "9" * 5000, chr(34) + "x" + chr(34)))}, "_{key}": ', 1)
    elif how == "drop-key" and lines:
        k = rng.randrange(len(lines))
        lines[k] = lines[k].replace('"status"', '"statux"', 1)
    elif how == "dup" and lines:
        lines.append(rng.choice(lines))
    elif how == "empty":
        return "", how
    elif how == "nul" and lines:
        lines[0] = "\0" + lines[0]
    elif how == "null-row" and lines:
        lines[0] = lines[0].replace('"cycles": ', '"cycles": null, "_c": ', 1)
    return "\n".join(lines) + "\n", how


def damaged(b, fam) -> None:
    c = b.case
    c.command = "report"
    seeds = b.corpus.seeds.get("results", [])
    if not seeds:
        c.args.append(("nonexistent.csv",))
        return
    s = b.pick(seeds)
    b.add_files(b.corpus.files(s.path))
    text = c.files[s.path].decode("utf-8", "replace")
    damage = _damage_jsonl if s.path.endswith(".jsonl") else _damage_csv
    for _ in range(b.rng.randint(1, 2)):
        text, how = damage(text, b.rng)
        c.notes.append(f"{s.path}: damaged ({how})")
    c.files[s.path] = text.encode("utf-8", "surrogatepass")
    c.mutated.append(s.path)
    c.inputs.append(s.path)
    c.args.append((s.path,))
    b.json()
    if b.chance(0.1):
        b.opt("--format", b.pick(("svg", "png", "pdf", "x")))
    if b.chance(0.4):
        b.output("-o", "dir")
    b.stray()
