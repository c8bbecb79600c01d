"""Who made a create or update of what reconcile owns, from managedFields in a watch event as the informer
decodes it (kinds.with_writers): what changed since the version seen before, or (seen for the first time)
the newest entry; and the handler an informer calls."""

from __future__ import annotations

import json

from kubectl_kcache.kube import resources as r
from kubectl_kcache.reconcile.foreign_writes import ForeignWrites, writer_of
from kubectl_kcache.snapshot import kinds

KIND = kinds.with_writers(r.KERNEL_CACHE_NODES)


def event(type_: str, *entries: dict) -> bytes:
    return json.dumps(
        {
            "type": type_,
            "object": {"metadata": {"name": "gpu-1", "resourceVersion": "7", "managedFields": list(entries)}},
        }
    ).encode()


def entry(manager: str, time: str, subresource: str = "") -> dict:
    out = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": "serving.kserve.io/v1alpha1",
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {}},
    }
    if subresource:
        out["subresource"] = subresource
    return out


def writer(raw: bytes, before: bytes | None = None) -> str:
    event = KIND.decode_watch_line(raw)
    return writer_of(event.type, event.object, KIND.decode_watch_line(before).object if before else None)


CREATED = entry("kubectl-client-side-apply", "2026-12-01T09:00:00Z")


def test_another_controllers_create_names_its_field_manager():
    assert writer(event("ADDED", entry("manager", "2026-12-01T10:00:00Z"))) == "manager"


def test_an_update_is_told_by_the_entry_it_moved_even_in_the_same_second_as_a_status_write():
    before = event(
        "MODIFIED",
        CREATED,
        entry("kubectl-kcache", "2026-12-01T10:00:00Z"),
        entry("kube-controller-manager", "2026-12-01T10:00:00Z", "status"),
    )
    after = event(
        "MODIFIED",
        CREATED,
        entry("kubectl-kcache", "2026-12-01T10:00:00Z"),
        entry("kube-controller-manager", "2026-12-01T10:00:01Z", "status"),
        entry("manager", "2026-12-01T10:00:01Z"),
    )
    assert writer(after, before) == "manager"
    # seen for the first time, the same version cannot be told apart (two newest entries)
    assert writer(after) == ""


def test_a_status_write_after_another_controllers_old_write_is_not_its_write_again():
    before = event(
        "MODIFIED", entry("manager", "2026-11-01T10:00:00Z"), entry("manager", "2026-12-01T10:00:00Z", "status")
    )
    after = event(
        "MODIFIED", entry("manager", "2026-11-01T10:00:00Z"), entry("manager", "2026-12-01T10:05:00Z", "status")
    )
    assert writer(after, before) == ""


def test_ours_peoples_kubernetes_own_status_writes_and_deletes_name_nobody():
    assert writer(event("ADDED", entry("kubectl-kcache", "2026-12-01T10:00:00Z"))) == ""
    assert writer(event("ADDED", entry("kubectl-create", "2026-12-01T10:00:00Z"))) == ""
    gc = event(
        "MODIFIED", entry("manager", "2026-12-01T09:00:00Z"), entry("kube-controller-manager", "2026-12-01T10:00:00Z")
    )
    assert writer(gc, event("MODIFIED", entry("manager", "2026-12-01T09:00:00Z"))) == ""
    # the agent writes only the status subresource, under the same manager name as KServe's controller
    assert (
        writer(
            event(
                "MODIFIED", entry("manager", "2026-12-01T09:00:00Z"), entry("manager", "2026-12-01T10:00:00Z", "status")
            )
        )
        == ""
    )
    assert writer(event("DELETED", entry("manager", "2026-12-01T10:00:00Z"))) == ""
    assert writer(b'{"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}}') == ""


def test_the_handler_keeps_the_last_foreign_write_and_ignores_what_a_list_brings():
    now = [100.0]
    seen = ForeignWrites(clock=lambda: now[0])
    handler = seen.handler("KernelCacheNode")
    listed = KIND.decode_watch_line(event("ADDED", entry("manager", "2026-12-01T10:00:00Z"))).object
    handler("LISTED", None, listed)  # what happened before the list is not attributed
    assert seen.last() is None
    handler("ADDED", None, listed)
    assert seen.last() == ("manager", "KernelCacheNode gpu-1", 100.0)
