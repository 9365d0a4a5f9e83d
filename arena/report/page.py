"""The shell every report page shares: one self-contained HTML file, its CSS and script inline.

Nothing is fetched when the page is viewed (no CDN, no font, no image file), so a report copied to a
USB stick, mailed, or opened from `file://` on a machine with no network shows exactly the same.
"""

from __future__ import annotations

from functools import cache
from html import escape
from importlib.resources import files
from typing import Any

from arena.report.compact import embedded_json


@cache
def asset(name: str) -> str:
    """A file of arena/report/static, as text (installed with the package as package data)."""
    return files("arena.report").joinpath("static", name).read_text(encoding="utf-8")


def document(title: str, body: str, script: str = "", page_class: str = "", head: str = "") -> str:
    """A whole page: the shared stylesheet inline, then `body` (already escaped HTML), then `script`;
    `head`: more markup for the head (already escaped)."""
    tail = f"<script>\n{script}\n</script>\n" if script else ""
    body_class = f' class="{escape(page_class)}"' if page_class else ""
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="color-scheme" content="light">\n'
        f"{head + chr(10) if head else ''}"
        f"<title>{escape(title)}</title>\n<style>\n{asset('report.css')}</style>\n</head>\n"
        f"<body{body_class}>\n{body}\n{tail}</body>\n</html>\n"
    )


def json_script(element_id: str, value: Any) -> str:
    """Data for the page's script, in a non-executed script element, written as `compact.embedded_json` writes it:
    no text in the data (a bot's name, a fault's detail) can close the element, no integer reaches it rounded."""
    return f'<script type="application/json" id="{escape(element_id)}">{embedded_json(value)}</script>'
