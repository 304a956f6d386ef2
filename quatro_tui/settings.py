"""What the client remembers between runs (the last server and name, remapped keys) and when it draws in ASCII.

The file is ``$XDG_CONFIG_HOME/quatro/client.toml`` (``~/.config/quatro/client.toml`` by default): small,
human-readable, rewritten whole. A damaged file is ignored rather than stopping the game. Keys are remapped
by binding id (the ids are listed by the help screen's bindings; for example ``call`` or ``hand-1``)::

    server = "192.168.1.20:7777"
    name = "ann"
    bell = true         # the terminal bell when the partner shows the team's sign, and at one's own four

    [keys]
    call = "g"          # "Quatro!" on g instead of space
    channel = "c,tab"
"""

from __future__ import annotations

import getpass
import locale
import os
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from quatro_shared.protocol import MAX_NAME_LEN


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "quatro" / "client.toml"


@dataclass
class Settings:
    server: str | None = None
    name: str | None = None
    #: Binding id → keys (comma-separated), as Textual's ``App.set_keymap`` takes them.
    keys: dict[str, str] = field(default_factory=dict)
    #: The last seat taken with ``quatro join``: server, table and secret, to come back to it (R19).
    seat: dict[str, str | int] = field(default_factory=dict)
    #: Ring the terminal bell on the signals not to miss (``quatro play --bell`` sets it).
    bell: bool = False

    def remembered_seat(self, server: str) -> tuple[int, str] | None:
        """The table and secret of the seat last taken on ``server``, if that is where it was."""
        table, secret = self.seat.get("table"), self.seat.get("secret")
        if self.seat.get("server") == server and isinstance(table, int) and isinstance(secret, str):
            return table, secret
        return None

    @classmethod
    def load(cls, path: Path | None = None) -> Settings:
        path = path or config_path()
        try:
            with path.open("rb") as f:
                data = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError):
            return cls()
        server, name, keys, seat = data.get("server"), data.get("name"), data.get("keys"), data.get("seat")
        return cls(
            server if isinstance(server, str) else None,
            name if isinstance(name, str) else None,
            {k: v for k, v in keys.items() if isinstance(v, str)} if isinstance(keys, dict) else {},
            seat if isinstance(seat, dict) else {},
            data.get("bell") is True,
        )

    def save(self, path: Path | None = None) -> None:
        path = path or config_path()
        lines = [f"{key} = {_toml_string(value)}" for key, value in (("server", self.server), ("name", self.name)) if value]
        if self.bell:
            lines.append("bell = true")
        if self.keys:
            lines += ["", "[keys]"] + [f"{_toml_string(key)} = {_toml_string(value)}" for key, value in self.keys.items()]
        if self.seat:
            lines += ["", "[seat]"] + [
                f"{key} = {value if isinstance(value, int) else _toml_string(str(value))}" for key, value in self.seat.items()
            ]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # The seat secret is a credential (R19): the file is the user's alone.
            path.touch(mode=0o600, exist_ok=True)
            path.chmod(0o600)
            path.write_text("# Quatro client: the last server and name used, and remapped keys\n" + "\n".join(lines) + "\n")
        except OSError:
            pass  # remembering is a convenience; a read-only home must not stop the game


def _toml_string(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def default_name(settings: Settings | None = None) -> str:
    """The remembered name, else the login name, cut to what the protocol allows."""
    if settings is not None and settings.name:
        return settings.name[:MAX_NAME_LEN]
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    return (name or "player")[:MAX_NAME_LEN]


def wants_ascii(flag: bool = False, environ: dict[str, str] | None = None) -> bool:
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
