"""The capture sidecar step of the same admission (its rules: `kernelcache/sidecar.py`): reached unless an
earlier gate ended admission, a cache miss included.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import constants as c
from .. import sidecar as sc
from .gates import CACHE_MISSES, SIDECAR, SIDECAR_GATES, SKIP, Gate, Injection, Inputs
from .injection import with_injection


def sidecar_gates(inputs: Inputs, gates: Sequence[Gate], injection: Injection | None) -> list[Gate]:
    """The capture sidecar step's gates: not reached when an earlier gate ended admission (anything but a
    cache miss), else whether it runs and each of its checks."""
    stop = next((g for g in gates if g.passed is False and not (g.effect == SKIP and g.id in CACHE_MISSES)), None)
    cfg = inputs.config.config
    if stop is not None or cfg is None:
        why = f"not reached: admission ends at {stop.id}" if stop is not None else "no configuration to check"
        return [Gate(g, None, why) for g in SIDECAR_GATES]
    on, source = sc.injection_enabled(cfg, inputs.pod.meta.annotations)
    if not on:
        return [Gate(SIDECAR, True, f"skipped: {source}: no capture sidecar is injected")] + [
            Gate(g, None, "the sidecar step is skipped") for g in sc.STEPS
        ]
    step = sc.plan(
        with_injection(inputs.pod, injection),
        inputs.namespace,
        cfg,
        inputs.captures,
        revision_known=inputs.revision_known,
    )
    if step.runs is None:
        return [Gate(SIDECAR, None, f"{source}; {step.why}: not checked")] + [
            Gate(g, None, "not checked: whether the sidecar step runs is not known") for g in sc.STEPS
        ]
    if not step.runs:
        return [Gate(SIDECAR, True, f"skipped: {step.why}")] + [
            Gate(g, None, "the sidecar step is skipped") for g in sc.STEPS
        ]
    out = [
        Gate(SIDECAR, True, f"runs ({source}; {step.why}): the webhook injects the capture sidecar {c.MCV_CONTAINER}")
    ]
    done = dict(step.passed)
    for g in sc.STEPS:
        if g in done:
            out.append(Gate(g, True, done[g]))
        elif step.error is not None and step.error.step == g:
            out.append(
                Gate(
                    g,
                    False,
                    f'the webhook rejects the pod with HTTP 500 "{step.error}" in the capture '
                    "sidecar step"
                    + (
                        ", after mounting the cache"
                        if injection is not None
                        else " (the image class is not checked there)"
                    ),
                    message=str(step.error),
                )
            )
        else:
            out.append(Gate(g, None, "not reached: an earlier sidecar check fails"))
    return out
