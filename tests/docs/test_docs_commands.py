"""Every command in the ```sh blocks of README.md and docs/*.md runs as written (issue #22):
the documentation cannot drift from the tool. Each block is one test, run in file order in a
sandbox per document (tests/docs/commands.py says how); a block marked
`<!-- docs-test: skip: REASON -->` is skipped with its reason shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs import commands as dc

BLOCKS = [b for doc in dc.documents() for b in dc.blocks(doc)]


@pytest.fixture(scope="module")
def boxes(tmp_path_factory):
    """One sandbox per document, made when its first block runs."""
    made: dict[Path, Path] = {}

    def box(doc: Path) -> Path:
        if doc not in made:
            made[doc] = dc.sandbox(tmp_path_factory.mktemp(doc.stem.replace(".", "-")) / "repo")
        return made[doc]
    return box


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_the_documented_commands_run_as_written(block, boxes):
    if block.skip is not None:
        print(f"{block.where}: skipped: {block.skip}")
        pytest.skip(f"{block.where}: {block.skip}")
    box = boxes(block.path)
    for cmd in block.commands:
        out = dc.run(cmd.text, box)
        assert out.code == 0, (
            f"{block.path.name}:{cmd.line}: `{cmd.text}` ({out.how}) exited {out.code}:\n"
            f"{out.stderr[-3000:]}")


def test_every_sh_block_is_found_and_every_document_is_read():
    """Counted independently of the extractor: the opening ```sh fences of every document."""
    count = 0
    for doc in dc.documents():
        count += sum(1 for line in doc.read_text(encoding="utf-8").splitlines()
                     if re.match(r"^\s*```sh\s*$", line))
    assert len(BLOCKS) == count > 0
    assert all(b.commands for b in BLOCKS)       # an empty block is a mistake in the docs


SAMPLE = """# title

```sh
fuseflowc check a.ff   # a comment
fuseflowc fuse a.ff | fuseflowc lower \\
  | fuseflowc opt -p 'locate,schedule' > a.samml
echo '# not a comment' x#y
```

<!-- docs-test: skip: needs /work/shared/data -->

```sh
fuseflowc graph /work/shared/data/cora.npz
```

```toml
key = 1
```
"""


def test_the_extractor_joins_continuations_drops_comments_and_reads_markers(tmp_path):
    doc = tmp_path / "x.md"
    doc.write_text(SAMPLE)
    found = dc.blocks(doc)
    assert [(b.line, b.skip) for b in found] == [(3, None), (12, "needs /work/shared/data")]
    assert [(c.line, c.text) for c in found[0].commands] == [
        (4, "fuseflowc check a.ff"),
        (5, "fuseflowc fuse a.ff | fuseflowc lower | fuseflowc opt -p 'locate,schedule' > "
            "a.samml"),
        (7, "echo '# not a comment' x#y")]


@pytest.mark.parametrize("text, where", [
    ("<!-- docs-test: skip -->\n```sh\nls\n```\n", 1),
    ("<!-- docs-test: skip:  -->\n```sh\nls\n```\n", 1),
    ("<!-- docs-test: skip: slow -->\ntext\n```sh\nls\n```\n", 1),
    ("<!-- docs-test: skip: slow -->\n```python\nx = 1\n```\n", 1),
    ("```sh\nls\n```\n<!-- docs-test: skip: slow -->\n", 4)])
def test_a_malformed_or_misplaced_marker_is_an_error(tmp_path, text, where):
    doc = tmp_path / "x.md"
    doc.write_text(text)
    with pytest.raises(dc.DocsError, match=rf"x\.md:{where}: "):
        dc.blocks(doc)


def test_only_fuseflowc_pipelines_run_in_process():
    assert dc.fuseflowc_stages("fuseflowc fuse a.ff | fuseflowc lower > o.samml") == (
        [["fuse", "a.ff"], ["lower"]], "o.samml")
    assert dc.fuseflowc_stages("fuseflowc opt -p 'a,b{x=1}'") == ([["opt", "-p", "a,b{x=1}"]],
                                                                  None)
    for text in ("cat x | fuseflowc simulate -", "fuseflowc check a.ff && ls",
                 "fuseflowc check a.ff 2> err", "make demo", "fuseflowc check 'unclosed"):
        assert dc.fuseflowc_stages(text) is None


def test_tmp_paths_move_into_the_sandbox(tmp_path):
    assert dc.in_sandbox("fuseflowc run p.ff --data /tmp/d -o /tmp/out x/tmp/y", tmp_path) == (
        f"fuseflowc run p.ff --data {tmp_path}/tmp/d -o {tmp_path}/tmp/out x/tmp/y")


def test_both_ways_of_running_agree_and_stay_in_the_sandbox(tmp_path):
    box = dc.sandbox(tmp_path / "repo")
    assert not (box / "fuseflowc").exists() and (box / "ir_examples").is_dir()
    cmd = "fuseflowc fuse ir_examples/kernels/spmv.ff | fuseflowc lower > /tmp/a.samml"
    assert dc.run(cmd, box).code == 0
    assert dc.run(cmd.replace("a.samml", "b.samml").replace("lower", "lower -"), box).how \
        == "in-process"
    r = dc.run("cat ir_examples/kernels/spmv.ff | fuseflowc fuse - | fuseflowc lower "
               "> /tmp/c.samml", box)
    assert r.how == "bash" and r.code == 0, r.stderr
    a = (box / "tmp" / "a.samml").read_text()
    assert a == (box / "tmp" / "b.samml").read_text()
    # from stdin fuse records no source; otherwise the same module
    assert [x for x in a.splitlines() if not x.startswith("source")] == \
        (box / "tmp" / "c.samml").read_text().splitlines()
    r = dc.run("fuseflowc check nope.ff", box)
    assert r.code == 1 and "nope.ff" in r.stderr
