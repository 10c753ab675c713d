# Lian, Huang, Li, Liu, "Asynchronous Parallel Stochastic Gradient for Nonconvex Optimization", NeurIPS
# 2015, Theorem 1 with a constant step (AsySG-con). FROM MEMORY (arXiv:1506.08272; not retrieved here).
# Statement: f L-smooth, E‖G(x; ξ) − ∇f(x)‖² ≤ σ² (identical data), delays ≤ T', M gradients summed per
# update, x_{k+1} = x_k − γ Σ_{m≤M} G(x_{k−τ_{k,m}}; ξ_{k,m}). If LMγ + 2L²M²T'²γ² ≤ 1, then
#   (1/K) Σ_{k<K} E‖∇f(x_k)‖² ≤ 2(f(x_1) − f*)/(MKγ) + σ²Lγ + 2σ²L²MT'γ².
# Reading: Lian's M is afltheory's m (arrivals per round), K its T, T' its τ; afltheory's AsySG averages the
# m gradients with step η η_L, so Lian's γ = η η_L / m. The condition's 2L²M²T'γ Σ_{κ≤T'} γ_{k+κ} is
# T'² for a constant step (the τ reading admits diverging runs). Identical workers (σ_G = 0), delays ≤ 4.
from afltheory.algorithms import AsySG
from afltheory.anarchy import Behaviour, UniformArrivals, UniformDelay
from afltheory.checks import register
from afltheory.claims import Claim, verify
from afltheory.claims.latex import latex
from afltheory.claims.verify import verify_latex, verify_reference
from afltheory.problems import HeterogeneousQuadratic

LT, N = {"M": "m", "K": "T", r"\gamma": "eta/m", "T'": "tau"}, ("transient", "noise", "delay")  # the reading
LIAN = Claim(id="lian2015.thm1", title="Lian et al. 2015 Thm 1: AsySG-con, nonconvex", rule=AsySG, eta=0.1,
             bound=latex(r"\frac{2(f(x_1)-f^*)}{MK\gamma}+\sigma^2L\gamma+2\sigma^2L^2MT'\gamma^2", LT, N),
             conditions={"step": latex(r"LM\gamma+2(LMT'\gamma)^2\le 1", LT)}, reference="Lian et al. 2015")
p, beh = HeterogeneousQuadratic(5, 8, sigma_L=1.0, sigma_G=0), Behaviour(UniformArrivals(2), UniformDelay(4))
# Power over a slip: the LaTeX read again, and a plain reference where the run is a geometric series (f =
# ½‖x − x*‖², no noise, no delay: x_{t+1} − x* = 0.9 (x_t − x*), so the average of ‖∇f(x_t)‖² over t < T
# is D0 (1 − 0.81^T)/(0.19 T)).
q, b0 = HeterogeneousQuadratic(5, 8, mu=1.0, sigma_L=0.0, sigma_G=0.0), Behaviour(UniformArrivals(2))
register("lian2015", LIAN.title, LIAN.reference)(lambda ctx: [verify(LIAN, p, beh, rounds=400), verify_latex(
    LIAN, LT), verify_reference(LIAN, q, b0, "D0*(1 - 0.81**T)/(0.19*T)", rounds=200)])
