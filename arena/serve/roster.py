"""A course's roster as the ladder's entrants: a CSV file of names and emails, checked whole before anyone is
added, and each entrant's personal sign-in link."""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.config import NAME_MAX
from arena.errors import UsageError
from arena.plugins.registry import NAME
from arena.serve.store import Entrant, LadderStore, Role

EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+\Z")


class RosterError(UsageError):
    """Every problem of the file at once, FILE:LINE: field: problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True, slots=True)
class Person:
    line: int
    name: str
    email: str


def read_roster(path: Path, taken: Sequence[Entrant] = (), reserved: Sequence[str] = ()) -> list[Person]:
    """The roster's people; RosterError naming each line whose name or email is unusable, or already taken (in the
    file, by an entrant already added, or by a reference bot: `reserved`)."""
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise RosterError([f"{shown}: cannot read it: {error}"]) from None
    rows = csv.reader(io.StringIO(text))
    header = [cell.strip().lower() for cell in next(rows, [])]
    if "name" not in header or "email" not in header:
        raise RosterError([f"{shown}:1: the first line must name the columns, with at least name and email"])
    name_at, email_at = header.index("name"), header.index("email")
    names = {name: "a reference bot of the ladder" for name in reserved}
    names.update((entrant.name, "an entrant already added") for entrant in taken)
    emails = {entrant.email.lower(): "an entrant already added" for entrant in taken}
    people: list[Person] = []
    problems: list[str] = []
    for line, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) <= max(name_at, email_at):
            problems.append(f"{shown}:{line}: {len(row)} columns where the header has {len(header)}")
            continue
        name, email = row[name_at].strip(), row[email_at].strip()
        if not NAME.match(name) or len(name) > NAME_MAX:
            problems.append(
                f"{shown}:{line}: name: {name!r} must be letters, digits, '.', '_' and '-', starting with a letter or"
                f" digit, at most {NAME_MAX} characters (it names the bot on the leaderboard)"
            )
        elif name in names:
            problems.append(f"{shown}:{line}: name: {name!r} is taken by {names[name]}")
        if not EMAIL.match(email):
            problems.append(f"{shown}:{line}: email: {email!r} is not an email address")
        elif email.lower() in emails:
            problems.append(f"{shown}:{line}: email: {email!r} is taken by {emails[email.lower()]}")
        names.setdefault(name, f"line {line}")
        emails.setdefault(email.lower(), f"line {line}")
        people.append(Person(line, name, email))
    if problems:
        raise RosterError(problems)
    if not people:
        raise RosterError([f"{shown}: nobody in it: one line per entrant after the header"])
    return people


def sign_in_link(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/sign-in/{token}"


def add_roster(
    store: LadderStore, path: Path, role: Role = Role.ENTRANT, reserved: Sequence[str] = ()
) -> list[tuple[Entrant, str]]:
    """Everyone on the roster added (or no one), each with its sign-in token; `reserved`: the reference bots'
    names, which no entrant may take (the leaderboard and the final name bots by them)."""
    people = read_roster(path, store.entrants(), reserved)
    return store.add_entrants([(person.name, person.email) for person in people], role)


def write_links(path: Path, added: Sequence[tuple[Entrant, str]], base_url: str) -> None:
    """name,email,link per entrant, readable by its owner only: each link signs its entrant in."""
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", newline="") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(["name", "email", "link"])
        for entrant, token in added:
            writer.writerow([entrant.name, entrant.email, sign_in_link(base_url, token)])
