"""A problem's fast local-step kernel (issue 27 item 2, ``Problem.local_kernel``): it owns its buffers (the
engine lends none), validates the worker indices it is given, declares whether it runs in a local frame
(``kernel.centered``, read by the engine instead of testing which methods a class overrides), and its in-place
callables equal the plain formulas. Deterministic (fixed seeds only)."""

import numpy as np
import pytest

import afltheory as aft
from afltheory import algorithms as al
from afltheory import anarchy as an
from afltheory.problems import (
    HeterogeneousCurvatureQuadratic,
    HeterogeneousQuadratic,
    LocalKernel,
    LowerBoundPair,
    NonconvexSinusoidal,
    QuadraticProblem,
)
from afltheory.problems.quadratic import QuadraticKernel

PROBLEMS = {
    "diag": lambda: HeterogeneousQuadratic(dim=4, num_workers=5, sigma_L=0.3, seed=1),
    "dense": lambda: HeterogeneousQuadratic(dim=4, num_workers=5, seed=2, hessian="dense"),
    "curv-diag": lambda: HeterogeneousCurvatureQuadratic(dim=4, num_workers=5, seed=3),
    "curv-dense": lambda: HeterogeneousCurvatureQuadratic(dim=4, num_workers=5, seed=4, hessian="dense"),
    "lower-bound": lambda: LowerBoundPair(G=1.5),
    "nonconvex": lambda: NonconvexSinusoidal(dim=4, num_workers=5, seed=5),
}


def _block(prob, seed=0, R=3, m=2):
    rng = np.random.default_rng(seed)
    y = rng.standard_normal((R, m, prob.dim))
    w = rng.integers(0, prob.num_workers, size=(R, m))
    h = rng.standard_normal((R, m, prob.dim))
    return y, w, h


def test_kernels_declare_their_frame():
    """Quadratic families run in the frame u = y − c_i; the generic kernel has none (a request for one is a
    ValueError naming the parameter)."""
    q, nc = PROBLEMS["diag"](), PROBLEMS["nonconvex"]()
    assert isinstance(q.local_kernel(), QuadraticKernel) and q.local_kernel().centered
    assert not q.local_kernel(centered=False).centered
    assert type(nc.local_kernel()) is LocalKernel and not nc.local_kernel().centered
    assert nc.local_kernel().center(np.array([0, 1])) is None
    with pytest.raises(ValueError, match="centered=True"):
        nc.local_kernel(centered=True)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("centered", [None, False])
def test_kernel_step_equals_formula(name, centered):
    """grad_add: out += s·∇f_i(y); sgd_step: y ← y − η∇f_i(y) − h — in the kernel's frame when centered."""
    prob = PROBLEMS[name]()
    kernel = prob.local_kernel(centered=centered)
    y, w, h = _block(prob)
    g = prob.local_grad(y, w)
    c = kernel.center(w) if kernel.centered else 0.0
    u = y - c
    out = h.copy()
    kernel.grad_add(w, 0.7)(u, out)
    np.testing.assert_allclose(out, h + 0.7 * g, rtol=1e-12, atol=1e-12)
    v, hh = u.copy(), h.copy()
    kernel.sgd_step(w, 0.05)(v, hh)
    np.testing.assert_allclose(v + c, y - 0.05 * g - h, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("bad", [[[0, 5]], [[-1, 0]], [[0.0, 1.0]]])
def test_kernel_validates_workers(name, bad):
    """Every kernel entry point rejects out-of-range or non-integer worker indices (the engine's old shared
    workspace switched this check off); a valid array of the same shape passes (control)."""
    prob = PROBLEMS[name]()
    kernel = prob.local_kernel()
    w = np.array(bad)
    if np.issubdtype(w.dtype, np.integer):
        w = np.where(w > 0, prob.num_workers, w)
    for call in (kernel.center, lambda w: kernel.grad_add(w, 1.0), lambda w: kernel.sgd_step(w, 0.1)):
        with pytest.raises(ValueError, match="workers"):
            call(w)
        call(np.array([[0, prob.num_workers - 1]]))  # control: valid indices pass


def test_kernels_own_their_buffers():
    """Two kernels of one problem do not share arrays: one kernel's centre (its buffer) survives the other's
    calls on a block of the same shape; the same kernel reuses its buffer (no allocation per call)."""
    prob = PROBLEMS["curv-diag"]()
    k1, k2 = prob.local_kernel(), prob.local_kernel()
    w1, w2 = np.array([[0, 1]]), np.array([[2, 3]])
    c1 = k1.center(w1)
    keep = c1.copy()
    k2.center(w2)
    k2.grad_add(w2, 1.0)(np.zeros((1, 2, prob.dim)), np.zeros((1, 2, prob.dim)))
    np.testing.assert_array_equal(c1, keep)
    assert k1.center(w2) is c1  # control: a kernel's second call reuses (and overwrites) its own buffer
    np.testing.assert_array_equal(c1, prob.centers[w2])


def test_engine_reads_the_kernel_frame():
    """The engine runs a problem in its kernel's frame iff the kernel declares one: a quadratic subclass whose
    kernel declines the frame gives the same trace to 1e-12 (the frame saves passes, not arithmetic)."""

    class Plain(HeterogeneousQuadratic):
        def local_kernel(self, centered=None):
            return QuadraticKernel(self, centered=False)

    kw = dict(dim=4, num_workers=5, sigma_L=0.0, seed=1)
    beh = an.Behaviour(an.UniformArrivals(3), an.UniformDelay(2), an.UniformSteps(1, 4))
    runs = [
        aft.simulate(cls(**kw), al.AFACD(0.5, 0.05), beh, rounds=15, replicates=2, seed=3, collapse=False)
        for cls in (HeterogeneousQuadratic, Plain)
    ]
    np.testing.assert_allclose(runs[0].grad_norm_sq, runs[1].grad_norm_sq, rtol=1e-12)
    assert issubclass(Plain, QuadraticProblem)
    # the runner's frame is the kernel's declaration (control: the family's own kernel is centered)
    from afltheory.engine import _LocalRunner

    frames = [
        _LocalRunner(cls(**kw), al.SGD(), 0.05, 0, 1).centered for cls in (HeterogeneousQuadratic, Plain)
    ]
    assert frames == [True, False]
