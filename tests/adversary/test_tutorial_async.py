"""docs/tutorial/async_sgd_concurrency.py: async SGD with n = M jobs in flight holds under the adversary, and
the old i.i.d.-delay candidate (M = 2, m = 1, round-mode delays up to 32) is refused as outside its class."""

from __future__ import annotations

import runpy
from pathlib import Path

from afltheory.adversary.generic import search_claim
from afltheory.algorithms import AsySG
from afltheory.anarchy import Behaviour, ConstantSteps, UniformArrivals, UniformDelay
from afltheory.problems import HeterogeneousQuadratic
from afltheory.strategies import Instance

TUTORIAL = Path(__file__).resolve().parents[2] / "docs" / "tutorial" / "async_sgd_concurrency.py"


def _lines():
    return [s for s in TUTORIAL.read_text().splitlines() if s.strip() and not s.strip().startswith("#")]


def test_tutorial_claim_holds_and_old_instance_refused():
    # 21 lines for the claim and its adversary; + 19 for the check `afltheory verify --mutants` scores
    # (the bound as LaTeX and a one-round-stale plain loop)
    assert len(_lines()) <= 40
    claim = runpy.run_path(str(TUTORIAL))["ASYNC_SGD"]
    wc = search_claim(claim, budget=15, seed=0)
    assert not wc.violated and wc.ratio < 1 and wc.certificate.inside
    assert wc.monte_carlo > 0 and "jobs in flight" in wc.coverage["searched"]["tau"]
    p = HeterogeneousQuadratic(dim=1, num_workers=2, L=1.0, mu=1.0, sigma_L=1.0, sigma_G=0.0, seed=0)
    old = Instance(
        p,
        Behaviour(UniformArrivals(1), UniformDelay(32), ConstantSteps(1)),
        AsySG(1.0, 0.1),
        60,
        1,
        32,
        1,
        p.constants.x_star,
    )
    cert = claim.assumption_class.membership(claim, old)
    assert not cert.inside and any(r.startswith("delays:") for r in cert.reasons)
