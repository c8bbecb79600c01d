"""The kinds reconcile owns, with the writers their managedFields name: what reconcile's informers of
KernelCacheNodes and the agent DaemonSet decode, so that another controller's writes are seen on the watch
they already hold (`reconcile/foreign_writes.py`). Only the entries' heads are kept (never fieldsV1); the
commands' own kinds keep no managedFields at all."""

from __future__ import annotations

from .apps import DaemonSet
from .base import Items, Meta, Str, _Obj
from .serving import KernelCacheNode


class ManagedField(_Obj, frozen=True):
    manager: Str = ""
    operation: Str = ""
    subresource: Str = ""
    time: Str = ""


class WritersMeta(Meta, frozen=True):
    managed_fields: Items[ManagedField] = ()


class KernelCacheNodeWriters(KernelCacheNode, frozen=True, dict=True):
    metadata: WritersMeta


class DaemonSetWriters(DaemonSet, frozen=True, dict=True):
    metadata: WritersMeta
