"""kubectl-kcache: a kubectl plugin for operators of KServe's Kernel Cache."""

__version__ = "0.1.0"
