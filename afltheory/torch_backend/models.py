"""The paper's models [Yang et al. 2022, App. E, Table 1] as torch modules.

* ``LogisticRegressionModel``: z = aᵀW + b with W (d, C), b (C) — the same flat layout as
  ``afltheory.problems.LogisticRegression`` (W row-major, then b), zero-initialized.
* ``PaperCNN``: conv5×5×32 → maxpool 2 → conv5×5×64 → maxpool 2 → FC 512 → FC 128 → FC C (ReLU between),
  adapted to the input size: "same" padding for small images (e.g. 8×8 digits), none for CIFAR's 32×32, and
  the first FC layer sized by a dry forward pass.
* ``CharLSTM``: embedding 8 → 2-layer LSTM with 100 units → linear over the vocabulary (80 LEAF symbols);
  predicts the next character from the last hidden state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

if TYPE_CHECKING:
    from ..datasets import FederatedDataset

__all__ = ["CharLSTM", "LogisticRegressionModel", "PaperCNN", "make_model"]


class LogisticRegressionModel(nn.Module):
    """Multinomial logistic regression: logits = flatten(x) @ W + b."""

    def __init__(self, num_features: int, num_classes: int):
        super().__init__()
        self.W = nn.Parameter(torch.zeros(num_features, num_classes))
        self.b = nn.Parameter(torch.zeros(num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.reshape(x.shape[0], -1) @ self.W + self.b


class PaperCNN(nn.Module):
    """The CNN of the paper's Table 1 (two conv + pool blocks, two dense layers), adapted to the input
    shape."""

    def __init__(
        self, in_channels: int = 3, image_size: int = 32, num_classes: int = 10, padding: int | None = None
    ):
        super().__init__()
        pad = (2 if image_size < 20 else 0) if padding is None else int(padding)
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, 32, 5, padding=pad),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 5, padding=pad),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
        )
        with torch.no_grad():
            n = self.features(torch.zeros(1, in_channels, image_size, image_size)).shape[1]
        self.classifier = nn.Sequential(
            nn.Linear(n, 512), nn.ReLU(), nn.Linear(512, 128), nn.ReLU(), nn.Linear(128, num_classes)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


class CharLSTM(nn.Module):
    """A character LSTM for next-character prediction (LEAF Shakespeare): embedding, LSTM, linear head."""

    def __init__(
        self,
        vocab_size: int = 80,
        embed_dim: int = 8,
        hidden: int = 100,
        layers: int = 2,
        num_classes: int | None = None,
    ):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, vocab_size if num_classes is None else num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, _ = self.lstm(self.embed(x))
        return self.out(h[:, -1])


def make_model(name: str, data: FederatedDataset, *, seed: int = 0) -> nn.Module:
    """Build ``name`` ("lr", "cnn", "lstm") for a ``FederatedDataset``; parameters initialized from ``seed``
    without touching torch's global RNG state."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        shape = data.X_train.shape[1:]
        if name == "lr":
            d = 1
            for s in shape:
                d *= int(s)
            return LogisticRegressionModel(d, data.num_classes)
        if name == "cnn":
            if len(shape) != 3 or shape[1] != shape[2]:
                raise ValueError(f"model='cnn' needs square images (N, channels, s, s); data has {shape}")
            return PaperCNN(int(shape[0]), int(shape[1]), data.num_classes)
        if name == "lstm":
            return CharLSTM(num_classes=data.num_classes)
    raise ValueError(f"model={name!r} must be 'lr', 'cnn' or 'lstm'")
