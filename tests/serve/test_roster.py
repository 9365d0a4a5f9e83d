"""The roster: a course's CSV of names and emails becomes the ladder's entrants, all or none, each with a personal
sign-in link that signs in that entrant alone; a wrong line is named, and nobody is added."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from arena.serve.roster import RosterError, add_roster, read_roster, sign_in_link, write_links
from arena.serve.store import LadderStore, Role


def roster(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "roster.csv"
    path.write_text(text)
    return path


def test_a_roster_adds_everyone_with_a_link_that_signs_in_that_entrant_alone(tmp_path: Path) -> None:
    store = LadderStore(tmp_path)
    added = add_roster(store, roster(tmp_path, "Name,Email,group\nada,ada@uni.example,A\nbob,bob@uni.example,B\n"))
    assert [(entrant.name, entrant.email, entrant.role) for entrant, _ in added] == [
        ("ada", "ada@uni.example", Role.ENTRANT),
        ("bob", "bob@uni.example", Role.ENTRANT),
    ]
    (ada, ada_token), (bob, bob_token) = added
    assert ada_token != bob_token and len(ada_token) >= 40
    assert store.signed_in(ada_token) == ada and store.signed_in(bob_token) == bob
    assert store.signed_in(ada_token + "x") is None
    assert ada_token not in (tmp_path / "ladder.sqlite").read_bytes().decode("latin-1")  # only its hash is kept
    fresh = store.new_link(ada.id)
    assert store.signed_in(fresh) == ada and store.signed_in(ada_token) is None  # the old link stops working
    links = tmp_path / "links.csv"
    write_links(links, added, "https://ladder.example/")
    assert stat.S_IMODE(links.stat().st_mode) == 0o600
    assert (
        links.read_text().splitlines()[1] == f"ada,ada@uni.example,{sign_in_link('https://ladder.example', ada_token)}"
    )


def test_every_wrong_line_is_named_and_nobody_is_added(tmp_path: Path) -> None:
    store = LadderStore(tmp_path)
    add_roster(store, roster(tmp_path, "name,email\nada,ada@uni.example\n"))
    path = roster(
        tmp_path,
        "name,email\n"
        "carol,carol@uni.example\n"
        "bad name,x@uni.example\n"  # 3: a space
        "dave,not-an-email\n"  # 4
        "ada,ada2@uni.example\n"  # 5: the name is an entrant's already
        "erin,ADA@uni.example\n"  # 6: so is the email, whatever its case
        "carol,carol2@uni.example\n"  # 7: the name is line 2's
        "frank\n"  # 8: a column short
        "heuristic,h@uni.example\n",  # 9: a reference bot's name
    )
    with pytest.raises(RosterError) as raised:
        add_roster(store, path, reserved=["random", "heuristic"])
    problems = raised.value.problems
    assert [problem.split(": ")[0] for problem in problems] == [f"{path}:{line}" for line in (3, 4, 5, 6, 7, 8, 9)]
    assert "name: 'bad name' must be letters" in problems[0]
    assert "email: 'not-an-email' is not an email address" in problems[1]
    assert "taken by an entrant already added" in problems[2] and "taken by an entrant already added" in problems[3]
    assert "taken by line 2" in problems[4] and "taken by a reference bot of the ladder" in problems[6]
    assert [entrant.name for entrant in store.entrants()] == ["ada"]


def test_a_roster_without_its_header_or_anyone_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RosterError, match=r":1: the first line must name the columns"):
        read_roster(roster(tmp_path, "ada,ada@uni.example\n"))
    with pytest.raises(RosterError, match="nobody in it"):
        read_roster(roster(tmp_path, "name,email\n\n"))
