"""``quatro``: play against bots in one command (``quatro play``), or join a server (``quatro join HOST[:PORT]``)."""

from __future__ import annotations

import argparse
import os
import ssl
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from quatro_shared.addresses import parse_address
from quatro_shared.discovery import LOOK_SECONDS, Found, NoMulticast
from quatro_shared.profiles import PROFILE_NAMES, STANDARD_PROFILE
from quatro_shared.protocol import DEFAULT_PORT, MAX_NAME_LEN, MAX_PASSWORD_LEN, PERSON_KEY_ENV
from quatro_shared.tls import Endpoint, client_context, parse_endpoint

from quatro_tui.crash import log_to_stderr
from quatro_tui.games import CLIENT_GAMES, client_game, default
from quatro_tui.lessons import LESSON_LEVEL, LESSON_PROFILE
from quatro_tui.local_server import QUIET_STOP, LocalServer, minutes
from quatro_tui.settings import RememberedSeat, Settings, login_name, person_key, wants_ascii
from quatro_tui.settings import remember_seat as store_seat

if TYPE_CHECKING:
    from quatro_tui.app import Join, QuatroApp
BELL_HELP = (
    "ring the terminal bell when your partner shows your sign and when you hold four of a kind "
    "(remembered; --no-bell stops it)"
)


def _name(value: str) -> str:
    value = value.strip()
    if not 0 < len(value) <= MAX_NAME_LEN:
        raise argparse.ArgumentTypeError(f"a name has 1 to {MAX_NAME_LEN} characters")
    return value


def _seat_number(value: str) -> int:
    """A seat as people number it, from 1 (the waiting room's numbers): the wire's index is one less."""
    try:
        seat = int(value)
    except ValueError:
        seat = 0
    if seat < 1:
        raise argparse.ArgumentTypeError(f"seats are numbered from 1, not {value!r}")
    return seat - 1


def _password(value: str) -> str:
    if not 0 < len(value) <= MAX_PASSWORD_LEN:
        raise argparse.ArgumentTypeError(f"a password has 1 to {MAX_PASSWORD_LEN} characters")
    return value


def choose_server(
    last: str | None,
    look: Callable[[], list[Found]] | None = None,
    ask: Callable[[str], str] = input,
    interactive: bool | None = None,
    local: str = f"127.0.0.1:{DEFAULT_PORT}",
) -> str | None:
    """``quatro join`` without an address: the servers announced on the LAN (zeroconf, about two seconds),
    this machine's (``local``: said so when nothing answers there), and the last one used (marked, and
    taken by enter), to pick from by number. Without a terminal to ask on: the last one used, else the first found. None when the player picks none."""
    from quatro_tui.discover import answers

    if look is None:
        from quatro_tui.discover import discover

        look = discover
    interactive = sys.stdin.isatty() if interactive is None else interactive
    print(f"Looking for Quatro servers on the network ({LOOK_SECONDS:g} s)…", flush=True)
    choices: list[tuple[str, str]] = []
    try:
        for found in look():
            if found.address not in (address for address, _ in choices):
                door = f", or ssh -p {found.ssh_port} NAME@{found.host}" if found.ssh_port else ""
                choices.append((found.address, f"{found.name} ({found.address}{door})"))
    except NoMulticast as exc:
        print(f"Cannot look for servers: {exc}. Carrying on without.", flush=True)
    announced = [address for address, _ in choices]
    here = f"this machine ({local})"
    if interactive and local not in announced and local != last and not answers(*parse_address(local)):
        here += ": nothing answers there now"
    for address, label in ((last, f"the last one used ({last})"), (local, here)):
        if address and address not in (a for a, _ in choices):
            choices.append((address, label))
    # The last one used is marked wherever it is listed (announced, or this machine), and is what enter takes.
    choices = [
        (address, label if address != last or label.startswith("the last") else f"{label}: the last one used")
        for address, label in choices
    ]
    if not interactive:
        return last or (announced[0] if announced else None)
    for number, (_, label) in enumerate(choices, 1):
        print(f"  {number}. {label}")
    first = next((number for number, (address, _) in enumerate(choices, 1) if address == last), 1)
    while True:
        try:
            answer = ask(f"Join which (1-{len(choices)}, or HOST[:PORT])? [{first}] ").strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return None
        if not answer:
            return choices[first - 1][0]
        if answer.isdigit():
            if 1 <= int(answer) <= len(choices):
                return choices[int(answer) - 1][0]
            print(f"  no server numbered {answer}")
            continue
        try:
            parse_endpoint(answer)
        except ValueError as exc:
            print(f"  {exc}")
            continue
        return answer


def _levels() -> list[str]:
    """Every game's bot levels, the default game's first, each weakest first (as the help lists them)."""
    levels: list[str] = []
    for game in CLIENT_GAMES.values():
        levels += [level for level in game.contract.levels if level not in levels]
    return levels


def _play_help() -> tuple[str, str, str]:
    """``quatro play``'s help for ``--game``, ``--players`` and ``--level``, from every game's own words."""
    first = default()
    game = " or ".join(f"{g.name} ({g.summary}{', the default' if g is first else ''})" for g in CLIENT_GAMES.values())
    one_size = "".join(
        f"; {g.title} has {g.contract.seats[0]}" for g in CLIENT_GAMES.values() if len(g.contract.seats) == 1
    )
    players = f"seats at the table (default {first.contract.seats[0]}{one_size})"
    levels = "; ".join(
        f"{g.title}'s {', '.join(g.contract.levels)} (default {g.play_level}{': ' + g.play_level_why if g.play_level_why else ''})"
        for g in CLIENT_GAMES.values()
    )
    return game, players, f"the bots' level, weakest first: {levels}"


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="quatro", description="Quatro, the real-time team card game, in your terminal.")
    commands = root.add_subparsers(dest="command", required=True)

    play = commands.add_parser("play", help="play against bots on a private server (one command, nothing else to run)")
    game_help, players_help, level_help = _play_help()
    play.add_argument("--game", choices=list(CLIENT_GAMES), default=default().name, help=game_help)
    play.add_argument(
        "--players",
        type=int,
        choices=sorted({n for g in CLIENT_GAMES.values() for n in g.contract.seats}),
        default=None,
        help=players_help,
    )
    play.add_argument("--level", choices=_levels(), default=None, help=level_help)
    play.add_argument(
        "--timing", default=STANDARD_PROFILE, help=f"{', '.join(PROFILE_NAMES)}, or a TOML file of durations"
    )
    play.add_argument(
        "--open",
        type=int,
        default=0,
        metavar="N",
        help="leave N seats for other people on this machine or LAN; shows the address they join with. "
        "If you quit or your terminal closes, the table runs on for them and quatro join brings you "
        "back; the server stops once the match is over and everyone has gone, or "
        f"{minutes(QUIET_STOP)} after the last one left",
    )
    play.add_argument("--name", type=_name, default=None, help="your name at the table (default: your login name)")
    play.add_argument(
        "--ascii", action="store_true", help="ASCII only: names for emojis and suits, plain borders and key names"
    )
    play.add_argument("--bell", action=argparse.BooleanOptionalAction, default=None, help=BELL_HELP)

    learn = commands.add_parser(
        "learn",
        help="a guided first match: the coach walks you through every move, on the real table, in under five minutes",
    )
    learn.add_argument(
        "--game",
        choices=[name for name, g in CLIENT_GAMES.items() if g.lesson],
        default=default().name,
        help="the game to learn (default %(default)s)",
    )
    learn.add_argument("--name", type=_name, default=None, help="your name at the table (default: your login name)")
    learn.add_argument(
        "--ascii", action="store_true", help="ASCII only: names for emojis and suits, plain borders and key names"
    )
    # The lesson's pace; tests run it faster.
    learn.add_argument("--timing", default=LESSON_PROFILE, help=argparse.SUPPRESS)

    join = commands.add_parser("join", help="join a Quatro server; without --table, open its lobby")
    join.add_argument(
        "address",
        nargs="?",
        default=None,
        metavar="HOST[:PORT]",
        help=f"the server (default: pick one of those announced on the LAN, this machine's or the last "
        f"one used; port {DEFAULT_PORT} if left out); tls://HOST[:PORT] for a server that speaks TLS, "
        "its certificate checked against this computer's trusted authorities",
    )
    join.add_argument(
        "--tls-ca",
        default=None,
        metavar="FILE",
        help="over TLS, trust the certificates signed by the CA in FILE (PEM) instead: a private CA, or "
        "the self-signed certificate the server's operator gave you (implies TLS)",
    )
    join.add_argument("--table", type=int, default=None, help="join this table at once")
    join.add_argument(
        "--watch",
        type=int,
        default=None,
        metavar="TABLE",
        help="watch this table from no seat: the public table, every channel and the reveal",
    )
    join.add_argument("--password", type=_password, default=None, help="the table's password, if it has one")
    join.add_argument(
        "--name", type=_name, default=None, help="your name at the table (default: asked, your login name filled in)"
    )
    join.add_argument(
        "--ascii", action="store_true", help="ASCII only: names for emojis and suits, plain borders and key names"
    )
    # Who the player is beyond their name, for coming back to their own seat: the SSH door passes the
    # fingerprint of the key a player logged in with. Not for people to type.
    join.add_argument("--person", default="", help=argparse.SUPPRESS)
    # Close after this many seconds without a key press outside a match (the SSH door's sessions).
    join.add_argument("--idle-exit", type=float, default=None, help=argparse.SUPPRESS)
    # Ask the name on the first screen unless one was given or remembered (the browser door's visitors).
    join.add_argument("--ask-name", action="store_true", help=argparse.SUPPRESS)
    join.add_argument("--bell", action=argparse.BooleanOptionalAction, default=None, help=BELL_HELP)

    replay = commands.add_parser(
        "replay",
        help="step through a match that is over as one seat saw it, then each round's truth",
        description="Replay a finished match on the table's own screens, as one seat saw it: a table ID of your own "
        "quatro play matches (or of --data-dir's journal), a journal FILE, or a table of a server (HOST). "
        "Keys: space play/pause, left/right step, n the next call or move, s speed, q close.",
    )
    replay.add_argument("target", metavar="ID|FILE", help="a table id, or a journal file (with --table)")
    replay.add_argument(
        "address",
        nargs="?",
        default=None,
        metavar="HOST[:PORT]",
        help="a server's past match, over the network (default: a journal on this machine)",
    )
    replay.add_argument(
        "--tls-ca",
        default=None,
        metavar="FILE",
        help="over TLS (tls://HOST), trust the CA (or the self-signed certificate) in FILE",
    )
    replay.add_argument(
        "--seat",
        type=_seat_number,
        default=0,
        metavar="N",
        help="whose eyes to see the match through: seat 1 to N, as the waiting room numbers them (default 1)",
    )
    replay.add_argument(
        "--match", type=int, default=None, help="the table's match, from 0 (default: its last that is over)"
    )
    replay.add_argument("--table", type=int, default=None, help="with a FILE: the table to replay")
    replay.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="a server's data directory, for an ID (default: your own quatro play matches, "
        "$XDG_DATA_HOME/quatro/play/NAME)",
    )
    replay.add_argument("--password", type=_password, default=None, help="a password table's password (with HOST)")
    replay.add_argument("--name", type=_name, default=None, help="your name (default: your login name)")
    replay.add_argument(
        "--print", action="store_true", help="print the seat's frames and the notes, one a line, and exit"
    )
    replay.add_argument(
        "--ascii", action="store_true", help="ASCII only: names for emojis and suits, plain borders and key names"
    )
    return root


def play_seats(args: argparse.Namespace) -> tuple[int, str] | str:
    """``quatro play``'s seats and bot level for its game (each game's own table sizes and levels), or what is wrong."""
    game = client_game(args.game)
    seats, levels = game.contract.seats, game.contract.levels
    if len(seats) == 1:
        players = seats[0]  # a game of one table size: --players has nothing to choose
    elif args.players is None:
        players = seats[0]
    elif args.players in seats:
        players = args.players
    else:
        return f"{game.title} is played at {', '.join(map(str, seats))} seats, not {args.players}"
    level = args.level or game.play_level
    if level not in levels:
        return f"{game.title} has no {level!r} bots; its levels: {', '.join(levels)}"
    if not 0 <= args.open < players:
        return f"--open takes 0 to {players - 1} seats"
    return players, level


def tls_context(endpoint: Endpoint) -> ssl.SSLContext | None:
    """``endpoint``'s TLS context, read now: a ``--tls-ca`` file that cannot be read or holds no certificate is a
    ``ValueError`` saying so, before any screen."""
    try:
        return client_context(endpoint)
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(f"--tls-ca {endpoint.ca}: {getattr(exc, 'strerror', None) or exc}") from None


def main(argv: list[str] | None = None) -> int:
    made = make_app(argv)
    if isinstance(made, int):
        return made
    status = run_app(made)
    from quatro_tui.lessons.coach import LessonApp

    if isinstance(made, LessonApp) and made.then_play and made.finished:
        # The lesson was taken from quatro play's offer and done: the match the player asked for follows (the offer
        # is answered now, so this builds the match itself).
        follow = make_app(argv)
        if isinstance(follow, int):
            return follow
        status = run_app(follow)
    return status


def run_app(app: QuatroApp) -> int:
    """Run one app to its end, its private server stopped after it; its exit status.

    An app that stopped on an unexpected error is followed by one that says so and offers the ways on
    (``quatro_tui.crash``); the private server, if any, lives on into it."""
    while True:
        follow = None
        try:
            result = app.run()
            follow = app.successor()
        finally:
            if app.server is not None and (follow is None or follow.server is not app.server):
                app.server.stop(wait=False)
        if follow is None:
            break
        app = follow
    if isinstance(result, str) and result:
        print(result, file=sys.stderr)
    if app.crash is not None:
        log_to_stderr(app.crash)
    return app.return_code or 0


def replay_app(args: argparse.Namespace, settings: Settings) -> QuatroApp | int:
    """``quatro replay``: the tape from a server or a journal here, played on the table's screens (or printed)."""
    from quatro_tui.replay.journals import FILE_NAME, play_data_dir
    from quatro_tui.replay.tape import ReplayError, fetch, load

    name = args.name or login_name()
    try:
        if args.address is not None:
            if not args.target.isdigit():
                print("quatro replay: with HOST, name the table by its id", file=sys.stderr)
                return 2
            endpoint = parse_endpoint(args.address, ca=args.tls_ca)
            table = int(args.target)
            remembered = settings.remembered_seat(args.address, name, table, "")
            tape = fetch(
                endpoint.host,
                endpoint.port,
                name,
                table,
                args.seat,
                match=args.match,
                password=args.password,
                secret=None if remembered is None else remembered.secret,
                tls=tls_context(endpoint),
                tls_ca=endpoint.ca,
            )
        elif os.path.isfile(args.target):
            tape = load(args.target, args.seat, match=args.match, table=args.table)
        elif args.target.isdigit():
            data_dir = args.data_dir or play_data_dir(name)
            if not (data_dir / FILE_NAME).is_file():
                print(
                    f"quatro replay: no journal at {data_dir} (quatro play keeps your matches there; "
                    "--data-dir names a server's)",
                    file=sys.stderr,
                )
                return 1
            tape = load(args.target, args.seat, match=args.match, data_dir=data_dir)
        else:
            print(f"quatro replay: {args.target} is neither a journal file nor a table id", file=sys.stderr)
            return 2
    except (ValueError, ReplayError) as exc:
        print(f"quatro replay: {exc}", file=sys.stderr)
        return 1
    if args.print:
        from quatro_tui.replay.printout import lines

        for line in lines(tape):
            print(line)
        return 0
    from quatro_tui.app import QuatroApp
    from quatro_tui.replay.player import ReplayPlayer

    return QuatroApp(ascii_only=wants_ascii(args.ascii), replay=ReplayPlayer(tape))


def make_app(argv: list[str] | None = None) -> QuatroApp | int:
    """The app the command line asks for (its private server launched for ``play``), or an exit status."""
    args = parser().parse_args(argv)
    settings = Settings.load()
    if args.command == "replay":
        return replay_app(args, settings)
    ascii_only = wants_ascii(args.ascii)
    person = getattr(args, "person", "")
    door_visitor = bool(getattr(args, "ask_name", False))
    if args.name:
        name, ask_name = args.name, False
    elif args.command in ("play", "learn"):
        name, ask_name = login_name(), False  # as its --help says
    elif door_visitor:
        # A browser door's visitor has a settings file of their own: the name they gave last time, else asked.
        name, ask_name = settings.name or "", not settings.name
    else:
        # Under one account several people may play: the last name used there may be someone else's.
        name, ask_name = login_name(), True
    if args.command == "learn":
        return make_lesson(args, name, settings, ascii_only)
    if (
        args.command == "play"
        and not args.open
        and client_game(args.game).lesson
        and settings.offer_lesson(name)
        and lesson_offer_wanted()
    ):
        try:
            learn_now = offer_lesson(client_game(args.game).title)
        except KeyboardInterrupt:  # ctrl+c: no answer, nothing played; asked again next time
            print()
            return 130
        settings.lesson_answered(name)
        settings.save()
        if learn_now:
            lesson = make_lesson(argparse.Namespace(game=args.game, timing=LESSON_PROFILE), name, settings, ascii_only)
            if not isinstance(lesson, int):
                from quatro_tui.lessons.coach import LessonApp

                assert isinstance(lesson, LessonApp)
                lesson.then_play = True  # the match follows the lesson (main runs it)
            return lesson
    if args.command == "play":
        seats = play_seats(args)
        if isinstance(seats, str):
            print(f"quatro: {seats}", file=sys.stderr)
            return 2
        players, level = seats
        if args.timing not in PROFILE_NAMES and not os.path.isfile(args.timing):
            print(f"quatro: no timing profile named {args.timing!r} and no such file", file=sys.stderr)
            return 2
        timing = args.timing if args.timing in PROFILE_NAMES else os.path.abspath(args.timing)
        # The server boots while the client loads Textual: both take a good part of a second.
        from quatro_tui.replay.journals import free_play_data_dir

        data_dir = free_play_data_dir(name)  # this player's own journal, for replays; none while another game holds it
        server: LocalServer | None = LocalServer(timing, public=args.open > 0, data_dir=data_dir, opener=name)
        assert server is not None
        server.launch()
        from quatro_tui.app import Play

        plan: Play | Join = Play(players, level, timing, name, args.open, args.game, data_dir)
    else:
        address = args.address or choose_server(settings.server)
        if address is None:
            print("quatro: which server? quatro join HOST[:PORT]", file=sys.stderr)
            return 2
        try:
            endpoint = parse_endpoint(address, ca=args.tls_ca)
            tls_context(endpoint)
        except ValueError as exc:
            print(f"quatro: {exc}", file=sys.stderr)
            return 2
        host, port = endpoint.host, endpoint.port
        from quatro_tui.app import Join

        server = None
        if args.watch is not None and args.table is not None:
            print("quatro: --watch and --table: watch a table, or join one", file=sys.stderr)
            return 2
        plan = Join(
            host,
            port,
            name,
            args.table,
            args.password,
            watch=args.watch,
            tls=endpoint.tls,
            tls_ca=endpoint.ca,
            address=address,
        )
        # Only this person's seat: two people under one account never come back to each other's.
        remembered = (
            None if ask_name or args.watch is not None else settings.remembered_seat(address, name, args.table, person)
        )
        if remembered is not None:
            plan.rejoin_table, plan.rejoin_secret = remembered.table, remembered.secret
        settings.server = address
    if not ask_name:
        settings.name = name
    if args.bell is not None:
        settings.bell = args.bell
    settings.save()
    from quatro_tui.app import QuatroApp

    def remember_seat(table: int, secret: str, player: str) -> None:
        store_seat(RememberedSeat(settings.server or "", table, player, secret, person))

    table = getattr(args, "table", None)

    def remember_opener_seat(table: int, secret: str, player: str) -> None:
        # The opener of an open table may leave it running and come back with ``quatro join``: under every
        # address she may type (those the server printed, and this machine's own names).
        assert server is not None and server.port is not None
        for address in dict.fromkeys([*server.addresses, f"127.0.0.1:{server.port}", f"localhost:{server.port}"]):
            store_seat(RememberedSeat(address, table, player, secret, person))

    def remember_name(asked: str) -> tuple[int, str] | None:
        """Keep the name given, and find the seat this person took under it (R19)."""
        now = Settings.load()
        now.name = asked
        now.save()
        seat = now.remembered_seat(settings.server or "", asked, table, person)
        return None if seat is None else (seat.table, seat.secret)

    # A solo game's seat ends with its server: only an open table's is worth coming back to.
    keep = remember_seat if server is None else remember_opener_seat if args.command == "play" and args.open else None

    def key_of(player: str) -> str | None:
        """Who the player is across sessions: the door's key for its visitor (none for a visitor it does not know:
        anonymous), else this account's key for the name."""
        door = os.environ.get(PERSON_KEY_ENV)
        return (door or None) if door is not None else person_key(player)

    app = QuatroApp(
        plan,
        ascii_only=ascii_only,
        server=server,
        remember_seat=keep,
        idle_exit=getattr(args, "idle_exit", None),
        bell=settings.bell,
        ask_name=remember_name if ask_name else None,
        person_key=key_of,
    )
    if settings.keys:
        app.set_keymap(settings.keys)
    return app


#: Set to 0 (or no, false) to never offer the guided first match on a first ``quatro play`` (scripted terminals).
LEARN_OFFER_ENV = "QUATRO_LEARN_OFFER"
#: The key that takes the offer; any other declines it.
LEARN_KEY = "l"


def lesson_offer_wanted(environ: dict[str, str] | None = None, interactive: bool | None = None) -> bool:
    """Whether to offer the guided first match: a person at a terminal, unless ``QUATRO_LEARN_OFFER`` says no."""
    environ = dict(os.environ) if environ is None else environ
    if environ.get(LEARN_OFFER_ENV, "").strip().lower() in ("0", "no", "false"):
        return False
    return sys.stdin.isatty() and sys.stdout.isatty() if interactive is None else interactive


def read_key() -> str:
    """One key press from the terminal, without waiting for enter ("" at the end of input)."""
    import termios
    import tty

    fd = sys.stdin.fileno()
    before = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        key = os.read(fd, 1).decode(errors="replace")
        termios.tcflush(fd, termios.TCIFLUSH)  # the rest of a key that sends several bytes (an arrow) goes too
        return key
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, before)


def offer_lesson(title: str, key: Callable[[], str] = read_key) -> bool:
    """Ask once, before the first match: True when the player takes the guided first match (one key either way)."""
    print(
        f"New to {title}? quatro learn is a guided first match: a coach shows every move on the real table, in "
        "under five minutes.",
        flush=True,
    )
    print(f"Press {LEARN_KEY} to learn it now, or any other key to play. (Asked once.)", flush=True)
    try:
        answer = key()
    except (OSError, EOFError):
        answer = ""
    return answer.lower() == LEARN_KEY


def make_lesson(args: argparse.Namespace, name: str, settings: Settings, ascii_only: bool) -> QuatroApp | int:
    """``quatro learn``: the game's lesson on a private server that hosts it, and the coach."""
    if args.timing != LESSON_PROFILE and not os.path.isfile(args.timing):
        print(f"quatro: no timing profile named {args.timing!r} and no such file", file=sys.stderr)
        return 2
    timing = args.timing if args.timing == LESSON_PROFILE else os.path.abspath(args.timing)
    server = LocalServer(timing, lesson=True)
    server.launch()
    from quatro_tui.app import Play
    from quatro_tui.lessons.coach import LessonApp

    game = client_game(args.game)
    assert game.lesson is not None  # --game offers the games that have one
    settings.name = name
    settings.save()
    app = LessonApp(
        Play(game.contract.seats[0], LESSON_LEVEL, timing, name, 0, game.name),
        game.lesson,
        ascii_only=ascii_only,
        server=server,
        bell=settings.bell,
    )
    if settings.keys:
        app.set_keymap(settings.keys)
    return app


if __name__ == "__main__":
    raise SystemExit(main())
