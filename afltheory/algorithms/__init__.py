"""Server rules (AFA-CD, AFA-CS, FedAvg, FedBuff, AsySG) and worker rules (SGD, FedProx, SCAFFOLD)."""

from .base import MemoryState, NoState, ServerRule, ServerState, WorkerRule
from .server import AFACD, AFACS, STALENESS_WEIGHTS, AsySG, FedAvg, FedBuff
from .workers import SCAFFOLD, SGD, FedProx

ALGORITHMS = {"AFACD": AFACD, "AFACS": AFACS, "FedAvg": FedAvg, "FedBuff": FedBuff, "AsySG": AsySG}
WORKER_RULES = {"SGD": SGD, "FedProx": FedProx, "SCAFFOLD": SCAFFOLD}

__all__ = ["AFACD", "AFACS", "ALGORITHMS", "AsySG", "FedAvg", "FedBuff", "FedProx", "MemoryState", "NoState",
           "SCAFFOLD", "SGD", "STALENESS_WEIGHTS", "ServerRule", "ServerState", "WORKER_RULES", "WorkerRule"]
