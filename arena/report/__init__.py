"""The tournament report (one HTML page) and the replay viewer (one page for every match), from stored results only.

`data` gathers what the report shows from the store; `compact` encodes a match's records into the small
data file the viewer loads; `index_page` and `replay_page` render; `build` writes the files; `live` keeps
the index up to date while a tournament runs.
"""

from arena.report.build import REPORT, Report, matches_folder, write_index, write_replay_page, write_report
from arena.report.compact import match_data, replay_data, write_match_data

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
