"""A family rendered in pieces (sample lines kept from the last render, and samples rendered now) reads byte for
byte as prometheus_client renders the whole family at once, whatever the label values (escaped) and values."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from kubectl_kcache.runtime.metrics import Family, Rendered, render, sample_lines

samples = st.lists(
    st.tuples(st.text(max_size=8), st.text(max_size=8), st.one_of(st.integers(-(10**12), 10**12), st.floats())),
    max_size=12,
)


def _whole(name: str, kind: str, help: str, rows: list[tuple[str, str, float]]) -> str:
    made = (GaugeMetricFamily if kind == "gauge" else CounterMetricFamily)(name, help, labels=["a", "b"])
    for a, b, value in rows:
        made.add_metric([a, b], value)

    class One:
        def collect(self) -> Any:
            return [made]

    registry = CollectorRegistry(auto_describe=False)
    registry.register(One())  # type: ignore[arg-type]
    return generate_latest(registry).decode()


@settings(max_examples=150, deadline=None)
@given(rows=samples, cuts=st.lists(st.booleans(), min_size=12, max_size=12), kind=st.sampled_from(["gauge", "counter"]))
def test_a_family_in_pieces_reads_as_the_whole(rows: list[tuple[str, str, float]], cuts: list[bool], kind: str) -> None:
    name = "kcache_x_total" if kind == "counter" else "kcache_x"
    family = Family(name, kind, 'help with \\ and "quotes"\nand a line')
    kept = Family(name, kind, family.help)
    for (a, b, value), cut in zip(rows, cuts, strict=False):
        if cut:  # rendered before, as `Rendered` keeps it
            family.samples.append(sample_lines(kept, [({"a": a, "b": b}, value)]))
        else:
            family.add(value, a=a, b=b)
    assert render([family]) == _whole(name, kind, family.help, rows)


def test_rendered_reuses_the_lines_of_the_very_same_rows_only() -> None:
    made: list[dict[str, Any]] = []
    rendered = Rendered()

    def text(*rows: dict[str, Any]) -> str:
        def samples(row: dict[str, Any]) -> list[tuple[dict[str, str], float]]:
            made.append(row)
            return [({"a": row["a"], "b": str(i)}, row["v"]) for i in range(row["n"])]

        return render([rendered.add_rows(Family("kcache_x", "gauge", "x"), rows, samples)])

    one, two, equal = {"a": "1", "v": 1, "n": 2}, {"a": 'q"\\\u2028', "v": 2, "n": 1}, {"a": "1", "v": 1, "n": 2}
    first = text(one, two)
    assert first == _whole("kcache_x", "gauge", "x", [("1", "0", 1), ("1", "1", 1), ('q"\\\u2028', "0", 2)])
    rendered.done()
    assert text(one, two) == first and made == [one, two]  # both kept: nothing rendered again
    rendered.done()
    assert text(two, equal) == _whole("kcache_x", "gauge", "x", [('q"\\\u2028', "0", 2), ("1", "0", 1), ("1", "1", 1)])
    assert made == [one, two, equal]  # an equal row (another object) is rendered
