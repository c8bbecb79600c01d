"""Every ```console example in the README and docs/ is a real run on the bundled examples, output and exit
code (tests/doc_console.py; `python3 -m tests.doc_console --write` refreshes them)."""

from __future__ import annotations

import pytest

from tests import doc_console as dc

BLOCKS = [b for doc in dc.DOCS if doc.exists() for b in dc.blocks(doc)]


def test_the_docs_have_console_examples():
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_console_example_is_what_the_command_prints(block, tmp_path):
    outputs = dc.run_block(block, dc.workdir_for(tmp_path))
    for step, actual in zip(block.steps, outputs, strict=True):
        assert dc.matches(step.expected, actual), f"{block.id}: `{step.command}` printed:\n" + "\n".join(actual)


@pytest.mark.parametrize(
    ("expected", "actual", "ok"),
    [
        (["a", "b"], ["a", "b"], True),
        (["a", "b"], ["a", "b", "c"], False),
        (["a", "...", "d"], ["a", "b", "c", "d"], True),
        (["a", "...", "d"], ["a", "d"], True),
        (["...", "c"], ["a", "b", "c"], True),
        (["a", "..."], ["a", "b"], True),
        (["a", "...", "x"], ["a", "b", "c"], False),
        (["a", "...", "c", "...", "e"], ["a", "b", "c", "d", "e"], True),
        (["a", "...", "c", "...", "e"], ["a", "e", "c"], False),
    ],
)
def test_excerpt_matching(expected, actual, ok):
    assert dc.matches(expected, actual) is ok
