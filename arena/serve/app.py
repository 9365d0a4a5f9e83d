"""The ladder's web application (Starlette): sign-in by personal link, uploads, each entrant's page, the organiser's
page and the leaderboard.

Who sees what: anyone, the leaderboard; a signed-in entrant, its own versions' files and checks and everyone's
public pages; the organiser, everything. A session is a signed cookie (Starlette's SessionMiddleware, itsdangerous);
every form that changes something carries a CSRF token bound to the session (WTForms' SessionCSRF); bodies past the
upload limit are refused before they are read whole."""

from __future__ import annotations

import datetime as dt
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from wtforms import Form
from wtforms.csrf.core import CSRFTokenField
from wtforms.csrf.session import SessionCSRF

from arena.replay import read_replay
from arena.report.build import replay_data
from arena.report.compact import script
from arena.report.replay_page import render_viewer
from arena.serve.checks import Checker
from arena.serve.ladder import LadderConfig
from arena.serve.pages import render
from arena.serve.results import Findings, bot_log, rating_chart, recent_matches
from arena.serve.scheduler import Ladder, version_name
from arena.serve.store import Entrant, LadderStore, Role, Version
from arena.serve.uploads import Preset, UploadLimits, UploadRefused, store_upload
from arena.store.database import replay_path

POLL_MS = 5000
"""How often the leaderboard page asks for the standings."""
SHOWN_FILE_BYTES = 200_000
"""The most of one file a version's page shows."""
SESSION_DAYS = 30
STANDINGS_S = 1.0
"""The oldest leaderboard a poll is answered with."""
CSRF_HOURS = 12
"""How long a page's form stays good: after that, the page is loaded again."""


@dataclass
class Server:
    """What the handlers share: the ladder's configuration, its store and its checker."""

    ladder: LadderConfig
    store: LadderStore
    checker: Checker
    versions: Path
    games: Ladder
    clock: Callable[[], float] = time.time
    """Seconds since the epoch: the deadline is read against it (tests move it)."""
    standings: Callable[[], dict[str, Any]] = field(default=lambda: {"status": "", "rows": []})
    """The leaderboard's rows, from the ladder's matches."""

    def uploads_open(self) -> bool:
        deadline = self.ladder.deadline
        return deadline is None or self.clock() < deadline.timestamp()


def secret_key(data: Path) -> str:
    """The key that signs sessions and CSRF tokens: made once, kept in the data folder readable by its owner only."""
    path = data / "secret.key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        key = secrets.token_hex(32)
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
            file.write(key)
        return key


def create_app(server: Server, secure_cookies: bool = False) -> ASGIApp:
    key = secret_key(server.ladder.data)
    handlers = _Handlers(server, _forms(key))
    app = Starlette(
        routes=[
            Route("/", handlers.leaderboard),
            Route("/api/leaderboard", handlers.leaderboard_json),
            Route("/sign-in/{token}", handlers.sign_in),
            Route("/sign-out", handlers.sign_out, methods=["POST"]),
            Route("/me", handlers.me),
            Route("/upload", handlers.upload, methods=["POST"]),
            Route("/entrants/{name}", handlers.entrant),
            Route("/entrants/{name}/versions/{digest}", handlers.files),
            Route("/entrants/{name}/logs/{match_id}", handlers.log),
            Route("/matches/{match_id}", handlers.match),
            Route("/organiser", handlers.organiser),
            Route("/organiser/ladder", handlers.ladder, methods=["POST"]),
        ],
        middleware=[
            Middleware(
                SessionMiddleware,
                secret_key=key,
                session_cookie="arena_session",
                max_age=SESSION_DAYS * 86400,
                same_site="lax",
                https_only=secure_cookies,
            )
        ],
        exception_handlers={HTTPException: handlers.failed},
    )
    return BodyLimit(Hardened(app), server.ladder.uploads.max_bytes + 64 * 1024)


class Hardened:
    """Every response says: no sniffing of types, no framing by another site, no sign-in link in a Referer."""

    HEADERS = (
        (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"DENY"),
        (b"referrer-policy", b"same-origin"),
    )

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def headed(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.HEADERS]}
            await send(message)

        await self.app(scope, receive, headed)


def _forms(key: str) -> type[Form]:
    """The form every change is posted with: its CSRF token is an HMAC of a secret kept in the session, with a
    time limit, so that only a page this server gave this browser can post it."""

    class Meta:
        csrf = True
        csrf_class = SessionCSRF
        csrf_secret = key.encode()
        csrf_field_name = "csrftoken"
        csrf_time_limit = dt.timedelta(hours=CSRF_HOURS)

    return type("Protected", (Form,), {"Meta": Meta})


class BodyLimit:
    """Refuses a request body past `limit` bytes with 413, by its declared length or as it streams in, before
    anything reads it whole (the CSRF check reads a form's body)."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _too_large(send, self.limit)
            return
        received = 0
        started = False

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise _TooLarge
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except _TooLarge:
            if not started:
                await _too_large(send, self.limit)


class _TooLarge(Exception):
    pass


async def _too_large(send: Send, limit: int) -> None:
    response = HTMLResponse(
        "<!doctype html><html lang=en><meta charset=utf-8><title>Too large</title>"
        f"<p>The upload is larger than {limit // 2**20} MB, and was refused unread. Upload the bot's own files"
        " (its sources, or a zip of them) without what building it made.</p><p><a href=/me>Back to your page</a></p>",
        status_code=413,
    )
    await response({"type": "http"}, _nothing, send)


async def _nothing() -> Message:
    return {"type": "http.disconnect"}


class _Handlers:
    def __init__(self, server: Server, forms: type[Form]) -> None:
        self.server = server
        self.store = server.store
        self.forms = forms
        self.findings = Findings(server.games.output)
        self._standings: tuple[float, dict[str, Any]] | None = None
        self._standings_lock = threading.Lock()

    def csrf_token(self, request: Request) -> str:
        field = self.forms(meta={"csrf_context": request.session})["csrftoken"]
        assert isinstance(field, CSRFTokenField)
        return str(field.current_token)

    def check_csrf(self, request: Request, form: Any) -> None:
        """A 403 for a form this browser was not given by this server (or given too long ago)."""
        if not self.forms(formdata=form, meta={"csrf_context": request.session}).validate():
            raise HTTPException(403, "This form has expired or did not come from this site: load the page again.")

    # -- who asks -------------------------------------------------------------------------------------------------

    def viewer(self, request: Request) -> Entrant | None:
        entrant = request.session.get("entrant")
        found = self.store.entrant(entrant) if isinstance(entrant, int) else None
        if found is not None and request.session.get("link") != found.link[:16]:
            found = None  # signed in with a link replaced since (arena serve-admin new-link): signed out
        if found is None and "entrant" in request.session:
            request.session.clear()
        return found

    def signed_in(self, request: Request) -> Entrant:
        viewer = self.viewer(request)
        if viewer is None:
            raise HTTPException(401, "Sign in with your personal link first (ask the organiser for it).")
        return viewer

    def page(self, request: Request, template: str, code: int = 200, **values: Any) -> HTMLResponse:
        return HTMLResponse(
            render(
                template,
                ladder=self.server.ladder.tournament.name,
                viewer=self.viewer(request),
                csrftoken=self.csrf_token(request),
                **values,
            ),
            status_code=code,
        )

    async def failed(self, request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)
        headings = {401: "Not signed in", 403: "Not allowed", 404: "Not found", 400: "Refused", 413: "Too large"}
        heading = headings.get(error.status_code, "Error")
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": error.detail}, status_code=error.status_code)
        return self.page(request, "message", error.status_code, heading=heading, message=error.detail)

    # -- pages ----------------------------------------------------------------------------------------------------

    async def leaderboard(self, request: Request) -> Response:
        standings = await run_in_threadpool(self.standings)
        return self.page(request, "leaderboard", poll_ms=POLL_MS, **standings)

    async def leaderboard_json(self, request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(self.standings), headers={"cache-control": "no-store"})

    def standings(self) -> dict[str, Any]:
        """The leaderboard, worked out at most once a second however many projectors and browsers poll it."""
        with self._standings_lock:
            now = time.monotonic()
            if self._standings is None or now - self._standings[0] >= STANDINGS_S:
                self._standings = (now, self.server.standings())
            return self._standings[1]

    async def sign_in(self, request: Request) -> Response:
        entrant = self.store.signed_in(request.path_params["token"])
        if entrant is None:
            raise HTTPException(404, "This sign-in link is not known: it may have been replaced by a newer one.")
        request.session.clear()
        request.session["entrant"] = entrant.id
        request.session["link"] = entrant.link[:16]
        return RedirectResponse("/me", status_code=303)

    async def sign_out(self, request: Request) -> Response:
        async with request.form(max_files=0, max_fields=4) as form:
            self.check_csrf(request, form)
        request.session.clear()
        return RedirectResponse("/", status_code=303)

    async def me(self, request: Request) -> Response:
        return RedirectResponse(f"/entrants/{self.signed_in(request).name}", status_code=303)

    async def entrant(
        self, request: Request, error: str | None = None, status: int = 200, notice: str | None = None
    ) -> Response:
        viewer = self.signed_in(request)
        entrant = self._entrant(request.path_params["name"])
        own = viewer.id == entrant.id
        private = own or viewer.role is Role.ORGANISER
        active = self.store.active().get(entrant.id)
        versions = [
            _shown(version, version.digest == active)
            for version in self.store.versions(entrant.id)
            if private or version.digest == active
        ]
        games = self.server.games
        played = version_name(entrant.name, active) if active is not None else None
        history = games.history(played) if played is not None else []
        names = [version_name(entrant.name, version["digest"]) for version in versions]
        findings = await run_in_threadpool(self.findings.of, names) if private else {}
        ladder = self.server.ladder
        return self.page(
            request,
            "entrant",
            status,
            entrant=entrant,
            own=own,
            private=private,
            versions=versions,
            chart=rating_chart(history),
            recent=recent_matches(history),
            played=played,
            findings=findings,
            error=error,
            notice=notice,
            uploads_open=self.server.uploads_open(),
            deadline=None if ladder.deadline is None else ladder.deadline.isoformat(),
            presets=[preset.value for preset in Preset],
            max_mb=ladder.uploads.max_bytes // 2**20,
        )

    async def upload(self, request: Request) -> Response:
        viewer = self.signed_in(request)
        request.path_params["name"] = viewer.name
        if not self.server.uploads_open():
            raise HTTPException(403, "Uploads are closed: the deadline has passed.")
        rules = self.server.ladder.uploads
        if self.store.uploads_since(viewer.id, self.server.clock() - 3600) >= rules.per_entrant_per_hour:
            return await self.entrant(
                request, f"At most {rules.per_entrant_per_hour} uploads an hour: try again later.", 429
            )
        async with request.form(max_files=1, max_fields=8) as form:
            self.check_csrf(request, form)
            upload, preset = form.get("file"), form.get("preset")
            if not isinstance(upload, UploadFile) or not upload.filename:
                return await self.entrant(request, "Choose a file to upload.", 400)
            if preset not in {p.value for p in Preset}:
                return await self.entrant(request, f"Unknown language {preset!r}.", 400)
            data = await upload.read(rules.max_bytes + 1)
            command = str(form.get("command") or "").strip() or None
            protocol = str(form.get("protocol") or "").strip() or None
            try:
                stored = store_upload(
                    data,
                    upload.filename,
                    Preset(str(preset)),
                    self.server.versions,
                    UploadLimits(rules.max_bytes, rules.max_files, rules.max_unpacked_bytes),
                    command=command,
                    protocol=protocol,
                )
            except UploadRefused as refused:
                return await self.entrant(request, f"Upload refused: {refused}", 400)
        version, new = self.store.add_version(
            viewer.id, stored.digest, upload.filename, stored.preset.value, stored.command, stored.protocol
        )
        if not new:
            same = "the same files, language, command and protocol"
            return await self.entrant(
                request, notice=f"Nothing new: this upload is your version {stored.digest[:12]} already ({same})."
            )
        self.server.checker.submit(version)
        return RedirectResponse(f"/entrants/{viewer.name}", status_code=303)

    async def files(self, request: Request) -> Response:
        viewer = self.signed_in(request)
        entrant = self._entrant(request.path_params["name"])
        if viewer.id != entrant.id and viewer.role is not Role.ORGANISER:
            raise HTTPException(403, "A bot's files are seen by its author and the organiser only.")
        version = self.store.version(entrant.id, request.path_params["digest"])
        if version is None:
            raise HTTPException(404, "No such version.")
        root = (self.server.versions / version.digest).resolve()
        files = sorted(
            str(path.relative_to(root)) for path in root.rglob("*") if path.is_file() and not path.is_symlink()
        )
        wanted = request.query_params.get("file")
        shown = None
        if wanted is not None:
            if wanted not in files:
                raise HTTPException(404, "No such file in this version.")
            shown = (root / wanted).read_bytes()[:SHOWN_FILE_BYTES].decode("utf-8", "replace")
        return self.page(
            request, "files", entrant=entrant, version=version, files=files, shown=shown, shown_name=wanted
        )

    async def match(self, request: Request) -> Response:
        """A ladder match in the replay viewer: every entrant sees every replay."""
        self.signed_in(request)
        path = self._replay(request.path_params["match_id"])
        data = await run_in_threadpool(lambda: replay_data(read_replay(path)))
        if data is None:
            raise HTTPException(404, "This match's replay cannot be read.")
        return HTMLResponse(render_viewer(script(data)))

    async def log(self, request: Request) -> Response:
        """What the entrant's bot wrote to stderr in one match: its author's and the organiser's to read."""
        viewer = self.signed_in(request)
        entrant = self._entrant(request.path_params["name"])
        if viewer.id != entrant.id and viewer.role is not Role.ORGANISER:
            raise HTTPException(403, "A bot's logs are seen by its author and the organiser only.")
        match_id = request.path_params["match_id"]
        seats = self._seats(match_id)
        mine = [name for name in seats if name.rpartition(".")[0] == entrant.name]
        logs = [text for name in mine if (text := bot_log(self.server.games.output, name, match_id)) is not None]
        if not mine:
            raise HTTPException(404, f"{entrant.name} did not play {match_id}.")
        return PlainTextResponse("".join(logs) or f"{entrant.name}'s bot wrote nothing to stderr in {match_id}.")

    def _seats(self, match_id: str) -> tuple[str, ...]:
        seats = self.server.games.seats_of(match_id)
        if seats is None:
            raise HTTPException(404, f"No ladder match {match_id!r}.")
        return seats

    def _replay(self, match_id: str) -> Path:
        self._seats(match_id)  # a match of the ladder's, by an id it gave: no other path is ever opened
        return replay_path(self.server.games.output, match_id)

    async def organiser(self, request: Request) -> Response:
        viewer = self.signed_in(request)
        if viewer.role is not Role.ORGANISER:
            raise HTTPException(403, "This page is the organiser's.")
        active = self.store.active()
        counts: dict[int, int] = {}
        for version in self.store.versions():
            counts[version.entrant] = counts.get(version.entrant, 0) + 1
        rows = [
            {
                "name": entrant.name,
                "email": entrant.email,
                "role": entrant.role.value,
                "versions": counts.get(entrant.id, 0),
                "active": active.get(entrant.id, "")[:12],
            }
            for entrant in self.store.entrants()
        ]
        current = self.server.checker.current
        games = self.server.games
        return self.page(
            request,
            "organiser",
            entrants=rows,
            checking=None if current is None else current.label,
            waiting=self.server.checker.waiting(),
            paused=games.paused,
            last_error=games.last_error,
            playing=games.playing,
            workers=games.workers,
            faults=games.recent_faults(),
        )

    async def ladder(self, request: Request) -> Response:
        viewer = self.signed_in(request)
        if viewer.role is not Role.ORGANISER:
            raise HTTPException(403, "Only the organiser stops and resumes the ladder.")
        async with request.form(max_files=0, max_fields=4) as form:
            self.check_csrf(request, form)
            action = form.get("action")
        if action == "pause":
            self.server.games.pause()
        elif action == "resume":
            self.server.games.resume()
        else:
            raise HTTPException(400, "The action is pause or resume.")
        return RedirectResponse("/organiser", status_code=303)

    def _entrant(self, name: str) -> Entrant:
        entrant = self.store.entrant_named(name)
        if entrant is None:
            raise HTTPException(404, f"No entrant named {name!r}.")
        return entrant


def _shown(version: Version, active: bool) -> dict[str, Any]:
    uploaded = dt.datetime.fromtimestamp(version.uploaded_at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return {
        "digest": version.digest,
        "label": version.label,
        "uploaded": uploaded,
        "preset": version.preset,
        "protocol": version.protocol,
        "status": version.status.value,
        "report": version.report,
        "active": active,
    }
