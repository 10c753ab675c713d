"""Figures for the paper checks (matplotlib, Agg canvas; never opens a display, never touches pyplot state).

Every function takes data (and fits from ``afltheory.analysis``), draws one PNG and returns its path:
``rate_plot`` (log–log error vs T/m/K/M with fitted slope, bootstrap band and a theory line), ``speedup_plot``
(several rate panels side by side), ``bound_plot`` (measured vs bound with slack), ``lower_bound_plot``
(E‖∇f(x_t)‖² trajectories against σ_G²), ``stability_region_plot`` (theory's admissible (η, η_L) region vs the
empirical divergence boundary), ``curves_plot`` (generic lines). ``new_figure`` / ``save``: the one figure
style (Agg canvas, deterministic PNG bytes) that every other figure of the package (sweeps, real-data
experiments) uses too.
"""

from . import figures
from .figures import *  # noqa: F403 (re-exports exactly the names figures exports)

__all__ = figures.__all__
