"""The replay viewer page: the steps computed by `steps` as JSON, and a small script that only draws them.

The script holds no rules and no knowledge of who may see what: for each step it shows the state the
engine computed for the chosen view (everything, or one seat's), so "as seat N saw it" can never show
more than the arena told seat N's bot.
"""

from __future__ import annotations

from html import escape

from arena.report.page import asset, document, json_script
from arena.report.steps import ReplaySteps


def render_replay(steps: ReplaySteps, back: str | None = None) -> str:
    """The viewer page; `back` is a link to the tournament report, when there is one."""
    players = steps.players
    options = ['<option value="full">everything (full information)</option>']
    options += [
        f'<option value="{seat}">as seat {seat}, {escape(name)}, saw it</option>' for seat, name in enumerate(players)
    ]
    seats = "".join(
        f'<article class="seat" data-seat="{seat}"><header><h3 class="name">{escape(name)}</h3>'
        f'<span class="seat-no">seat {seat}</span><span class="tokens" data-tokens="0">0</span></header>'
        '<div class="status"></div>'
        '<div class="zone"><span class="zone-label">hand</span><div class="hand"></div></div>'
        '<div class="zone"><span class="zone-label">discards</span><div class="discards"></div></div>'
        "</article>"
        for seat, name in enumerate(players)
    )
    last = max(0, len(steps.steps) - 1)
    error = (
        f'<p class="error" id="replay-error">This replay breaks the rules at {escape(steps.error)};'
        " the viewer stops just before.</p>"
        if steps.error
        else ""
    )
    back_link = f'<a class="back" href="{escape(back)}">← tournament report</a>' if back else ""
    values = " · ".join(f"{escape(label)} {value}" for label, value in steps.values.items())
    body = f"""<header>
{back_link}
<h1 id="title">Match {escape(steps.match_id or "(no id)")}</h1>
<p class="meta">ruleset {escape(steps.ruleset)} · seed {steps.seed} · {steps.target} tokens to win ·
{len(players)} players · {len(steps.steps)} steps</p>
<p class="meta values">card values: {values}</p>
</header>
<main>
{error}
<noscript><p class="error">The viewer draws each step with JavaScript; it is off in this browser.</p></noscript>
<div class="controls" id="controls">
<div class="buttons">
<button type="button" id="first" title="first step (Home)" aria-label="first step">«</button>
<button type="button" id="prev" title="previous step (←)" aria-label="previous step">&lsaquo;</button>
<button type="button" id="next" title="next step (→)" aria-label="next step">&rsaquo;</button>
<button type="button" id="last" title="last step (End)" aria-label="last step">»</button>
<span id="step-label" aria-live="polite"></span>
</div>
<input type="range" id="step-slider" min="0" max="{last}" value="0" step="1" aria-label="step of the match">
<label class="view-choice">view <select id="view-select">{"".join(options)}</select></label>
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
<div id="seats">{seats}</div>
</section>
<section id="narration" aria-live="polite"><h2 id="step-title"></h2><ul id="says"></ul></section>
<section id="showdown" hidden><h2>Round over</h2><div id="showdown-body"></div></section>
<section id="result" hidden><h2>Match over</h2><ol id="result-body"></ol></section>
<section id="log"><h2>This round so far</h2><ol id="round-log"></ol></section>
</main>
{json_script("replay-data", steps.to_json())}"""
    return document(f"Match {steps.match_id}: replay", body, asset("viewer.js"), page_class="viewer")
