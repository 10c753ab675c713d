"""Federated datasets: non-i.i.d. partitions and loaders (digits built in; MNIST, CIFAR-10, Shakespeare from
files the user already has — nothing is downloaded). The core never imports this package."""

from .federated import (
    FederatedDataset,
    federate,
    load_cifar10_federated,
    load_digits_federated,
    load_mnist_federated,
    load_shakespeare_federated,
    stratified_split,
)
from .loaders import LEAF_LETTERS, load_cifar10, load_mnist, load_shakespeare, read_idx, write_idx
from .partitions import dirichlet_partition, iid_partition, label_partition, partition_classes

__all__ = [
    "FederatedDataset",
    "LEAF_LETTERS",
    "dirichlet_partition",
    "federate",
    "iid_partition",
    "label_partition",
    "load_cifar10",
    "load_cifar10_federated",
    "load_digits_federated",
    "load_mnist",
    "load_mnist_federated",
    "load_shakespeare",
    "load_shakespeare_federated",
    "partition_classes",
    "read_idx",
    "stratified_split",
    "write_idx",
]
