"""A published theorem is one module plus one test (issue 38): each paper module of ``afltheory.published``
carries its claims (registered once, the same objects, in the one registry), their engine forms, per-reader
setups, checks and kills; the readers (the registry, the checks plugin, the table) find them through
``afltheory.published.PAPERS``/``SELF_CHECKED`` and name no statement of their own; each checked module has
its own test file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from afltheory.claims import Claim
from afltheory.published import PAPERS, SELF_CHECKED, STATEMENTS, registry

ROOT = Path(__file__).resolve().parents[2]
#: the readers of the published modules: none may name a statement (a theorem added to its module needs no
#: edit here)
GLUE = (
    "afltheory/published/__init__.py",
    "afltheory/published/registry.py",
    "afltheory/published/kill_record.py",
    "afltheory/adversary/published_table.py",
    "paper_checks/published.py",
    "paper_checks/power_transcriptions.py",
)


def _name(module) -> str:
    return module.__name__.rsplit(".", 1)[1]


def test_every_statement_is_one_claim_registered_once():
    ids = [c.id for p in PAPERS for c in p.STATEMENTS]
    assert len(ids) == len(set(ids)) == len(STATEMENTS) >= 30
    for p in PAPERS:
        for c in p.STATEMENTS:
            assert type(c) is Claim and c.paper == _name(p), c.id
            assert registry.get(c.id) is c and STATEMENTS[c.id] is c
    assert list(registry.CLAIMS)[:3] == ["yang2022.thm2", "yang2022.thm3", "yang2022.thm4"]
    assert [c.id for c in registry.select(paper="yang2022")][3:5] == ["yang2022.thm1", "yang2022.cor1"]
    first = len(registry.CLAIMS) - len(STATEMENTS)  # the paper's own and the stated claims come first
    assert list(registry.CLAIMS)[first:] == list(STATEMENTS)
    with pytest.raises(ValueError, match="already registered"):
        registry.register(STATEMENTS["li2020.thm1"])


def test_engine_forms_are_the_modules_claims_built_once():
    forms = registry.engine_forms()
    for p in SELF_CHECKED:
        mine = [c.engine() for c in p.STATEMENTS if c.runnable]
        assert list(p.claims()) == mine and all(a is b for a, b in zip(p.claims(), mine, strict=True))
        for c in mine:
            assert forms[c.id] is c and registry.get(c.id).engine() is c
    assert len(forms) == 13  # li2020 ×3, scaffold2020, khaled2019 ×2, khaled2020 ×2, stich2019, yu2019 ×2, …
    not_runnable = [c for c in STATEMENTS.values() if not c.runnable]
    assert not_runnable and all(c.why_not_a_claim for c in not_runnable)
    with pytest.raises(ValueError, match="has no engine form"):
        not_runnable[0].engine()


def test_the_glue_names_no_statement():
    ids = sorted(STATEMENTS, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w.])(?:published\.)?(" + "|".join(map(re.escape, ids)) + r")(?![\w])")
    for f in GLUE:
        found = pattern.findall((ROOT / f).read_text(encoding="utf-8"))
        assert not found, f"{f} names statements {sorted(set(found))}: move that data into the paper module"


def test_each_checked_module_has_a_test_and_its_check():
    """Every checked module is imported by a test of tests/published (the modules written under the protocol
    by their own ``test_<paper>.py``; the four older ones share test_bounds/test_engine_agreement) and has its
    registered check ``published.<paper>``."""
    from afltheory.checks import CHECKS
    from paper_checks import registry as checks

    checks.load_all()
    tests = [f.read_text(encoding="utf-8") for f in (ROOT / "tests" / "published").glob("test_*.py")]
    own = 0
    for p in SELF_CHECKED:
        imported = re.compile(rf"from afltheory\.published import [^\n]*\b{_name(p)}\b")
        assert any(imported.search(t) for t in tests), _name(p)
        own += (ROOT / "tests" / "published" / f"test_{_name(p)}.py").exists()
        assert f"published.{_name(p)}" in CHECKS
    assert own >= 6  # li2020, scaffold2020, khaled2019, yu2019, fednova2020, fedprox2020


def test_readers_find_their_setups_through_the_registry():
    import afltheory.adversary  # noqa: F401  (attaches the adversary's search specs)
    from afltheory.adversary import get_claim
    from afltheory.pep.claims import PepSetup
    from afltheory.pep.theorems import SETUPS

    thm2 = registry.get("yang2022.thm2")
    assert [s.key for s in thm2.setups["search"]] == ["thm2"]  # Corollary 1's is on Corollary 1's claim
    cor1 = registry.get("yang2022.cor1")
    assert registry.by_setup("search", "cor1") is cor1 and get_claim("cor1").statement is thm2
    assert get_claim("thm4") is registry.setup("search", "thm4") and get_claim("lemma2").statement is None
    assert set(registry.setups("search")) == {
        "thm2",
        "thm3",
        "thm4",
        "cor1",
        "cor2",
        "cor3",
        "lemma2",
        "drift",
    }
    assert thm2.setups["pep_bracket"] is SETUPS["thm2"]
    assert isinstance(STATEMENTS["li2020.thm1"].engine().setups["pep"], PepSetup)
    with pytest.raises(ValueError, match="registered twice"):
        registry.attach("yang2022.thm2", "search", get_claim("thm2"))
    with pytest.raises(ValueError, match="not registered"):
        registry.setup("search", "thm9")
    with pytest.raises(ValueError, match="not a registered claim"):
        registry.get("li2020.thm9")
    assert [c.id for c in registry.select(kind="corollary")] == [
        "yang2022.cor1",
        "yang2022.cor2",
        "yang2022.cor3",
        "khaled2019.cor1",
        "yu2019.cor2",
        "fedprox2020.cor7",
    ]
    with pytest.raises(ValueError, match="kind"):
        registry.select(kind="conjecture")
