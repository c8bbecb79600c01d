"""Who made a KernelCacheNode's create or update, from its managedFields in a watch event."""

from __future__ import annotations

import json

from kubectl_kcache.reconcile.foreign_writes import _decoder, writer_of


def event(type_: str, *entries: dict) -> bytes:
    return json.dumps({"type": type_, "object": {"metadata": {"name": "gpu-1", "resourceVersion": "7",
                                                               "managedFields": list(entries)}}}).encode()


def entry(manager: str, time: str, subresource: str = "") -> dict:
    out = {"manager": manager, "operation": "Update", "apiVersion": "serving.kserve.io/v1alpha1", "time": time,
           "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {}}}
    if subresource:
        out["subresource"] = subresource
    return out


def test_another_controllers_create_names_its_field_manager():
    assert writer_of(_decoder.decode(event("ADDED", entry("manager", "2026-12-01T10:00:00Z")))) == "manager"


def test_an_update_is_the_newest_entrys():
    ev = event("MODIFIED", entry("kubectl-create", "2026-12-01T09:00:00Z"), entry("manager", "2026-12-01T10:00:00Z"))
    assert writer_of(_decoder.decode(ev)) == "manager"


def test_ours_peoples_status_writes_deletes_and_ties_name_nobody():
    assert writer_of(_decoder.decode(event("ADDED", entry("kubectl-kcache", "2026-12-01T10:00:00Z")))) == ""
    assert writer_of(_decoder.decode(event("ADDED", entry("kubectl-client-side-apply", "2026-12-01T10:00:00Z")))) == ""
    gc = event("MODIFIED", entry("manager", "2026-12-01T09:00:00Z"),
               entry("kube-controller-manager", "2026-12-01T10:00:00Z"))
    assert writer_of(_decoder.decode(gc)) == ""
    # the agent writes only the status subresource, under the same manager name as KServe's controller
    ev = event("MODIFIED", entry("manager", "2026-12-01T09:00:00Z"), entry("manager", "2026-12-01T10:00:00Z", "status"))
    assert writer_of(_decoder.decode(ev)) == ""
    assert writer_of(_decoder.decode(event("DELETED", entry("manager", "2026-12-01T10:00:00Z")))) == ""
    tie = event("MODIFIED", entry("kubectl-kcache", "2026-12-01T10:00:00Z"), entry("manager", "2026-12-01T10:00:00Z"))
    assert writer_of(_decoder.decode(tie)) == ""
    assert writer_of(_decoder.decode(b'{"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}}')) == ""
