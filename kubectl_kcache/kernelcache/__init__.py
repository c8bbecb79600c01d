"""KServe's Kernel Cache rules as pure functions over snapshot data.

doctor, why-group and reconcile call these and nothing else for KServe's semantics.
"""
