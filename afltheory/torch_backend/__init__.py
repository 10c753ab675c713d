"""Optional torch backend (``pip install afltheory[torch]``): the paper's models (multinomial LR, the Table 1
CNN, the character LSTM) trained by AFA-CD / AFA-CS / FedAvg / FedBuff / AsySG with SGD, FedProx or SCAFFOLD
workers, driven by the same ``afltheory.anarchy`` behaviours as ``afltheory.simulate``. CPU by default, CUDA
when available. Importing this package imports torch; nothing in the core imports it."""

try:
    import torch  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without torch
    raise ImportError("afltheory.torch_backend needs PyTorch: pip install 'afltheory[torch]'") from exc

from .models import CharLSTM, LogisticRegressionModel, PaperCNN, make_model
from .runner import TorchTask, TorchTrace, default_device, run

__all__ = [
    "CharLSTM",
    "LogisticRegressionModel",
    "PaperCNN",
    "TorchTask",
    "TorchTrace",
    "default_device",
    "make_model",
    "run",
]
