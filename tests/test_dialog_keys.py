"""One meaning per letter across every dialog: ``n`` is "no, leave things as they are" wherever it answers a
question, ``y`` is "yes", and no letter does one thing in one dialog and another elsewhere."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import defaultdict

from textual.binding import Binding
from textual.screen import ModalScreen

import quatro_tui


def dialogs() -> list[type[ModalScreen[object]]]:
    """Every modal screen of the client: its own screens and every game's (``quatro_tui/games/<game>/``)."""
    found: list[type[ModalScreen[object]]] = []
    for info in pkgutil.walk_packages(quatro_tui.__path__, "quatro_tui."):
        if info.name.endswith(".__main__"):
            continue  # the command line itself, run on import
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, ModalScreen) and cls.__module__ == module.__name__:
                found.append(cls)
    return found


def keys_of(dialog: type[ModalScreen[object]]) -> dict[str, str]:
    """Key → action, as the dialog binds them (its own bindings and those it inherits from the client's classes)."""
    keys: dict[str, str] = {}
    for cls in reversed(dialog.__mro__):
        if not cls.__module__.startswith("quatro_tui") or "BINDINGS" not in cls.__dict__:
            continue
        for binding in Binding.make_bindings(cls.__dict__["BINDINGS"]):
            keys[binding.key] = binding.action
    return keys


def test_the_walk_finds_every_dialog():
    names = {dialog.__name__ for dialog in dialogs()}
    assert {
        "ConfirmCall",
        "TakeOver",
        "LeaveRunning",
        "ConfirmQuit",
        "LinkScreen",
        "CounterTeam",
        "HelpScreen",
    } <= names


def test_no_letter_has_two_meanings_across_the_dialogs():
    meanings: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for dialog in dialogs():
        for key, action in keys_of(dialog).items():
            if len(key) == 1 and key.isalpha():
                meanings[key][action].append(dialog.__name__)
    twice = {key: dict(actions) for key, actions in meanings.items() if len(actions) > 1}
    assert not twice, f"letters with more than one meaning: {twice}"


def test_n_is_no_and_escape_wherever_a_dialog_asks_yes_or_no():
    asking = [dialog for dialog in dialogs() if "y" in keys_of(dialog)]
    assert len(asking) >= 4
    for dialog in asking:
        keys = keys_of(dialog)
        assert keys.get("y") == "yes", f"{dialog.__name__}: y does {keys.get('y')!r}"
        assert keys.get("n") == "no", f"{dialog.__name__}: n does {keys.get('n')!r}"
        assert keys.get("escape") == "no", f"{dialog.__name__}: escape does {keys.get('escape')!r}, n does 'no'"
