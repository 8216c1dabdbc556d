#!/usr/bin/env python3
"""Checks the layout rules of ARCHITECTURE.md (issues 21 and 31): no file over MAX_LINES
lines in any crate, except the few already over it (OVER: each may shrink, never grow,
and leaves the list once under), and no import cycle between the files of one crate (a
file naming another file's items through `crate::`, `super::` or a child module path).
Declaring a child (`mod x;`) is not an import. Exits 1 with the reasons.

Comments, strings and raw strings are taken out before paths are read; `use` trees
with braces are expanded; `super::super::` climbs twice. `--self-test` plants cycles in
a scratch crate and checks they, and only they, are found. A crate whose integration
tests are one binary (`autotests = false`) must declare every tests/*.rs in tests/it.rs.

Usage: python3 scripts/check_layout.py [--max-lines N] [--self-test]
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CRATES = ["core", "endpoint", "store", "retrieval", "engine", "tiers", "ipc", "daemon", "cli", "eval"]
MAX_LINES = 600
# Files over MAX_LINES when the cap was extended to every crate (issue 31), with their
# length then: they are to be split by responsibility as they are touched.
OVER = {
}


def module_of(src: Path, f: Path) -> tuple:
    rel = f.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts in (["lib"], ["main"]):
        return ()
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


def strip_comments(text: str) -> str:
    """The code of a Rust file with comments (line, block, nested) and the contents of
    strings, raw strings, byte strings and char literals taken out, newlines kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if text[i] == "\n" else "")
                    i += 1
        elif (m := re.match(r'b?r(#*)"', text[i:])) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            close = '"' + m.group(1)
            j = text.find(close, i + m.end())
            j = n if j < 0 else j + len(close)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and (m := re.match(r"'(\\.[^']*|[^\\'])'", text[i:])):
            # A char literal; a lifetime ('a) has no closing quote right after.
            out.append("' '")
            i += m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def use_paths(tree: str) -> list:
    """The paths a `use` tree names: `a::{b, c::{d, e}}` is a::b, a::c::d, a::c::e."""
    # An alias names nothing of the crate (`x as y`): drop it before the spaces go, so
    # that a name holding "as" (`gasket`) is kept whole.
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+\w+", "", tree))
    depth, start, parts = 0, 0, []
    brace = tree.find("{")
    if brace < 0:
        return [tree] if tree else []
    prefix, inner = tree[:brace], tree[brace + 1:tree.rfind("}")]
    for k, ch in enumerate(inner):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(inner[start:k])
            start = k + 1
    parts.append(inner[start:])
    out = []
    for part in parts:
        for p in use_paths(part):
            out.append(prefix + p if p != "self" else prefix.rstrip(":"))
    return out


def resolve(path: list, me: tuple, modules: set):
    """The module of this crate a path names (its longest known prefix), or None."""
    head, rest = path[0], path[1:]
    if head == "crate":
        base = []
    elif head in ("super", "self"):
        base = list(me)
        if head == "super":
            base = base[:-1]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
    else:
        # A child module of this file (`use x::y` where x is declared here).
        if me + (head,) not in modules:
            return None
        base, rest = list(me), path
    full = tuple(base + [p for p in rest if p and p != "*"])
    for k in range(len(full), -1, -1):
        if full[:k] in modules:
            return full[:k]
    return None


def references(text: str, me: tuple, modules: set) -> set:
    """Modules of this crate a file names, as module tuples (longest known prefix)."""
    body = strip_comments(text)
    # Skip test modules: tests may reach anywhere.
    body = re.split(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", body)[0]
    found = set()
    for m in re.finditer(r"\buse\s+([^;]+);", body):
        for path in use_paths(m.group(1)):
            r = resolve(path.split("::"), me, modules)
            if r is not None:
                found.add(r)
    # Paths in the code: crate::a::b, super::super::c, self::d.
    for m in re.finditer(r"\b(?:crate|super|self)(?:::\w+)+", body):
        r = resolve(m.group(0).split("::"), me, modules)
        if r is not None:
            found.add(r)
    found.discard(me)
    return found


def undeclared_tests(crate_dir: Path) -> list:
    """A crate whose integration tests are one binary (`autotests = false`, tests/it.rs):
    the test files beside it.rs that it does not declare as modules, which cargo would
    then never build nor run."""
    tests = crate_dir / "tests"
    it = tests / "it.rs"
    if "autotests = false" not in (crate_dir / "Cargo.toml").read_text():
        return []
    if not it.exists():
        return ["tests/it.rs (autotests is off, so no test of the crate is built)"]
    text = "\n".join(line.split("//")[0] for line in it.read_text().splitlines())
    declared = set(re.findall(r"^\s*(?:pub\s+)?mod\s+(?:r#)?(\w+)\s*;", text, re.M))
    declared |= set(re.findall(r'#\[path\s*=\s*"(\w+)\.rs"\]', text))
    return [f"tests/{f.name}" for f in sorted(tests.glob("*.rs")) if f.name != "it.rs" and f.stem not in declared]


def self_test() -> int:
    """Plants cycles the old scan missed (braced `use`, `super::super`, a path after a
    string holding `//`, one after a raw string with quotes, an aliased `use` of a module
    whose name holds "as") and one it must not see
    (a path in a comment, in a string, in a test module); exits 1 unless exactly the
    planted cycles are found."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        src = Path(d)
        (src / "a").mkdir()
        files = {
            "lib.rs": "mod a; mod b; mod c; mod d; mod e; mod gasket;\n",
            "gasket.rs": "use crate::e as g;\n",
            "a/mod.rs": "mod x;\nuse super::{b::B, e};\n",
            "a/x.rs": 'const U: &str = "http://x";\nfn f() { super::super::c::g(); }\n',
            "b.rs": "use crate::{a::A, d};\n",
            "c.rs": 'const Q: &str = r#"say "hi""#;\nfn g() { crate::a::x::f(); }\n',
            "d.rs": "// crate::e::h\nconst S: &str = \"crate::e::h\";\n"
                    "#[cfg(test)]\nmod tests {\n    use crate::e;\n}\n",
            "e.rs": "use crate::gasket as k;\nfn h() { let c = 'x'; let s: &'static str = \"\"; }\n",
        }
        for name, text in files.items():
            (src / name).write_text(text)
        found = crate_cycles(src)
        got = {tuple("/".join(m) for m in c) for c in found}
        want = {("a", "b", "a"), ("a/x", "c", "a/x"), ("e", "gasket", "e")}
        if got != want:
            print("check_layout self-test failed: found", sorted(got), "wanted", sorted(want))
            return 1
        # A test file that tests/it.rs does not declare is never built.
        crate = Path(d) / "crate"
        (crate / "tests").mkdir(parents=True)
        (crate / "Cargo.toml").write_text("[package]\nautotests = false\n")
        (crate / "tests" / "it.rs").write_text('mod a;\n// mod b;\n#[path = "loop.rs"]\nmod r#loop;\n')
        for name in ["a.rs", "b.rs", "loop.rs"]:
            (crate / "tests" / name).write_text("")
        if undeclared_tests(crate) != ["tests/b.rs"]:
            print("check_layout self-test failed: undeclared tests", undeclared_tests(crate))
            return 1
    print("check_layout self-test ok: the planted cycles are found, and only they; so is a test file it.rs leaves out")
    return 0


def crate_cycles(src: Path) -> list:
    """The import cycles between the files under `src`."""
    files = {module_of(src, f): f for f in sorted(src.rglob("*.rs")) if "bin" not in f.parts}
    modules = set(files)
    # A module's own descendants are its to declare, use and re-export (as the crate
    # root's are): an edge runs from a child to what it names outside its subtree.
    graph = {
        m: {r for r in references(f.read_text(), m, modules) if r != () and r[: len(m)] != m}
        for m, f in files.items()
    }
    return cycles(graph)


def cycles(graph: dict) -> list:
    out, state, stack = [], {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                out.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)
    return out


def main() -> int:
    if "--self-test" in sys.argv:
        return self_test()
    max_lines = MAX_LINES
    if "--max-lines" in sys.argv:
        max_lines = int(sys.argv[sys.argv.index("--max-lines") + 1])
    problems = []
    for crate in CRATES:
        src = ROOT / crate / "src"
        for f in sorted(src.rglob("*.rs")):
            if "bin" in f.parts:
                continue
            text = f.read_text()
            rel, lines = str(f.relative_to(ROOT)), text.count("\n")
            cap = max(max_lines, OVER.get(rel, 0))
            if lines > cap:
                why = f"it was {OVER[rel]} when the cap came; split it" if rel in OVER else f"at most {max_lines}"
                problems.append(f"{rel}: {lines} lines ({why})")
            elif rel in OVER and lines <= max_lines:
                problems.append(f"{rel}: {lines} lines, under {max_lines} now: take it out of OVER")
        for t in undeclared_tests(ROOT / crate):
            problems.append(f"{crate}: {t} is not a module of tests/it.rs, so it is never built")
        # The crate root only declares and re-exports: not an edge.
        for c in crate_cycles(src):
            names = " -> ".join("/".join(m) or "lib" for m in c)
            problems.append(f"{crate}: import cycle {names}")
    for p in problems:
        print(p)
    if not problems:
        print("layout ok: no file over", max_lines, "lines (but", len(OVER),
              "older ones that may only shrink) and no import cycle between files of a crate")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
