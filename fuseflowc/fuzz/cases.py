"""Fuzz cases: one subcommand with its options and input files, made from the corpus by a seed.

`make_case(corpus, seed, index)` picks a family (fuseflowc.fuzz.families: every subcommand has
some), whose builder makes the case; the plain one-subcommand families (`command_case`) pick an
input of the kind it reads (now and then one of another kind, or stdin), maybe mutates it (textmut) and the
data directory it reads (datamut), and picks options, mostly with good values and sometimes with
bad ones: sizes and densities (zero, negative, 20 and 5000 digits, nan, inf, text), arch values,
channel depths, pipelines, schedule directives, order numbers, and outputs that are odd places
to write (an existing directory, `.`, '', `sub/..`, the input itself, the data directory, a path
under a file, a missing directory, a name too long). The case records which paths the command
reads and which it is asked to write, so that the classifier can tell a legitimate write from a
lost or leftover file.

Case K of seed S depends on (S, K) only, never on earlier cases.
"""

from __future__ import annotations

import posixpath
import random
import re
from dataclasses import dataclass, field

from . import trace_cases
from .corpus import KINDS, Corpus, Seed
from .datamut import mutate_data, mutate_file, mutate_tree
from .sandbox import Entry, Special
from .textmut import TextMutator

#: The seed kind each command reads (estimate reads all three IRs).
READS = {"check": ("program",), "fuse": ("program",), "orders": ("program",),
         "run": ("program",), "gen-data": ("program",), "lower": ("fused",),
         "opt": ("samml",), "simulate": ("samml",), "dot": ("samml",),
         "estimate": ("program", "fused", "samml"), "sweep": ("spec",), "report": ("results",),
         "graph": ("graph",)}
#: Commands whose input may be `-` (stdin).
STDIN_OK = {"check", "fuse", "orders", "lower", "opt", "simulate", "dot", "estimate"}
#: The text kind (textmut) of each seed kind.
TEXT_KIND = {"program": "program", "fused": "fused", "samml": "samml", "spec": "toml",
             "results": "csv", "arch": "toml", "graph": "csv"}

USER_FILE = "notes.txt"
USER_DIR = "mydir"
#: (no large-but-legal sizes such as 10^8: the work they ask for is slow, not wrong; 10^12 asks
#: for more memory than any machine has, which must be refused at once)
BAD_INTS = ("0", "-1", "99999999999999999999", "1" + "0" * 5000, "1e3", "nan", "inf", "abc",
            "", "3.5", "0x10", " 4", "1000000000000")
BAD_FLOATS = ("0", "-0.1", "1.5", "nan", "inf", "-inf", "1e-300", "1e999", "abc", "",
              "1" + "0" * 5000, "0x1p-3")
ARCH_KEYS = ("channel.depth", "memory.bandwidth", "memory.latency", "memory.element_bytes",
             "memory.window", "default.latency", "default.ii", "kind.alu.latency",
             "kind.spacc1.ii", "kind.scan.latency", "block.bmm_latency", "block.load_ii",
             "permute.elements_per_cycle", "energy.alu_op", "energy.dram_byte",
             "energy.reconfiguration", "fabric.pe_tiles", "fabric.mem_tiles",
             "fabric.mem_tile_bytes")
BAD_ARCH_KEYS = ("nope.x", "memory", "memory.bandwidth.x", "", "kind.nope.latency",
                 "channel.depth=", "kind..latency")
ARCH_VALUES = ("0", "-1", "1e-300", "nan", "inf", "-inf", "99999999999999999999", "abc", "",
               "2*b-1", "b*b*b*b", "1e400", "0.5", "(", "1" + "0" * 5000)


@dataclass
class Case:
    """One fuzz case: `fuseflowc COMMAND ARGS...` in a directory holding `files`, with `stdin`.

    args are groups (an option with its value, a flag, a positional) so that minimizing can
    drop whole options. `inputs` are the paths the command reads, `outputs` those it is asked to
    write (relative, normalized; '.' is the working directory), `made` directories fuseflowc
    itself wrote (gen-data outputs, which a later -o may replace), `notes` what was mutated,
    `mutated` which of the input's files (the input, an included or recorded program)."""

    seed: int
    index: int
    command: str
    args: list[tuple[str, ...]]
    files: dict[str, Entry]
    stdin: bytes = b""
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    made: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    mutated: list[str] = field(default_factory=list)
    family: str = ""
    #: (differential cases) the option groups that, swapped for `twin[0]`, make the run on the
    #: other engine: the driver runs both and compares them (fuseflowc.fuzz.twins)
    twin: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    #: (plan cases) the output a successful run writes, which `fuse` must then accept: the
    #: driver runs `fuse` on it (a plan that does not compile is `wrong`)
    then_fuse: str | None = None

    @property
    def argv(self) -> list[str]:
        return [self.command, *(a for g in self.args for a in g)]

    @property
    def twin_argv(self) -> list[str]:
        """The command line of the differential twin run (the other engine)."""
        assert self.twin is not None
        mine, other = self.twin
        return [self.command, *(a for g in self.args for a in (other if g == mine else g))]


def norm(path: str) -> str | None:
    """A relative output path as the classifier compares it ('.' for the working directory);
    None for '-' (stdout) and paths outside the case (absolute ones)."""
    if path == "-" or path.startswith("/"):
        return None
    return posixpath.normpath(path) if path else "."


class _Names:
    """Names a command line may mention, read from the input's text and its program's."""

    def __init__(self, texts: list[str]):
        t = "\n".join(texts)
        lines = re.findall(r"^[ \t]*dim[ \t]+([^\n#]+)", t, re.M)
        dims = [n for line in lines for n in re.findall(r"([A-Za-z_]\w*)\s*(?:=\s*\d+)?", line)]
        self.dims = sorted(set(dims)) or ["N"]
        #: dims the program fixes (`dim H = 16`), with their sizes
        self.fixed = {n: v for line in lines
                      for n, v in re.findall(r"([A-Za-z_]\w*)\s*=\s*(\d+)", line)}
        self.tensors = sorted(set(re.findall(r"^[ \t]*tensor[ \t]+([A-Za-z_]\w*)", t, re.M))) \
            or ["A"]
        self.statements = sorted(set(re.findall(r"^[ \t]*([A-Za-z_]\w*)[ \t]*\[[^\]\n]*\][ \t]*=",
                                                t, re.M))) or ["y"]
        idx = re.findall(r"\[([A-Za-z_][\w, ]*)\]", t)
        self.indices = sorted({i.strip() for g in idx for i in g.split(",")} - set(self.dims)
                              | set(re.findall(r"index\s*=?\s*(u\d+|[a-z]\w*)", t))) or ["i"]
        self.graphs = sorted(set(re.findall(r"^[ \t]*graph[ \t]+([A-Za-z_]\w*)", t, re.M))
                             | set(re.findall(r"^[ \t]*region[ \t]+([A-Za-z_]\w*)", t, re.M))) \
            or ["g"]


class _Builder:
    """Builds one case; a method per subcommand adds its options."""

    def __init__(self, corpus: Corpus, seed: int, index: int):
        self.corpus = corpus
        self.rng = random.Random(f"fuseflowc-fuzz:{seed}:{index}")
        self.case = Case(seed, index, "", [], {})
        self.clean = self.chance(0.4)  # every option value good (the input may be mutated)

    # ---- small pickers --------------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def good(self, p: float) -> bool:
        """Whether a value should be a good one: always in a clean case, else with
        probability `p` (a case with several options would almost never be all good)."""
        return self.clean or self.chance(p)

    def pick(self, seq):
        return self.rng.choice(list(seq))

    def opt(self, *group: str) -> None:
        self.case.args.append(tuple(group))

    def add_files(self, files: dict[str, bytes]) -> None:
        for k, v in files.items():
            self.case.files.setdefault(k, v)

    def int_value(self, good=(1, 2, 3, 4, 6, 8)) -> str:
        return str(self.pick(good)) if self.good(0.75) else self.pick(BAD_INTS)

    def float_value(self, good=(0.1, 0.3, 0.5, 1.0)) -> str:
        return str(self.pick(good)) if self.good(0.75) else self.pick(BAD_FLOATS)

    # ---- inputs ---------------------------------------------------------------------------
    def seed_of(self, kinds: tuple[str, ...]) -> Seed | None:
        if self.chance(0.06):  # an input of the wrong kind
            kinds = tuple(k for k in KINDS if k not in kinds)
        pool = [s for k in kinds for s in self.corpus.seeds.get(k, [])]
        return self.pick(pool) if pool else None

    def input(self, kinds: tuple[str, ...], stdin_ok: bool) -> Seed | None:
        """The positional input: a seed (maybe mutated), by path or on stdin."""
        c = self.case
        seed = self.seed_of(kinds)
        if seed is None:
            c.args.append(("nonexistent.ff",))
            return None
        self.add_files(self.corpus.seed_files(seed))
        arg = seed.path
        if seed.kind == "graph":
            arg = self.mutate_graph(seed)
        elif self.chance(0.55):
            donors = [self.corpus.files(s.path).get(s.path, b"").decode("utf-8", "replace")
                      for s in self.corpus.seeds[seed.kind][:12]]
            m = TextMutator(TEXT_KIND[seed.kind], self.rng, donors,
                            self_path=posixpath.basename(seed.path))
            c.files[seed.path], note = m.mutate(c.files[seed.path])
            c.notes.append(f"{seed.path}: {note}")
            c.mutated.append(seed.path)
        elif seed.needs and self.chance(0.05):  # an included or recorded file instead
            p = self.pick([n for n in seed.needs if n in c.files] or [seed.path])
            c.files[p], note = TextMutator("program", self.rng).mutate(c.files[p])
            c.notes.append(f"{p}: {note}")
            c.mutated.append(p)
        is_file = isinstance(c.files.get(seed.path), bytes)
        if stdin_ok and is_file and self.chance(0.1):
            c.stdin = c.files[seed.path]
            c.args.append(("-",))
        elif stdin_ok and self.chance(0.02):
            c.args.append(("-",))  # stdin left empty
        else:
            c.args.append((arg,))
            # an input of the command only when named: a copy on stdin leaves the file free to
            # be written (`lower - -o seed.fused` is no clobber)
            c.inputs.append(seed.path)
        return seed

    def mutate_graph(self, seed: Seed) -> str:
        """Maybe mutate a graph source (a file, an OGB directory, or a name such as
        synthetic:...); returns the argument naming it."""
        c = self.case
        if not self.chance(0.55):
            return seed.path
        if isinstance(c.files.get(seed.path), bytes):
            c.files[seed.path], note = mutate_file(seed.path, c.files[seed.path], self.rng)
            c.mutated.append(seed.path)
        elif any(k.startswith(seed.path + "/") for k in c.files):
            note = mutate_tree(c.files, seed.path, self.rng)
            c.mutated.append(seed.path)
        else:  # a name: its numbers and keys mutated like any text (no NUL fits in argv)
            new, note = TextMutator("graphname", self.rng).mutate(seed.path.encode())
            c.notes.append(f"graph source: {note}")
            return new.decode("utf-8", "replace").replace("\0", "")
        c.notes.append(f"{seed.path}: {note}")
        return seed.path

    def names(self, seed: Seed | None) -> _Names:
        """The names of the seed as it was before mutation (a valid text)."""
        if seed is None:
            return _Names([])
        return _Names([v.decode("utf-8", "replace")
                       for v in self.corpus.seed_files(seed).values()])

    def data_dir(self, seed: Seed | None, option: str = "--data") -> None:
        """--data DIR: the seed's own data (or another's), maybe mutated."""
        c = self.case
        dirs = self.corpus.data_dirs
        if not dirs:
            return
        d = seed.data if seed is not None and seed.data and self.chance(0.9) else self.pick(dirs)
        self.add_files(self.corpus.files(d))
        c.made.append(d)
        if self.chance(0.3):
            c.notes.append("data: " + mutate_data(c.files, d, self.rng))
        if self.chance(0.03):
            d = self.pick(("nonexistent", "", USER_FILE, "/dev/null", "."))
            if d == USER_FILE:
                c.files[USER_FILE] = b"a user's notes\n"
        c.inputs.append(d)
        self.opt(option, d)

    def output(self, option: str, kind: str, p_odd: float = 0.5) -> None:
        """-o PATH (or --json PATH): a fresh path, or an odd place to write."""
        c = self.case
        fresh = {"file": "out.txt", "dir": "outdir"}[kind]
        if self.good(1 - p_odd):
            path = self.pick((fresh, "sub/" + fresh if "sub" in c.files else fresh))
        else:
            how = self.pick(("user-file", "user-dir", ".", "", "sub/..", "user-dir/",
                             "input", "data", "in-data", "stdout", "missing-dir", "under-file",
                             "long", "escape", "dev-null", "link", "dangling"))
            c.notes.append(f"{option}: {how}")
            if how == "user-file":
                c.files[USER_FILE] = b"a user's notes\n"
                path = USER_FILE
            elif how in ("user-dir", "user-dir/"):
                c.files[USER_DIR + "/keep.txt"] = b"keep me\n"
                path = USER_DIR + ("/" if how.endswith("/") else "")
            elif how in (".", ""):
                path = how
            elif how == "sub/..":
                c.files["sub"] = Special("dir")
                path = "sub/.."
            elif how == "input" and c.inputs:
                path = c.inputs[0]
            elif how in ("data", "in-data") and c.made:
                path = c.made[0] + ("/" + self.pick(("out", "A.npz", "x.npy"))
                                    if how == "in-data" else "")
            elif how == "stdout":
                path = "-"
            elif how == "missing-dir":
                path = "nodir/" + fresh
            elif how == "under-file":
                c.files[USER_FILE] = b"a user's notes\n"
                path = USER_FILE + "/" + fresh
            elif how == "long":
                path = "x" * 300
            elif how == "escape":
                path = "../" + fresh
            elif how == "dev-null":
                path = "/dev/null"
            elif how == "link":
                c.files[USER_DIR + "/keep.txt"] = b"keep me\n"
                c.files["link"] = Special("symlink", USER_DIR)
                path = "link"
            elif how == "dangling":
                c.files["link"] = Special("symlink", "nowhere/x")
                path = "link"
            else:
                path = fresh
        n = norm(path)
        if n is not None:
            c.outputs.append(n)
        self.opt(option, path)

    def schedule(self, names: _Names) -> None:
        """-s DIRECTIVE (a few), mostly well-formed for the program's names."""
        for _ in range(self.rng.randint(1, 2)):
            st, ix = self.pick(names.statements), self.pick(names.indices)
            d = self.pick((f"parallelize {st}: {ix} by {self.int_value((2, 4))}",
                           f"order {st}: " + " -> ".join(self.rng.sample(
                               names.indices, min(len(names.indices), 3))),
                           f"block {self.pick(names.tensors)}: {self.int_value((2, 4))}",
                           f"fuse all: {', '.join(names.statements)}",
                           f"output {self.pick(names.tensors)}"))
            if not self.good(0.7):
                d = TextMutator("directive", self.rng).mutate(d.encode())[0].decode(
                    "utf-8", "replace")
            self.opt("-s", d)

    def sizes(self, names: _Names) -> None:
        """--size DIM=N for every dim of the program (the commands need them all), each good
        with probability 0.9 (a dim the program fixes: its size; another is an error);
        sometimes a malformed one as well."""
        for dim in names.dims:
            v = str(self.pick((2, 3, 5, 8))) if self.good(0.9) else self.pick(BAD_INTS)
            if dim in names.fixed and v.isdigit() and self.good(0.9):
                v = names.fixed[dim]
            self.opt("--size", f"{dim}={v}")
        if not self.good(0.85):
            v = self.int_value((2, 3))
            self.opt("--size", self.pick((f"ZZ={v}", v, f"{self.pick(names.dims)}=", f"={v}",
                                          f"{self.pick(names.dims)}={v}")))

    def densities(self, names: _Names) -> None:
        for _ in range(self.rng.randint(1, 2)):
            v = self.float_value()
            t = self.pick(names.tensors) if self.good(0.9) else "ZZ"
            self.opt("--density", self.pick((v, f"{t}={v}")))

    def order(self, option: str = "--order") -> None:
        self.opt(option, self.pick(("0", "1", "2", "5", "paper")) if self.good(0.7)
                 else self.pick((*BAD_INTS, "papr")))

    def pipeline(self, names: _Names) -> str:
        passes = []
        for _ in range(self.rng.randint(1, 3)):
            factor = self.pick(("2", "4")) if self.good(0.7) else self.pick(
                ("1", "0", "-1", "1024", "1025", "99999999999999999999", "nan", "x"))
            ix = self.pick(names.indices) if self.good(0.9) else "zz"
            reduce = self.pick(("lanes", "serial")) if self.good(0.9) else "x"
            good = (f"parallelize{{index={ix},factor={factor}}}",
                    f"parallelize{{index={ix},factor={factor},reduce={reduce}}}",
                    "schedule", "schedule{reduce=lanes}", "locate", "cse", "dce", "cleanup",
                    "dce{decls=false}", "map{fabric=onyx}", "map{fabric=onyx-quarter}",
                    "map{pe=4,mem=4}", "map{mem-bytes=64}")
            passes.append(self.pick(good) if self.good(0.9) else
                          self.pick(("nope", "parallelize{", "cse{x=1}", "", "dce{decls=2}",
                                     "map{fabric=nope}", "map{pe=-1}")))
        return ",".join(passes)

    # ---- the subcommands ------------------------------------------------------------------
    def check(self, seed, names):
        if self.chance(0.2):
            self.schedule(names)
        if self.chance(0.2):
            self.opt("--unfused")
        if self.chance(0.15):
            self.opt("-q")
        if self.chance(0.3):
            self.output("-o", "file")

    def fuse(self, seed, names):
        if seed is not None and self.chance(0.1):  # --verify-ir on fused IR
            (arg,) = self.case.args.pop()
            if arg == "-":              # the program was on stdin (and is no named input)
                self.case.stdin = b""
            elif seed.path in self.case.inputs:
                self.case.inputs.remove(seed.path)
            self.input(("fused",), True)
            self.opt("--verify-ir")
        else:
            for flag in ("--unfused", "--inline-widened", "--free-input-order", "--share"):
                if self.chance(0.15):
                    self.opt(flag)
            if self.chance(0.25):
                self.order()
            if self.chance(0.1):
                self.opt("--region", self.pick(names.statements + ["zz"]))
            if self.chance(0.2):
                self.schedule(names)
        if self.chance(0.3):
            self.output("-o", "file")

    def orders(self, seed, names):
        if self.chance(0.4):
            self.opt("--list", self.pick(("1", "3", "0")) if self.good(0.8) else
                     self.pick(("1000000", "99999999999999999999", "-1", "x")))
        for flag in ("--inline-widened", "--free-input-order", "--unfused"):
            if self.chance(0.15):
                self.opt(flag)
        self.json()
        if self.chance(0.1):
            self.opt("--region", self.pick(names.statements + ["zz"]))
        if self.chance(0.2):
            self.schedule(names)

    def lower(self, seed, names):
        if self.chance(0.2):
            self.opt("--dump-table")
        if self.chance(0.3):
            self.opt("-O0")
        if self.chance(0.3):
            self.output("-o", "file")

    def opt_(self, seed, names):
        if self.chance(0.85):
            self.opt("-p", self.pipeline(names))
        for flag in ("--no-verify", "--print-after-all", "--time-passes"):
            if self.chance(0.08):
                self.opt(flag)
        if self.chance(0.02):
            self.opt("--list-passes")
        if self.chance(0.3):
            self.output("-o", "file")

    def arch(self) -> None:
        """--set, --depth, --arch, --max-cycles."""
        if self.chance(0.25):
            for _ in range(self.rng.randint(1, 2)):
                key = self.pick(ARCH_KEYS) if self.good(0.85) else self.pick(BAD_ARCH_KEYS)
                val = self.pick(("1", "2", "4", "16", "100")) if self.good(0.6) else \
                    self.pick(ARCH_VALUES)
                self.opt("--set", f"{key}={val}")
        if self.chance(0.15):
            self.opt("--depth", self.pick(("1", "2", "4", "inf")) if self.good(0.6) else
                     self.pick(("0", "-1", "nan", "99999999999999999999", "abc", "1.5", "")))
        if self.chance(0.08):
            seeds = self.corpus.seeds.get("arch", [])
            if seeds and self.good(0.85):
                s = self.pick(seeds)
                self.add_files(self.corpus.files(s.path))
                if self.chance(0.6):
                    c = self.case
                    c.files[s.path], note = TextMutator("toml", self.rng).mutate(c.files[s.path])
                    c.notes.append(f"{s.path}: {note}")
                self.case.inputs.append(s.path)
                self.opt("--arch", s.path)
            else:
                self.opt("--arch", self.pick(("nonexistent.toml", ".", "/dev/null")))
        if self.chance(0.1):
            self.opt("--max-cycles", self.int_value((1, 10, 1000)))

    def simulate(self, seed, names):
        self.data_dir(seed)
        if self.chance(0.4):
            self.opt("--check")
        if self.chance(0.05) and self.corpus.data_dirs:
            d = self.pick(self.corpus.data_dirs)
            self.add_files(self.corpus.files(d))
            self.case.inputs.append(d)
            self.opt("--expect", d)
        self.arch()
        if self.chance(0.08):
            self.opt("--graph", self.pick(names.graphs + ["zz"]))
        if self.chance(0.25):
            self.output("-o", "dir")
        self.json()

    def json(self) -> None:
        """--json (a flag: JSON on stdout) and --json-out FILE."""
        if self.chance(0.15):
            self.opt("--json")
        if self.chance(0.15):
            self.output("--json-out", "file")

    def dot(self, seed, names):
        if self.chance(0.15):
            self.opt("--graph", self.pick(names.graphs + ["zz"]))
        if self.chance(0.4):
            if self.chance(0.6):
                self.output("-o", "file", p_odd=0.3)
                a = self.case.args[-1]
                suffix = self.pick((".dot", ".gv", ".dot", ".svg", ".png", ".txt", ""))
                if a[1] == "out.txt":
                    self.case.args[-1] = (a[0], "out" + suffix)
                    self.case.outputs[-1] = "out" + suffix
            else:
                self.output("-o", "file")

    def estimate(self, seed, names):
        if self.chance(0.5) and seed is not None:
            self.data_dir(seed)
        else:
            if self.chance(0.8):
                self.sizes(names)
            if self.chance(0.5):
                self.densities(names)
        if seed is not None and seed.kind == "program":
            if self.chance(0.2):
                self.order()
            if self.chance(0.15):
                self.opt("--inline-widened")
            if self.chance(0.1):
                self.schedule(names)
            if self.chance(0.1):
                self.opt("--unfused")
        if self.chance(0.1):
            self.opt("--region", self.pick(names.graphs + names.statements + ["zz"]))
        self.json()
        if self.chance(0.2):
            self.opt("-q")
        if self.chance(0.1):
            self.opt("--element-bytes", self.int_value((1, 4, 8)))
        if self.chance(0.25):
            self.output("-o", "file")

    def run(self, seed, names):
        self.data_dir(seed)
        if self.chance(0.15):
            self.schedule(names)
        if self.chance(0.1):
            self.opt("--unfused")
        if self.chance(0.15):
            self.opt("--all")
        if self.chance(0.15):
            self.opt("--format", self.pick(("auto", "npy", "npz", "sam", "csv")))
        if self.chance(0.45):
            self.output("-o", "dir")
        self.json()

    def gen_data(self, seed, names):
        if self.chance(0.8):
            self.sizes(names)
        if self.chance(0.4):
            self.densities(names)
        if self.chance(0.2):
            self.opt("--seed", self.pick(("1", "2")) if self.good(0.7) else
                     self.pick(("-1", "99999999999999999999", "x")))
        if self.chance(0.12):
            graphs = self.corpus.seeds.get("graph", [])
            if graphs and self.good(0.8):
                g = self.pick(graphs)
                self.add_files(self.corpus.seed_files(g))
                self.case.inputs.append(g.path)
                arg = self.mutate_graph(g) if self.chance(0.3) else g.path
            else:
                arg = self.pick(("nonexistent.npz", "/dev/zero", ".", "synthetic:", "karate,x"))
            self.opt("--graph", arg)
            if self.chance(0.3):
                self.opt("--normalize", self.pick(("gcn", "mean", "none", "x")))
            if self.chance(0.2):
                self.opt("--graph-tensor", self.pick(names.tensors + ["zz"]))
            if self.chance(0.2):
                self.opt("--feature-tensor", self.pick(names.tensors + ["zz"]))
        if self.chance(0.2):
            self.opt("--format", self.pick(("auto", "npy", "npz", "sam", "x")))
        if self.chance(0.1):
            b, r = self.int_value((2, 4)), self.int_value((1, 2))
            self.opt("--mask", f"{self.pick(names.tensors)}=bigbird:block={b},random={r}")
        if self.chance(0.1):
            self.schedule(names)
        self.output("-o", "dir", p_odd=0.35)

    def graph(self, seed, names):
        if self.chance(0.3):
            self.opt("--seed", self.pick(("1", "2")) if self.good(0.7) else
                     self.pick(("-1", "99999999999999999999", "x")))
        if self.chance(0.2):
            self.opt("--json")
        if self.chance(0.4):
            self.output("-o", "file", p_odd=0.3)
            a = self.case.args[-1]
            if a[1] == "out.txt":
                name = "out" + self.pick((".npz", ".npz", ".npy", ""))
                self.case.args[-1] = (a[0], name)
                self.case.outputs[-1] = name

    def sweep(self, seed, names):
        # only the corpus's own small specs run for real: the examples' grids take minutes
        if self.chance(0.7) or seed is None or not seed.path.startswith("seeds/specs/"):
            self.opt("--dry-run")
        if self.chance(0.1):
            self.opt("-j", self.pick(("1", "2")) if self.good(0.6) else
                     self.pick(("0", "99999999999999999999", "x")))
        if self.chance(0.1):
            self.opt("--prune", self.float_value((1.5, 2.0)))
        if self.chance(0.2):
            self.opt("--timeout", self.float_value((2.0, 5.0)))
        if self.chance(0.1):
            self.opt("--strict")
        if self.chance(0.05):  # (a scheduler address is tried for 10 s: none here)
            self.opt("--executor", self.pick(("local", "dask://", "dask://host:port",
                                              "dask://h:99999", "ray://x",
                                              "dask://h:1?connect-timeout=inf")))
        c = self.case
        if self.chance(0.2) and self.corpus.seeds.get("results"):
            s = self.pick(self.corpus.seeds["results"])  # resume an existing results file
            self.add_files(self.corpus.files(s.path))
            c.outputs.append(s.path)
            self.opt("-o", s.path)
        else:
            self.output("-o", "file", p_odd=0.3)
            a = c.args[-1]
            if a[1] == "out.txt":
                ext = self.pick((".csv", ".jsonl", ".csv", ".txt"))
                c.args[-1] = (a[0], "out" + ext)
                c.outputs[-1] = "out" + ext

    def report(self, seed, names):
        self.json()
        if self.chance(0.15):
            self.opt("--format", self.pick(("svg", "png", "pdf")))
        if self.chance(0.35):
            self.output("-o", "dir")

    def build(self, command: str) -> Case:
        c = self.case
        c.command = command
        seed = self.input(READS[command], command in STDIN_OK)
        names = self.names(seed)
        getattr(self, {"opt": "opt_", "gen-data": "gen_data"}.get(command, command))(seed, names)
        trace_cases.extend(self, command, seed)   # simulate --trace, dot --load
        self.stray()
        return c

    def stray(self) -> None:
        if self.chance(0.03):  # an unknown option or a stray argument
            self.opt(self.pick(("--nope", "extra-arg", "-o", "--size")))


def make_case(corpus: Corpus, seed: int, index: int, families: tuple[str, ...] = ()) -> Case:
    """Case `index` of the run with `seed`: a family picked by weight (only `families`, given
    by family or command name, if any), which builds it (fuseflowc.fuzz.families)."""
    from .families import pick_family

    b = _Builder(corpus, seed, index)
    fam = pick_family(b.rng, families)
    b.case.family = fam.name
    fam.builder()(b, fam)
    c = b.case
    c.outputs = list(dict.fromkeys(c.outputs))
    return c


def command_case(b: _Builder, family) -> None:
    """A family that is one subcommand with its seeds and options (the builder's method)."""
    b.build(family.command)
