"""A rule the PEP skeleton cannot represent is refused in PEP's name (issue 43), not with the exact engine's
wording ("exact moments represent ..."); the exact engine keeps its own. Skipped without the 'pep' extra."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PEPit")

from afltheory.algorithms import AFACD, UnsupportedRule  # noqa: E402
from afltheory.anarchy import Schedule  # noqa: E402
from afltheory.exact.local import server_rule  # noqa: E402
from afltheory.mutants.algorithms import AFACDOneArrival  # noqa: E402
from afltheory.pep import worst_case  # noqa: E402
from afltheory.pep.core import pep_view  # noqa: E402

S = Schedule(
    np.array([[0, 1]] * 3), np.zeros((3, 2), int), np.full((3, 2), 2), 3, init_local_steps=np.ones(3)
)
C = dict(L=1.0, sigma_G=0.3, sigma_L=0.0)


def test_pep_refusal_names_pep():
    rule = AFACDOneArrival(eta=1.0, eta_L=0.1)  # overrides combine: imperative code
    with pytest.raises(UnsupportedRule) as exc:
        worst_case(rule, S, C, delta=1.0)
    msg = str(exc.value)
    assert "the PEP skeleton (afltheory.pep) represents rules defined by the declarative hooks" in msg
    assert "overrides combine" in msg and "PEP cannot certify it; use the Monte Carlo engine" in msg
    assert "exact moments" not in msg
    with pytest.raises(UnsupportedRule, match="exact moments represent"):  # the exact engine's own words
        server_rule(rule, 3)


def test_pep_view_of_a_declarative_rule_is_the_exact_view():
    rule = AFACD(eta=2.0, eta_L=0.3)
    assert pep_view(rule, 3).gamma == server_rule(rule, 3).gamma == pytest.approx(0.6)
