"""Claims as first-class objects: a convergence theorem stated once (``Claim``), read by every engine.

```python
import sympy as sp
from afltheory.algorithms import FedAvg
from afltheory.claims import Assumptions, Claim, verify
from afltheory.claims.symbols import D0, E, Gamma, G, L, kappa, mu, sigma_L, sum_p2, T, t

gamma = sp.Symbol("gamma", positive=True)
li = Claim(id="li2020.thm1", title="FedAvg, strongly convex, full participation",
           assumptions=Assumptions(function="strongly_convex", noise="variance", heterogeneity="Gamma",
                                   participation="full", weights="data"),
           rule=FedAvg, eta=1, eta_L=2 / (mu * (gamma + t)), values={"gamma": sp.Max(8 * kappa, E)},
           measured="last_gap", bound=..., reference="Li et al. 2020, Thm 1", source="...", reading="...")
verdict = verify(li, problem, behaviour, rounds=200, replicates=8)
```

The symbol set is ``afltheory.claims.SYMBOLS`` (documented in ``afltheory.claims.symbols``); the measured
quantities are ``QUANTITIES``; the paper's own theorems are claims too (``afltheory.claims.paper``).
"""

from ..theory.symbols import (  # noqa: F401  (the shared symbols, re-exported for claim files)
    Delta,
    K,
    Kbar,
    Khat2,
    Ktil,
    L,
    M,
    T,
    eta,
    eta_L,
    f0,
    f_star,
    m,
    sigma_G,
    sigma_L,
    tau,
)
from ._claim import (
    CONFIDENCES,
    FUNCTION_CLASSES,
    KINDS,
    QUANTITIES,
    Assumptions,
    Claim,
    EngineForm,
    Location,
    Transcription,
    UnknownSymbol,
    engine_confidence,
    is_read,
    substitute,
)
from .symbols import D0, SYMBOLS, E, G, Gamma, kappa, mu, sigma_G_mean, sum_p2, t, zeta_star
from .verify import (
    ENGINES,
    REFUSALS,
    Measurement,
    QuantityUnavailable,
    ScheduleRecord,
    measure,
    problem_values,
    quantity_of,
    run_values,
    verify,
    verify_order,
    verify_rate,
)

__all__ = [
    "Assumptions",
    "CONFIDENCES",
    "Claim",
    "D0",
    "Delta",
    "E",
    "ENGINES",
    "EngineForm",
    "FUNCTION_CLASSES",
    "G",
    "Gamma",
    "K",
    "KINDS",
    "Kbar",
    "Khat2",
    "Ktil",
    "L",
    "Location",
    "M",
    "Measurement",
    "QUANTITIES",
    "QuantityUnavailable",
    "REFUSALS",
    "SYMBOLS",
    "ScheduleRecord",
    "T",
    "Transcription",
    "UnknownSymbol",
    "engine_confidence",
    "eta",
    "eta_L",
    "f0",
    "f_star",
    "is_read",
    "kappa",
    "m",
    "measure",
    "mu",
    "problem_values",
    "quantity_of",
    "run_values",
    "sigma_G",
    "sigma_G_mean",
    "sigma_L",
    "substitute",
    "sum_p2",
    "t",
    "tau",
    "verify",
    "verify_order",
    "verify_rate",
    "zeta_star",
]
