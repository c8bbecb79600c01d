"""What each kind of a dump costs to decode and to keep: per object, the JSON bytes, the memory the decoded
objects hold (tracemalloc, with and without sharing.py's table) and the decoding time; then a cProfile of
`doctor --from-file` on the same dump in process (the top functions by own time).

    python3 -m bench.objects DUMP [--profile N]

DUMP is a dump written by bench.scale (or `kubectl kcache dump -o json`).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
import tracemalloc
from typing import Any

from kubectl_kcache.objects import decode as d
from kubectl_kcache.sharing import sharing
from kubectl_kcache.snapshot import kinds
from kubectl_kcache.snapshot.files.layout import DUMP_META
from kubectl_kcache.snapshot.files.load import _Top


def per_kind(path: str) -> list[dict[str, Any]]:
    lines: dict[tuple[str, str], list[bytes]] = {}
    with open(path, "rb") as fh:
        fh.readline()
        for line in fh:
            if line.startswith(DUMP_META):
                break
            item = line.rstrip(b"\r\n").rstrip(b",")
            top = d.decode_json(item, _Top)
            lines.setdefault((top.kind, top.api_version), []).append(item)
    out = []
    for (kind_name, api_version), items in lines.items():
        kind = kinds.lookup(api_version, kind_name)
        if kind is None or len(items) < 100:
            continue
        row: dict[str, Any] = {
            "kind": kind_name,
            "objects": len(items),
            "json_bytes": round(sum(map(len, items)) / len(items)),
        }
        for shared in (False, True):
            tracemalloc.start()
            if shared:
                with sharing():
                    objs = [kind.decode_json(i) for i in items]
            else:
                objs = [kind.decode_json(i) for i in items]
            held, _ = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            row["bytes_held_shared" if shared else "bytes_held"] = round(held / len(items))
            del objs
        t0 = time.process_time()
        for i in items:
            kind.decode_json(i)
        row["decode_us"] = round(1e6 * (time.process_time() - t0) / len(items), 1)
        out.append(row)
    return out


def profile(path: str, top: int) -> str:
    from kubectl_kcache.checks import run_doctor
    from kubectl_kcache.snapshot.files.from_files import load_files

    prof = cProfile.Profile()
    prof.enable()
    run_doctor(load_files([path]))
    prof.disable()
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(top)
    return text.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump")
    ap.add_argument("--profile", type=int, default=25, help="top functions of the doctor profile (0: none)")
    args = ap.parse_args(argv)
    print(f"{'kind':22} {'objects':>8} {'JSON B':>8} {'held B':>8} {'shared B':>9} {'decode us':>10}")
    for r in per_kind(args.dump):
        print(
            f"{r['kind']:22} {r['objects']:8d} {r['json_bytes']:8d} {r['bytes_held']:8d} "
            f"{r['bytes_held_shared']:9d} {r['decode_us']:10.1f}"
        )
    if args.profile:
        print(profile(args.dump, args.profile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
