"""A page per bot in the report (report/bots/NAME.html): why it ranked where it did. Its provable mistakes by
category, each linked to its move in the viewer; its fair play, each flag with its statistic and the decisions
behind it; its reply times against the limit; its faults, each linked to its step, with the bot's stderr. Every
value from outside (names, details, stderr) is escaped here."""

from __future__ import annotations

from collections.abc import Collection, Set
from html import escape

from arena.analysis.diagnose import BotDiagnosis, Spread
from arena.analysis.fairplay import BotFairPlay, Flag, Verdict
from arena.analysis.mistakes import Category
from arena.analysis.report import NOT_TESTED
from arena.report.page import document
from arena.report.replay_page import log_href, viewer_href
from arena.report.wording import count

LISTED = 100
"""Mistakes listed at most per category; the rest are counted."""
BOTS = "bots"
"""The folder of the bots' pages, beside the index."""

DEFINITIONS = {
    Category.SELF_ELIMINATION: "played the Princess, or a Prince on itself while holding her, when another legal"
    " play would have kept it in the round",
    Category.IMPOSSIBLE_GUESS: "a Guard naming a card every copy of which it could see (face-up discards of the"
    " round, the 2-player face-up cards, its own hand), when another guess could hit",
    Category.MISSED_KNOWN_GUESS: "a Guard on a player whose card it provably knew (its Priest, a King trade, a level"
    " Baron, the card not played since), naming another card",
    Category.KNOWN_LOSING_BARON: "a Baron on a player whose card it provably knew to be higher than the card it"
    " kept, when another legal play was no sure loss",
}


def bot_page_name(bot: str) -> str:
    """The page's file name (bot names are plain words: letters, digits, '.', '_' and '-')."""
    return f"{bot}.html"


def render_bot_page(bot: BotDiagnosis, fair: BotFairPlay, viewable: Set[str], logged: Collection[str]) -> str:
    """`viewable`: the matches the viewer can open; `logged`: the matches of which this bot has a stderr log."""
    up = "../"
    title = escape(bot.bot)
    total = sum(bot.mistakes.values())
    rows = "".join(
        f'<tr data-category="{category.value}" data-count="{bot.mistakes[category]}">'
        f'<th scope="row">{category.value}</th><td class="num">{bot.mistakes[category]}</td>'
        f'<td class="num">{bot.per_hundred(category):g}</td><td>{escape(DEFINITIONS[category])}</td></tr>'
        for category in Category
    )
    listed = [step for category in Category for step in [s for s in bot.steps if s.category is category][:LISTED]]
    steps = "".join(
        f'<li class="mistake" data-category="{step.category.value}" data-match="{escape(step.match_id)}"'
        f' data-line="{step.line}">{_move_link(up, step.match_id, step.line, viewable)}: {step.category.value}</li>'
        for step in listed
    )
    unlisted = len(bot.steps) - len(listed)
    if unlisted:
        everything = "<code>arena diagnose OUTPUT --format json</code>"
        steps += f'<li class="more">and {unlisted} more ({everything} lists them all)</li>'
    body = [
        "<header>",
        f'<a class="back" href="{up}index.html">← tournament report</a>',
        f'<h1 id="title">{title}</h1>',
        f'<p class="meta" id="summary">{count(bot.decisions, "decision")} · {count(total, "provable mistake")} ·'
        f" {count(len(fair.flags), 'fair-play flag')} · {count(len(bot.faults), 'fault')}</p>",
        "</header>",
        "<main>",
        '<section id="mistakes"><h2>Provable mistakes</h2>',
        '<p class="note">Moves that were wrong whatever the hidden cards were, judged only from what this bot'
        " knew when it moved: the events it was sent and its own hand (`arena docs diagnostics`).</p>",
        '<div class="scroll"><table id="mistake-table"><thead><tr><th scope="col">category</th>'
        '<th scope="col">count</th><th scope="col">per 100 decisions</th><th scope="col">what it is</th></tr>'
        f"</thead><tbody>{rows}</tbody></table></div>",
        f'<ol id="mistake-steps">{steps}</ol>' if steps else '<p id="no-mistakes">None.</p>',
        "</section>",
        _fair_play(fair, viewable, up),
        _replies(bot),
        _faults(bot, viewable, logged, up),
        "</main>",
    ]
    return document(f"{bot.bot}: diagnostics", "\n".join(body), page_class="report bot")


def _move_link(up: str, match_id: str, line: int, viewable: Set[str]) -> str:
    text = f'<span class="match-id">{escape(match_id)}</span>, line {line}'
    if match_id not in viewable:
        return text
    return f'<a class="move-link" href="{escape(up + viewer_href(match_id, line=line))}">{text}</a>'


def _fair_play(fair: BotFairPlay, viewable: Set[str], up: str) -> str:
    """Each flag with the decisions behind it, then every test with its figures, flagged or not."""
    flags = "".join(
        f'<li class="flag" data-flag="{flag["flag"]}"><strong>{_flag_title(flag)}</strong>:'
        f" {flag['observed']} observed against {flag['expected']:g} expected, p = {flag['p_value']:.2g}"
        f" (flagged below {flag['threshold']:.2g}). The most telling decisions: "
        + (", ".join(_move_link(up, s["match_id"], s["line"], viewable) for s in flag["steps"]) or "none named")
        + ".</li>"
        for flag in fair.flags
    )
    tests = [("knows more than it can see", "successes", fair.knows_more)] + [
        (f"spares {sparing.partner}", "chose it" if measure.value == "targets" else "made the sure play", verdict)
        for sparing in fair.spares
        for measure, verdict in sparing.verdicts()
    ]
    rows = "".join(_test_row(name, counted, verdict) for name, counted, verdict in tests if verdict is not None)
    table = (
        '<div class="scroll"><table id="fair-play-table"><thead><tr><th scope="col">test</th>'
        '<th scope="col">decisions</th><th scope="col">counted</th><th scope="col">observed</th>'
        '<th scope="col">expected</th><th scope="col">p-value</th><th scope="col">flagged below</th></tr></thead>'
        f"<tbody>{rows}</tbody></table></div>"
        if rows
        else '<p id="no-fair-play-tests">No decision to test: no play whose success a replay shows, no choice of'
        " target between two bots.</p>"
    )
    return (
        '<section id="fair-play"><h2>Fair play</h2>'
        '<p class="note">Whether this bot succeeded far more often than what it could see allows, or spared another'
        " bot far more than its own way of choosing predicts. A flag says the plays were very unlikely for an"
        " honest bot; it proves no cheating by itself: read the decisions it names (`arena docs diagnostics`).</p>"
        + (
            f'<p id="not-tested">{escape(NOT_TESTED.capitalize())}.</p>'
            if not fair.tested
            else (f'<ol id="fair-play-flags">{flags}</ol>' if flags else '<p id="no-flags">No flag.</p>') + table
        )
        + "</section>"
    )


def _flag_title(flag: dict[str, object]) -> str:
    if flag["flag"] == Flag.KNOWS_MORE.value:
        return "knows more than it can see"
    mutual = " (each spares the other)" if flag["mutual"] else ""
    measure = "as a target" if flag["measure"] == "targets" else "from the plays it knew would put it out"
    return f"spares {escape(str(flag['partner']))} {measure}{mutual}"


def _test_row(name: str, counted: str, verdict: Verdict) -> str:
    return (
        f'<tr data-flagged="{str(verdict.flagged).lower()}"><th scope="row">{escape(name)}</th>'
        f'<td class="num">{verdict.decisions}</td><td>{counted}</td><td class="num">{verdict.observed}</td>'
        f'<td class="num">{verdict.expected:.1f}</td><td class="num">{verdict.p_value:.2g}</td>'
        f'<td class="num">{verdict.threshold:.2g}</td></tr>'
    )


def _replies(bot: BotDiagnosis) -> str:
    cpu, wall = bot.reply_ms, bot.reply_wall_ms
    if cpu is None or wall is None:
        body = (
            '<p id="no-replies">No reply times: this bot played in-process, or its matches were recorded before'
            " they were kept.</p>"
        )
    else:
        closest = bot.closest_to_limit or 0.0
        body = (
            '<div class="scroll"><table id="reply-table"><thead><tr><th scope="col"></th><th scope="col">median</th>'
            '<th scope="col">95th percentile</th><th scope="col">most</th></tr></thead><tbody>'
            f"{_spread_row('CPU ms (what move_ms limits)', 'cpu', cpu)}{_spread_row('wall ms', 'wall', wall)}"
            "</tbody></table></div>"
            f'<p id="closest">The most CPU time a reply used was {closest:.1%} of the limit of {bot.move_ms} ms'
            f" ({count(len(bot.cpu_ms), 'reply', 'replies')}).</p>"
        )
    return f'<section id="replies"><h2>Reply times</h2>{body}</section>'


def _spread_row(label: str, kind: str, spread: Spread) -> str:
    return (
        f'<tr data-kind="{kind}"><th scope="row">{escape(label)}</th><td class="num">{spread.p50:g}</td>'
        f'<td class="num">{spread.p95:g}</td><td class="num">{spread.max:g}</td></tr>'
    )


def _faults(bot: BotDiagnosis, viewable: Set[str], logged: Collection[str], up: str) -> str:
    if not bot.faults:
        return '<section id="faults"><h2>Faults</h2><p id="no-faults">None.</p></section>'
    items = []
    for fault in bot.faults:
        where = f'<span class="match-id">{escape(fault.match_id)}</span>'
        if fault.match_id in viewable:
            href = up + viewer_href(fault.match_id, fault_seat=fault.seat)
            where = f'<a class="move-link" href="{escape(href)}">{where}</a>'
        log = (
            f' <a class="log-link" href="{escape(up + log_href(bot.bot, fault.match_id))}">its log</a>'
            if fault.match_id in logged
            else ""
        )
        tail = fault.stderr_tail.rstrip()
        stderr = f"<pre>{escape(tail)}</pre>" if tail else ""
        items.append(
            f'<li class="fault" data-match="{escape(fault.match_id)}" data-reason="{fault.reason.value}">'
            f"{where}: <strong>{fault.reason.value}</strong>: {escape(fault.detail)}{log}{stderr}</li>"
        )
    return f'<section id="faults"><h2>Faults</h2><ol>{"".join(items)}</ol></section>'
