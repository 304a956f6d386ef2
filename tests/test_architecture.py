"""The shape of the code, checked: a pure engine, a shared contract, and rooms that do not reach into each other."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def top_level(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


#: Every game's rules engine: a pure state machine in its own folder.
ENGINES = sorted((ROOT / "quatro_server" / "games").glob("*/engine.py"))


def test_every_game_s_engine_imports_no_clock_no_network_no_ui():
    assert {path.parent.name for path in ENGINES} >= {"quatro", "quarto"}
    forbidden = {"trio", "textual", "socket", "asyncio", "time", "datetime", "msgpack", "threading", "selectors"}
    for path in ENGINES:
        modules = top_level(imported_modules(path))
        assert not modules & forbidden, (path, modules & forbidden)


def test_every_game_s_engine_draws_randomness_only_from_its_injected_source():
    """``random`` may only name the injected source's type and the OS default (R3); never its module functions."""
    for path in ENGINES:
        tree = ast.parse(path.read_text())
        uses = {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "random"
        }
        assert uses <= {"Random", "SystemRandom"}, (path, uses)


def test_shared_imports_neither_the_server_nor_the_client_and_does_no_io():
    for path in (ROOT / "shared").glob("*.py"):
        modules = top_level(imported_modules(path))
        assert not modules & {"quatro_server", "quatro_tui", "trio", "textual", "asyncio", "socket"}, path.name


def test_the_client_and_the_server_do_not_import_each_other():
    for path in (ROOT / "quatro_tui").rglob("*.py"):
        assert "quatro_server" not in top_level(imported_modules(path)), path
    for path in (ROOT / "quatro_server").rglob("*.py"):
        assert "quatro_tui" not in top_level(imported_modules(path)), path


def test_bots_never_import_the_engine():
    """H2 made structural: decision code sees views and events (shared types), never a Table.

    Each game's bots live in its folder (``games/<game>/bots.py``, with its search or its scripted exploiters
    beside them: ``solver.py``, ``exploiters.py``); the network bot and the registry of the games' bot parts in
    ``bots/``; the example of a bot written outside the project in ``examples/``. None may reach an engine, a room or
    a game's adapter.
    """
    games = ROOT / "quatro_server" / "games"
    decision_code = (
        sorted(path for name in ("bots", "solver", "exploiters") for path in games.glob(f"*/{name}.py"))
        + sorted((ROOT / "quatro_server" / "bots").glob("*.py"))
        + sorted((ROOT / "examples").glob("*.py"))
    )
    found = {path.relative_to(ROOT).as_posix() for path in decision_code}
    assert {
        "quatro_server/games/quatro/bots.py",
        "quatro_server/games/quatro/exploiters.py",
        "quatro_server/games/quarto/bots.py",
        "quatro_server/games/quarto/solver.py",
        "quatro_server/bots/netbot.py",
        "quatro_server/bots/games.py",
        "examples/pair_bot.py",
    } <= found
    # Decision code may import decision code (a game's bots, its search, the bots' registry), log setup, and the
    # interfaces a bot is seen through (``rules`` declares protocols and imports nothing of the server).
    allowed = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for path in decision_code
        if path.parent != ROOT / "examples"
    } | {"quatro_server.logs", "quatro_server.rules", "quatro_server.bots"}
    for path in decision_code:
        project = {name for name in imported_modules(path) if name.split(".")[0] in ("quatro_server", "quatro_tui")}
        assert project <= allowed, (path, project - allowed)  # shared types, the bots' own helpers, log setup
    # ``rules`` stands on the contract alone (a bot's actions are the contract's ``GameAction``s), nothing of a side.
    rules_imports = imported_modules(ROOT / "quatro_server" / "rules.py")
    assert not {name for name in rules_imports if name.startswith(("quatro_server", "quatro_tui"))}


def test_every_level_is_a_class_of_the_bot_module():
    """``expert`` and the rest: the levels are named once (``quatro_shared.levels``) and each is a class in ``bots.py``."""
    from quatro_shared.levels import LEVELS

    from quatro_server.games.quatro import bots

    for level in LEVELS:
        bot = bots.make_bot(level)
        assert type(bot).__module__ == "quatro_server.games.quatro.bots" and bot.level == level


def test_the_clients_look_lives_in_its_one_stylesheet():
    """No widget or screen carries DEFAULT_CSS or CSS of its own: quatro.tcss is the one source of every size and
    border, so that the two can never contradict each other."""
    for path in (ROOT / "quatro_tui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                for statement in node.body:
                    targets = statement.targets if isinstance(statement, ast.Assign) else []
                    names = {t.id for t in targets if isinstance(t, ast.Name)}
                    assert not names & {"DEFAULT_CSS", "CSS"}, (
                        f"{path.name}: {node.name} styles itself; use quatro.tcss"
                    )


def _server_import_graph() -> dict[str, set[str]]:
    """Every module of the server and the modules of the server it imports, ``if TYPE_CHECKING:`` imports included
    (a cycle of type hints is still a cycle of knowledge)."""
    package = ROOT / "quatro_server"
    modules = {
        ".".join(("quatro_server", *path.relative_to(package).with_suffix("").parts)).removesuffix(".__init__"): path
        for path in package.rglob("*.py")
    }
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
                imported.update(f"{node.module}.{alias.name}" for alias in node.names)  # ``from package import module``
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
        graph[name] = {other for other in imported if other in modules and other != name}
    return graph


def _load_time_imports(tree: ast.Module) -> set[str]:
    """What a module imports when it is loaded: its top level and its classes' bodies, not its functions' bodies
    (imported when called) nor ``if TYPE_CHECKING:`` blocks (never run)."""
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            for block in ("body", "orelse", "finalbody"):
                inner = getattr(node, block, None)
                if isinstance(inner, list):
                    visit(inner)
            for handler in getattr(node, "handlers", []):
                visit(handler.body)

    visit(tree.body)
    return found


def test_the_client_s_modules_load_without_an_import_cycle():
    """The app, its screens, the games' parts and the lessons load in layers: nothing imported at load time leads
    back to the module importing it (a call may still import late, as the registry's screens do)."""
    package = ROOT / "quatro_tui"
    modules = {
        ".".join(("quatro_tui", *path.relative_to(package).with_suffix("").parts)).removesuffix(".__init__"): path
        for path in package.rglob("*.py")
    }
    graph = {
        name: {other for other in _load_time_imports(ast.parse(path.read_text())) if other in modules and other != name}
        for name, path in modules.items()
    }
    assert {"quatro_tui.app", "quatro_tui.games", "quatro_tui.lessons.coach"} <= set(graph)
    assert _cycles(graph) == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_server_s_modules_import_each_other_without_a_cycle():
    """Tables (``tables``), games (``games``) and the journal stand in layers: the tables know the games and the
    journal, the games know the journal's interface (``journal.codec``), the journal knows neither. Within the
    tables, the lobby stands on its rooms, the acceptance table and the limits; a room knows no lobby, and the
    limits know nothing of the server at all. A game's simulator (``games.<game>.sim``) is the one part of a game
    that stands above the tables: it drives a real room, as a tool does."""
    graph = _server_import_graph()
    assert _cycles(graph) == []
    tables = {name for name in graph if name.startswith("quatro_server.tables")}
    assert {"quatro_server.tables.lobby", "quatro_server.tables.room", "quatro_server.tables.limits"} <= tables
    assert {"quatro_server.games", "quatro_server.journal"} <= graph["quatro_server.tables.lobby"]
    assert {"quatro_server.tables.room", "quatro_server.tables.limits"} <= graph["quatro_server.tables.lobby"]
    assert not graph["quatro_server.tables.room"] & {"quatro_server.tables.lobby", "quatro_server.tables.limits"}
    assert graph["quatro_server.tables.limits"] == set()
    journal = {name for name in graph if name.startswith("quatro_server.journal")}
    assert {"quatro_server.journal.store", "quatro_server.journal.recorder", "quatro_server.journal.restore"} <= journal
    games = {
        name
        for name in graph
        if name.startswith(("quatro_server.games", "quatro_server.game")) and not name.endswith(".sim")
    }
    assert {"quatro_server.game", "quatro_server.games.quatro.game", "quatro_server.games.quarto.game"} <= games
    for name in journal | games:
        assert not graph[name] & (tables | {"quatro_server.server"}), name
    for name in journal:
        assert "quatro_server.games" not in graph[name], name


def test_the_journal_never_names_a_game():
    """A game's journal encoding is its own module's (``quatro_journal``, ``quarto_journal``), supplied by its
    registry entry: the journal's own modules import no game's engine, bots or encoding, and speak of no game."""
    games = {"engine", "quarto", "bots", "quarto_bots", "updates", "quatro_journal", "quarto_journal"}
    for path in (ROOT / "quatro_server" / "journal").glob("*.py"):
        imported = {
            name.split(".")[-1]
            for name in imported_modules(path)
            if name.startswith(("quatro_server", "quatro_shared"))
        }
        assert not imported & (games | {"actions", "events", "quarto", "wire"}), (path.name, imported)
        text = path.read_text().lower()
        assert "quarto" not in text, path.name


# --- a game is a descriptor: generic code never names a game ----------------------------------------------

#: The files outside a game's own folders that may name a game other than the default one: the registries that
#: list the games (one line per game).
GAME_OWN_FILES = {
    "shared/games/__init__.py",  # the contract's registry
    "quatro_tui/games/__init__.py",  # the client's registry
    # The server's registries: the games it hosts, their network bots, their lessons, their parts of the simulator.
    "quatro_server/games/__init__.py",
    "quatro_server/bots/games.py",
    "quatro_server/games/lessons.py",
    "quatro_server/tools/simulators.py",
    # The client's one stylesheet (the style guide: one .tcss per app), where each game's styles have a section.
    "quatro_tui/quatro.tcss",
}
#: Folders whose every file is a game's own.
GAME_OWN_FOLDERS: tuple[str, ...] = ("shared/games/quarto/", "quatro_tui/games/quarto/", "quatro_server/games/quarto/")
#: The server's registries: the one place outside a game's folder that imports it.
SERVER_REGISTRIES = {
    "quatro_server/games/__init__.py",
    "quatro_server/bots/games.py",
    "quatro_server/games/lessons.py",
    "quatro_server/tools/simulators.py",
}


def test_each_game_s_server_part_is_one_folder_that_only_the_registries_import():
    """``quatro_server/games/<game>/`` holds everything of a game's own on the server (rules, adapter, bots, journal
    encoding, commentary, lesson, simulation part); the platform reaches a game only through its registries. A game's
    folder imports no other game's."""
    package = ROOT / "quatro_server"
    folders = sorted(path.parent for path in (package / "games").glob("*/__init__.py"))
    names = {folder.name for folder in folders}
    assert {"quatro", "quarto"} <= names
    for folder in folders:
        assert {"engine.py", "game.py", "journal.py"} <= {path.name for path in folder.glob("*.py")}, folder
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        own = next((folder.name for folder in folders if path.is_relative_to(folder)), None)
        reached = {
            module.split(".")[2]
            for module in imported_modules(path)
            if module.startswith("quatro_server.games.") and module.split(".")[2] in names
        }
        if own is not None:
            assert reached <= {own}, (name, reached)
        elif name not in SERVER_REGISTRIES:
            assert not reached - KNOWN_REACHES.get(name, set()), (name, reached)


#: The platform modules that still reach the default game's folder directly, and why; each to be moved behind a
#: registry. The check above fails on any other.
KNOWN_REACHES = {}


def test_each_game_s_client_part_is_one_folder_that_only_the_client_registry_imports():
    """``quatro_tui/games/<game>/`` holds a game's screens, widgets, dialogs, help marks, words and lesson; the app,
    its shared screens and widgets reach a game only through the client's registry (``quatro_tui/games/__init__.py``).
    A game's folder imports no other game's."""
    package = ROOT / "quatro_tui"
    folders = sorted(path.parent for path in (package / "games").glob("*/__init__.py"))
    names = {folder.name for folder in folders}
    assert {"quatro", "quarto"} <= names
    for folder in folders:
        assert "client.py" in {path.name for path in folder.glob("*.py")}, folder
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        own = next((folder.name for folder in folders if path.is_relative_to(folder)), None)
        reached = {
            module.split(".")[2]
            for module in imported_modules(path)
            if module.startswith("quatro_tui.games.") and module.split(".")[2] in names
        }
        if own is not None:
            assert reached <= {own}, (name, reached)
        elif name != "quatro_tui/games/__init__.py":
            assert not reached, (name, reached)


def naming_a_game(folders: tuple[str, ...], word: str = "quarto", root: Path = ROOT) -> list[str]:
    """The product files (code and styles) under ``folders`` outside the allow-list whose text names ``word``
    (any case)."""
    found = []
    for folder in folders:
        for path in sorted([*(root / folder).rglob("*.py"), *(root / folder).rglob("*.tcss")]):
            name = path.relative_to(root).as_posix()
            if name in GAME_OWN_FILES or name.startswith(GAME_OWN_FOLDERS):
                continue
            if word in path.read_text().lower():
                found.append(name)
    return found


def test_the_shared_contract_names_a_game_only_in_its_own_modules_and_the_registry():
    """The wire, the messages, the protocol's words and the client core read a game's descriptor
    (``quatro_shared.game.GameContract``) from the registry; only a game's own modules and the registry name it."""
    assert naming_a_game(("shared",)) == []


def test_the_client_names_a_game_only_in_its_own_package_and_the_registry():
    """The app, its screens and widgets, the command line and the game state ask the client's registry
    (``quatro_tui.games``) for a game's screen, state, words and levels; only a game's own package, the registry and
    the one stylesheet name it."""
    assert naming_a_game(("quatro_tui",)) == []


def test_the_server_names_a_game_only_in_its_own_modules_and_the_registries():
    """The lobby, rooms, journal, network shell, doors and tools ask the game (``quatro_server.game.Game``) for
    everything of its own; only a game's own modules and the registries that list the games name it."""
    assert naming_a_game(("quatro_server",)) == []


def test_every_game_of_the_contract_has_its_part_in_the_client():
    """The server may host any registered game: the client has a screen, state and words for each."""
    from quatro_shared import games as contracts

    from quatro_tui import games

    assert list(games.CLIENT_GAMES) == list(contracts.CONTRACTS)
    for name, client in games.CLIENT_GAMES.items():
        assert client.contract is contracts.CONTRACTS[name] and client.play_level in client.contract.levels
        offered = [level for level, _ in client.bot_levels]  # weakest first, as the contract lists them
        assert offered == [level for level in client.contract.levels if level in offered]
        assert client.contract.default_level in offered


def test_the_game_check_finds_a_game_named_outside_its_modules(tmp_path):
    """Guards the check itself: a file that names the game is found, in any case; the game's own are not."""
    (tmp_path / "shared" / "games" / "quarto").mkdir(parents=True)
    (tmp_path / "shared" / "games" / "quarto" / "contract.py").write_text("QUARTO = 1\n")
    (tmp_path / "shared" / "wire.py").write_text('"""Reads a QuArTo view."""\n')
    (tmp_path / "shared" / "client.py").write_text("GAME = 'quatro'\n")
    assert naming_a_game(("shared",), root=tmp_path) == ["shared/wire.py"]
    (tmp_path / "quatro_tui" / "games" / "quarto").mkdir(parents=True)
    (tmp_path / "quatro_tui" / "games" / "quarto" / "screen.py").write_text("class QuartoScreen: ...\n")
    (tmp_path / "quatro_tui" / "app.py").write_text("if game == 'quarto': ...\n")
    (tmp_path / "quatro_tui" / "extra.tcss").write_text("QuartoBoard { width: 4; }\n")
    assert naming_a_game(("quatro_tui",), root=tmp_path) == ["quatro_tui/app.py", "quatro_tui/extra.tcss"]


def test_every_registered_game_is_a_contract_whose_classes_the_wire_reads():
    from quatro_shared import games, wire

    assert list(games.CONTRACTS)[0] == games.DEFAULT.name
    for contract in games.CONTRACTS.values():
        codec = wire.codec(contract)
        assert set(codec.actions) == contract.action_kinds and set(codec.events) == contract.event_kinds
        assert contract.default_level in contract.levels and contract.seats
        for cls in (*contract.actions, *contract.events, contract.view, contract.update):
            assert games.CONTRACTS[contract.name].owns(cls)


#: Every game's folder in the contract, its server part and its client part: ``shared/games/<game>/`` and the rest.
GAME_SIDES = ("shared/games", "quatro_server/games", "quatro_tui/games")

#: The generic modules that still reach a game's folder of the contract directly, and why: each is to go behind the
#: contract (``GameContract``) or the registry. The check below fails on any other reach, and on one of these that
#: reaches no more (so that the list only shrinks).
SHARED_KNOWN_REACHES: dict[str, set[str]] = {
    # The soak plays the default game through its own rules; the audit reads its hidden information.
    "quatro_server/tools/soak.py": {"quatro"},
    "quatro_server/tools/audit.py": {"quatro"},
}


def contract_folders_reached(path: Path) -> set[str]:
    """The games whose contract folder (``quatro_shared.games.<game>``) a module imports."""
    games = {folder.parent.name for folder in (ROOT / "shared" / "games").glob("*/__init__.py")}
    found = set()
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
            if node.module == "quatro_shared.games":
                modules += [f"quatro_shared.games.{alias.name}" for alias in node.names]
        for module in modules:
            parts = module.split(".")
            if len(parts) > 2 and parts[:2] == ["quatro_shared", "games"] and parts[2] in games:
                found.add(parts[2])
    return found


def test_each_game_s_contract_is_one_folder_that_only_its_own_parts_and_the_registry_import():
    """``shared/games/<game>/`` holds a game's vocabulary (actions, events, views, its update and its contract); the
    wire, the messages, the client core, the lobby and the screens read a table through the platform's words
    (``quatro_shared.tables``) and the game's contract from the registry (``quatro_shared.games``). Only the
    registry, the game's own folders on each side and the reaches named above import a game's contract folder."""
    games = sorted(folder.parent.name for folder in (ROOT / "shared" / "games").glob("*/__init__.py"))
    assert {"quatro", "quarto"} <= set(games)
    reaching: dict[str, set[str]] = {}
    for package in ("shared", "quatro_server", "quatro_tui"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            own = next((game for game in games for side in GAME_SIDES if name.startswith(f"{side}/{game}/")), None)
            reached = contract_folders_reached(path) - {own}
            if own is not None:
                assert not reached, (name, "a game's folder imports another game's", reached)
            elif reached and name != "shared/games/__init__.py":
                reaching[name] = reached
    unknown = {name: games for name, games in reaching.items() if not games <= SHARED_KNOWN_REACHES.get(name, set())}
    assert not unknown, unknown
    gone = sorted(set(SHARED_KNOWN_REACHES) - set(reaching))
    assert not gone, f"these reach no game's contract folder any more: take them off SHARED_KNOWN_REACHES: {gone}"


def test_the_contract_folder_check_finds_a_reach(tmp_path):
    """Guards the check itself: an import of a game's contract folder, in either form, is found."""
    module = tmp_path / "reach.py"
    module.write_text("from quatro_shared.games.quatro import actions\nfrom quatro_shared.games import quarto\n")
    assert contract_folders_reached(module) == {"quatro", "quarto"}
    module.write_text("from quatro_shared import games\nfrom quatro_shared.tables import NO_SEAT\n")
    assert contract_folders_reached(module) == set()


#: ``Any`` left in the platform (everything outside the games' folders): the generic core is typed, so strict mypy
#: proves something where every game passes through. Raw frames are ``quatro_shared.framing.Message`` (narrowed where
#: read), contract types are the game's own through ``Game``'s and ``GameContract``'s type parameters. Issue 38 began
#: at 399; the goal was a quarter of that. Lower the bound when you remove one; never raise it.
PLATFORM_ANY_BUDGET = 89


def platform_any(root: Path = ROOT) -> dict[str, int]:
    """How often each platform module names ``Any``: as a name, or inside a short string (a quoted annotation)."""
    import io
    import re
    import tokenize

    counts: dict[str, int] = {}
    for side in ("shared", "quatro_server", "quatro_tui"):
        for path in sorted((root / side).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if "/games/" in relative:
                continue
            found = 0
            for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
                if token.type == tokenize.NAME and token.string == "Any":
                    found += 1
                elif token.type == tokenize.STRING and not token.string.startswith(('"""', "'''")):
                    found += len(re.findall(r"\bAny\b", token.string)) if len(token.string) < 80 else 0
            if found:
                counts[relative] = found
    return counts


def test_the_platform_names_any_no_more_than_its_budget():
    counts = platform_any()
    worst = ", ".join(f"{name} {n}" for name, n in sorted(counts.items(), key=lambda item: -item[1])[:5])
    assert sum(counts.values()) <= PLATFORM_ANY_BUDGET, f"{sum(counts.values())} Any in the platform; most in {worst}"


def test_the_any_count_sees_names_and_quoted_annotations(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "a.py").write_text(
        'from typing import Any\nx: "dict[str, Any]" = {}\n\ndef f(y: Any) -> None:\n    """Any docstring."""\n'
    )
    (tmp_path / "shared" / "games" / "g").mkdir(parents=True)
    (tmp_path / "shared" / "games" / "g" / "b.py").write_text("from typing import Any\n")
    assert platform_any(tmp_path) == {"shared/a.py": 3}


def test_every_game_refuses_with_the_platform_s_own_words_for_what_every_game_refuses():
    """Each game's refusal enum (a ``Reason`` in its contract folder) holds the platform's refusals of a game action
    (``protocol.GAME_ACTION_REASONS``: an unknown action, a bad seat or argument, a seat not connected, a match not
    started) with the protocol's values, written from the protocol's names, never spelled again."""
    import importlib
    from enum import Enum

    from quatro_shared import protocol as p

    checked = []
    for folder in sorted((ROOT / "shared" / "games").iterdir()):
        for path in sorted(folder.glob("*.py")):
            tree = ast.parse(path.read_text())
            for node in tree.body:
                if isinstance(node, ast.ClassDef) and node.name == "Reason":
                    module = importlib.import_module(f"quatro_shared.games.{folder.name}.{path.stem}")
                    reason: type[Enum] = getattr(module, "Reason")
                    assert p.GAME_ACTION_REASONS <= {member.value for member in reason}, path
                    spelled = {
                        ast.literal_eval(stmt.value)
                        for stmt in node.body
                        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)
                    }
                    assert not spelled & p.GAME_ACTION_REASONS, (path, spelled & p.GAME_ACTION_REASONS)
                    checked.append(folder.name)
    assert {"quatro", "quarto"} <= set(checked)
