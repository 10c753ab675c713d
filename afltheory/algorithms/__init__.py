"""Server rules (AFA-CD, AFA-CS, FedAvg, FedBuff, AsySG, Dynamic FedAvg) and worker rules (SGD, FedProx,
SCAFFOLD, EpochSGD)."""

from .base import (
    MemoryState,
    NoState,
    RuleState,
    ServerRule,
    ServerState,
    ServerView,
    UnsupportedRule,
    WorkerRule,
    WorkerState,
)
from .dynamic import DynamicFedAvg, EpochSGD
from .local import LocalView, local_view
from .server import AFACD, AFACS, STALENESS_WEIGHTS, AsySG, FedAvg, FedBuff, worker_mean
from .workers import SCAFFOLD, SGD, ControlVariates, FedProx

ALGORITHMS = {"AFACD": AFACD, "AFACS": AFACS, "FedAvg": FedAvg, "FedBuff": FedBuff, "AsySG": AsySG}
"""The (eta, eta_L, worker) server rules; ``DynamicFedAvg(mu, epochs, batch)`` is exported separately."""
WORKER_RULES = {"SGD": SGD, "FedProx": FedProx, "SCAFFOLD": SCAFFOLD}

__all__ = [
    "AFACD",
    "AFACS",
    "ALGORITHMS",
    "AsySG",
    "ControlVariates",
    "DynamicFedAvg",
    "EpochSGD",
    "FedAvg",
    "FedBuff",
    "FedProx",
    "LocalView",
    "MemoryState",
    "NoState",
    "RuleState",
    "SCAFFOLD",
    "SGD",
    "STALENESS_WEIGHTS",
    "ServerRule",
    "ServerState",
    "ServerView",
    "UnsupportedRule",
    "WORKER_RULES",
    "WorkerRule",
    "WorkerState",
    "local_view",
    "worker_mean",
]
