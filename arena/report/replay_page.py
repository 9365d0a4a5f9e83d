"""The replay viewer page: one page for every match, its script rebuilding the steps from compact data.

In a report the page is `viewer.html` and loads the chosen match (`viewer.html#match=NAME`) from
`matches/NAME.js`; `arena replay --html` writes one page with its match's data inline. Either way the
page holds no precomputed step: `static/viewer.js` rebuilds them in the browser from the engine's records.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from arena.report.compact import file_stem
from arena.report.page import asset, document
from arena.store.logs import LOGS

VIEWER = "viewer.html"


def viewer_href(
    match_id: str,
    step: int | None = None,
    fault_seat: int | None = None,
    logs: Sequence[str] = (),
    line: int | None = None,
) -> str:
    """A match in the viewer, relative to the report's index; at a step, at a seat's fault, or at a replay line
    (a decision). `logs`: the bots with a stderr log of this match, which the viewer links at their seats."""
    href = f"{VIEWER}#match={quote(file_stem(match_id), safe='')}"
    if logs:
        href += "&logs=" + ",".join(quote(bot, safe="") for bot in logs)
    if fault_seat is not None:
        return f"{href}&fault={fault_seat}"
    if line is not None:
        return f"{href}&line={line}"
    return href if step is None else f"{href}&step={step}"


def log_href(bot: str, match_id: str | None = None) -> str:
    """A bot's stderr logs (the folder), or its log of one match, relative to the report's index."""
    folder = f"../{LOGS}/{quote(bot, safe='')}/"
    return folder if match_id is None else f"{folder}{quote(match_id, safe='')}.log"


def render_viewer(inline: str = "", back: str | None = None) -> str:
    """The viewer page; `inline`: a match's data script (compact.script) to embed, for a page on its own."""
    back_link = f'<a class="back" href="{back}">← tournament report</a>' if back else ""
    body = f"""<header>
{back_link}
<h1 id="title">Match</h1>
<p class="meta" id="meta"></p>
<p class="meta values" id="values"></p>
</header>
<main>
<p class="error" id="replay-error" hidden></p>
<noscript><p class="error">The viewer draws each step with JavaScript; it is off in this browser.</p></noscript>
<div class="controls" id="controls" hidden>
<div class="buttons">
<button type="button" id="first" title="first step (Home)" aria-label="first step">«</button>
<button type="button" id="prev" title="previous step (←)" aria-label="previous step">&lsaquo;</button>
<button type="button" id="next" title="next step (→)" aria-label="next step">&rsaquo;</button>
<button type="button" id="last" title="last step (End)" aria-label="last step">»</button>
<span id="step-label" aria-live="polite"></span>
</div>
<input type="range" id="step-slider" min="0" max="0" value="0" step="1" aria-label="step of the match">
<label class="view-choice">view <select id="view-select"></select></label>
<p class="hint">Keys: ← → one step, PgUp PgDn ten, Home End, F everything, 0&ndash;9 a seat's view.</p>
</div>
<section id="table" data-step="0" data-view="full" aria-label="the table">
<div id="centre">
<div class="pile"><span class="zone-label">round</span><span id="round" data-round="0">0</span></div>
<div class="pile"><span class="zone-label">deck</span><span id="deck" data-count="0">0</span></div>
<div class="pile" id="deck-cards-zone"><span class="zone-label">deck, top first</span><div id="deck-cards"></div></div>
<div class="pile" id="set-aside-zone"><span class="zone-label">set aside, face down</span>
<div id="set-aside"></div></div>
<div class="pile" id="face-up-zone"><span class="zone-label">set aside, face up</span><div id="face-up"></div></div>
</div>
<div id="seats"></div>
</section>
<section id="narration" aria-live="polite"><h2 id="step-title"></h2><ul id="says"></ul></section>
<section id="showdown" hidden><h2>Round over</h2><div id="showdown-body"></div></section>
<section id="result" hidden><h2>Match over</h2><ol id="result-body"></ol></section>
<section id="log"><h2>This round so far</h2><ol id="round-log"></ol></section>
</main>"""
    script = (inline + "\n" if inline else "") + asset("viewer.js")
    return document("Match replay", body, script, page_class="viewer")
