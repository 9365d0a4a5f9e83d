"""The server's pages: Jinja2 templates (templates/), every value escaped, no script but the leaderboard's poll."""

from __future__ import annotations

from typing import Any

import jinja2

_ENVIRONMENT = jinja2.Environment(
    loader=jinja2.PackageLoader("arena.serve", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)


def render(template: str, **values: Any) -> str:
    return _ENVIRONMENT.get_template(f"{template}.html").render(**values)
