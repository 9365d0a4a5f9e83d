"""What the engine raises. `arena.errors` places these in the project's error tree."""


class RulesError(Exception):
    """A request the rules do not allow at this point of the match."""


class IllegalAction(RulesError):
    """An answer that is not among the legal answers; the message names the rule it breaks."""


class IllegalDeal(RulesError):
    """A round set up in a way the rules do not allow (wrong cards, wrong first player, ...)."""


class WrongPhase(RulesError):
    """A call that does not fit the match's phase, e.g. a decision while a round is to be dealt."""
