"""How a number or a count is written, on the report's pages and on the terminal alike: one function for each, so
the page and `arena sprt` (or `arena standings`) never round the same value two ways.

Standard library only: the analysis and the store's exports import it without loading the pages.
"""

from __future__ import annotations

import math


def count(number: int, noun: str, plural: str | None = None) -> str:
    """ "1 line", "2 lines", "0 lines": the noun agrees with the number (`plural` where adding "s" is wrong)."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def fixed(value: float, digits: int = 2) -> str:
    """`value` to `digits` decimals, never "-0.00": a value that rounds to zero is written without a sign."""
    return _unsigned_zero(f"{value:.{digits}f}")


def signed(value: float, digits: int = 1) -> str:
    """With its sign ("+12.5", "-3.0"), "+inf" or "-inf"; one that rounds to zero has none ("0.0")."""
    if not math.isfinite(value):
        return "+inf" if value > 0 else "-inf"
    return _unsigned_zero(f"{value:+.{digits}f}")


def percent(value: float) -> str:
    """A share as a whole percentage: "43%". Given the unrounded value, as every caller must be: a value rounded
    first (to 4 decimals in `arena standings --format json`) can round to the other side ("44%")."""
    return _unsigned_zero(f"{value:.0%}")


def interval(low: float, high: float) -> str:
    """A 95% interval of shares: "[2%, 43%]"."""
    return f"[{percent(low)}, {percent(high)}]"


def _unsigned_zero(text: str) -> str:
    """ "-0.0" (or "+0.00", "-0%") as "0.0": a sign on a zero says a direction the value does not have."""
    return text[1:] if text[:1] in ("+", "-") and not any(c in "123456789" for c in text) else text
