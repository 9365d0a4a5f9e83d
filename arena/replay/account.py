"""A readable account of a match, round by round, from its full-information records."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from arena.engine import (
    Card,
    ChancellorResolved,
    Decided,
    Discarded,
    Faulted,
    Match,
    MatchEnded,
    OutCause,
    Played,
    Record,
    RoundEnded,
    RoundStarted,
    WentOut,
)

OUT_CAUSES = {
    OutCause.GUARD: "a guard named their card",
    OutCause.BARON: "lost the baron comparison",
    OutCause.PRINCESS: "the princess left their hand",
    OutCause.FAULT: "disqualified",
}


def _cards(cards: Sequence[Card]) -> str:
    return ", ".join(card.label for card in cards) or "nothing"


class Narrator:
    def __init__(self, match: Match, match_id: str) -> None:
        self.match = match
        self.match_id = match_id
        names = match.players
        unique = len(set(names)) == len(names)
        self.names = [name if unique else f"{name}@{seat}" for seat, name in enumerate(names)]

    def lines(self) -> Iterator[str]:
        m = self.match
        yield f"Match {self.match_id or '(no id)'}: ruleset {m.ruleset.name}, seed {m.seed}, {m.target} tokens to win"
        yield "Players: " + ", ".join(f"seat {seat} {name}" for seat, name in enumerate(self.names))
        for record in m.records:
            yield from self._record(record)

    def _tokens(self, tokens: Sequence[int]) -> str:
        return ", ".join(f"{self.names[s]} {t}" for s, t in enumerate(tokens))

    def _record(self, record: Record) -> Iterator[str]:
        name = self.names
        if isinstance(record, RoundStarted):
            yield ""
            yield f"Round {record.round}: {name[record.first]} starts. Tokens: {self._tokens(record.tokens)}"
            dealt = ", ".join(f"{name[s]} {_cards(record.hands[s])}" for s in record.players_in)
            yield f"  dealt: {dealt}; set aside face down: {record.set_aside.label}"
            if record.removed_face_up:
                yield f"  face up, out of the round: {_cards(record.removed_face_up)}"
        elif isinstance(record, Played):
            yield "  " + self._play(record)
        elif isinstance(record, Discarded):
            source = "the set-aside card" if record.drew_set_aside else "a new card"
            yield f"    {name[record.seat]} discards {record.card.label} and draws {source}: {record.drew.label}"
        elif isinstance(record, ChancellorResolved):
            if not record.drawn:
                yield "    the deck is empty: the chancellor draws nothing"
            else:
                assert record.kept is not None
                yield (
                    f"    draws {_cards(record.drawn)}; keeps {record.kept.label};"
                    f" puts {_cards(record.bottom)} under the deck"
                )
        elif isinstance(record, WentOut):
            yield f"    {name[record.seat]} is out ({OUT_CAUSES[record.cause]}), showing {_cards(record.cards)}"
        elif isinstance(record, Faulted):
            yield f"  ! {name[record.seat]} faults ({record.reason.value}): {record.detail}"
        elif isinstance(record, RoundEnded):
            if record.revealed:
                shown = ", ".join(f"{name[s]} {c.label}" for s, c in sorted(record.revealed.items()))
                yield f"  showdown: {shown}"
            how = "wins" if len(record.winners) == 1 else "win"
            winners = ", ".join(name[s] for s in record.winners) or "nobody"
            yield f"  round {record.round}: {winners} {how} the round"
            if record.spy_bonus is not None:
                yield f"  spy bonus: {name[record.spy_bonus]}"
            yield f"  tokens: {self._tokens(record.tokens)}"
        elif isinstance(record, MatchEnded):
            yield ""
            winners = ", ".join(name[s] for s in record.winners) or "nobody"
            yield f"Match over: {winners} {'wins' if len(record.winners) == 1 else 'win'}."
            for place, seats in enumerate(record.ranking, start=1):
                yield f"  {place}. " + ", ".join(f"{name[s]} ({record.tokens[s]})" for s in seats)
        elif isinstance(record, Decided):
            pass  # every decision shows through the records it causes

    def _play(self, record: Played) -> str:
        name = self.names
        who, card = name[record.seat], record.card
        if record.target is None:
            if card in (Card.GUARD, Card.PRIEST, Card.BARON, Card.KING):
                return f"{who} plays {card.label}: everyone else is protected, no effect"
            extra = ": protected until their next turn" if card is Card.HANDMAID else ""
            return f"{who} plays {card.label}{extra}"
        whom = "themself" if record.target == record.seat else name[record.target]
        if card is Card.GUARD:
            assert record.guess is not None
            outcome = "right" if record.hit else "wrong"
            return f"{who} plays guard on {whom}, naming {record.guess.label}: {outcome}"
        if card is Card.PRIEST:
            assert record.seen is not None
            return f"{who} plays priest on {whom} and sees {record.seen.label}"
        if card is Card.BARON:
            compared = ", ".join(f"{name[s]} {c.label}" for s, c in record.compared)
            return f"{who} plays baron on {whom}: {compared}"
        if card is Card.KING:
            gets = dict(record.received)[record.seat]
            return f"{who} plays king on {whom}: trades, and gets {gets.label}"
        return f"{who} plays {card.label} on {whom}"
