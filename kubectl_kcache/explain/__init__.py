"""Explanations: pure decision traces over a snapshot (why-group)."""

from .why_group import WhyGroup, explain

__all__ = ["WhyGroup", "explain"]
