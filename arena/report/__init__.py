"""The tournament report (one self-contained HTML page) and the replay viewer, from stored results only.

`data` gathers what the report shows from the store; `steps` re-simulates a replay with the engine into
the states the viewer steps through; `index_page` and `replay_page` render them; `build` writes the files.
"""

from arena.report.build import REPLAY_PAGES, REPORT, Report, write_replay_page, write_report
from arena.report.steps import ReplaySteps, Step, replay_steps

__all__ = [
    "REPLAY_PAGES",
    "REPORT",
    "ReplaySteps",
    "Report",
    "Step",
    "replay_steps",
    "write_replay_page",
    "write_report",
]
