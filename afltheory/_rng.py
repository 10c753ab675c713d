"""Random streams derived from np.random.SeedSequence (never the global numpy RNG).

Every stream is keyed by (seed, purpose, index) so replicate r of a run with seed s is the same whatever the
number of replicates, and one replicate (or one replicate block) can be reproduced alone.
"""

from __future__ import annotations

import numpy as np

SCHEDULE = 1      # per-replicate stream for the behaviour (arrivals, delays, local steps, clocks)
NOISE = 2         # per-replicate-block stream for stochastic gradients
INIT = 3          # per-replicate stream for x0 draws / warm starts
DRIFT = 4         # per-replicate stream for a drifting objective's random walk
BLOCK = 64        # replicates per noise block (fixed: changing it changes every trace)


def stream(seed: int, purpose: int, index: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(seed), spawn_key=(purpose, int(index)))))
