"""The "Serving pods" section of `doctor -o html`: `why-not-cached -A`'s counts per InferenceService (and
revision where they differ), with the top blocking gate and the next command. Every value is escaped."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from ..text import escape
from .hit_rate_table import summary_sentence, worst_first

if TYPE_CHECKING:
    from ..explain.fleet import FleetHitRate


def _e(value: object) -> str:
    return html.escape(escape(str(value)), quote=True)


def serving_pods_section(fleet: FleetHitRate | str | None) -> str:
    head = '<section id="serving"><h2>Serving pods</h2>'
    if fleet is None:
        return ""
    if isinstance(fleet, str):
        return f'{head}<p class="warning-text">Not shown: {_e(fleet)}</p></section>'
    intro = f"<p>{_e(summary_sentence(fleet))}</p>"
    if not fleet.rows:
        return head + intro + "</section>"
    rows = []
    for r in worst_first(fleet.rows):  # what needs doing first, as the text view
        name = _e(r.isvc) + (f" <small>revision {_e(r.revision)}</small>" if r.revision else "")
        gate = f"{_e(r.gate)} ({r.gate_count})" if r.gate else ""
        nxt = f"<code>{_e(r.next_command)}</code>" if r.next_command else ""
        rows.append(
            f"<tr><td class=ns>{_e(r.namespace)}</td><th scope=row>{name}</th>"
            f"<td class=num data-label=pods>{r.pods}</td><td class=num data-label=cached>{r.cached}</td>"
            f"<td class='num{' warn' if r.cold else ''}' data-label=cold>{r.cold}</td>"
            f"<td class='num{' warn' if r.now else ''}' data-label='would be cached now'>{r.now}</td>"
            f"<td class='num{' bad' if r.denied else ''}' data-label=denied>{r.denied}</td>"
            f"<td class=num data-label='producers (cold by design)'>{r.producer}</td>"
            f"<td class=num data-label='hit rate'>{'-' if r.hit_rate is None else f'{r.hit_rate}%'}</td>"
            f"<td data-label='top blocking gate'>{gate}</td><td data-label=next>{nxt}</td></tr>"
        )
    table = (
        '<div class="scroll"><table class="serving cards"><thead><tr><th>namespace</th><th>InferenceService</th>'
        '<th>pods</th><th title="KServe mounted a KernelCache at admission">cached</th>'
        '<th title="started without one">cold</th><th title="cold, but admission would mount one today: '
        'recreate them">now</th><th title="admission would reject a recreated pod">denied</th>'
        '<th title="started cold by design: a producer of a cache (it compiled the kernels and holds them), or its '
        'revision is being captured">producer</th><th title="cached of the pods that are not producers">hit rate</th>'
        "<th>top blocking gate</th><th>next</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></div>"
    )
    return head + intro + table + "</section>"
