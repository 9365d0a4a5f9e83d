// The replay viewer: one page for every match of a report. It loads a match's compact data (the engine's
// records, written by arena/report/compact.py as matches/NAME.js, a script any browser loads from file://)
// and rebuilds each step from them: the full table by bookkeeping what each record says happened (the
// records hold every outcome, so no rule is decided here), a seat's table and account by PROTOCOL.md's
// entitlements (its own hand; a priest's card for the priest, a baron's cards for the two compared, a
// king's card for each trader). The browser tests check both against the engine at every step.
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var slider = $("step-slider");
  var select = $("view-select");
  var table = $("table");
  var data = null;
  var stem = null;
  var steps = [];
  var names = [];
  var index = 0;
  var view = "full";
  var logged = [];  // the bots with a stderr log of this match (OUTPUT/logs/BOT/MATCH.log), from the report's link

  // -- from records to steps ----------------------------------------------------------------------

  var OUT_CAUSES = {
    guard: "a guard named their card",
    baron: "lost the baron comparison",
    princess: "the princess left their hand",
    fault: "disqualified",
  };
  var NO_TARGET = ["guard", "priest", "baron", "king"];

  function expand(d) {
    var C = d.cards;
    var n = d.players.length;
    var label = function (i) { return i === null || i === undefined ? null : C[i]; };
    var labels = function (list) { return list.map(label); };
    var falses = function () { var a = []; for (var i = 0; i < n; i += 1) a.push(false); return a; };
    var st = {
      round: 0, current: null, decision: null, deck: [], setAside: null, faceUp: [],
      hands: [], discards: [], tokens: [], inRound: falses(), protected: falses(), dq: falses(),
    };
    for (var s = 0; s < n; s += 1) { st.hands.push([]); st.discards.push([]); st.tokens.push(0); }
    var out = [];
    var pending = [];
    var step = null;
    var endTurn = false;

    function newStep(kind, main) {
      step = { kind: kind, main: main, told: [], draw: null, state: null, fault: null };
      out.push(step);
      pending.push(step);
    }
    function snapshot() {
      var copy = JSON.parse(JSON.stringify(st));
      pending.forEach(function (p) { p.state = copy; });
      pending = [];
    }
    function startTurn(seat) {
      st.current = seat;
      st.protected[seat] = false;
      var drawn = st.deck.shift();
      st.hands[seat].push(drawn);
      st.decision = "play";
      step.draw = [seat, drawn];
    }
    function closeGroup() {
      if (!endTurn) return;
      endTurn = false;
      st.decision = null;
      var alive = st.inRound.filter(Boolean).length;
      if (alive <= 1 || !st.deck.length) { st.current = null; return; }
      var next = (st.current + 1) % n;
      while (!st.inRound[next]) next = (next + 1) % n;
      startTurn(next);
    }
    function removeOne(hand, card) {
      var at = hand.indexOf(card);
      if (at >= 0) hand.splice(at, 1);
    }

    newStep("match_start", null);
    d.records.forEach(function (r) {
      var t = r[0];
      if (t === "R" || t === "D" || t === "K" || t === "F") {
        closeGroup();
        snapshot();
      } else if (t === "E" || t === "M") {
        closeGroup();
      }
      if (t === "R") {
        newStep("round_start", r);
        st.round = r[1];
        st.tokens = r[4].slice();
        st.setAside = label(r[5]);
        st.faceUp = labels(r[6]);
        st.hands = r[7].map(labels);
        st.discards = st.hands.map(function () { return []; });
        st.deck = labels(r[8]);
        st.inRound = st.dq.map(function (q) { return !q; });
        st.protected = falses();
        step.told.push(r);
        startTurn(r[2]);
      } else if (t === "D" || t === "K") {
        newStep("decision", r);
        endTurn = true;
      } else if (t === "F") {
        newStep("fault", r);
        step.told.push(r);
        step.fault = r[1];
        var current = st.decision !== null && st.current === r[1];
        st.dq[r[1]] = true;
        endTurn = current && st.inRound[r[1]];
      } else if (t === "E") {
        newStep("round_end", r);
        step.told.push(r);
        st.tokens = r[6].slice();
        st.decision = null;
        st.current = null;
      } else if (t === "M") {
        newStep("match_end", r);
        step.told.push(r);
        st.tokens = r[2].slice();
        st.decision = null;
        st.current = null;
      } else if (t === "P") {
        step.told.push(r);
        var who = r[1], card = C[r[2]], target = r[3] === undefined ? null : r[3];
        removeOne(st.hands[who], card);
        st.discards[who].push(card);
        if (card === "handmaid" && target === null) st.protected[who] = true;
        if (card === "chancellor" && target === null) {
          var drew = st.deck.splice(0, Math.min(2, st.deck.length));
          st.hands[who] = st.hands[who].concat(drew);
          if (drew.length) { st.decision = "chancellor"; endTurn = false; }
        }
        (r[8] || []).forEach(function (pair) { st.hands[pair[0]] = [C[pair[1]]]; });
      } else if (t === "X") {
        step.told.push(r);
        removeOne(st.hands[r[1]], C[r[2]]);
        st.discards[r[1]].push(C[r[2]]);
        if (r[4]) st.setAside = null;
        else st.deck.shift();
        st.hands[r[1]].push(C[r[3]]);
      } else if (t === "C") {
        step.told.push(r);
        if (r[2].length) {
          st.hands[r[1]] = [C[r[3]]];
          st.deck = st.deck.concat(labels(r[4]));
        }
        endTurn = true;
      } else if (t === "O") {
        step.told.push(r);
        st.discards[r[1]] = st.discards[r[1]].concat(labels(r[2]));
        st.hands[r[1]] = [];
        st.inRound[r[1]] = false;
        st.protected[r[1]] = false;
      }
    });
    closeGroup();
    snapshot();
    if (d.lines) out = out.slice(0, d.lines.length);
    return out.map(function (raw, i) { return finish(raw, i, d); });
  }

  // -- words, as arena/report/narrate.py phrases them ----------------------------------------------

  function cardPart(l) { return { card: l }; }
  function seatPart(s) { return { seat: s }; }
  function cardParts(list) {
    var out = [];
    list.forEach(function (l) { if (out.length) out.push(", "); out.push(cardPart(l)); });
    return out.length ? out : ["nothing"];
  }
  function seatParts(list) {
    var out = [];
    list.forEach(function (s) { if (out.length) out.push(", "); out.push(seatPart(s)); });
    return out.length ? out : ["nobody"];
  }
  function bySeat(pairs, C) {
    return pairs.slice().sort(function (a, b) { return a[0] - b[0]; }).map(function (p) { return [p[0], C[p[1]]]; });
  }
  function roundStart(round, first, faceUp) {
    var lines = [["Round " + round + ": ", seatPart(first), " starts"]];
    if (faceUp.length) lines.push(["face up, out of the round: "].concat(cardParts(faceUp)));
    return lines;
  }
  function playLine(who, played, target, guess, hit, looked, compared, received) {
    var line = [seatPart(who), " plays ", cardPart(played)];
    if (target === null) {
      if (NO_TARGET.indexOf(played) >= 0) return line.concat([": everyone else is protected, no effect"]);
      return played === "handmaid" ? line.concat([": protected until their next turn"]) : line;
    }
    line = line.concat([" on ", target === who ? "themself" : seatPart(target)]);
    if (played === "guard") return line.concat([", naming ", cardPart(guess), hit ? ": right" : ": wrong"]);
    if (played === "priest") return looked === null ? line : line.concat([" and sees ", cardPart(looked)]);
    if (played === "baron") {
      if (!compared) return line.concat([": they compare hands in secret"]);
      line.push(": ");
      compared.forEach(function (p, i) { line = line.concat([i ? ", " : "", seatPart(p[0]), " ", cardPart(p[1])]); });
      return line;
    }
    if (played === "king") {
      line.push(": they trade hands");
      (received || []).forEach(function (p, i) { line = line.concat([i ? "; " : ", and ", seatPart(p[0]), " gets ", cardPart(p[1])]); });
      return line;
    }
    return line;
  }
  function tokensLine(tokens) {
    var line = ["tokens: "];
    tokens.forEach(function (count, s) { line = line.concat([s ? ", " : "", seatPart(s), " " + count]); });
    return line;
  }
  function roundEnded(r, C) {
    var lines = [];
    if (r[4].length) {
      var shown = ["showdown: "];
      bySeat(r[4], C).forEach(function (p, i) { shown = shown.concat([i ? ", " : "", seatPart(p[0]), " ", cardPart(p[1])]); });
      lines.push(shown);
    }
    lines.push(["round " + r[1] + ": "].concat(seatParts(r[2]), [r[2].length === 1 ? " wins" : " win", " the round"]));
    if (r[3] !== null) lines.push(["spy bonus: ", seatPart(r[3])]);
    if (r[5] !== null) lines.push(["the set-aside card was ", cardPart(C[r[5]])]);
    lines.push(tokensLine(r[6]));
    return lines;
  }
  function matchEnded(r) {
    var lines = [["Match over: "].concat(seatParts(r[1]), [r[1].length === 1 ? " wins" : " win"])];
    r[3].forEach(function (group, place) {
      var line = [(place + 1) + ". "];
      group.forEach(function (s, i) { line = line.concat([i ? ", " : "", seatPart(s), " (" + r[2][s] + ")"]); });
      lines.push(line);
    });
    return lines;
  }
  function faultLine(r) { return ["! ", seatPart(r[1]), " faults (" + r[2] + "): " + r[3]]; }
  function outLine(r, C) {
    return [seatPart(r[1]), " is out (" + OUT_CAUSES[r[3]] + "), showing "].concat(cardParts(r[2].map(function (i) { return C[i]; })));
  }

  // What a record tells: in full (viewer null), or what seat `viewer` is entitled to (PROTOCOL.md).
  function told(r, viewer, C) {
    var t = r[0];
    if (t === "M") return matchEnded(r);
    if (t === "E") return roundEnded(r, C);
    if (t === "F") return [faultLine(r)];
    if (t === "O") return [outLine(r, C)];
    if (t === "R") {
      var lines = roundStart(r[1], r[2], r[6].map(function (i) { return C[i]; }));
      if (viewer === null) {
        var dealt = ["dealt: "];
        r[3].forEach(function (s, i) { dealt = dealt.concat([i ? ", " : "", seatPart(s), " "], cardParts(r[7][s].map(function (c) { return C[c]; }))); });
        lines.push(dealt);
        lines.push(["set aside face down: ", cardPart(C[r[5]])]);
      } else if (r[3].indexOf(viewer) < 0) {
        lines.push([seatPart(viewer), " (you) is not dealt in"]);
      } else {
        lines.push([seatPart(viewer), " (you) is dealt "].concat(cardParts(r[7][viewer].map(function (c) { return C[c]; }))));
      }
      return lines;
    }
    if (t === "P") {
      var who = r[1], target = r[3] === undefined ? null : r[3];
      var guess = r[4] === undefined || r[4] === null ? null : C[r[4]];
      var seen = r[6] === undefined || r[6] === null ? null : C[r[6]];
      var compared = r[7] && r[7].length ? bySeat(r[7], C) : null;
      var received = r[8] && r[8].length ? bySeat(r[8], C) : null;
      if (viewer !== null) {
        if (who !== viewer) seen = null;
        if (compared && !compared.some(function (p) { return p[0] === viewer; })) compared = null;
        received = received ? received.filter(function (p) { return p[0] === viewer; }) : null;
        if (received && !received.length) received = null;
      }
      return [playLine(who, C[r[2]], target, guess, r[5], seen, compared, received)];
    }
    if (t === "X") {
      var source = r[4] ? "the set-aside card" : "a new card";
      var line = [seatPart(r[1]), " discards ", cardPart(C[r[2]]), " and draws " + source];
      return [viewer === null ? line.concat([": ", cardPart(C[r[3]])]) : line];
    }
    if (t === "C") {
      if (!r[2].length) return [["the deck is empty: the chancellor draws nothing"]];
      if (viewer !== null) return [[seatPart(r[1]), " draws " + r[2].length + ", keeps one and puts " + r[4].length + " under the deck"]];
      var up = function (list) { return cardParts(list.map(function (i) { return C[i]; })); };
      return [[seatPart(r[1]), " draws "].concat(up(r[2]), ["; keeps ", cardPart(C[r[3]]), "; puts "], up(r[4]), [" under the deck"])];
    }
    return [];
  }

  function title(raw, C) {
    var r = raw.main;
    if (raw.kind === "match_start") return "match start";
    if (raw.kind === "round_start") return "round " + r[1] + " dealt";
    if (raw.kind === "round_end") return "round " + r[1] + " ends";
    if (raw.kind === "match_end") return "match over";
    if (raw.kind === "fault") return names[r[1]] + " faults (" + r[2] + ")";
    if (r[0] === "D") return names[r[1]] + " plays " + C[r[2]];
    return names[r[1]] + " keeps a card (chancellor)";
  }

  function finish(raw, i, d) {
    var C = d.cards;
    var st = raw.state;
    var n = d.players.length;
    var showdown = null, result = null;
    raw.told.forEach(function (r) {
      if (r[0] === "E") {
        var revealed = {};
        bySeat(r[4], C).forEach(function (p) { revealed[String(p[0])] = p[1]; });
        showdown = { round: r[1], winners: r[2], revealed: revealed, set_aside: r[5] === null ? null : C[r[5]], spy_bonus: r[3], tokens: r[6] };
      } else if (r[0] === "M") {
        result = { winners: r[1], tokens: r[2], ranking: r[3] };
      }
    });
    function table(viewer) {
      var players = [];
      for (var s = 0; s < n; s += 1) {
        players.push({
          hand: viewer === null || viewer === s ? st.hands[s] : null,
          discards: st.discards[s], tokens: st.tokens[s], in_round: st.inRound[s],
          protected: st.protected[s], disqualified: st.dq[s],
        });
      }
      var says = [];
      raw.told.forEach(function (r) { says = says.concat(told(r, viewer, C)); });
      if (raw.draw) {
        var drawer = raw.draw[0];
        if (viewer === null || viewer === drawer) says.push([seatPart(drawer), " draws ", cardPart(raw.draw[1])]);
        else says.push([seatPart(drawer), " draws a card"]);
      }
      return {
        round: st.round, current: st.current,
        decision: viewer === null || viewer === st.current ? st.decision : null,
        deck: st.deck.length, deck_cards: viewer === null ? st.deck : null,
        set_aside: viewer === null ? st.setAside : null, face_up: st.faceUp, players: players,
        says: says, showdown: showdown, result: result,
      };
    }
    var seats = [];
    for (var v = 0; v < n; v += 1) seats.push(table(v));
    return {
      line: d.lines ? d.lines[i] : i + 1, kind: raw.kind, title: title(raw, C), fault: raw.fault,
      full: table(null), seats: seats,
    };
  }

  // -- drawing ------------------------------------------------------------------------------------

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
    var hash = "#" + (stem !== null ? "match=" + encodeURIComponent(stem) + "&" : "") +
      (logged.length ? "logs=" + logged.map(encodeURIComponent).join(",") + "&" : "") + "step=" + index +
      (view === "full" ? "" : "&view=" + view);
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

  function problem(text) {
    var el = $("replay-error");
    el.textContent = text;
    el.hidden = false;
  }

  // A seed comes as text, every digit of it (a JavaScript number keeps 53 bits, a seed has up to 63); a number
  // past 2**53 is from a data file of an older layout, rounded when it was read: not shown as if exact.
  function seedText(seed) {
    if (typeof seed === "number" && !Number.isSafeInteger(seed)) {
      return "about " + seed + " (rounded by an older data file: `arena report OUTPUT` writes it again)";
    }
    return String(seed);
  }

  // The page's parts that depend on the match: its title, the seats, the view menu, the slider.
  function setUp(d) {
    data = d;
    names = d.players;
    table.dataset.match = d.match_id;
    steps = expand(d);
    $("title").textContent = "Match " + (d.match_id || "(no id)");
    document.title = "Match " + d.match_id + ": replay";
    $("meta").textContent = "ruleset " + d.ruleset + " · seed " + seedText(d.seed) + " · " + d.target +
      " tokens to win · " + names.length + " players · " + steps.length + " steps";
    $("values").textContent = "card values: " + Object.keys(d.values).map(function (l) { return l + " " + d.values[l]; }).join(" · ");
    select.replaceChildren();
    var option = function (value, text) {
      var el = document.createElement("option");
      el.value = value;
      el.textContent = text;
      select.appendChild(el);
    };
    option("full", "everything (full information)");
    names.forEach(function (name, seat) { option(String(seat), "as seat " + seat + ", " + name + ", saw it"); });
    var seats = $("seats");
    seats.replaceChildren();
    names.forEach(function (name, seat) {
      var el = document.createElement("article");
      el.className = "seat";
      el.dataset.seat = String(seat);
      var head = document.createElement("header");
      var h = document.createElement("h3");
      h.className = "name";
      h.textContent = name;
      var no = document.createElement("span");
      no.className = "seat-no";
      no.textContent = "seat " + seat;
      var tokens = document.createElement("span");
      tokens.className = "tokens";
      tokens.dataset.tokens = "0";
      head.append(h, no, tokens);
      if (logged.indexOf(name) >= 0) {
        var log = document.createElement("a");
        log.className = "log-link";
        log.href = "../logs/" + encodeURIComponent(name) + "/" + encodeURIComponent(d.match_id) + ".log";
        log.textContent = "stderr log";
        head.appendChild(log);
      }
      var status = document.createElement("div");
      status.className = "status";
      el.append(head, status);
      ["hand", "discards"].forEach(function (zone) {
        var box = document.createElement("div");
        box.className = "zone";
        var tag = document.createElement("span");
        tag.className = "zone-label";
        tag.textContent = zone;
        var cards = document.createElement("div");
        cards.className = zone;
        box.append(tag, cards);
        el.appendChild(box);
      });
      seats.appendChild(el);
    });
    slider.max = String(Math.max(0, steps.length - 1));
    $("replay-error").hidden = !d.error;
    if (d.error) $("replay-error").textContent = "This replay breaks the rules at " + d.error + "; the viewer stops just before.";
    $("controls").hidden = false;
  }

  function fromHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    var wanted = params.get("match");
    var loaded = window.ARENA_REPLAYS || {};
    if (wanted === null) {  // a page with its match inline (arena replay --html)
      var inline = Object.keys(loaded);
      if (!inline.length) { problem("No match chosen: open one from the tournament report (index.html)."); return; }
      wanted = inline[0];
    }
    if (!loaded[wanted]) { load(wanted); return; }
    var logs = params.get("logs");
    var fresh = (logs ? logs.split(",") : []);
    if (data !== loaded[wanted] || fresh.join(",") !== logged.join(",")) {
      logged = fresh;
      setUp(loaded[wanted]);
    }
    stem = params.get("match") === null ? null : wanted;
    var step = params.get("step");
    var fault = params.get("fault");
    var line = params.get("line");
    if (line !== null && !isNaN(Number(line))) {  // a replay line: the step it leads to (a decision's own step)
      var found = -1;
      steps.forEach(function (s, i) { if (found < 0 && s.line >= Number(line)) found = i; });
      index = found >= 0 ? found : steps.length - 1;
    } else if (fault !== null) {
      var at = -1;
      steps.forEach(function (s, i) { if (at < 0 && s.fault === Number(fault)) at = i; });
      index = at >= 0 ? at : steps.length - 1;  // a fault after the match's end: its last step
    } else {
      var number = parseInt(step || "0", 10);
      index = isNaN(number) ? 0 : Math.max(0, Math.min(steps.length - 1, number));
    }
    var v = params.get("view");
    view = v !== null && Number(v) >= 0 && Number(v) < names.length ? String(Number(v)) : "full";
    render();
  }

  // A match's data file, by a <script> element: file:// allows that where it refuses fetch().
  function load(name) {
    var tag = document.createElement("script");
    tag.src = "matches/" + encodeURIComponent(name) + ".js";
    tag.onload = function () {
      if ((window.ARENA_REPLAYS || {})[name]) fromHash();
      else problem("matches/" + name + ".js holds no match of that name.");
    };
    tag.onerror = function () {
      problem("No viewer data for match " + name + " (matches/" + name + ".js): run `arena report OUTPUT` to write it.");
    };
    document.head.appendChild(tag);
  }

  $("first").addEventListener("click", function () { go(0); });
  $("prev").addEventListener("click", function () { go(index - 1); });
  $("next").addEventListener("click", function () { go(index + 1); });
  $("last").addEventListener("click", function () { go(steps.length - 1); });
  slider.addEventListener("input", function () { go(Number(slider.value)); });
  select.addEventListener("change", function () { setView(select.value); select.blur(); });  // keys step again
  window.addEventListener("hashchange", fromHash);
  document.addEventListener("keydown", function (event) {
    if (!steps.length) return;
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
