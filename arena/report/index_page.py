"""The tournament report page: standings, head-to-head, the rating chart, faults and every match.

Pure rendering of `TournamentData`: every value is escaped here (`html.escape`), bot names and fault
details included, since both come from people outside the arena. The page needs no script.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from arena import __version__
from arena.matches import FaultRow
from arena.report.bot_page import BOTS, bot_page_name
from arena.report.data import HeadToHead, MatchEntry, RatingChart, TournamentData
from arena.report.page import document
from arena.report.replay_page import log_href, viewer_href
from arena.report.svg import colour, dash, interval_bar, line_chart
from arena.report.wording import count, fixed, interval, percent

FORMATS = {"round-robin": "round-robin", "swiss": "Swiss", "gauntlet": "gauntlet", "sprt": "sequential test"}


REFRESH_SECONDS = 3
"""How often the live standings of a running tournament reload themselves in the browser."""


@dataclass(frozen=True, slots=True)
class Progress:
    """A tournament still running: matches recorded so far, of how many."""

    done: int
    total: int


def render_index(
    data: TournamentData,
    viewable: Set[str],
    output: str,
    progress: Progress | None = None,
    logs: Mapping[str, Sequence[str]] | None = None,
    *,
    bot_pages: bool = False,
    extra: str = "",
) -> str:
    """The page. `viewable`: the matches the viewer can open; `progress`: the run is still going, so the
    page says how far it is and reloads itself every few seconds (the final report does not); `logs`: for each
    match, the bots with a stderr log of it (OUTPUT/logs), linked from the standings, the faults and the matches;
    `bot_pages`: each bot's name links its page of diagnostics (the final report writes them); `extra`: a section
    of the format's own after the standings (a sequential test's)."""
    played = [m for m in data.matches if not m.bye]
    if progress is not None:
        status = f"in progress: {progress.done}/{progress.total}"
    else:
        status = "complete" if data.complete else "not finished (interrupted, or still running)"
    running = "true" if progress is not None else "false"
    logs = logs or {}
    logged_bots = {bot for bots in logs.values() for bot in bots}
    sections = [
        ("standings", "Standings"),
        ("head-to-head", "Head to head"),
        ("ratings", "Ratings"),
        ("faults", f"Faults ({len(data.faults)})"),
        ("matches", "Matches"),
    ]
    nav = "".join(f'<a href="#{key}">{escape(title)}</a>' for key, title in sections)
    body = [
        "<header>",
        f'<h1 id="title">{escape(data.name)}</h1>',
        f'<p class="meta" id="summary">{escape(FORMATS.get(data.format, data.format))} · ruleset'
        f" {escape(data.ruleset)} · {data.players_per_match} per table · {count(len(data.bots), 'bot')} ·"
        f' {count(len(played), "match", "matches")} played · <span id="status"'
        f' data-complete="{str(data.complete).lower()}" data-running="{running}">{escape(status)}</span></p>',
        f'<nav class="sections">{nav}</nav>',
        "</header>",
        "<main>",
        _standings(data, logged_bots, bot_pages),
        extra,
        _head_to_head(data.head_to_head),
        _chart(data.chart, data.standings),
        _faults(data.faults, viewable, logs),
        _matches(data, viewable, logs),
        "</main>",
        f"<footer><p>loveletter-arena {escape(__version__)} · from the results in <code>{escape(output)}</code>"
        f" · regenerate with <code>arena report {escape(output)}</code></p></footer>",
    ]
    head = f'<meta http-equiv="refresh" content="{REFRESH_SECONDS}">' if progress is not None else ""
    return document(f"{data.name}: tournament report", "\n".join(body), page_class="report", head=head)


def _standings(data: TournamentData, logged_bots: Set[str], bot_pages: bool) -> str:
    candidates = set(data.candidates)
    rows = []
    for row in data.standings:
        bot = row["bot"]
        rate, low, high = data.win_rates[bot]
        faults = row["faults"]
        fault_cells = (
            " ".join(
                f'<span class="fault-kind" data-reason="{escape(reason)}" data-count="{count}">'
                f"{escape(reason)} {count}</span>"
                for reason, count in faults.items()
            )
            or '<span class="none">none</span>'
        )
        badge = ' <span class="badge">candidate</span>' if bot in candidates else ""
        if bot in logged_bots:
            badge += f' <a class="log-link" href="{escape(log_href(bot))}" title="its stderr, match by match">logs</a>'
        rows.append(
            f'<tr data-bot="{escape(bot)}" data-rank="{row["rank"]}" data-matches="{row["matches"]}"'
            f' data-wins="{row["wins"]}" data-score="{row["score"]}" data-opponents-score="{row["opponents_score"]}"'
            f' data-rating="{row["rating"]}">'
            f'<td class="rank num">{row["rank"]}</td>'
            f'<th scope="row" class="bot">{_bot_name(bot, bot_pages)}{badge}</th>'
            f'<td class="matches num">{row["matches"]}</td>'
            f'<td class="wins num">{row["wins"]}</td>'
            f'<td class="interval-cell">{interval_bar(rate, low, high)}'
            f'<span class="interval-text">{percent(rate)} {interval(low, high)}</span></td>'
            f'<td class="score num">{fixed(row["score"])}</td>'
            f'<td class="opponents-score num">{fixed(row["opponents_score"])}</td>'
            f'<td class="rating num">{fixed(row["rating"])}</td>'
            f'<td class="faults">{fault_cells}</td>'
            "</tr>"
        )
    return (
        '<section id="standings"><h2>Standings</h2>'
        '<div class="scroll"><table id="standings-table"><thead><tr>'
        '<th scope="col">#</th><th scope="col">bot</th><th scope="col">matches</th><th scope="col">wins</th>'
        '<th scope="col">win rate, 95% interval</th><th scope="col">score</th>'
        '<th scope="col" title="mean score of the opponents met">opp. score</th>'
        '<th scope="col" title="openskill ordinal, mu - 3 sigma">rating</th><th scope="col">faults</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
        '<p class="note">Score: place points summed over the matches (1 for first, 0 for last, shared places'
        " share their points; a bye counts 1). Ranked by score, then opponents' score (the mean final score of"
        " the opponents met), then rating. The bar is the 95% Wilson interval of the win rate, the dot the win"
        " rate itself; the tick marks 50%.</p></section>"
    )


def _bot_name(bot: str, linked: bool) -> str:
    if not linked:
        return f'<span class="bot-name">{escape(bot)}</span>'
    href = f"{BOTS}/{quote(bot_page_name(bot), safe='')}"
    return f'<a class="bot-link" href="{escape(href)}" title="its mistakes, reply times and faults">{escape(bot)}</a>'


def _head_to_head(table: HeadToHead) -> str:
    bots = table.bots
    if len(bots) < 2:
        return '<section id="head-to-head"><h2>Head to head</h2><p>Only one bot.</p></section>'
    head = "".join(f'<th scope="col" data-col="{escape(b)}">{escape(b)}</th>' for b in bots)
    rows = []
    for a in bots:
        cells = []
        for b in bots:
            if a == b:
                cells.append('<td class="self">&ndash;</td>')
                continue
            cell = table.cells[a][b]
            if cell is None:
                cells.append(f'<td class="never" data-row="{escape(a)}" data-col="{escape(b)}">·</td>')
                continue
            ahead, behind, level = cell
            tone = "ahead" if ahead > behind else "behind" if behind > ahead else "level"
            cells.append(
                f'<td class="{tone}" data-row="{escape(a)}" data-col="{escape(b)}" data-ahead="{ahead}"'
                f' data-behind="{behind}" data-level="{level}">{ahead}-{behind}-{level}</td>'
            )
        rows.append(f'<tr><th scope="row">{escape(a)}</th>{"".join(cells)}</tr>')
    if table.two_player:
        caption = "Wins-losses-draws of the row bot against the column bot (two-player matches)."
    else:
        caption = (
            "At the tables the two bots shared: times the row bot finished ahead of the column bot, behind it,"
            " and level (a shared place). · marks a pair that never shared a table."
        )
    return (
        '<section id="head-to-head"><h2>Head to head</h2>'
        f'<div class="scroll"><table id="head-to-head-table" class="matrix"><caption>{escape(caption)}</caption>'
        f'<thead><tr><th scope="col"></th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div></section>'
    )


def _chart(chart: RatingChart, standings: Sequence[dict[str, object]]) -> str:
    if len(chart.positions) < 2:
        return '<section id="ratings"><h2>Ratings</h2><p>No match has been played yet.</p></section>'
    order = [str(row["bot"]) for row in standings]
    series = {name: chart.series[name] for name in order if name in chart.series}
    x_title = "round" if chart.by == "round" else "matches rated"
    svg = line_chart(chart.positions, chart.labels, series, x_title, "rating")
    legend = "".join(
        f'<li data-bot="{escape(name)}"><svg class="swatch" viewBox="0 0 32 12" aria-hidden="true">'
        f'<line x1="0" y1="6" x2="32" y2="6" stroke="{colour(i)}"'
        + (f' stroke-dasharray="{dash(i)}"' if dash(i) else "")
        + f'/></svg>{escape(name)} <span class="final">{fixed(values[-1])}</span></li>'
        for i, (name, values) in enumerate(series.items())
    )
    return (
        f'<section id="ratings" data-by="{chart.by}"><h2>Ratings</h2>'
        f'<p class="note" id="chart-note">{escape(chart.note)}</p>'
        f'<figure>{svg}<figcaption><ul class="legend">{legend}</ul></figcaption></figure></section>'
    )


def _faults(faults: Sequence[FaultRow], viewable: Set[str], logs: Mapping[str, Sequence[str]]) -> str:
    if not faults:
        return '<section id="faults"><h2>Faults</h2><p id="no-faults">No bot faulted.</p></section>'
    rows = []
    for fault in faults:
        logged = logs.get(fault.match_id, ())
        if fault.match_id in viewable:
            page = viewer_href(fault.match_id, logs=logged)
            match_cell = f'<a class="match-id" href="{escape(page)}">{escape(fault.match_id)}</a>'
            at = "the last step" if fault.after_match else "the fault"
            href = viewer_href(fault.match_id, fault_seat=fault.seat, logs=logged)
            move = f'<a class="move-link" href="{escape(href)}">{at}</a>'
        else:
            match_cell = f'<span class="match-id">{escape(fault.match_id)}</span>'
            move = '<span class="none">no viewer data</span>'
        tail = fault.stderr_tail.rstrip()
        stderr = (
            f"<details><summary>{count(len(tail.splitlines()), 'line')}</summary><pre>{escape(tail)}</pre></details>"
            if tail
            else '<span class="none">empty</span>'
        )
        if fault.bot in logged:
            stderr += f' <a class="log-link" href="{escape(log_href(fault.bot, fault.match_id))}">whole log</a>'
        after = ' <span class="badge">after match end: the result stands</span>' if fault.after_match else ""
        rows.append(
            f'<tr class="fault" data-match="{escape(fault.match_id)}" data-bot="{escape(fault.bot)}"'
            f' data-reason="{escape(fault.reason)}" data-seat="{fault.seat}">'
            f'<th scope="row" class="bot">{escape(fault.bot)}</th><td class="match">{match_cell}</td>'
            f'<td class="reason">{escape(fault.reason)}{after}</td><td class="detail">{escape(fault.detail)}</td>'
            f'<td class="stderr">{stderr}</td><td class="move">{move}</td></tr>'
        )
    return (
        '<section id="faults"><h2>Faults</h2><div class="scroll"><table id="faults-table"><thead><tr>'
        '<th scope="col">bot</th><th scope="col">match</th><th scope="col">reason</th><th scope="col">detail</th>'
        '<th scope="col">stderr, last lines</th><th scope="col">in the replay</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def _matches(data: TournamentData, viewable: Set[str], logs: Mapping[str, Sequence[str]]) -> str:
    hint = (
        '<p class="note">Each match opens in the replay viewer: step through it move by move, with everything'
        " face up or as one seat saw it.</p>"
    )
    if data.format == "gauntlet" and data.candidates:
        parts = []
        for candidate in data.candidates:
            mine = [m for m in data.matches if candidate in m.seats]
            won = sum(candidate in m.winners for m in mine if not m.bye)
            parts.append(
                f'<section class="candidate" data-candidate="{escape(candidate)}">'
                f'<h3>{escape(candidate)} <span class="sub">{count(len(mine), "match", "matches")},'
                f" {won} won</span></h3>"
                f"{_match_table(mine, viewable, logs)}</section>"
            )
        return f'<section id="matches"><h2>Matches, by candidate</h2>{hint}{"".join(parts)}</section>'
    return f'<section id="matches"><h2>Matches</h2>{hint}{_match_table(list(data.matches), viewable, logs)}</section>'


def _match_table(matches: Sequence[MatchEntry], viewable: Set[str], logs: Mapping[str, Sequence[str]]) -> str:
    rows = []
    for match in matches:
        logged = logs.get(match.match_id, ())
        page = viewer_href(match.match_id, logs=logged) if match.match_id in viewable else None
        link = f'<a class="replay-link match-id" href="{escape(page)}">{escape(match.match_id)}</a>' if page else ""
        ident = link or f'<span class="match-id">{escape(match.match_id)}</span>'
        if match.bye:
            seats = f"{escape(match.seats[0])} (bye)"
            ranking = "&ndash;"
        else:
            seats = ", ".join(
                f'<span class="{"winner" if name in match.winners else ""}">{escape(name)}</span>'
                f' <span class="num">{tokens}</span>'
                for name, tokens in zip(match.seats, match.tokens, strict=True)
            )
            ranking = " · ".join(
                f"{place}. " + ", ".join(escape(name) for name in group)
                for place, group in enumerate(match.ranking, start=1)
            )
        faults = ", ".join(f"{escape(f.bot)} {escape(f.reason)}" for f in match.faults) or ""
        log_links = " ".join(
            f'<a class="log-link" href="{escape(log_href(bot, match.match_id))}">{escape(bot)}</a>' for bot in logged
        )
        rows.append(
            f'<tr class="match" data-match="{escape(match.match_id)}">'
            f'<th scope="row">{ident}</th><td class="num">{match.round}</td><td>{seats}</td>'
            f"<td>{ranking}</td><td>{faults}</td><td>{log_links}</td></tr>"
        )
    return (
        '<div class="scroll"><table class="matches"><thead><tr><th scope="col">match</th><th scope="col">round</th>'
        '<th scope="col">seats and tokens</th><th scope="col">ranking</th><th scope="col">faults</th>'
        '<th scope="col" title="what each bot wrote to its stderr in the match">stderr logs</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
