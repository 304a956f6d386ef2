"""``quatro``: play against bots in one command (``quatro play``), or join a server (``quatro join HOST[:PORT]``)."""

from __future__ import annotations

import argparse
import os
import sys

from quatro_shared.cards import PLAYER_COUNTS
from quatro_shared.protocol import DEFAULT_PORT, MAX_NAME_LEN, MAX_PASSWORD_LEN

from quatro_tui.local_server import LocalServer
from quatro_tui.settings import Settings, default_name, wants_ascii

LEVELS = ("normal", "hard", "random")
BELL_HELP = ("ring the terminal bell when your partner shows your sign and when you hold four of a kind "
             "(remembered; --no-bell stops it)")


def _name(value: str) -> str:
    value = value.strip()
    if not 0 < len(value) <= MAX_NAME_LEN:
        raise argparse.ArgumentTypeError(f"a name has 1 to {MAX_NAME_LEN} characters")
    return value


def _password(value: str) -> str:
    if not 0 < len(value) <= MAX_PASSWORD_LEN:
        raise argparse.ArgumentTypeError(f"a password has 1 to {MAX_PASSWORD_LEN} characters")
    return value


def parse_address(text: str) -> tuple[str, int]:
    """``HOST``, ``HOST:PORT`` or ``[IPv6]:PORT``; the port defaults to Quatro's."""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host, port = text, ""
    if not host:
        raise argparse.ArgumentTypeError(f"no host in {text!r}")
    try:
        number = int(port) if port else DEFAULT_PORT
    except ValueError:
        raise argparse.ArgumentTypeError(f"the port in {text!r} is not a number") from None
    if not 0 < number < 65536:
        raise argparse.ArgumentTypeError(f"port {number} is out of range")
    return host, number


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="quatro", description="Quatro, the real-time team card game, in your terminal.")
    commands = root.add_subparsers(dest="command", required=True)

    play = commands.add_parser("play", help="play against bots on a private server (one command, nothing else to run)")
    play.add_argument("--players", type=int, choices=PLAYER_COUNTS, default=4, help="seats at the table (default 4)")
    play.add_argument("--level", choices=LEVELS, default="normal", help="the bots' level (default normal)")
    play.add_argument("--timing", default="standard", help="standard, fast, or a TOML file of durations")
    play.add_argument("--open", type=int, default=0, metavar="N",
                      help="leave N seats for other people on this machine or LAN; shows the address they join with")
    play.add_argument("--name", type=_name, default=None, help="your name at the table (default: your login name)")
    play.add_argument("--ascii", action="store_true", help="ASCII only: names for emojis and suits, plain borders and key names")
    play.add_argument("--bell", action=argparse.BooleanOptionalAction, default=None, help=BELL_HELP)

    join = commands.add_parser("join", help="join a Quatro server; without --table, open its lobby")
    join.add_argument("address", nargs="?", default=None, metavar="HOST[:PORT]",
                      help=f"the server (default: the last one used; port {DEFAULT_PORT} if left out)")
    join.add_argument("--table", type=int, default=None, help="join this table at once")
    join.add_argument("--password", type=_password, default=None, help="the table's password, if it has one")
    join.add_argument("--name", type=_name, default=None, help="your name at the table (default: your login name)")
    join.add_argument("--ascii", action="store_true", help="ASCII only: names for emojis and suits, plain borders and key names")
    join.add_argument("--bell", action=argparse.BooleanOptionalAction, default=None, help=BELL_HELP)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    settings = Settings.load()
    name = args.name or default_name(settings)
    ascii_only = wants_ascii(args.ascii)
    if args.command == "play":
        if not 0 <= args.open < args.players:
            print(f"quatro: --open takes 0 to {args.players - 1} seats", file=sys.stderr)
            return 2
        if args.timing not in ("standard", "fast") and not os.path.isfile(args.timing):
            print(f"quatro: no timing profile named {args.timing!r} and no such file", file=sys.stderr)
            return 2
        timing = args.timing if args.timing in ("standard", "fast") else os.path.abspath(args.timing)
        # The server boots while the client loads Textual: both take a good part of a second.
        server = LocalServer(timing, public=args.open > 0)
        server.launch()
        from quatro_tui.app import Play

        plan: Play | Join = Play(args.players, args.level, timing, name, args.open)
    else:
        address = args.address or settings.server
        if address is None:
            print("quatro: which server? quatro join HOST[:PORT]", file=sys.stderr)
            return 2
        try:
            host, port = parse_address(address)
        except argparse.ArgumentTypeError as exc:
            print(f"quatro: {exc}", file=sys.stderr)
            return 2
        from quatro_tui.app import Join

        server = None
        plan = Join(host, port, name, args.table, args.password)
        remembered = settings.remembered_seat(address)
        if remembered is not None:
            plan.rejoin_table, plan.rejoin_secret = remembered
        settings.server = address
    settings.name = name
    if args.bell is not None:
        settings.bell = args.bell
    settings.save()
    from quatro_tui.app import QuatroApp

    def remember_seat(table: int, secret: str) -> None:
        settings.seat = {"server": settings.server or "", "table": table, "secret": secret}
        settings.save()

    app = QuatroApp(plan, ascii_only=ascii_only, server=server, remember_seat=remember_seat if server is None else None,
                    bell=settings.bell)
    if settings.keys:
        app.set_keymap(settings.keys)
    try:
        result = app.run()
    finally:
        if server is not None:
            server.stop(wait=False)
    if isinstance(result, str) and result:
        print(result, file=sys.stderr)
    return app.return_code or 0


if __name__ == "__main__":
    raise SystemExit(main())
