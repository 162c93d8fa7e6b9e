"""Token encoding of SAM streams, chosen so data tokens need no wrapping.

crd/ref streams carry non-negative ints; val streams carry Python floats (or b x b numpy blocks);
control tokens are negative ints in every stream:

    D  = -1          done
    N  = -2          empty ("no element here", from union)
    Sk = -3 - k      stop of level k (S0 = -3, S1 = -4, ...; no cap)
    R  = 0           repeat signal (repsig streams only; S there is S0)

So in a crd/ref stream `t >= 0` is data; in a val stream `t.__class__ is int` is control (a value
is never an int: arrays and ALUs only produce floats or blocks).
"""

from __future__ import annotations

D = -1
N = -2
S0 = -3
R = 0


def stop(k: int) -> int:
    """The token of stop level k."""
    return -3 - k


def is_stop(t) -> bool:
    return t.__class__ is int and t <= -3


def level(t: int) -> int:
    """The level k of stop token Sk."""
    return -3 - t


def show(t, kind: str = "crd") -> str:
    """Human text of one token: `3`, `1.5`, `S0`, `D`, `N`, `R`, `<4x4 block>`."""
    if t.__class__ is int:
        if t == D:
            return "D"
        if t == N:
            return "N"
        if t <= -3:
            return f"S{-3 - t}"
        if kind == "repsig":
            return "R"
        return str(t)
    if t.__class__ is float:
        return f"{t:g}"
    shape = getattr(t, "shape", None)
    if shape is not None:
        return f"<{'x'.join(map(str, shape))} block>"
    return repr(t)


def show_all(tokens, kind: str = "crd") -> str:
    """Space-separated text of a token sequence."""
    return " ".join(show(t, kind) for t in tokens)


def parse(text: str, kind: str = "crd") -> list:
    """Tokens from text like `0 2 S0 S0 1 S1 D` (tests, hand-written streams). In `val` streams
    numbers become floats; in `repsig` streams `R`/`S`/`D`."""
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
        elif w[0] == "S":
            out.append(stop(int(w[1:])))
        elif kind == "val":
            out.append(float(w))
        else:
            out.append(int(w))
    return out
