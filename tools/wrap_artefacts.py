"""Find line-wrap artefacts: text broken across lines where it fits on fewer (docs/DESIGN.md "Habits").

Three kinds (``ruff format`` joins none of them):

- ``string``: an implicit concatenation of one-line literals, one per line, that a greedy wrap at
  ``LINE_LENGTH`` puts on fewer lines, or whose fragment other than the last holds ``SHORT`` characters or
  fewer (``"error "`` then ``f"{x} ..."``). ``reflow_strings`` re-wraps exactly these runs in the fewest
  lines, balanced (a literal becomes an f-string only if it holds a replacement field);
- ``comment``: a full-line comment of at most ``SHORT_WORDS`` words whose continuation's first word would
  have fitted on it (``# the`` / ``#: arrays``);
- ``docstring``: a docstring line of at most ``SHORT_WORDS`` words whose continuation's first word would have
  fitted on it (a sentence broken mid-way).

Lists, headings, blank lines, code fences, lines with ``=``, explicit ``\\n`` line ends and lines that end a
sentence (``.``, ``:``, ``)``, ...) are not artefacts. Usage: ``python tools/wrap_artefacts.py [paths...]``
prints ``path:line: kind: text`` and exits 1 if any (tests/test_wrap_artefacts.py runs it on the tree).
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from pathlib import Path

__all__ = ["Artefact", "find_artefacts", "main", "reflow_strings"]

LINE_LENGTH = 110
#: a string fragment (not the last of its concatenation) this short is an artefact
SHORT = 12
#: a comment or docstring line of at most this many words, continued on the next line, is an artefact
SHORT_WORDS = 3
ROOTS = ("afltheory", "paper_checks", "tests", "benchmarks", "experiments", "tools")

_LIST_START = re.compile(r"^(?:[-*•+]\s|\d+[.)]\s|\(\w{1,3}\)\s|[A-Za-z_][\w.]*\s?:\s|>>>|\.\.\.|[-=~]{3,})")
_COMMENT = re.compile(r"^(\s*)(#:?\s?)(.*)$")  # a full-line comment: indentation, marker, text


class Artefact(tuple):
    """``(path, line, kind, text)``: one wrap artefact."""

    __slots__ = ()

    def __new__(cls, path: str, line: int, kind: str, text: str) -> Artefact:
        """Build the record."""
        return super().__new__(cls, (path, line, kind, text))

    def __str__(self) -> str:
        """``path:line: kind: text``."""
        return f"{self[0]}:{self[1]}: {self[2]}: {self[3]}"


def _continues(text: str) -> bool:
    """The line reads as the rest of a sentence (not a list item, heading, directive or blank)."""
    s = text.strip()
    return bool(s) and not _LIST_START.match(s) and not s.startswith(("#", "`", "|", "noqa", "type:", "fmt:"))


def _ends_open(text: str) -> bool:
    """The line does not end a sentence or open a list/block."""
    s = text.rstrip()
    return bool(s) and not s.endswith((".", ":", ";", "!", "?", "::", ")", "]", "}")) and not s.endswith(",")


def _first_word(text: str) -> str:
    return text.strip().split()[0] if text.strip() else ""


def _string_parts(tok: str) -> tuple[str, str, str] | None:
    """``(prefix, quote, body)`` of a one-line string literal, None for triple quotes or raw/bytes."""
    m = re.match(r"^([a-zA-Z]*)('|\")(.*)\2$", tok, re.S)
    if not m or tok[len(m.group(1)) :][:3] in ("'''", '"""'):
        return None
    prefix = m.group(1).lower()
    if set(prefix) - {"f"}:
        return None
    return prefix, m.group(2), m.group(3)


def _literals(src: str) -> list[tuple[str, int, int, int]]:
    """Every one-line string literal as ``(text, line, start col, end col)``, with a marker
    ``("", 0, 0, 0)`` between literals that are not parts of one implicit concatenation."""
    out: list[tuple[str, int, int, int]] = []
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, SyntaxError):
        return out
    lines = src.splitlines()
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.type == tokenize.STRING or t.type == getattr(tokenize, "FSTRING_START", -1):
            j = i
            if t.type != tokenize.STRING:  # Python >= 3.12: FSTRING_START .. FSTRING_END
                depth, j = 1, i + 1
                while depth:
                    depth += {tokenize.FSTRING_START: 1, tokenize.FSTRING_END: -1}.get(toks[j].type, 0)
                    j += 1
                j -= 1
            (sl, sc), (el, ec) = t.start, toks[j].end
            if sl == el:
                out.append((lines[sl - 1][sc:ec], sl, sc, ec))
            else:
                out.append(("", 0, 0, 0))
            i = j + 1
            continue
        if t.type not in (tokenize.NL, tokenize.COMMENT):
            if out and out[-1][1]:
                out.append(("", 0, 0, 0))
        i += 1
    return out


def _runs(src: str) -> list[list[tuple[str, int, int, int]]]:
    """Maximal implicit concatenations of one-line literals, one literal per line on consecutive lines."""
    runs, cur = [], []
    for lit in _literals(src) + [("", 0, 0, 0)]:
        if cur and lit[1] == cur[-1][1] + 1 and lit[1]:
            cur.append(lit)
            continue
        if len(cur) > 1:
            runs.append(cur)
        cur = [lit] if lit[1] else []
    return runs


def _chunks(body: str, is_f: bool) -> list[str]:
    """``body`` cut after each space outside an f-string replacement field."""
    out, start, depth, k = [], 0, 0, 0
    while k < len(body):
        c = body[k]
        if c == "\\":
            k += 2
            continue
        if is_f and c in "{}":
            if depth == 0 and body[k : k + 2] in ("{{", "}}"):
                k += 2
                continue
            depth += 1 if c == "{" else -1
        elif c == " " and depth == 0:
            out.append(body[start : k + 1])
            start = k + 1
        k += 1
    if start < len(body):
        out.append(body[start:])
    return out


def _has_field(body: str) -> bool:
    return bool(re.search(r"(?<!\{)\{(?!\{)", body.replace("{{", "")))


def _line_len(indent: int, body: str, any_f: bool, tail: str = "") -> int:
    """Length of the line holding ``indent`` spaces and the literal of ``body`` (f only if it has a field)."""
    return indent + 2 + (1 if any_f and _has_field(body) else 0) + len(body) + len(tail)


def _bodies(run: list[tuple[str, int, int, int]]) -> tuple[str, list[str]] | None:
    """The quote and the bodies of a run, escaped for one f-string when any part is one; None if mixed."""
    parts = [_string_parts(lit[0]) for lit in run]
    if any(p is None for p in parts) or len({p[1] for p in parts}) != 1:
        return None
    any_f = any("f" in p[0] for p in parts)
    bodies = [
        p[2].replace("{", "{{").replace("}", "}}") if any_f and "f" not in p[0] else p[2] for p in parts
    ]
    return ("f" if any_f else "") + parts[0][1], bodies


def _plan(run: list[tuple[str, int, int, int]], lines: list[str]) -> tuple[list[str], str, str] | None:
    """The run re-wrapped: ``(bodies, quote kind, tail)`` in the fewest lines, balanced; None when the run
    is not a plain one-literal-per-line concatenation (mixed quotes, code between, explicit newlines)."""
    got = _bodies(run)
    if got is None:
        return None
    kind, bodies = got
    any_f = kind.startswith("f")
    if any(b.endswith("\\n") for b in bodies[:-1]):
        return None
    col = run[0][2]
    if any(lines[lit[1] - 1][: lit[2]].strip() or lit[2] != col for lit in run[1:]):
        return None
    tails = [lines[lit[1] - 1][lit[3] :].rstrip("\n") for lit in run]
    if any(t.strip() for t in tails[:-1]) or tails[-1].strip() not in ("", ",", ")", "),", "]", "}"):
        return None
    chunks = [c for b in bodies for c in _chunks(b, any_f)]

    def wrap(width: int) -> list[str]:
        pieces, cur = [], ""
        for k, ch in enumerate(chunks):
            tail = tails[-1] if k == len(chunks) - 1 else ""
            if cur and _line_len(col, cur + ch, any_f, tail) > width:
                pieces.append(cur)
                cur = ""
            cur += ch
        return pieces + [cur]

    best = wrap(LINE_LENGTH)
    lo = col + 4
    while lo < LINE_LENGTH and len(wrap(lo)) > len(best):  # the narrowest width with as few lines
        lo += 1
    return wrap(lo), kind, tails[-1]


def _is_artefact(run: list[tuple[str, int, int, int]], lines: list[str]) -> bool:
    """The run fits on fewer lines, or a fragment other than the last holds a few characters only."""
    plan = _plan(run, lines)
    if plan is None:
        return False
    pieces, kind, _ = plan
    got = _bodies(run)
    assert got is not None
    return len(pieces) < len(run) or any(len(b.strip()) <= SHORT for b in got[1][:-1])


def _string_artefacts(path: str, src: str, lines: list[str]) -> list[Artefact]:
    return [
        Artefact(path, run[0][1], "string", " ".join(lit[0] for lit in run))
        for run in _runs(src)
        if _is_artefact(run, lines)
    ]


def reflow_strings(src: str) -> str:
    """``src`` with every wrap-artefact concatenation re-wrapped in the fewest lines, balanced."""
    lines = src.splitlines(keepends=True)
    for run in reversed(_runs(src)):
        if not _is_artefact(run, lines):
            continue
        pieces, kind, tail_last = _plan(run, lines)
        any_f, quote, col = kind.startswith("f"), kind[-1], run[0][2]
        new = []
        for k, piece in enumerate(pieces):
            f = any_f and _has_field(piece)
            if any_f and not f:
                piece = piece.replace("{{", "{").replace("}}", "}")
            pad = lines[run[0][1] - 1][:col] if k == 0 else " " * col
            tail = tail_last if k == len(pieces) - 1 else ""
            new.append(f"{pad}{'f' if f else ''}{quote}{piece}{quote}{tail}\n")
        lines[run[0][1] - 1 : run[-1][1]] = new
    return "".join(lines)


def _comment_artefacts(path: str, lines: list[str]) -> list[Artefact]:
    out = []
    for n in range(len(lines) - 1):
        m, m2 = _COMMENT.match(lines[n].rstrip("\n")), _COMMENT.match(lines[n + 1].rstrip("\n"))
        if not (m and m2) or m.group(1) != m2.group(1):  # two full-line comments at one indentation
            continue
        this, nxt = m.group(3), m2.group(3)
        if (
            not this.strip()
            or len(this.split()) > SHORT_WORDS
            or not _ends_open(this)
            or _LIST_START.match(this)
        ):
            continue
        if _continues(nxt) and not nxt.startswith(" "):
            if len(lines[n].rstrip("\n")) + 1 + len(_first_word(nxt)) <= LINE_LENGTH:
                out.append(Artefact(path, n + 1, "comment", lines[n].strip()))
    return out


def _docstring_artefacts(path: str, src: str, lines: list[str]) -> list[Artefact]:
    import ast

    out = []
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return out
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not node.body or not isinstance(node.body[0], ast.Expr):
            continue
        c = node.body[0].value
        if not (isinstance(c, ast.Constant) and isinstance(c.value, str)):
            continue
        fenced = False
        for n in range(c.lineno - 1, c.end_lineno - 1):
            this, nxt = lines[n].rstrip("\n"), lines[n + 1].rstrip("\n")
            if this.strip().startswith("```"):
                fenced = not fenced
            if fenced or "=" in this or this.strip().startswith(("[", "```")):  # code, tables, formulas
                continue
            body = this.strip().lstrip("rR").lstrip('"').lstrip("'") if n == c.lineno - 1 else this.strip()
            if not body or len(body.split()) > SHORT_WORDS or not _ends_open(body) or not _continues(nxt):
                continue
            if nxt.strip().startswith(('"""', "'''")):
                continue
            indent = len(nxt) - len(nxt.lstrip())
            if n > c.lineno - 1 and indent != len(this) - len(this.lstrip()):
                continue
            if len(this) + 1 + len(_first_word(nxt)) <= LINE_LENGTH:
                out.append(Artefact(path, n + 1, "docstring", this.strip()))
    return out


def find_artefacts(path: Path) -> list[Artefact]:
    """The wrap artefacts of one Python file, in line order."""
    src = path.read_text(encoding="utf-8")
    lines = src.splitlines(keepends=True)
    found = _string_artefacts(str(path), src, lines) + _comment_artefacts(str(path), lines)
    found += _docstring_artefacts(str(path), src, lines)
    return sorted(set(found), key=lambda a: (a[0], a[1]))


def main(argv: list[str] | None = None) -> int:
    """Print the artefacts of the given paths (default: the repository's Python roots); 1 if any."""
    args = sys.argv[1:] if argv is None else argv
    root = Path(__file__).resolve().parents[1]
    paths = [Path(a) for a in args] or [root / r for r in ROOTS]
    files = sorted(f for p in paths for f in ([p] if p.is_file() else p.rglob("*.py")))
    found = [a for f in files for a in find_artefacts(f)]
    for a in found:
        print(a)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
