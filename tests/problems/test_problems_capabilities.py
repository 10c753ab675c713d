"""The capabilities a problem declares to the engine (issue 27 item 2): ``additive_noise`` and
``hessian_eigensystem()``; the engine reads these, not ``stochastic_grad`` identity or ``kind``/``hessian``.
Deterministic (no randomness beyond the problems' fixed seeds)."""

import numpy as np
import pytest

from afltheory.problems import HeterogeneousQuadratic, LogisticRegression, NonconvexSinusoidal
from afltheory.problems.base import Problem


def test_families_declare_additive_noise():
    assert HeterogeneousQuadratic.additive_noise is True
    assert NonconvexSinusoidal.additive_noise is True
    assert LogisticRegression.additive_noise is False


def test_additive_noise_derived_for_undeclared_subclass():
    class Own(HeterogeneousQuadratic):
        def stochastic_grad(self, x, i, rng):
            return self.local_grad(x, i)

    class Plain(HeterogeneousQuadratic):
        pass

    assert Own.additive_noise is False  # control: an override flips the derived capability
    assert Plain.additive_noise is True
    assert Own(dim=3, num_workers=2).collapse_reason() is not None


def test_contradictory_declaration_rejected():
    with pytest.raises(TypeError, match="additive_noise=True but overrides stochastic_grad"):

        class Bad(Problem):
            additive_noise = True

            def stochastic_grad(self, x, i, rng):
                return x


@pytest.mark.parametrize("kind", ["diag", "dense"])
def test_hessian_eigensystem_reconstructs_hessian(kind):
    p = HeterogeneousQuadratic(dim=4, num_workers=3, hessian=kind, seed=1)
    eig, Q = p.hessian_eigensystem()
    H = np.diag(p.hessian[0]) if kind == "diag" else p.hessian[0]
    Qm = np.eye(4) if Q is None else Q
    assert (Q is None) == (kind == "diag")
    np.testing.assert_allclose(Qm @ np.diag(eig[0]) @ Qm.T, H, atol=1e-12)


def test_hessian_eigensystem_absent_without_closed_form():
    with pytest.raises(NotImplementedError, match="no closed-form K-step law"):
        NonconvexSinusoidal(dim=2, num_workers=2).hessian_eigensystem()
