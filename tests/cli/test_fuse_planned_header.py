"""`fuse` on a planned program (a `fuseflowc plan` output) run without the fuse flags its
`# compile:` header names: when fusion fails, the error says which flags the plan needs, with
the header's location. With the flags given, or without a header, the error is unchanged."""

from __future__ import annotations

from tests.support.golden import run_cli

# A program fuse rejects (regions that depend on each other), whatever the flags.
BODY = """dim I
tensor x[I] : dense
tensor a[I] : dense
tensor b[I] : dense
tensor c[I] : dense
a[i] = x[i] * 2
b[i] = a[i] + 1
c[i] = b[i] * a[i]
fuse r: a, c
"""
HEADER = ("# planned by `fuseflowc plan` for cycles (roofline), --size/--density\n"
          "# compile: fuseflowc fuse PROG --share --inline-widened | fuseflowc lower\n")
ERROR = "error: fusion regions depend on each other in a cycle"
NOTE = ("planned.ff:2:1: note: the header says this program was planned with `fuseflowc fuse "
        "PROG --share --inline-widened`; run it with those flags")


def test_missing_header_flags_are_named(tmp_path):
    path = tmp_path / "planned.ff"
    path.write_text(HEADER + BODY)
    r = run_cli(["fuse", str(path)])
    assert r.exit_code == 1, r.stderr
    assert ERROR in r.stderr and NOTE in r.stderr, r.stderr
    assert "(--share, --inline-widened missing)" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    r = run_cli(["fuse", str(path), "--share", "-o", str(tmp_path / "out.fused")])
    assert r.exit_code == 1 and "(--inline-widened missing)" in r.stderr, r.stderr
    assert not (tmp_path / "out.fused").exists()


def test_no_note_with_the_flags_or_without_a_header(tmp_path):
    path = tmp_path / "planned.ff"
    path.write_text(HEADER + BODY)
    r = run_cli(["fuse", str(path), "--inline-widened", "--share"])
    assert r.exit_code == 1 and ERROR in r.stderr and "planned with" not in r.stderr
    plain = tmp_path / "plain.ff"
    plain.write_text(BODY)
    r = run_cli(["fuse", str(plain)])
    assert r.exit_code == 1 and ERROR in r.stderr and "planned with" not in r.stderr


def test_a_program_that_fuses_needs_no_note(tmp_path):
    path = tmp_path / "planned.ff"
    path.write_text(HEADER + BODY.replace("fuse r: a, c\n", "fuse r: a, b, c\n"))
    r = run_cli(["fuse", str(path)])
    assert r.exit_code == 0 and "planned with" not in r.stderr, r.stderr
