"""Token encoding of SAM streams, chosen so data tokens need no wrapping.

crd/ref streams carry non-negative ints; val streams carry Python floats (or b x b numpy blocks);
control tokens are negative ints in every stream:

    D  = -1                   done
    N  = -2                   empty ("no element here", from union)
    Sk = -3 - k - e * 2**24   stop of level k (S0 = -3, S1 = -4, ...; up to 2**24 levels)
    R  = 0                    repeat signal (repsig streams only; S there is S0)

So in a crd/ref stream `t >= 0` is data; in a val stream `t.__class__ is int` is control (a value
is never an int: arrays and ALUs only produce floats or blocks).

A stop also carries, invisibly (it prints and compares by level as plain `Sk`), its *emptiness*
e: the number of innermost levels that have no fiber at that point. SAM streams cannot tell a
stop closing an empty fiber (`S1` after a row whose only fiber is empty) from a bare stop standing
for a missing fiber (`S1` for an empty row): both read `S1`. Scanners and repeats know which one
they emit (a fiber was looked up, or not), and reducers, accumulators and joins need it (an empty
fiber reduces to an explicit 0; a missing one to nothing), so it rides along: e = 0 closes an
existing fiber, e >= 1 is bare.
"""

from __future__ import annotations

D = -1
N = -2
S0 = -3
R = 0
_EB = 1 << 24          # emptiness unit of a stop token (the helpers below hide the encoding)
_MASK = _EB - 1


def stop(k: int, e: int = 0) -> int:
    """The token of stop level k with emptiness e (0: it closes an existing fiber)."""
    return -3 - k - e * _EB


def is_stop(t) -> bool:
    """Whether token t is a stop Sk (of any level and emptiness)."""
    return t.__class__ is int and t <= -3


def level(t: int) -> int:
    """The level k of stop token Sk."""
    return (-3 - t) & _MASK


def empt(t: int) -> int:
    """The emptiness e of a stop token (0: closes an existing fiber; e >= 1: bare)."""
    return (-3 - t) >> 24


def is_bare(t) -> bool:
    """Whether t is a bare stop: one standing for a fiber that does not exist (emptiness >= 1)."""
    return is_stop(t) and empt(t) > 0


def is_done(t) -> bool:
    """Whether t is D, the end of the stream."""
    return t.__class__ is int and t == D


def is_empty(t) -> bool:
    """Whether t is N, the empty element (from a union, or a scan of an N ref)."""
    return t.__class__ is int and t == N


def is_crd(t) -> bool:
    """Whether t is a coordinate or ref (a non-negative int), not a value or control token."""
    return t.__class__ is int and t >= 0


def is_element(t) -> bool:
    """Whether t is an element of a fiber: a coordinate, ref or value, or N (an empty one);
    not a stop or D."""
    return t.__class__ is not int or t >= 0 or t == N


def same_stop(a, b) -> bool:
    """True when a and b are stops of the same level, or the same D / N."""
    if a.__class__ is not int or b.__class__ is not int:
        return False
    if a <= -3 and b <= -3:
        return level(a) == level(b)
    return a == b


def show(t, kind: str = "crd") -> str:
    """Human text of one token: `3`, `1.5`, `S0`, `D`, `N`, `R`, `<4x4 block>`."""
    if t.__class__ is int:
        if t == D:
            return "D"
        if t == N:
            return "N"
        if t <= -3:
            return f"S{level(t)}"
        if kind == "repsig":
            return "R"
        return str(t)
    if t.__class__ is float:
        return f"{t:g}"
    shape = getattr(t, "shape", None)
    if shape is not None:
        return f"<{'x'.join(map(str, shape))} block>"
    return repr(t)


def show_empt(tokens, kind: str = "crd") -> str:
    """Like show_all, but bare stops as `Sk/e` (the inverse of `parse`)."""
    return " ".join(show(t, kind) + (f"/{empt(t)}" if is_stop(t) and empt(t) else "")
                    for t in tokens)


def show_all(tokens, kind: str = "crd") -> str:
    """Space-separated text of a token sequence."""
    return " ".join(show(t, kind) for t in tokens)


def parse(text: str, kind: str = "crd") -> list:
    """Tokens from text like `0 2 S0 S0 1 S1 D` (tests, hand-written streams). In `val` streams
    numbers become floats; in `repsig` streams `R`/`S`/`D`. `Sk/e` is a stop with emptiness e."""
    out: list = []
    for w in text.split():
        if w == "D":
            out.append(D)
        elif w == "N":
            out.append(N)
        elif w == "R":
            out.append(R)
        elif w == "S":
            out.append(S0)
        elif w[0] == "S":        # S2 (closes a fiber) or S2/1 (emptiness 1: bare)
            k, _, e = w[1:].partition("/")
            out.append(stop(int(k), int(e or 0)))
        elif kind == "val":
            out.append(float(w))
        else:
            out.append(int(w))
    return out
