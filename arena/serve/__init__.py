"""arena serve: a course's or club's bot ladder, with uploads, automatic checks and a live leaderboard.

One ladder file (a tournament file with a `ladder:` section: arena.serve.ladder) describes it. Its parts, each a
module with one job:

- `ladder`: reading the ladder file;
- `store`: the ladder's own records (entrants, sign-in links, bot versions and their checks), in SQLite;
- `uploads`: an upload (one file or a zip) checked and kept as an immutable version named by its content hash;
- `checks`: each new version's `arena check-bot`, in the ladder's sandbox, in a thread of the server's own;
- `pages` and `app`: the web pages and the Starlette application.

The web modules need the `serve` extra (`pip install "loveletter-arena[serve]"`); importing this package does not.
"""
