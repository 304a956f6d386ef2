"""The protocol's vocabulary as the code defines it, for tests that must cover every kind."""

from __future__ import annotations

import sys


def exported_subclasses(base: type) -> list[type]:
    """Every subclass of ``base``, at any depth, that ``base``'s own module exports under its name.

    ``@dataclass(slots=True)`` replaces the class it decorates and the replaced one lingers among
    ``__subclasses__()``; classes made by tests (odd inputs for the engine) live in other modules.
    Neither is part of the vocabulary."""
    module = sys.modules[base.__module__]
    found: list[type] = []
    todo = [base]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if (
                sub.__module__ == base.__module__
                and getattr(module, sub.__qualname__, None) is sub
                and sub not in found
            ):
                found.append(sub)
    return found
