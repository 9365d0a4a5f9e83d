"""The report's section on a sequential test: where it stands, and the path of its log-likelihood ratio between
the two bounds, pair by pair."""

from __future__ import annotations

from html import escape

from arena.analysis.sprt import describe, stored_test
from arena.report.svg import colour, line_chart
from arena.store import ResultStore

POINTS = 400
"""The most points drawn of the path: a long test is drawn at evenly spaced pairs, its last one included."""


def sprt_section(store: ResultStore) -> str:
    """The section, or "" for a tournament that is no sequential test."""
    if "sprt" not in store.meta():
        return ""
    config, state = stored_test(store)
    path = state.path
    step = max(1, -(-len(path) // POINTS))
    positions = [*range(step, len(path) + 1, step)]
    if path and positions[-1] != len(path):
        positions.append(len(path))
    series = {
        "LLR": [path[position - 1] for position in positions],
        "accept H1": [state.upper] * len(positions),
        "accept H0": [state.lower] * len(positions),
    }
    legend = "".join(
        f'<li><svg class="swatch" viewBox="0 0 32 12" aria-hidden="true"><line x1="0" y1="6" x2="32" y2="6"'
        f' stroke="{colour(index)}"/></svg>{escape(name)}</li>'
        for index, name in enumerate(series)
    )
    chart = (
        line_chart(positions, [f"pair {p}" for p in positions], series, "pairs", "log-likelihood ratio", "sprt-chart")
        + f'<ul class="legend">{legend}</ul>'
        if path
        else "<p>No pair played yet.</p>"
    )
    lines = "".join(f"<li>{escape(line)}</li>" for line in describe(config, state))
    return (
        f'<section id="sprt" data-decision="{state.decision.value}" data-pairs="{state.pairs}"'
        f' data-llr="{state.llr:.4f}"><h2>Sequential test</h2><ul class="sprt-summary">{lines}</ul>'
        f"<figure>{chart}<figcaption>The log-likelihood ratio after each pair, between the bounds at which the"
        " test accepts H1 (above) or H0 (below): `arena docs sprt`.</figcaption></figure></section>"
    )
