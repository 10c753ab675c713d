"""``Statement``: one published theorem as plain data (issue 26, phase 1), before it becomes a ``Claim``."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

CONFIDENCES = ("read", "read (secondary: …)", "abstract read, statement from memory", "from memory")
#: how the index (the `find_string` / `read_file` tools) names a file: it returns ids, not repositories
INDEX = "public-GitHub text index (find_string/read_file)"


@dataclass(frozen=True)
class Location:
    """Where a statement's text was read: the index id of the file (a converted markdown copy of the paper),
    a character offset at which a ``read_file`` page (16,000 characters) contains the statement, the
    theorem's number, and how the file was found (the exact fragment searched for).
    ``repo``/``path``/``commit``: None when the index did not report them (its string search returns file
    ids only); ``index_id`` None for a local file (then ``path``)."""

    index_id: str | None
    offset: int
    theorem: str
    found_by: str
    section: str = ""
    repo: str | None = None
    path: str | None = None
    commit: str | None = None

    def __post_init__(self) -> None:
        if self.index_id is None and not self.path:
            raise ValueError("a location needs the index's file id (index_id) or a path")
        if self.index_id is not None and not (isinstance(self.index_id, str) and self.index_id.isdigit()):
            raise ValueError(f"index_id={self.index_id!r} must be the index's decimal file id")
        if not isinstance(self.offset, int) or self.offset < 0:
            raise ValueError(f"offset={self.offset!r} must be a character offset >= 0")
        if not self.theorem or not self.found_by:
            raise ValueError("theorem and found_by must be non-empty")

    def __str__(self) -> str:
        where = (f"{self.repo}:" if self.repo else "") + (self.path or "")
        where += f"@{self.commit}" if self.commit else ""
        sec = f", {self.section}" if self.section else ""
        idx = f"index id {self.index_id}" if self.index_id else "file"
        return (
            f"read: {self.theorem}{sec}; {idx} at offset {self.offset}"
            + (f"; {where}" if where else "")
            + f"; found by the fragment “{self.found_by}”"
        )


@dataclass(frozen=True)
class Transcription:
    """The statement's formulas as LaTeX (formulas are facts; no prose copied).

    ``bound``: the bound as printed, in parseable LaTeX (``sympy.parsing.latex``); names in ``definitions``
    (e.g. Li et al.'s B, C) are LaTeX too and are substituted after parsing. ``symbols``: parsed symbol name
    -> the package's sympy expression (the symbol map of the equality test). ``normalisations``: what was
    changed from the printed form to make it parseable (a sum written as one symbol, a norm as D, …).
    ``assumptions``/``conditions``: LaTeX, for the reader (not parsed)."""

    bound: str
    symbols: dict
    definitions: dict = field(default_factory=dict)
    conditions: dict = field(default_factory=dict)
    assumptions: dict = field(default_factory=dict)
    normalisations: str = ""


@dataclass(frozen=True)
class Statement:
    """A published convergence theorem: where it was read, how it is read, and its bound as sympy.

    ``confidence``: "read" (the statement itself was retrieved and is quoted in ``excerpt``), "abstract read,
    statement from memory" (the retrieved page fixes the setting — e.g. what T counts — but not the
    constants), or "from memory" (nothing retrieved). A verdict that contradicts a statement whose
    confidence is not "read" is never called a finding.
    ``bound``: named terms, the bound is their sum. ``conditions``: sympy relationals that must hold.
    ``constants_explicit``: False when the source hides constants in O(·) (then only a rate can be checked).
    ``location``: where the text was read (required when ``confidence`` is "read" or "read (secondary: …)").
    ``latex``: the formula-level transcription (a ``Transcription``). ``readings``: {name: one line} per
    ambiguity of the text (indexing, which iterate, what T counts, hidden constants, …); a verdict lists the
    names it depends on. ``why_not_a_claim``: why no engine form exists (the table's verdict cell).
    """

    id: str
    title: str
    reference: str
    source: str
    excerpt: str | None
    confidence: str
    reading: str
    assumptions: dict
    algorithm: str
    measured: str
    bound: dict
    conditions: dict = field(default_factory=dict)
    definitions: dict = field(default_factory=dict)
    constants_explicit: bool = True
    lower_bound: bool = False
    notes: str = ""
    location: Location | None = None
    latex: Transcription | None = None
    readings: dict = field(default_factory=dict)
    why_not_a_claim: str = ""

    def __post_init__(self) -> None:
        if self.confidence not in CONFIDENCES and not (
            self.confidence.startswith("read (secondary: ") and self.confidence.endswith(")")
        ):
            raise ValueError(f"confidence={self.confidence!r} must be one of {CONFIDENCES}")
        if self.is_read and self.location is None:
            raise ValueError(f"{self.id}: confidence={self.confidence!r} needs a location")
        for name, term in self.bound.items():
            if not isinstance(term, sp.Expr):
                raise ValueError(f"bound term {name!r}={term!r} must be a sympy expression")

    @property
    def is_read(self) -> bool:
        """True when the statement's text itself (primary or secondary) was read."""
        return self.confidence == "read" or self.confidence.startswith("read (secondary: ")

    def total(self) -> sp.Expr:
        """The bound: the sum of its named terms."""
        return sp.Add(*self.bound.values())

    def value(self, values: dict) -> float:
        """The bound evaluated at ``values`` ({symbol or name: number}); ValueError naming free symbols."""
        return _evaluate(self.total(), values, self.id)

    def term_values(self, values: dict) -> dict:
        """Each named term evaluated at ``values``."""
        return {k: _evaluate(v, values, f"{self.id}:{k}") for k, v in self.bound.items()}

    def check_conditions(self, values: dict) -> dict:
        """{condition name: bool} at ``values``."""
        out = {}
        for k, c in self.conditions.items():
            r = c.subs(_subs(values))
            if r.free_symbols:
                raise ValueError(
                    f"condition {k!r} of {self.id} still has free symbols {sorted(map(str, r.free_symbols))}"
                )
            out[k] = bool(r)
        return out


def _subs(values: dict) -> dict:
    from .symbols import BY_NAME

    out = {}
    for k, v in values.items():
        key = BY_NAME.get(k, sp.Symbol(k)) if isinstance(k, str) else k
        out[key] = v
    return out


def _evaluate(expr: sp.Expr, values: dict, what: str) -> float:
    e = expr.subs(_subs(values))
    if e.free_symbols:
        raise ValueError(f"{what}: unknown value of symbol(s) {sorted(map(str, e.free_symbols))}")
    return float(e)


def claim_source(st: Statement) -> str:
    """A statement's source, confidence, excerpt, location and the named readings its verdict depends on (the
    ``source`` of its engine form's ``Claim``)."""
    out = f"{st.source}; confidence: {st.confidence}" + (f"; excerpt: “{st.excerpt}”" if st.excerpt else "")
    if st.location is not None:
        out += f"; {st.location}"
    if st.readings:
        out += "; readings: " + ", ".join(st.readings)
    return out


def substitute(terms: dict, subs: dict) -> dict:
    """{name: term with ``subs`` substituted simultaneously} (a statement's bound in the engines' symbols)."""
    return {k: sp.sympify(v).subs(subs, simultaneous=True) for k, v in terms.items()}
