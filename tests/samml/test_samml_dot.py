"""`fuseflowc dot`: DOT text, files, SVG/PNG through Graphviz (or a clear error without it)."""

import shutil

import pytest

from tests.support.golden import ROOT, run_cli

SPMV = str(ROOT / "tests" / "golden" / "samml" / "spmv.samml")


def test_dot_to_file(tmp_path):
    out = tmp_path / "g.dot"
    r = run_cli(["dot", SPMV, "-o", str(out)])
    assert r.exit_code == 0 and r.stdout == ""
    text = out.read_text()
    assert text.startswith('digraph "spmv" {') and text.endswith("}\n")
    # SAM conventions: one edge style per stream kind, three shaded regions.
    for style in ("style=dashed", "style=bold", "style=solid", "style=dotted"):
        assert style in text
    for region in ("input iteration", "computation", "tensor construction"):
        assert f'label="{region}"' in text


def test_dot_from_stdin_matches_file():
    text = open(SPMV).read()
    assert run_cli(["dot", "-"], input=text).stdout == run_cli(["dot", SPMV]).stdout


def test_svg_without_graphviz_asked_for(tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    out = tmp_path / "g.svg"
    r = run_cli(["dot", SPMV, "-o", str(out), "--renderer", "graphviz"])
    assert r.exit_code == 1
    assert "apt-get install graphviz" in r.stderr and "brew install graphviz" in r.stderr
    assert "--renderer builtin" in r.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
@pytest.mark.parametrize("ext,magic", [("svg", b"<"), ("png", b"\x89PNG")])
def test_rendered_with_graphviz(tmp_path, ext, magic):
    out = tmp_path / f"g.{ext}"
    r = run_cli(["dot", SPMV, "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    assert out.read_bytes().lstrip()[:len(magic)] == magic


def test_unknown_extension_is_a_usage_error(tmp_path):
    r = run_cli(["dot", SPMV, "-o", str(tmp_path / "g.jpg")])
    assert r.exit_code == 2 and ".svg or .png" in r.stderr


def test_invalid_graph_writes_nothing(tmp_path):
    bad = tmp_path / "bad.samml"
    bad.write_text("tensor A[N]: sparse input\ngraph g {\n  %r = root {tensor = B}\n}\n")
    out = tmp_path / "g.dot"
    r = run_cli(["dot", str(bad), "-o", str(out)])
    assert r.exit_code == 1 and f"{bad}:3:23: error: tensor B is not declared" in r.stderr
    assert not out.exists()


def _fake_dot(tmp_path, body: str) -> str:
    """A stand-in for Graphviz `dot` (a shell script) to test the rendering plumbing."""
    exe = tmp_path / "bin" / "dot"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(0o755)
    return str(exe)


def test_render_plumbing_with_a_fake_dot(tmp_path, monkeypatch):
    # Records its arguments and copies stdin (the DOT text) to the -o file.
    fake = _fake_dot(tmp_path, 'echo "$@" > "$(dirname "$0")/args"\ncat > "$3"\n')
    monkeypatch.setattr(shutil, "which", lambda name: fake if name == "dot" else None)
    out = tmp_path / "g.png"
    r = run_cli(["dot", SPMV, "-o", str(out)])
    assert r.exit_code == 0, r.stderr
    assert out.read_text() == run_cli(["dot", SPMV]).stdout
    assert (tmp_path / "bin" / "args").read_text().startswith("-Tpng -o ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin", "g.png"]  # no temp left


def test_render_failure_is_a_user_error(tmp_path, monkeypatch):
    fake = _fake_dot(tmp_path, 'echo "Error: syntax error in line 1" >&2\nexit 1\n')
    monkeypatch.setattr(shutil, "which", lambda name: fake if name == "dot" else None)
    out = tmp_path / "g.svg"
    r = run_cli(["dot", SPMV, "-o", str(out)])
    assert r.exit_code == 1 and "Graphviz dot failed" in r.stderr and "syntax error" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin"]


def _chain_module(graphs: int, nodes: int) -> str:
    """SAMML text: `graphs` graphs, each a root, a dense scan and a chain of `nodes` - 3 unary
    ALUs into a writer."""
    out = ["tensor x[N]: dense input"] + [f"tensor y{g}[N]: dense output" for g in range(graphs)]
    for g in range(graphs):
        body = ["  %r = root {tensor = x}",
                "  %c, %f = scan %r {tensor = x, mode = 0, format = dense, index = i}",
                "  %v0 = array %f {tensor = x}"]
        for k in range(1, nodes - 3):
            body.append(f"  %v{k} = alu %v{k - 1} {{op = neg}}")
        body.append(f"  write_vals %v{nodes - 4} {{tensor = y{g}}}")
        out += [f"graph g{g} {{", *body, "}"]
    return "\n".join(out) + "\n"


def test_a_picture_too_large_to_read_is_refused_at_once(tmp_path, monkeypatch):
    """Found by fuzzing: `dot -o out.png` of a 12-layer model (5,000 nodes) ran for minutes;
    a stacked RNN (8,000) hit Graphviz's 2-minute timeout. Refused before Graphviz runs (a
    fake `dot` that fails would show), with the way to draw less; DOT text is still written."""
    from fuseflowc.samml import dot as dot_module
    monkeypatch.setattr(dot_module, "MAX_DRAWN_NODES", 40)
    monkeypatch.setattr(dot_module.shutil, "which", lambda name: "/nonexistent/dot")
    g = tmp_path / "big.samml"
    g.write_text(_chain_module(graphs=3, nodes=20))
    r = run_cli(["dot", str(g), "-o", str(tmp_path / "big.png")])
    assert r.exit_code == 1, r.stderr
    assert "its 3 graphs have 60 nodes (the largest, g0, 20), more than the 40" in r.stderr
    assert "--graph NAME" in r.stderr and not (tmp_path / "big.png").exists()
    r = run_cli(["dot", str(g), "--graph", "g1", "-o", str(tmp_path / "g1.dot")])
    assert r.exit_code == 0 and (tmp_path / "g1.dot").exists()
    r = run_cli(["dot", str(g), "-o", str(tmp_path / "all.dot")])   # DOT text: no limit
    assert r.exit_code == 0, r.stderr
