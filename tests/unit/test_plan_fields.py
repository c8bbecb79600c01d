"""The why-* commands' file selections are the kinds of their lists in the read plan (snapshot/plan.py), looked
up in the kind registry: a kind read live is decoded from a file too, and nothing else."""

from __future__ import annotations

from kubectl_kcache.cli.why_common import WHY_GROUP_READS, WHY_NOT_CACHED_READS
from kubectl_kcache.snapshot import plan


def test_the_file_selections_of_why_group_and_why_not_cached_are_their_plans_kinds():
    assert plan.fields_of("why-group") == WHY_GROUP_READS
    assert plan.fields_of("why-not-cached") == WHY_NOT_CACHED_READS
