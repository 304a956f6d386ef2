"""The whole client walked at random, as people move, against a real server that pushes at random moments
(``helpers.walk``): no step may crash it, no screen may leave a person without a key that leads on.

A few seeds run in the suite; ``pytest tests/test_client_walk.py --walk-steps 20000`` walks longer (README,
"Running the tests").
"""

from __future__ import annotations

import pytest

from helpers.tui import run
from helpers.walk import Walk, WalkServer

#: The suite's walks: seed and steps.
SEEDS = [(1, 700), (2, 700), (3, 700)]


@pytest.fixture
def walk_server(tmp_path, redis_url):
    """The walk's server and, sharing its lobby through a real Redis directory, a second one (for ``moved``)."""
    server = WalkServer(tmp_path, directory=redis_url)
    server.far = WalkServer(tmp_path / "far", directory=redis_url, past=False)
    server.start()
    server.far.start()
    yield server
    server.far.stop()
    server.stop()


@pytest.mark.parametrize("seed,steps", SEEDS, ids=[f"seed{s}" for s, _ in SEEDS])
@pytest.mark.timeout(900, func_only=True)
def test_a_random_walk_through_the_client_never_crashes_nor_strands(walk_server, seed, steps, request):
    longer = request.config.getoption("--walk-steps")
    walk = Walk(walk_server, seed, longer // len(SEEDS) if longer else steps)

    async def body():
        await walk.run()

    run(body, timeout=36000.0 if longer else 800.0)
    print(
        f"seed {seed}: {walk.done} steps, {walk.sessions} sessions {sorted(walk.kinds)}, screens {sorted(walk.screens)}"
    )
    # The walk went where people go: the lobby, a waiting room and a table at the least.
    assert {"LobbyScreen", "RoomScreen"} <= walk.screens, walk.screens
