"""A claim's bound and conditions from the paper's own LaTeX (issue 44; docs/claims_latex.md).

```python
from afltheory.claims.latex import latex

table = {"M": "m", "K": "T", r"\\gamma": "eta/m"}
bound = latex(r"\\frac{2\\Delta}{M K \\gamma} + \\sigma^2 L \\gamma", table, terms=("transient", "noise"))
Claim(..., bound=bound, conditions={"step": latex(r"L M \\gamma \\le 1", symbols=...)})
```

The formula is parsed once, by sympy's ANTLR LaTeX parser (``antlr4-python3-runtime`` 4.11), and its paper
letters are mapped to the claim symbols (``afltheory.claims.SYMBOLS``) through a declared table:
``DEFAULT_TABLE`` (E -> K, N -> M, σ -> σ_L, Σ_k p_k² σ_k² -> Σ p_k² · σ_L², ‖w_1 − w*‖² -> D0, ...) updated
by the ``symbols`` given. A table key is one of three kinds:

- a symbol (``E``, ``\\gamma``, ``D_0``, ``\\sigma_k``): matched after parsing, by the parser's name;
- a client sum (``\\sum_{k=1}^N p_k^2 \\sigma_k^2``): matched after parsing, whatever its index letter;
- a phrase (anything else: ``\\|w_1 - w^*\\|^2``, ``f(x_1) - f^*``, ``T'``): replaced in the text before
  parsing (spaces and the braces of one-token sub/superscripts ignored), so it may contain what the
  parser cannot read or would misread.

A target is a sympy expression or a string over ``SYMBOLS`` (``"eta/m"``); a new name (``"gamma"``) declares
a claim's own symbol (then give its value: ``Claim(values={"gamma": ...})``). The named terms are the
addends of the formula's top-level sum as written (or of the one parenthesized sum a single top-level
product multiplies), named by ``terms``; the source is kept (``Latex.latex``, ``Claim.latex``).

Refused, each with its own ``LatexError`` (a ``ValueError``) naming the token and its position:
``UnknownLatex`` (a macro or character the table and the parser do not know, a letter nobody declared),
``AmbiguousLatex`` (``f(x)`` — a function call to the parser —, ``x'``, ``2 3``: the reading it would
take), ``NotARelation`` (a condition that is not ``a \\le b``), ``LatexUnavailable`` (the ANTLR runtime is
missing or is not 4.11: the install line).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy as sp

from .symbols import SYMBOLS

__all__ = [
    "DEFAULT_TABLE",
    "AmbiguousLatex",
    "Latex",
    "LatexError",
    "LatexUnavailable",
    "NotARelation",
    "UnknownLatex",
    "assert_bound_matches",
    "latex",
    "latex_condition",
    "load_table",
]

INSTALL = "pip install 'antlr4-python3-runtime==4.11.*'"

#: paper letter / sum / phrase -> claim symbol (docs/claims_latex.md has the table with its readings)
DEFAULT_TABLE: dict[str, str] = {
    "E": "K",  # local steps per round (Li et al. 2020; E is also afltheory's synonym of K)
    "N": "M",  # number of clients / workers
    r"\sigma": "sigma_L",  # per-worker gradient noise: E‖g − ∇f_i‖² ≤ σ²
    r"\sigma_L": "sigma_L",
    r"\sigma_G": "sigma_G",
    r"\Delta": "Delta",
    r"\kappa": "kappa",
    r"\mu": "mu",
    r"\Gamma": "Gamma",
    r"\tau": "tau",
    r"\eta": "eta",
    r"\eta_L": "eta_L",
    "D_0": "D0",
    # client sums (p_k the client weights, σ_k ≤ σ_L: the sum is bounded by the target, equal when σ_k = σ_L)
    r"\sum_{k=1}^N p_k^2 \sigma_k^2": "sum_p2*sigma_L**2",
    r"\sum_{k=1}^N p_k^2": "sum_p2",
    r"\sum_{k=1}^N p_k": "1",
    # phrases: distances and gaps at the start, f*
    r"\|w_1 - w^*\|^2": "D0",
    r"\|w_0 - w^*\|^2": "D0",
    r"\|x_0 - x^*\|^2": "D0",
    r"\|x_1 - x^*\|^2": "D0",
    r"f(x_0) - f^*": "Delta",
    r"f(x_1) - f^*": "Delta",
    r"F(w_0) - F^*": "Delta",
    r"F(w_1) - F^*": "Delta",
    r"f(x_0)": "f0",
    r"f^*": "f_star",
    r"F^*": "f_star",
}

_GREEK = set(
    "alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi rho varrho "
    "sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi "
    "Omega".split()
)
#: the macros the ANTLR grammar reads as written (others become symbols silently: refused)
_MACROS = (
    _GREEK
    | set(
        "frac dfrac tfrac sqrt log ln exp sum prod max min left right cdot times le leq ge geq lt gt "
        "quad qquad infty pi".split()
    )
    | {",", ";", "!", " "}
)
_CHARS = set("+-*/^_{}()[]=<>,.!|") | set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_PH = 7301  # placeholder symbols \xi_{7301}, \xi_{7302}, ...: one per phrase occurrence


class LatexError(ValueError):
    """A formula that cannot be read as a claim's bound or condition (the message names why and where)."""

    def __init__(self, message: str, token: str | None = None, position: int | None = None):
        super().__init__(message)
        self.token, self.position = token, position


class UnknownLatex(LatexError):
    """An unknown macro, character or undeclared letter (``token``, ``position``)."""


class AmbiguousLatex(LatexError):
    """A juxtaposition the parser reads in a way a paper rarely means (``reading``: that way)."""

    def __init__(self, message: str, token: str, position: int | None, reading: str):
        super().__init__(message, token, position)
        self.reading = reading


class NotARelation(LatexError):
    """A condition that is not a relation (a bound that is one)."""


class LatexUnavailable(LatexError):
    """The ANTLR runtime sympy's parser needs is missing or not version 4.11."""


def _at(src: str, pos: int | None, n: int = 1) -> str:
    if pos is None:
        return ""
    before, at, after = src[max(0, pos - 12) : pos], src[pos : pos + n], src[pos + n : pos + n + 12]
    return f" at position {pos} (…{before}⟨{at}⟩{after}…)"


_PARSE: list = []


def _parser():
    """sympy's ``parse_latex`` — after checking the runtime it needs (sympy reads a wrong version badly)."""
    from importlib import metadata

    if _PARSE:
        return _PARSE[0]

    try:
        version = metadata.version("antlr4-python3-runtime")
    except metadata.PackageNotFoundError:
        raise LatexUnavailable(
            f"reading LaTeX needs sympy's ANTLR parser and its runtime antlr4-python3-runtime 4.11, which is "
            f"not installed: {INSTALL}"
        ) from None
    if not version.startswith("4.11"):
        raise LatexUnavailable(
            f"reading LaTeX needs antlr4-python3-runtime 4.11 (sympy's ANTLR parser was generated with it); "
            f"{version} is installed: {INSTALL}"
        )
    from sympy.parsing.latex import parse_latex

    _PARSE.append(parse_latex)
    return parse_latex


# ---------------------------------------------------------------------------------------------- the table
def _target(key: str, value: Any) -> sp.Basic:
    """A table entry's target as sympy: a sympy object, a number, a ``Latex``, or a string over SYMBOLS
    (other names become the claim's own positive symbols)."""
    if isinstance(value, Latex):
        return value.expr
    if isinstance(value, sp.Basic):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return sp.nsimplify(value)
    if not isinstance(value, str):
        raise LatexError(
            f"table entry {key!r}: target {value!r} must be a string, a number or a sympy expression"
        )
    names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", value))
    loc: dict[str, Any] = {"Max": sp.Max, "Min": sp.Min, "sqrt": sp.sqrt, "log": sp.log, "exp": sp.exp}
    for n in names - set(loc):
        loc[n] = SYMBOLS.get(n) or sp.Symbol(n, positive=True)
    try:
        return sp.sympify(value, locals=loc)
    except (sp.SympifyError, SyntaxError, TypeError) as exc:
        raise LatexError(f"table entry {key!r}: target {value!r} is not a sympy expression ({exc})") from None


_SYM_KEY = re.compile(r"^\s*(\\[A-Za-z]+|[A-Za-z])\s*(?:_\s*(\{\s*\\?[A-Za-z0-9]+\s*\}|\\?[A-Za-z0-9]))?\s*$")


def _symbol_name(key: str) -> str | None:
    """The parser's name for a one-symbol key (``\\sigma_k`` -> ``sigma_{k}``), None for another key."""
    m = _SYM_KEY.match(key)
    if not m:
        return None
    base = m.group(1).lstrip("\\")
    if m.group(1).startswith("\\") and base not in _GREEK:
        return None
    if m.group(2) is None:
        return base
    return f"{base}_{{{m.group(2).strip('{} ').lstrip(chr(92))}}}"


_TOKEN = re.compile(r"\\[A-Za-z]+|\\.|\S")


def _phrase_regex(key: str) -> re.Pattern:
    """A phrase key as a regex: spaces free, the braces of a one-token sub/superscript optional."""
    key = re.sub(r"([_^])\s*\{\s*(\\[A-Za-z]+|[^{}\s])\s*\}", r"\1\2", key)
    toks = _TOKEN.findall(key)
    parts = []
    for i, tok in enumerate(toks):
        p = re.escape(tok)
        if re.fullmatch(r"\\[A-Za-z]+", tok):
            p += r"(?![A-Za-z])"
        if i and toks[i - 1] in ("_", "^"):
            p = rf"(?:\{{\s*{p}\s*\}}|{p})"
        parts.append(p)
    return re.compile(r"\s*".join(parts))


def _canonical_sum(s: sp.Sum) -> sp.Basic | None:
    """A one-index sum with its index renamed k (and every X_{i} symbol to X_{k})."""
    if len(s.limits) != 1:
        return None
    i, a, b = s.limits[0]
    k = sp.Symbol("k")
    ren = {i: k}
    for x in s.function.free_symbols:
        m = re.fullmatch(r"(.+)_\{" + re.escape(str(i)) + r"\}", str(x))
        if m:
            ren[x] = sp.Symbol(f"{m.group(1)}_{{k}}")
    return sp.Sum(s.function.xreplace(ren), (k, a, b))


_CACHE: dict[Any, Any] = {}


class _Table:
    """A compiled table: symbol names, client sums, phrases (each key parsed once per process)."""

    def __init__(self, table: Mapping[str, Any]):
        self.symbols: dict[str, tuple[str, sp.Basic]] = {}
        self.sums: list[tuple[sp.Basic, str, sp.Basic]] = []
        self.phrases: list[tuple[re.Pattern, str, sp.Basic]] = []
        for key, value in table.items():
            if not isinstance(key, str) or not key.strip():
                raise LatexError(f"table key {key!r} must be a non-empty LaTeX string")
            target = _target(key, value)
            name = _symbol_name(key)
            if name is not None:
                self.symbols[name] = (key, target)
            elif key.lstrip().startswith(r"\sum"):
                ck = ("sum", key)
                if ck not in _CACHE:
                    parsed = _parse_text(key.strip(), key, 0)
                    if not isinstance(parsed, sp.Sum) or _canonical_sum(parsed) is None:
                        raise LatexError(
                            f"table key {key!r} starts with \\sum but is not one single-index sum"
                        )
                    _CACHE[ck] = _canonical_sum(parsed)
                self.sums = [s for s in self.sums if s[0] != _CACHE[ck]] + [(_CACHE[ck], key, target)]
            else:
                self.phrases.append((_phrase_regex(key), key, target))
        self.phrases.sort(key=lambda p: -len(p[1]))  # the longest phrase first


def _table(symbols: Mapping[str, Any] | None) -> _Table:
    merged = dict(DEFAULT_TABLE)
    merged.update(symbols or {})
    if not all(isinstance(v, (str, int, float, sp.Basic)) for v in merged.values()):
        return _Table(merged)  # (a Latex target: compiled each time, not cached)
    key = tuple(merged.items())
    if key not in _CACHE:
        _CACHE[key] = _Table(merged)
    return _CACHE[key]


def load_table(path: str) -> dict[str, Any]:
    """A paper's table from TOML: ``"paper letter" = "target"`` at the top level or under ``[symbols]``."""
    import tomllib

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise LatexError(f"--map {path!r}: no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise LatexError(f"--map {path!r} is not TOML: {exc}") from None
    table = data.get("symbols", data)
    for k, v in table.items():
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise LatexError(f"--map {path!r}: entry {k!r} = {v!r} must be a string or a number")
    return dict(table)


# ---------------------------------------------------------------------------------------------- reading
_PARSED: dict[str, sp.Basic] = {}  # text -> sympy's parse of it (``_parse_text``)


def _parse_text(text: str, src: str, offset: int, back=None) -> sp.Basic:
    """sympy's ANTLR parse of ``text``; a parse error names its position in ``src``."""
    parse = _parser()
    from sympy.parsing.latex.errors import LaTeXParsingError

    if text in _PARSED:  # sympy expressions are immutable: one parse per text per process (the mutation
        return _PARSED[text]  # analysis re-runs a claim's verify_latex under every mutant)
    try:
        out = parse(text, backend="antlr")
    except LaTeXParsingError as exc:
        lines = str(exc).splitlines()
        caret = next((ln for ln in reversed(lines) if ln.strip().endswith("^")), None)
        pos = caret.rstrip().index("^") if caret is not None else None
        if pos is not None:
            pos = back(pos) if back else pos + offset
        why = lines[0] if lines else "unreadable"
        raise UnknownLatex(
            f"cannot read {src!r}: the parser says {why!r}{_at(src, pos)}", None, pos
        ) from None
    except (TypeError, ValueError, AttributeError) as exc:  # e.g. a chained relation a \le b \le c
        raise LatexError(f"cannot read {src!r}: {exc}") from None
    if len(_PARSED) < 4096:
        _PARSED[text] = out
    return out


class _Prepared:
    """The source with its phrases replaced by placeholder symbols, and the map of positions back."""

    def __init__(self, src: str, table: _Table):
        self.src = src
        spans: list[tuple[int, int, str, sp.Basic]] = []
        inside = {i for m in re.finditer(r"\\[A-Za-z]+", src) for i in range(m.start() + 1, m.end())}
        for rx, key, target in table.phrases:
            for m in rx.finditer(src):
                if m.start() in inside:  # inside a macro's name (\alpha does not hold the phrase "a")
                    continue
                if m.end() > m.start() and all(m.end() <= a or m.start() >= b for a, b, _, _ in spans):
                    spans.append((m.start(), m.end(), key, target))
        spans.sort()
        self.spans = spans
        self._check(src, spans)
        out, self.pieces, self.placeholders = [], [], {}
        last = 0
        for n, (a, b, key, target) in enumerate(spans):
            out.append(src[last:a].replace("$", " "))
            ph = f"{{\\xi_{{{_PH + n}}}}}"
            self.pieces.append((sum(map(len, out)), len(ph), a, b))
            self.placeholders[f"xi_{{{_PH + n}}}"] = (key, target, a)
            out.append(ph)
            last = b
        out.append(src[last:].replace("$", " "))
        self.text = "".join(out)

    def back(self, p: int) -> int:
        """A position in the prepared text -> the source's."""
        shift = 0
        for s, n, a, b in self.pieces:
            if p < s:
                break
            if p < s + n:
                return a
            shift = b - (s + n)
        return p + shift

    def _check(self, src: str, spans) -> None:
        def outside(p: int) -> bool:
            return all(not (a <= p < b) for a, b, _, _ in spans)

        for m in re.finditer(r"\\([A-Za-z]+|.)", src):
            if outside(m.start()) and m.group(1) not in _MACROS:
                raise UnknownLatex(
                    f"unknown macro {m.group(0)}{_at(src, m.start(), len(m.group(0)))}: the parser would "
                    "read it as a product of letters or drop it; write it with the macros it reads, or "
                    f"declare the phrase in the table (symbols={{{m.group(0)!r}: ...}})",
                    m.group(0),
                    m.start(),
                )
        macro = {i for m in re.finditer(r"\\([A-Za-z]+|.)", src) for i in range(m.start(), m.end())}
        for i, c in enumerate(src):
            if not outside(i) or i in macro or c.isspace() or c == "$" or c in _CHARS:
                continue
            if c == "'":
                m = re.search(r"(\\[A-Za-z]+|[A-Za-z0-9])(_\{[^{}]*\}|_\\?[A-Za-z0-9]+)?\s*'$", src[: i + 1])
                tok = m.group(0) if m else "'"
                raise AmbiguousLatex(
                    f"ambiguous prime {tok!r}{_at(src, i)}: the parser reads it as one new symbol named "
                    f"{tok!r} (not a derivative, not the paper's other letter); declare it in the table "
                    f"(symbols={{{tok!r}: ...}})",
                    tok,
                    i,
                    f"the symbol {tok}",
                )
            raise UnknownLatex(f"unknown symbol {c!r}{_at(src, i)}", c, i)
        for m in re.finditer(r"\^\s*(\{\s*\*\s*\}|\*)", src):
            if outside(m.start()):
                where = _at(src, m.start(), len(m.group(0)))
                raise UnknownLatex(
                    f"unknown superscript ^*{where}: the parser drops the star (f^* would read as f); "
                    "declare it in the table (e.g. symbols={'f^*': 'f_star'})",
                    "^*",
                    m.start(),
                )
        for m in re.finditer(r"(?<![\w.])(\d+(?:\.\d+)?)\s+(\d+)", src):
            if outside(m.start()):
                reading = m.group(1) + m.group(2)
                raise AmbiguousLatex(
                    f"ambiguous juxtaposition {m.group(0)!r}{_at(src, m.start(), len(m.group(0)))}: "
                    f"the parser reads it as the number {reading}; "
                    f"write {m.group(1)} \\cdot {m.group(2)} for a product",
                    m.group(0),
                    m.start(),
                    f"the number {reading}",
                )


def _symbol_position(src: str, name: str) -> int | None:
    """Where the parser's symbol ``name`` is written in ``src`` (first occurrence), None if not found."""
    m = re.fullmatch(r"([A-Za-z]+)(?:_\{(.*)\})?", name)
    if not m:
        return None
    base, sub = m.groups()
    p = (r"\\" + base + r"(?![A-Za-z])") if len(base) > 1 else re.escape(base)
    if sub is not None:
        s = re.escape(sub)
        p += rf"\s*_\s*(?:\{{\s*\\?{s}\s*\}}|\\?{s})"
    macro = {i for mm in re.finditer(r"\\[A-Za-z]+", src) for i in range(mm.start() + 1, mm.end())}
    for mm in re.finditer(p, src):
        if len(base) > 1 or mm.start() not in macro:
            return mm.start()
    return None


def _evaluated(e: sp.Basic) -> sp.Basic:
    """The parser's unevaluated tree, evaluated (2*(x*y) -> 2*x*y)."""
    if e.is_Atom:
        return e
    if isinstance(e, (sp.Sum, sp.Product)):
        return e.func(_evaluated(e.function), *e.limits)
    return e.func(*[_evaluated(a) for a in e.args])


def _split_top(text: str) -> list[str]:
    """The addends of ``text``'s top-level sum, as written (a leading sign stays with its addend)."""
    out, depth, start, i = [], 0, 0, 0
    prev = ""
    while i < len(text):
        c = text[i]
        if c == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", text[i:])
            prev = m.group(0)
            i += len(m.group(0))
            continue
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif c in "+-" and depth == 0 and prev and prev not in ("+", "-", "^", "_", r"\cdot", r"\times", "="):
            out.append(text[start:i])
            start = i + (c == "+")
        if not c.isspace():
            prev = c
        i += 1
    out.append(text[start:])
    return [s for s in out if s.strip()]


def _distributed(text: str) -> list[str] | None:
    """For one top-level product ``A (a + b) C``: the addends ``A (a) C``, ``A (b) C`` (else None)."""
    groups, depth, i, open_at = [], 0, 0, None
    while i < len(text):
        if text.startswith(r"\left(", i) or text[i] == "(":
            n = 6 if text[i] == "\\" else 1
            if depth == 0:
                open_at = (i, i + n)
            depth, i = depth + 1, i + n
            continue
        if text.startswith(r"\right)", i) or text[i] == ")":
            n = 7 if text[i] == "\\" else 1
            depth -= 1
            if depth == 0 and open_at is not None:
                groups.append((open_at[0], open_at[1], i, i + n))
            i += n
            continue
        if text[i] in "{[":
            depth += 1
        elif text[i] in "}]":
            depth -= 1
        i += 1
    cands = []
    for _, b, c, d in groups:
        parts = _split_top(text[b:c])
        if len(parts) > 1 and not text[d:].lstrip().startswith("^"):
            cands.append([text[:b] + p + text[c:] for p in parts])
    return cands[0] if len(cands) == 1 else None


class Latex(Mapping):
    """A formula read from LaTeX: ``latex`` (the source), ``expr`` (sympy, in the claim symbols), ``raw``
    (as parsed, paper letters), ``terms`` (name -> term; empty for a relation), ``symbols`` (paper symbol ->
    its target, as found), ``unknown`` (symbols neither in SYMBOLS nor declared -> position).

    It is a bound where a claim takes one (a ``Mapping`` of its named terms) and a sympy object elsewhere
    (``sympify`` gives ``expr``: a condition, a value)."""

    def __init__(
        self,
        source: str,
        expr: sp.Basic,
        raw: sp.Basic,
        terms: dict[str, sp.Expr],
        symbols: dict[str, Any],
        unknown: dict[str, int],
        term_sources: dict[str, str],
    ):
        self.latex, self.expr, self.raw, self.terms = source, expr, raw, terms
        self.symbols, self.unknown, self.term_sources = symbols, unknown, term_sources

    def _sympy_(self) -> sp.Basic:
        return self.expr

    @property
    def is_relation(self) -> bool:
        """True when the parsed formula is a relation (a condition such as ``a \\le b``)."""
        return isinstance(self.expr, sp.core.relational.Relational)

    def _bound(self) -> dict:
        if self.is_relation:
            raise NotARelation(
                f"the LaTeX {self.latex!r} is a relation ({sp.sstr(self.expr)}), not a bound: give it as a "
                "condition"
            )
        return self.terms

    def __getitem__(self, k):
        return self._bound()[k]

    def __iter__(self):
        return iter(self._bound())

    def __len__(self):
        return len(self._bound())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Latex) and (other.latex, other.expr) == (self.latex, self.expr)

    def __hash__(self) -> int:
        return hash((self.latex, self.expr))

    def __str__(self) -> str:
        return sp.sstr(self.expr)

    def __repr__(self) -> str:
        return f"latex({self.latex!r}) = {sp.sstr(self.expr)}"


def latex(
    source: str,
    symbols: Mapping[str, Any] | None = None,
    terms: tuple[str, ...] | list[str] | None = None,
    *,
    strict: bool = True,
) -> Latex:
    """``source`` (a bound, a relation or a value, in LaTeX) read into the claim symbols.

    ``symbols``: paper letter / sum / phrase -> target, over ``DEFAULT_TABLE`` (a new name declares a claim's
    own symbol). ``terms``: the names of the top-level addends, in the written order (default: each term's
    sympy text). ``strict``: a letter neither in ``SYMBOLS`` nor in the table is an ``UnknownLatex`` (False:
    listed in ``Latex.unknown``, as ``afltheory claims parse`` does)."""
    if not isinstance(source, str) or not source.strip():
        raise LatexError(f"source={source!r} must be a non-empty LaTeX string")
    table = _table(symbols)
    prep = _Prepared(source, table)
    raw = _parse_text(prep.text, source, 0, prep.back)
    _refuse_calls(raw, source)
    found: dict[str, sp.Basic] = {}
    unknown: dict[str, int | None] = {}
    expr = _map(raw, table, prep, found, unknown)
    if unknown and strict:
        name, pos = next(iter(unknown.items()))
        key, own = _latex_of(name), name.replace("_{", "").rstrip("}")
        raise UnknownLatex(
            f"unknown symbol {name!r}{_at(source, pos)} in {source!r}: it is neither in "
            f"afltheory.claims.SYMBOLS nor in the table; map it to a claim symbol (symbols={{{key!r}: 'K'}}) "
            f"or declare it the claim's own symbol (symbols={{{key!r}: {own!r}}} "
            f"and Claim(values=...)); known: {', '.join(SYMBOLS)}",
            name,
            pos,
        )
    named: dict[str, sp.Expr] = {}
    sources: dict[str, str] = {}
    if not isinstance(expr, sp.core.relational.Relational):
        parts = _split_top(prep.text)
        if len(parts) == 1:
            parts = _distributed(parts[0]) or parts
        exprs = (
            [_map(_parse_text(p, source, 0), table, prep, {}, {}) for p in parts]
            if len(parts) > 1
            else [expr]
        )
        if sp.simplify(sp.Add(*exprs) - expr) != 0:  # (not expected: the split re-reads the same formula)
            exprs, parts = [expr], [prep.text]
        if terms is not None:
            terms = tuple(terms)
            if len(terms) != len(exprs) or len(set(terms)) != len(terms):
                raise LatexError(
                    f"terms={terms} must name the {len(exprs)} top-level terms of {source!r} once each: "
                    + "; ".join(sp.sstr(e) for e in exprs)
                )
        names = terms or tuple(str(e) for e in exprs)
        named = dict(zip(names, exprs, strict=True))
        sources = dict(zip(names, (_unplace(p, prep) for p in parts), strict=True))
    elif terms is not None:
        raise NotARelation(
            f"terms={tuple(terms)} given for the relation {source!r}: a condition has no terms"
        )
    return Latex(source, expr, raw, named, found, unknown, sources)


def latex_condition(source: str, symbols: Mapping[str, Any] | None = None) -> Latex:
    """``latex`` for a condition: a ``NotARelation`` unless it reads as ``a \\le b`` (<, \\le, >, \\ge)."""
    out = latex(source, symbols)
    rel = (sp.LessThan, sp.StrictLessThan, sp.GreaterThan, sp.StrictGreaterThan)
    if not isinstance(out.expr, rel):
        raise NotARelation(
            f"condition {source!r} does not parse as a relation: it reads as {sp.sstr(out.expr)}; write "
            f"lhs \\le rhs (or <, \\ge, >)"
        )
    return out


def _latex_of(name: str) -> str:
    m = re.fullmatch(r"([A-Za-z]+)(?:_\{(.*)\})?", name)
    if not m:
        return name
    base = ("\\" if m.group(1) in _GREEK else "") + m.group(1)
    return base + (f"_{m.group(2)}" if m.group(2) is not None else "")


def _unplace(text: str, prep: _Prepared) -> str:
    """A term's text with its placeholders back as the source's phrases."""
    for name, (_key, _t, a) in prep.placeholders.items():
        b = next(bb for aa, bb, _, _ in prep.spans if aa == a)
        text = text.replace("{\\" + name + "}", prep.src[a:b])
    return " ".join(text.split())


def _refuse_calls(raw: sp.Basic, src: str) -> None:
    """``f(x)``, ``\\gamma (a + b)``: the parser reads a letter before a parenthesis as a function call."""
    for call in sorted(raw.atoms(sp.core.function.AppliedUndef), key=str):
        name = str(call.func)
        if name in ("max", "min"):
            continue
        pos = _symbol_position(src, name)
        reading = sp.sstr(call)
        raise AmbiguousLatex(
            f"ambiguous juxtaposition{_at(src, pos, len(_latex_of(name)))}: the parser reads "
            f"{_latex_of(name)}(...) as the function {name} applied to its argument, {reading}; write "
            f"{_latex_of(name)} \\cdot (...) for a product, or declare the phrase in the table "
            "(e.g. symbols={'f(x_0) - f^*': 'Delta'})",
            _latex_of(name),
            pos,
            reading,
        )


def _map(raw: sp.Basic, table: _Table, prep: _Prepared, found: dict, unknown: dict) -> sp.Basic:
    """The parsed tree in the claim symbols: sums, then placeholders and letters, through the table."""
    e = _evaluated(raw)
    fns = {"max": sp.Max, "min": sp.Min}
    calls = {
        c: fns[str(c.func)](*c.args) for c in e.atoms(sp.core.function.AppliedUndef) if str(c.func) in fns
    }
    e = e.xreplace(calls)
    sums, later = {}, {}
    for s in e.atoms(sp.Sum):
        c = _canonical_sum(s)
        for canon, key, target in table.sums:
            if c == canon:
                sums[s] = sp.Dummy(key)
                later[sums[s]], found[key] = target, target
    e = e.xreplace(sums)
    subs = {}
    for s in sorted(e.free_symbols - set(later), key=str):
        n = str(s)
        if n in prep.placeholders:
            key, target, _ = prep.placeholders[n]
            subs[s], found[key] = target, target
        elif n in table.symbols:
            key, target = table.symbols[n]
            subs[s], found[key] = target, target
        elif n == "pi":
            subs[s] = sp.pi
        elif n in SYMBOLS:
            subs[s], found[_latex_of(n)] = SYMBOLS[n], SYMBOLS[n]
        else:
            subs[s] = sp.Symbol(n, positive=True)
            found[_latex_of(n)] = subs[s]
            unknown.setdefault(n, _symbol_position(prep.src, n))
    return e.xreplace(subs).xreplace(later)


# ---------------------------------------------------------------------------------------------- equality
def assert_bound_matches(
    latex_src: str,
    sympy_expr: Any,
    mapping: Mapping[str, Any] | None = None,
    *,
    points: int = 20,
    seed: int = 0,
    rtol: float = 1e-9,
) -> None:
    """A published statement's sympy bound equals the LaTeX it was read from: ``AssertionError`` naming
    the difference unless (1) ``simplify(parsed − expr) == 0`` and (2) both agree to ``rtol`` at ``points``
    random positive points (every symbol log-uniform in [0.1, 10], ``numpy`` generator ``seed``).

    ``sympy_expr``: an expression or a dict of named terms (their sum). ``mapping``: the paper's table
    over ``DEFAULT_TABLE`` (e.g. ``{r"\\sum_{k=1}^N p_k^2 \\sigma_k^2": sum_p2_sigma2}``). Symbols are
    compared by name, so the statement's own symbol objects need not be the claims' ones."""
    if isinstance(sympy_expr, Mapping):
        sympy_expr = sp.Add(*sympy_expr.values())
    want = sp.sympify(sympy_expr)
    got = latex(latex_src, mapping, strict=False).expr
    if isinstance(got, sp.core.relational.Relational) != isinstance(want, sp.core.relational.Relational):
        raise AssertionError(f"{latex_src!r} reads as {sp.sstr(got)}; the statement has {sp.sstr(want)}")

    def plain(e: sp.Basic) -> sp.Basic:
        return e.xreplace({s: sp.Symbol(str(s), positive=True) for s in e.free_symbols})

    got, want = plain(got), plain(want)
    sides = (
        [(got.lhs, want.lhs), (got.rhs, want.rhs)]
        if isinstance(got, sp.core.relational.Relational)
        else [(got, want)]
    )
    if isinstance(got, sp.core.relational.Relational) and type(got) is not type(want):
        raise AssertionError(
            f"{latex_src!r} is a {type(got).__name__}; the statement a {type(want).__name__}"
        )
    rng = np.random.default_rng(seed)
    for g, w in sides:
        extra = sorted({str(s) for s in g.free_symbols} ^ {str(s) for s in w.free_symbols})
        if extra:
            raise AssertionError(
                f"{latex_src!r} reads as {sp.sstr(g)}; the statement has {sp.sstr(w)}: symbols {extra} are "
                "in one and not the other"
            )
        diff = sp.simplify(g - w)
        if diff != 0:
            raise AssertionError(
                f"{latex_src!r} reads as {sp.sstr(g)}; the statement has {sp.sstr(w)}; difference {diff}"
            )
        syms = sorted(g.free_symbols | w.free_symbols, key=str)
        fg, fw = sp.lambdify(syms, g, "numpy"), sp.lambdify(syms, w, "numpy")
        for _ in range(points):
            x = np.exp(rng.uniform(np.log(0.1), np.log(10.0), len(syms)))
            a, b = float(fg(*x)), float(fw(*x))
            if not np.isclose(a, b, rtol=rtol, atol=0.0):
                at = ", ".join(f"{s}={v:.4g}" for s, v in zip(syms, x, strict=True))
                raise AssertionError(f"{latex_src!r} = {a:.12g} but the statement = {b:.12g} at {at}")
