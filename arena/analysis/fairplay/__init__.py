"""Fair play: a bot that knows more than it can see, and bots that spare each other.

No sandbox closes every channel, so what cannot be prevented is detected. Each seat is followed through its
match from what it was told alone (its events and its views, as the judge of provable mistakes follows it), and
each of its plays whose success the replay shows gets its chance of success over every deal consistent with what
the seat knew: a Guard that names the target's card, a Baron that puts its target out, a Prince that makes its
target discard the Princess. An honest bot's successes are then a sum of Bernoulli draws with those chances (a
Poisson-binomial count); a bot with far more successes than that saw what it could not.

Each play on another player also keeps whom the seat could have chosen, and which opponents a play in its hand
was sure to put out: a bot that chooses another far less often than its own way of choosing predicts, or makes
the sure play against it far less often than against the others, spares it; two bots that spare each other are
the strong signal of a shared hand.

Counting cards alone underrates what an honest bot may know: its opponents' habits (no one throws the Princess
away, most keep the higher card) and its own way of choosing targets (the leader, the first of equals). So by
default a play's chance is calibrated by the target bot's habits, as the hidden hands of the tournament's
matches show them, and a choice of target is weighed by a model of the bot's own choices (a conditional logit on
FEATURES, which leave out who the target is). With `calibrate=False`: the counts of cards alone, and choices at
random among the legal targets.

Every test is an exact tail of the Poisson-binomial distribution, flagged below alpha divided by the number of
tests of its kind (Bonferroni), so that a tournament of honest bots is flagged with probability about alpha per
detector. A flag says that the plays were very unlikely for a bot that knew only what it was told; it proves no
channel by itself.

The notes are taken in the workers as each match is played (arena.analysis.watch) and kept in the store; the
tally reads them (arena.analysis.diagnose).
"""

from arena.analysis.fairplay.notes import (
    FEATURES,
    Aim,
    Chance,
    Holding,
    MatchFairPlay,
    Strike,
    Witness,
    notes_columns,
    notes_from_json,
    notes_json,
    read_columns,
)
from arena.analysis.fairplay.sight import Bet, Kind, Sight, posterior, posteriors
from arena.analysis.fairplay.tally import (
    ALPHA,
    BotFairPlay,
    Criteria,
    FairPlay,
    Flag,
    Measure,
    Sparing,
    tally,
    tally_columns,
)
from arena.analysis.fairplay.verdict import Decisions, Step, Verdict, lower_tail, upper_tail

__all__ = [
    "ALPHA",
    "FEATURES",
    "Aim",
    "Bet",
    "BotFairPlay",
    "Chance",
    "Criteria",
    "Decisions",
    "FairPlay",
    "Flag",
    "Holding",
    "Kind",
    "MatchFairPlay",
    "Measure",
    "Sight",
    "Sparing",
    "Step",
    "Strike",
    "Verdict",
    "Witness",
    "lower_tail",
    "notes_columns",
    "notes_from_json",
    "notes_json",
    "posterior",
    "posteriors",
    "read_columns",
    "tally",
    "tally_columns",
    "upper_tail",
]
