"""The tournament report (one HTML page) and the replay viewer (one page for every match), from stored results only.

`data` gathers what the report shows from the store; `compact` encodes a match's records into the small
data file the viewer loads; `index_page` and `replay_page` render; `build` writes the files; `live` keeps
the index up to date while a tournament runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.report.compact import REPORT, match_data, matches_folder, replay_data, write_match_data

if TYPE_CHECKING:
    from arena.report.build import Report, write_index, write_replay_page, write_report

_BUILD = ("Report", "write_index", "write_replay_page", "write_report")

__all__ = [
    "REPORT",
    "Report",
    "match_data",
    "matches_folder",
    "replay_data",
    "write_index",
    "write_match_data",
    "write_replay_page",
    "write_report",
]


def __getattr__(name: str) -> Any:
    """The pages' machinery is loaded when first asked for: a match worker writes a match's data file only."""
    if name in _BUILD:
        from arena.report import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
