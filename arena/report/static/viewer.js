// The replay viewer: draws the precomputed step states embedded in the page. No rules live here: every
// state, the full table and each seat's own view, was computed by the arena's engine in Python.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var steps = data.steps;
  var names = data.players;
  var $ = function (id) { return document.getElementById(id); };
  var slider = $("step-slider");
  var select = $("view-select");
  var table = $("table");
  var index = 0;
  var view = "full";

  function cardEl(label) {
    var el = document.createElement("span");
    el.className = "card";
    el.dataset.card = label;
    var value = data.values[label];
    if (value !== undefined) {
      var v = document.createElement("span");
      v.className = "value";
      v.textContent = String(value);
      el.appendChild(v);
    }
    var name = document.createElement("span");
    name.className = "label";
    name.textContent = label;
    el.appendChild(name);
    return el;
  }

  function fillCards(el, labels) {
    el.replaceChildren();
    if (!labels || !labels.length) {
      var none = document.createElement("span");
      none.className = "none";
      none.textContent = "none";
      el.appendChild(none);
      return;
    }
    labels.forEach(function (label) { el.appendChild(cardEl(label)); });
  }

  function seatEl(seat) {
    var el = document.createElement("span");
    el.className = "who";
    el.dataset.seat = String(seat);
    el.textContent = names[seat];
    return el;
  }

  function lineEl(parts, tag) {
    var el = document.createElement(tag || "li");
    parts.forEach(function (part) {
      if (typeof part === "string") el.appendChild(document.createTextNode(part));
      else if (part.card !== undefined) el.appendChild(cardEl(part.card));
      else if (part.seat !== undefined) el.appendChild(seatEl(part.seat));
    });
    return el;
  }

  function stateOf(step) {
    return view === "full" ? step.full : step.seats[Number(view)];
  }

  function badge(text, cls) {
    var el = document.createElement("span");
    el.className = "flag " + cls;
    el.textContent = text;
    return el;
  }

  function drawSeats(state) {
    document.querySelectorAll("#seats .seat").forEach(function (el) {
      var seat = Number(el.dataset.seat);
      var p = state.players[seat];
      el.dataset.inRound = String(p.in_round);
      el.dataset.protected = String(p.protected);
      el.dataset.disqualified = String(p.disqualified);
      el.dataset.current = String(state.current === seat);
      el.dataset.viewer = String(view !== "full" && Number(view) === seat);
      var tokens = el.querySelector(".tokens");
      tokens.dataset.tokens = String(p.tokens);
      tokens.textContent = p.tokens + (p.tokens === 1 ? " token" : " tokens");
      var status = el.querySelector(".status");
      status.replaceChildren();
      if (state.current === seat) status.appendChild(badge(state.decision === "chancellor" ? "choosing (chancellor)" : "to play", "turn"));
      if (p.protected) status.appendChild(badge("protected", "protected"));
      if (p.disqualified) status.appendChild(badge("disqualified", "disqualified"));
      else if (!p.in_round && state.round > 0) status.appendChild(badge("out of the round", "out"));
      var hand = el.querySelector(".hand");
      if (p.hand === null) {
        hand.dataset.hidden = "true";
        hand.replaceChildren();
        var back = document.createElement("span");
        back.className = "hidden-hand";
        back.textContent = p.in_round ? "hidden" : "—";
        hand.appendChild(back);
      } else {
        hand.dataset.hidden = "false";
        fillCards(hand, p.hand);
      }
      fillCards(el.querySelector(".discards"), p.discards);
    });
  }

  function drawCentre(state) {
    $("round").dataset.round = String(state.round);
    $("round").textContent = String(state.round);
    $("deck").dataset.count = String(state.deck);
    $("deck").textContent = state.deck + (state.deck === 1 ? " card" : " cards");
    // A seat's state holds neither the deck's cards nor the set-aside card (null): their zones go away.
    var full = state.deck_cards !== null;
    $("deck-cards-zone").hidden = !full;
    $("set-aside-zone").hidden = !full && state.set_aside === null;
    if (full) fillCards($("deck-cards"), state.deck_cards);
    else $("deck-cards").replaceChildren();
    if (full || state.set_aside !== null) fillCards($("set-aside"), state.set_aside ? [state.set_aside] : []);
    else $("set-aside").replaceChildren();
    $("face-up-zone").hidden = !state.face_up.length;
    fillCards($("face-up"), state.face_up);
  }

  function drawShowdown(state) {
    var box = $("showdown");
    var body = $("showdown-body");
    body.replaceChildren();
    var s = state.showdown;
    box.hidden = !s;
    if (!s) return;
    var seats = Object.keys(s.revealed);
    var p = document.createElement("p");
    if (seats.length) {
      p.appendChild(document.createTextNode("Showdown: "));
      seats.forEach(function (seat, i) {
        if (i) p.appendChild(document.createTextNode(", "));
        var item = document.createElement("span");
        item.className = "revealed";
        item.dataset.seat = seat;
        item.appendChild(seatEl(Number(seat)));
        item.appendChild(document.createTextNode(" "));
        item.appendChild(cardEl(s.revealed[seat]));
        p.appendChild(item);
      });
    } else {
      p.textContent = "One player was left in the round.";
    }
    body.appendChild(p);
    var won = document.createElement("p");
    won.className = "winners";
    won.appendChild(document.createTextNode("Round " + s.round + " won by "));
    s.winners.forEach(function (seat, i) {
      if (i) won.appendChild(document.createTextNode(", "));
      won.appendChild(seatEl(seat));
    });
    if (s.spy_bonus !== null) {
      won.appendChild(document.createTextNode("; spy bonus to "));
      won.appendChild(seatEl(s.spy_bonus));
    }
    body.appendChild(won);
    if (s.set_aside) {
      var aside = document.createElement("p");
      aside.id = "showdown-set-aside";
      aside.appendChild(document.createTextNode("The set-aside card was "));
      aside.appendChild(cardEl(s.set_aside));
      body.appendChild(aside);
    }
  }

  function drawResult(state) {
    var r = state.result;
    $("result").hidden = !r;
    var body = $("result-body");
    body.replaceChildren();
    if (!r) return;
    r.ranking.forEach(function (place) {
      var li = document.createElement("li");
      place.forEach(function (seat, i) {
        if (i) li.appendChild(document.createTextNode(", "));
        li.appendChild(seatEl(seat));
        li.appendChild(document.createTextNode(" (" + r.tokens[seat] + ")"));
      });
      if (place.some(function (seat) { return r.winners.indexOf(seat) >= 0; })) li.className = "winner";
      body.appendChild(li);
    });
  }

  function drawLog() {
    var start = index;
    while (start > 0 && steps[start].kind !== "round_start") start -= 1;
    var log = $("round-log");
    log.replaceChildren();
    for (var i = start; i <= index; i += 1) {
      stateOf(steps[i]).says.forEach(function (parts) {
        var li = lineEl(parts);
        li.dataset.step = String(i);
        if (i === index) li.className = "now";
        log.appendChild(li);
      });
    }
  }

  function render() {
    if (!steps.length) return;
    var step = steps[index];
    var state = stateOf(step);
    table.dataset.step = String(index);
    table.dataset.view = view;
    table.dataset.kind = step.kind;
    table.dataset.line = String(step.line);
    slider.value = String(index);
    select.value = view;
    $("step-label").textContent = "step " + index + " / " + (steps.length - 1) + " · line " + step.line;
    $("step-title").textContent = step.title;
    var says = $("says");
    says.replaceChildren();
    state.says.forEach(function (parts) { says.appendChild(lineEl(parts)); });
    if (!state.says.length) says.appendChild(lineEl(["(nothing to tell at this step)"]));
    drawCentre(state);
    drawSeats(state);
    drawShowdown(state);
    drawResult(state);
    drawLog();
    $("first").disabled = $("prev").disabled = index === 0;
    $("last").disabled = $("next").disabled = index === steps.length - 1;
    var hash = "#step=" + index + (view === "full" ? "" : "&view=" + view);
    if (location.hash !== hash) {
      try { history.replaceState(null, "", hash); } catch (e) { /* some file:// setups refuse */ }
    }
  }

  function go(to) {
    index = Math.max(0, Math.min(steps.length - 1, to));
    render();
  }

  function setView(to) {
    if (to !== "full" && !(Number(to) >= 0 && Number(to) < names.length)) return;
    view = to;
    render();
  }

  function fromHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    var step = parseInt(params.get("step") || "0", 10);
    index = isNaN(step) ? 0 : Math.max(0, Math.min(steps.length - 1, step));
    var v = params.get("view");
    view = v !== null && Number(v) >= 0 && Number(v) < names.length ? String(Number(v)) : "full";
    render();
  }

  $("first").addEventListener("click", function () { go(0); });
  $("prev").addEventListener("click", function () { go(index - 1); });
  $("next").addEventListener("click", function () { go(index + 1); });
  $("last").addEventListener("click", function () { go(steps.length - 1); });
  slider.addEventListener("input", function () { go(Number(slider.value)); });
  select.addEventListener("change", function () { setView(select.value); select.blur(); });  // keys step again
  window.addEventListener("hashchange", fromHash);
  document.addEventListener("keydown", function (event) {
    var tag = event.target && event.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || event.altKey || event.ctrlKey || event.metaKey) return;
    var keys = { ArrowRight: 1, ArrowLeft: -1, PageDown: 10, PageUp: -10 };
    if (keys[event.key] !== undefined) go(index + keys[event.key]);
    else if (event.key === "Home") go(0);
    else if (event.key === "End") go(steps.length - 1);
    else if (event.key === "f" || event.key === "F") setView("full");
    else if (/^[0-9]$/.test(event.key)) setView(event.key);
    else return;
    event.preventDefault();
  });
  fromHash();
})();
