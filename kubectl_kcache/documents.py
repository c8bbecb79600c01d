"""THE YAML writer of every document the plugin prints or writes (`-o yaml` of every command, `dump -o yaml`):
keys in the document's order, block style, long strings on one line (never folded: hints are commands to
copy whole), non-ASCII kept when the output can take it, and YAML's own escapes for a bidi or invisible
character from the cluster, so the text stays readable as YAML and harmless on a terminal."""

from __future__ import annotations

import codecs
from typing import Any, TextIO

from .text import escape


def yaml_text(doc: Any, *, unicode: bool = True) -> str:
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when present: ~10x faster, same text
    text: str = yaml.dump(
        doc, Dumper=dumper, sort_keys=False, default_flow_style=False, width=1 << 30, allow_unicode=unicode
    )
    if unicode and escape(text, keep_newlines=True) != text:
        text = yaml.dump(
            doc, Dumper=dumper, sort_keys=False, default_flow_style=False, width=1 << 30, allow_unicode=False
        )
    return text


def takes_unicode(out: TextIO) -> bool:
    """Whether `out` encodes any character (UTF-8, UTF-16, ...); a stream that does not say is taken as UTF."""
    encoding = getattr(out, "encoding", None)
    if not encoding:
        return True
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False
