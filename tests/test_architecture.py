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


def test_the_engine_imports_no_clock_no_network_no_ui():
    modules = top_level(imported_modules(ROOT / "quatro_server" / "engine.py"))
    forbidden = {"trio", "textual", "socket", "asyncio", "time", "datetime", "msgpack", "threading", "selectors"}
    assert not modules & forbidden, modules & forbidden


def test_the_engine_draws_randomness_only_from_its_injected_source():
    """``random`` may only name the injected source's type and the OS default (R3); never its module functions."""
    tree = ast.parse((ROOT / "quatro_server" / "engine.py").read_text())
    uses = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "random"
    }
    assert uses <= {"Random", "SystemRandom"}, uses


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

    Every level (``expert`` included) lives in ``bots.py``; the gauntlet's exploiters in ``exploiters.py``;
    the example of a bot written outside the project in ``examples/``; Quarto's bots in ``quarto_bots.py`` with
    their search in ``quarto_solver.py``. None may reach an engine (``engine``, ``quarto``) or a room.
    """
    decision_code = [
        path
        for path in (ROOT / "quatro_server").rglob("*.py")
        if path.stem.startswith("bot") or path.stem in ("netbot", "exploiters", "quarto_bots", "quarto_solver")
    ]
    decision_code += sorted((ROOT / "examples").glob("*.py"))
    assert {"bots", "netbot", "exploiters", "pair_bot", "quarto_bots", "quarto_solver"} <= {path.stem for path in decision_code}
    allowed = {"quatro_server.bots", "quatro_server.logs", "quatro_server.quarto_bots", "quatro_server.quarto_solver"}
    for path in decision_code:
        project = {name for name in imported_modules(path) if name.split(".")[0] in ("quatro_server", "quatro_tui")}
        assert project <= allowed, (path, project)  # shared types, the bots' own helpers, log setup


def test_every_level_is_a_class_of_the_bot_module():
    """``expert`` and the rest: the levels are named once (``quatro_shared.levels``) and each is a class in ``bots.py``."""
    from quatro_shared.levels import LEVELS

    from quatro_server import bots

    for level in LEVELS:
        bot = bots.make_bot(level)
        assert type(bot).__module__ == "quatro_server.bots" and bot.level == level


def test_the_clients_look_lives_in_its_one_stylesheet():
    """No widget or screen carries DEFAULT_CSS or CSS of its own: quatro.tcss is the one source of every size and
    border, so that the two can never contradict each other."""
    for path in (ROOT / "quatro_tui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                for statement in node.body:
                    targets = statement.targets if isinstance(statement, ast.Assign) else []
                    names = {t.id for t in targets if isinstance(t, ast.Name)}
                    assert not names & {"DEFAULT_CSS", "CSS"}, f"{path.name}: {node.name} styles itself; use quatro.tcss"
