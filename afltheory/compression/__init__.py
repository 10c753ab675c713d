"""Compressed worker updates [Konečný et al. 2016 (the survey slides); Yang et al. 2022, Alg. 1 "extra
processing"].

Compressors (frozen objects with certified ``omega(dim)`` or ``delta(dim)``, bits per update and exact
second moments): ``RandK(k)``, ``BernoulliMask(p)``, ``Subsample(p)``, ``GaussianSketch(k)``,
``StochasticQuantizer(bits, rotate=False)``, ``QSGD(s)``, ``LowRank(rank)`` (unbiased), ``TopK(k)``,
``Sign()`` (biased), ``Identity()``. A server rule takes ``compressor=`` — a compressor,
``ErrorFeedback(C)`` or ``DIANA(C, alpha)`` — e.g. ``AFACD(eta=1.0, eta_L=0.1, compressor=RandK(k=4))``;
``simulate``, the exact engine (linear compressors, no memory) and the torch backend apply it to every
worker update before aggregation, and ``Trace.bits`` counts the bits sent. A ``Channel`` follows the rules'
(init, update) pattern: ``init()`` gives its ``ChannelState`` (``ChannelMemory`` for EF/DIANA) and
``send(state, G, workers, key) -> (out, bits, state)`` donates the state passed in. See docs/compression.md.
"""

from . import channel, compressors
from .channel import *  # noqa: F403 (re-exported: channel.__all__)
from .compressors import *  # noqa: F403 (re-exported: compressors.__all__)
from .compressors import (
    QSGD,
    BernoulliMask,
    GaussianSketch,
    Identity,
    LowRank,
    RandK,
    Sign,
    StochasticQuantizer,
    Subsample,
    TopK,
)

COMPRESSORS = {
    "RandK": RandK,
    "BernoulliMask": BernoulliMask,
    "Subsample": Subsample,
    "GaussianSketch": GaussianSketch,
    "StochasticQuantizer": StochasticQuantizer,
    "QSGD": QSGD,
    "LowRank": LowRank,
    "TopK": TopK,
    "Sign": Sign,
    "Identity": Identity,
}

#: the registry and exactly the public names of ``channel`` and ``compressors``
__all__ = ["COMPRESSORS", *channel.__all__, *compressors.__all__]
