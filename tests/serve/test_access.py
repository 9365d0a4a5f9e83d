"""Who may see and do what on the ladder's server, route by route and role by role, through the real middleware:
anyone the leaderboard; an entrant its own bots' files and checks and nobody else's; the organiser everything; and
nothing that changes anything without the CSRF token of the browser that asks."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from tests.serve.conftest import RANDOM_BOT, Running, csrf, start_server, wait_for_check


def upload(running: Running, who: str, data: bytes = RANDOM_BOT, name: str = "bot.py", preset: str = "python"):
    client = running.client(who)
    token = csrf(client)
    answer = client.post(
        "/upload",
        data={"csrftoken": token, "preset": preset, "protocol": "", "command": ""},
        files={"file": (name, data, "application/octet-stream")},
        follow_redirects=False,
    )
    return client, answer


@pytest.fixture
def with_versions(running: Running) -> Running:
    """ada has a version that passed its check; bob has none."""
    _, answer = upload(running, "ada")
    assert answer.status_code == 303, answer.text
    (version,) = running.store.versions(running.id("ada"))
    wait_for_check(running.store, running.id("ada"), version.digest)
    return running


def test_every_route_answers_each_role_as_it_may(with_versions: Running) -> None:
    running = with_versions
    (version,) = running.store.versions(running.id("ada"))
    files = f"/entrants/ada/versions/{version.digest}"
    code = f"{files}?file=bot.py"
    expected = {  # route: status for (nobody, ada, bob, olga)
        "/": (200, 200, 200, 200),
        "/api/leaderboard": (200, 200, 200, 200),
        "/entrants/ada": (401, 200, 200, 200),
        files: (401, 200, 403, 200),
        code: (401, 200, 403, 200),
        "/organiser": (401, 403, 403, 200),
        "/entrants/nobody": (401, 404, 404, 404),
        f"/entrants/bob/versions/{version.digest}": (401, 403, 404, 404),  # ada's version under bob's name
    }
    for route, statuses in expected.items():
        for who, status in zip((None, "ada", "bob", "olga"), statuses, strict=True):
            answer = running.client(who).get(route, follow_redirects=False)
            assert answer.status_code == status, (route, who, answer.status_code)
            if status in (401, 403, 404):
                assert "import random" not in answer.text and "csrftoken" not in answer.headers.get("location", "")
    assert running.client("ada").get(code).text.count("from arena.sdk import run") == 1  # the code, escaped once
    assert running.client("olga").get(code).status_code == 200


def test_another_entrant_sees_the_active_version_but_not_its_files_or_check(with_versions: Running) -> None:
    running = with_versions
    (version,) = running.store.versions(running.id("ada"))
    own = running.client("ada").get("/entrants/ada").text
    other = running.client("bob").get("/entrants/ada").text
    assert version.label in own and version.label in other
    assert f"/versions/{version.digest}" in own and f"/versions/{version.digest}" not in other
    assert 'class="check"' in own and 'class="check"' not in other
    assert 'id="upload"' in own and 'id="upload"' not in other  # nobody uploads in another's name


def test_a_sign_in_link_signs_in_its_entrant_alone_and_a_wrong_one_nobody(running: Running) -> None:
    client = running.client()
    assert client.get("/sign-in/not-a-token", follow_redirects=False).status_code == 404
    assert client.get("/me", follow_redirects=False).status_code == 401
    answer = client.get(f"/sign-in/{running.people['bob'][1]}", follow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"] == "/me"
    assert client.get("/me", follow_redirects=False).headers["location"] == "/entrants/bob"
    cookie = answer.headers["set-cookie"]
    assert "httponly" in cookie.lower() and "samesite=lax" in cookie.lower()
    assert answer.headers["referrer-policy"] == "same-origin"  # the link leaves in no Referer
    assert answer.headers["x-frame-options"] == "DENY" and answer.headers["x-content-type-options"] == "nosniff"
    token = csrf(client)
    assert client.post("/sign-out", data={"csrftoken": token}, follow_redirects=False).status_code == 303
    assert client.get("/me", follow_redirects=False).status_code == 401
    signed_in = running.client("bob")
    assert signed_in.get("/me", follow_redirects=False).status_code == 303
    replaced = running.store.new_link(running.id("bob"))
    assert signed_in.get("/me", follow_redirects=False).status_code == 401  # a new link ends the old one's sessions
    assert running.client().get(f"/sign-in/{running.people['bob'][1]}").status_code == 404
    assert running.client().get(f"/sign-in/{replaced}", follow_redirects=False).status_code == 303


def test_nothing_changes_without_the_csrf_token_of_the_browser_that_asks(running: Running) -> None:
    ada = running.client("ada")
    files = {"file": ("bot.py", RANDOM_BOT, "text/x-python")}
    assert ada.post("/upload", data={"preset": "python"}, files=files).status_code == 403  # no token
    forged = csrf(running.client("bob"))  # a token of another browser
    answer = ada.post("/upload", data={"csrftoken": forged, "preset": "python"}, files=files)
    assert answer.status_code == 403
    assert running.store.versions(running.id("ada")) == []
    olga = running.client("olga")
    assert olga.post("/organiser/ladder", data={"action": "pause"}).status_code == 403
    token = csrf(olga, "/organiser")
    assert (
        olga.post(
            "/organiser/ladder", data={"csrftoken": token, "action": "resume"}, follow_redirects=False
        ).status_code
        == 303
    )
    assert not running.server.games.paused
    bob = running.client("bob")
    token = csrf(bob)
    assert bob.post("/organiser/ladder", data={"csrftoken": token, "action": "pause"}).status_code == 403
    assert not running.server.games.paused


def test_a_request_past_the_upload_limit_is_refused_before_it_is_read(running: Running) -> None:
    ada = running.client("ada")
    token = csrf(ada)
    big = b"#" * (running.ladder.uploads.max_bytes + 100 * 1024)
    answer = ada.post("/upload", data={"csrftoken": token, "preset": "python"}, files={"file": ("bot.py", big)})
    assert answer.status_code == 413 and "larger than 5 MB" in answer.text and "href=/me" in answer.text
    assert running.store.versions(running.id("ada")) == []


def test_the_same_upload_again_says_it_is_a_version_already(running: Running) -> None:
    _, first = upload(running, "ada")
    assert first.status_code == 303
    (version,) = running.store.versions(running.id("ada"))
    _, again = upload(running, "ada")
    assert again.status_code == 200 and f"your version {version.digest[:12]} already" in again.text
    assert len(running.store.versions(running.id("ada"))) == 1
    _, neither = upload(running, "ada", preset="command")  # neither a command nor a protocol: the command is asked
    assert neither.status_code == 400 and "the command preset needs a command" in neither.text


def test_malformed_requests_get_a_clear_4xx_and_nothing_is_written(running: Running) -> None:
    ada = running.client("ada")
    token = csrf(ada)
    versions = running.ladder.data / "versions"

    def post(**kwargs: object) -> tuple[int, str]:
        answer = ada.post("/upload", follow_redirects=False, **kwargs)  # type: ignore[arg-type]
        return answer.status_code, answer.text

    status, text = post(data={"csrftoken": token, "preset": "python"})
    assert status == 400 and "Choose a file" in text
    status, text = post(data={"csrftoken": token, "preset": "cobol"}, files={"file": ("bot.py", RANDOM_BOT)})
    assert status == 400 and "Unknown language" in text
    status, text = post(data={"csrftoken": token, "preset": "python"}, files={"file": ("bot.py", b"")})
    assert status == 400 and "Upload refused" in text
    escape = io.BytesIO()
    with zipfile.ZipFile(escape, "w") as archive:
        archive.writestr("bot.py", RANDOM_BOT)
        archive.writestr("../escape.py", b"print('out')\n")
    status, text = post(data={"csrftoken": token, "preset": "python"}, files={"file": ("bot.zip", escape.getvalue())})
    assert status == 400 and "it would land outside the bot" in text and 'id="upload-error"' in text
    broken = ada.post(
        "/upload",
        content=b'--xyz\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nunterminated',
        headers={"content-type": "multipart/form-data; boundary=xyz"},
    )
    assert 400 <= broken.status_code < 500
    assert running.store.versions(running.id("ada")) == []
    assert not versions.exists() or not any(versions.iterdir())  # not even a temporary folder is left
    nosy = ada.get("/entrants/ada/versions/" + "0" * 64 + "?file=../../secret.key")
    assert nosy.status_code == 404


def test_every_post_answers_each_role_as_it_may(running: Running) -> None:
    """The forms' routes, each with a valid CSRF token of the browser that posts (nobody has a page with a form,
    so no token): only what the role may do."""
    expected = {  # route, form: status for (nobody, ada, olga)
        ("/organiser/ladder", "resume"): (401, 403, 303),
        ("/upload", None): (401, 400, 400),  # signed in, but no file: a clear 400 (nobody: sign in first)
        ("/sign-out", None): (403, 303, 303),
    }
    for (route, action), statuses in expected.items():
        for who, status in zip((None, "ada", "olga"), statuses, strict=True):
            client = running.client(who)
            token = "" if who is None else csrf(client)
            data = {"csrftoken": token, **({"action": action} if action else {}), "preset": "python"}
            answer = client.post(route, data=data, follow_redirects=False)
            assert answer.status_code == status, (route, who, answer.status_code)
    assert not running.server.games.paused  # olga's resume, and nobody else's, took effect


def test_uploads_close_at_the_deadline(tmp_path: Path) -> None:
    server = start_server(tmp_path, extra="  deadline: 2030-01-01T12:00:00+01:00\n")
    running = next(server)
    try:
        deadline = running.ladder.deadline
        assert deadline is not None
        running.clock[0] = deadline.timestamp() - 1
        _, answer = upload(running, "ada")
        assert answer.status_code == 303  # a second before: taken
        running.clock[0] = deadline.timestamp()
        ada = running.client("ada")
        page = ada.get("/me").text
        assert 'id="uploads-closed"' in page and 'id="upload"' not in page and "2030-01-01T12:00:00+01:00" in page
        _, answer = upload(running, "ada", RANDOM_BOT + b"# a last change\n")
        assert answer.status_code == 403 and "Uploads are closed" in answer.text
        assert len(running.store.versions(running.id("ada"))) == 1
    finally:
        server.close()
