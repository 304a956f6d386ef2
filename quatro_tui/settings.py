"""What the client remembers between runs (the last server and name, remapped keys) and when it draws in ASCII.

The file is ``$XDG_CONFIG_HOME/quatro/client.toml`` (``~/.config/quatro/client.toml`` by default): small,
human-readable, rewritten whole. A damaged file is ignored rather than stopping the game. Keys are remapped
by binding id (the ids are listed by the help screen's bindings; for example ``call`` or ``hand-1``)::

    server = "192.168.1.20:7777"
    name = "ann"
    bell = true         # the terminal bell when the partner shows the team's sign, and at one's own four
    lesson_offered = ["ann"]   # offered the guided first match (quatro learn) on a first quatro play

    [keys]
    call = "g"          # "Quatro!" on g instead of space
    channel = "c,tab"

It keeps a person key for each player name (``[persons]``): a random string said in ``hello``, so that the server
knows the same person across sessions for their records and rating (several people under one account each have their
own, by name). The file is the user's alone (mode 0600): it holds seat secrets and person keys.

It also keeps the seats taken with ``quatro join`` (R19), one ``[[seats]]`` entry each. A seat belongs to a
person: it is found again by server, table and player name, or by ``person`` where the person is known by
more than a name (over SSH, the fingerprint of the key they logged in with), so that two people under one
Unix account never come back to each other's seats.
"""

from __future__ import annotations

import getpass
import locale
import os
import secrets
import sys
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from quatro_shared.protocol import MAX_NAME_LEN


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "quatro" / "client.toml"


#: Seats remembered at most; the oldest go first (a table lives for hours, not for months).
MAX_SEATS = 32
#: Names remembered as offered the guided first match, at most (the people of one account, with room to spare).
MAX_OFFERED = 64


@dataclass(frozen=True)
class RememberedSeat:
    """A seat this person took (R19): where, as whom, and the secret that brings them back to it."""

    server: str
    table: int
    name: str
    secret: str
    #: Who the person is beyond their name ("" when only the name tells): an SSH key's fingerprint.
    person: str = ""

    def belongs_to(self, server: str, name: str, person: str = "") -> bool:
        """A key identifies its person whatever name they play under; without one, the name does."""
        if self.server != server or self.person != person:
            return False
        return bool(person) or self.name == name

    def to_toml(self) -> list[str]:
        lines = [
            "",
            "[[seats]]",
            f"server = {_toml_string(self.server)}",
            f"table = {self.table}",
            f"name = {_toml_string(self.name)}",
            f"secret = {_toml_string(self.secret)}",
        ]
        if self.person:
            lines.append(f"person = {_toml_string(self.person)}")
        return lines

    @classmethod
    def from_toml(cls, data: object) -> RememberedSeat | None:
        if not isinstance(data, dict):
            return None
        table = data.get("table")
        texts = [data.get(key, "") for key in ("server", "name", "secret", "person")]
        if not isinstance(table, int) or not all(isinstance(text, str) for text in texts) or not all(texts[:3]):
            return None
        return cls(texts[0], table, texts[1], texts[2], texts[3])


@dataclass
class Settings:
    server: str | None = None
    name: str | None = None
    #: Binding id → keys (comma-separated), as Textual's ``App.set_keymap`` takes them.
    keys: dict[str, str] = field(default_factory=dict)
    #: The seats taken with ``quatro join``, newest last, to come back to them (R19).
    seats: list[RememberedSeat] = field(default_factory=list)
    #: Ring the terminal bell on the signals not to miss (``quatro play --bell`` sets it).
    bell: bool = False
    #: The names offered the guided first match (``quatro learn``) on their first ``quatro play``, whatever they
    #: answered: the offer is made once to each person (several may play under one account, each by their name).
    lesson_offered: list[str] = field(default_factory=list)

    def offer_lesson(self, name: str) -> bool:
        """Whether ``name`` is yet to be offered the guided first match."""
        return name not in self.lesson_offered

    def lesson_answered(self, name: str) -> None:
        """``name`` answered the offer: it is never made to them again (the newest names kept)."""
        if name not in self.lesson_offered:
            self.lesson_offered = (self.lesson_offered + [name])[-MAX_OFFERED:]

    #: Player name → that player's person key (protocol section 20).
    persons: dict[str, str] = field(default_factory=dict)

    def remembered_seat(
        self, server: str, name: str, table: int | None = None, person: str = ""
    ) -> RememberedSeat | None:
        """This person's newest seat on ``server`` (at ``table`` when one is asked for); never someone else's."""
        for seat in reversed(self.seats):
            if seat.belongs_to(server, name, person) and table in (None, seat.table):
                return seat
        return None

    def remember(self, seat: RememberedSeat) -> None:
        """Keep ``seat`` as this person's seat at its table (replacing what they held there before)."""
        self.seats = [
            s for s in self.seats if not (s.belongs_to(seat.server, seat.name, seat.person) and s.table == seat.table)
        ]
        self.seats = (self.seats + [seat])[-MAX_SEATS:]

    @classmethod
    def load(cls, path: Path | None = None) -> Settings:
        path = path or config_path()
        try:
            with path.open("rb") as f:
                data = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError):
            return cls()
        server, name, keys, seats = data.get("server"), data.get("name"), data.get("keys"), data.get("seats")
        persons = data.get("persons")
        name = name if isinstance(name, str) else None
        remembered = [s for s in map(RememberedSeat.from_toml, seats if isinstance(seats, list) else []) if s]
        old = data.get("seat")
        if isinstance(old, dict) and name:
            # An older client's single seat: it was taken under the name it remembered.
            migrated = RememberedSeat.from_toml({"name": name} | old)
            if migrated is not None and migrated not in remembered:
                remembered.insert(0, migrated)
        offered = data.get("lesson_offered")
        return cls(
            server if isinstance(server, str) else None,
            name,
            {k: v for k, v in keys.items() if isinstance(v, str)} if isinstance(keys, dict) else {},
            remembered[-MAX_SEATS:],
            data.get("bell") is True,
            [n for n in offered if isinstance(n, str)][-MAX_OFFERED:] if isinstance(offered, list) else [],
            {k: v for k, v in persons.items() if isinstance(v, str) and v} if isinstance(persons, dict) else {},
        )

    def save(self, path: Path | None = None) -> None:
        path = path or config_path()
        lines = [
            f"{key} = {_toml_string(value)}" for key, value in (("server", self.server), ("name", self.name)) if value
        ]
        if self.bell:
            lines.append("bell = true")
        if self.lesson_offered:
            lines.append(f"lesson_offered = [{', '.join(map(_toml_string, self.lesson_offered))}]")
        if self.keys:
            lines += ["", "[keys]"] + [
                f"{_toml_string(key)} = {_toml_string(value)}" for key, value in self.keys.items()
            ]
        if self.persons:
            lines += ["", "[persons]"] + [
                f"{_toml_string(key)} = {_toml_string(value)}" for key, value in self.persons.items()
            ]
        for seat in self.seats:
            lines += seat.to_toml()
        text = "# Quatro client: the last server and name used, remapped keys, and seats to come back to\n"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Written aside and renamed into place: two clients saving at once never leave half a file. The seat
            # secrets are credentials (R19): the file is the user's alone.
            fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".client-", suffix=".toml")
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(text + "\n".join(lines) + "\n")
                os.replace(temporary, path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass  # remembering is a convenience; a read-only home must not stop the game


def remember_seat(seat: RememberedSeat, path: Path | None = None) -> None:
    """Add ``seat`` to the file as it is now: another client under the same HOME may have saved since we read it."""
    settings = Settings.load(path)
    settings.remember(seat)
    settings.save(path)


#: Random bytes of a person key: 192 bits, written as 32 URL-safe characters.
PERSON_KEY_BYTES = 24


def person_key(name: str, path: Path | None = None) -> str:
    """The person key of player ``name`` on this account: the one the settings file holds, else a new random one,
    kept there from now on (read afresh: another client under the same HOME may have saved since)."""
    settings = Settings.load(path)
    key = settings.persons.get(name)
    if key is None:
        key = settings.persons[name] = secrets.token_urlsafe(PERSON_KEY_BYTES)
        settings.save(path)
    return key


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def default_name(settings: Settings | None = None) -> str:
    """The remembered name, else the login name, cut to what the protocol allows."""
    if settings is not None and settings.name:
        return settings.name[:MAX_NAME_LEN]
    return login_name()


def login_name() -> str:
    """The login name, cut to what the protocol allows ("player" when there is none)."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    return (name.strip() or "player")[:MAX_NAME_LEN]


def wants_ascii(flag: bool = False, environ: Mapping[str, str] | None = None) -> bool:
    """ASCII names for emojis and suits: asked for, set in QUATRO_ASCII, the Linux console, or the terminal's
    encoding is not UTF-8."""
    environ = os.environ if environ is None else environ
    if flag or environ.get("QUATRO_ASCII", "").strip() not in ("", "0", "no", "false"):
        return True
    if environ.get("TERM") == "linux":
        return True  # the Linux console draws no emoji, and few symbols, whatever the locale says
    # The locale the terminal was set up with, as POSIX orders it. Python coerces a plain C locale to
    # UTF-8 for itself, so its own stdout encoding cannot tell whether the terminal draws emoji.
    for variable in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = environ.get(variable)
        if value:
            return "utf8" not in value.lower().replace("-", "")
    encoding = (getattr(sys.stdout, "encoding", None) or locale.getpreferredencoding(False) or "").lower()
    return "utf" not in encoding.replace("-", "")
