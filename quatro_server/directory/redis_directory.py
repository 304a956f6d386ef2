"""The table directory on Redis: global table ids, each table's record, and the lobby's changes on pub/sub.

What Redis holds (every key under ``prefix``, ``quatro:`` by default):

- ``ids``: the last table id given (``INCRBY``). A server takes its ids in blocks, so that creating a table waits
  for no round trip; ids stay unique across servers, with gaps. The first block is one id and each next one twice
  the last, up to ``ID_BLOCK``: the first tables of servers started together (``--workers``' workers) are 1, 2, …,
  not 1 and 17.
- ``table:<id>``: the table's record, msgpack ``{"server": "HOST:PORT", "summary": <the lobby's table summary>}``,
  with a time to live (``ttl``). Its server sets it again every ``ttl / 3``: a dead server's records go by
  themselves, so that a server starting later never lists them.
- the channel ``lobby``: msgpack ``{"server": "HOST:PORT", "set": [summaries], "gone": [ids], "whole": bool}``, each
  change of a server's tables; every ``ttl / 3`` the whole list (``whole``), which is also the server's heartbeat.

Every server keeps the others' tables in memory, as last told, each with a deadline: a server's tables are dropped
``ttl`` after its last message (a sweep on this server's own clock). Keyspace notifications would need
``notify-keyspace-events`` set on the Redis server (a ``CONFIG SET`` that managed Redis services often refuse), and
Redis tells an expiry only when it gets round to it; the heartbeat rides the channel every server listens to anyway.

The client is redis-py's synchronous one: its asyncio client does not run under trio. Its commands run in worker
threads (``trio.to_thread.run_sync``, at most ``THREADS`` at once), and one thread of its own listens on the channel
and hands each message to the event loop (``trio.from_thread.run_sync``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import msgpack
import redis
import trio

from quatro_shared import messages as m
from quatro_shared import protocol as p
from quatro_shared.wire import WireError, reply_from_wire, to_wire

from quatro_server.directory import DEFAULT_TTL, DirectoryError, parse_address
from quatro_server.logs import shown

log = logging.getLogger("quatro.directory")

#: The most ids taken from Redis at a time (the first block is one id, each next twice the last, up to this); a
#: new block is fetched, off the event loop, once the ids at hand are half a block or fewer.
ID_BLOCK = 16
#: Worker threads running Redis commands at once (the listener has its own).
THREADS = 2
#: Seconds the listener waits for a message before it looks whether it should stop.
LISTEN_POLL = 0.5
#: Seconds between two attempts to reach a Redis server that did not answer.
RETRY = 1.0
#: Seconds a stopping server waits for Redis to take its records away and tell the others.
LEAVE_WAIT = 2.0
#: A table whose id was given out but whose record is not in Redis yet (its server writes its records a moment
#: after the change, off its loop) is read again for up to this long before it is taken for none; every
#: ``FIND_POLL`` seconds. An id never given out is answered at once.
FIND_PATIENCE = 1.0
FIND_POLL = 0.02
#: The ``ids`` counter brought up to at least the given value (a restarted server's restored tables).
_AT_LEAST = (
    "local c = tonumber(redis.call('GET', KEYS[1]) or '0') if c < tonumber(ARGV[1]) then "
    "redis.call('SET', KEYS[1], ARGV[1]) end return 0"
)
#: The counter raised to at least ARGV[1] (this server's highest id), then ARGV[2] more taken, in one step: a Redis
#: that restarted empty (nothing saved, as the private one) never hands this server an id it gave already.
_TAKE_PAST = (
    "local c = tonumber(redis.call('GET', KEYS[1]) or '0') if c < tonumber(ARGV[1]) then "
    "redis.call('SET', KEYS[1], ARGV[1]) end return redis.call('INCRBY', KEYS[1], ARGV[2])"
)


@dataclass(slots=True)
class _Remote:
    """A table another server holds, as it last told it."""

    server: str
    address: tuple[str, int]
    summary: m.TableSummary


def _summaries(wires: Sequence[object]) -> list[m.TableSummary]:
    """Table summaries from their wire maps (as a ``list_tables`` reply reads them); ``WireError`` if malformed."""
    reply = reply_from_wire({"kind": p.OK, "id": None, "tables": list(wires)}, m.Tables)
    assert isinstance(reply, m.Ok) and isinstance(reply.payload, m.Tables)
    return list(reply.payload.tables)


def _record(data: bytes) -> tuple[str, object]:
    """A table's record as Redis holds it: its server, and its summary on the wire (read by ``_summaries``).
    Raises what a malformed record makes msgpack or the lookups raise (``ValueError``, ``KeyError``, ``TypeError``,
    ``msgpack.UnpackException``)."""
    record: object = msgpack.unpackb(data, raw=False)
    if not isinstance(record, dict):
        raise TypeError(f"a record is a map, not {type(record).__name__}")
    return str(record["server"]), record["summary"]


def _items(value: object) -> list[object]:
    """A list of a message from another server (None or absent: empty); ``TypeError`` if it is something else."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"a list, not {type(value).__name__}")
    return list(value)


class RedisDirectory:
    """One server's side of a directory on Redis (``TableDirectory``). ``run`` it in the server's nursery."""

    def __init__(
        self,
        url: str,
        *,
        ttl: float = DEFAULT_TTL,
        prefix: str = "quatro:",
        local: Callable[[], Sequence[m.TableSummary]] = lambda: (),
        on_others_changed: Callable[[], None] = lambda: None,
    ) -> None:
        try:
            self.redis = redis.Redis.from_url(url, socket_timeout=max(2.0, ttl), socket_connect_timeout=2.0)
        except ValueError as exc:
            raise DirectoryError(f"--directory {url}: {exc}") from None
        self.url = url
        self.ttl = ttl
        self.prefix = prefix
        #: This server's address as the others send players to it (``--advertise``); set before ``run``.
        self.address = ""
        #: This server's tables' summaries (the lobby's ``local_listing``), and what to call when the others' change.
        self.local = local
        self.on_others_changed = on_others_changed
        self._ids: list[int] = []
        #: The highest table id this server ever held or was given (its journal's, and every block since): whatever
        #: Redis forgets, the counter is raised past it at each block taken and each heartbeat.
        self._highest = 0
        self._block = 1  # the size of the next block of ids taken
        self._refilling = False
        self._down_until = 0.0  # no id is asked of Redis on the loop before then (it just failed)
        self._others: dict[int, _Remote] = {}
        self._heard: dict[str, float] = {}  # when each other server last spoke, on this server's clock
        self._published: dict[int, Mapping[str, object]] = {}  # each of this server's tables as last told, on the wire
        self._dirty = trio.Event()
        self._limiter = trio.CapacityLimiter(THREADS)
        self._stop = threading.Event()
        self._listener: threading.Thread | None = None
        self._listing: list[m.TableSummary] | None = None
        #: Messages published (changes and heartbeats), for the logs and the tests.
        self.published = 0

    @property
    def channel(self) -> str:
        return self.prefix + "lobby"

    def _key(self, table: int) -> str:
        return f"{self.prefix}table:{table}"

    # --- what the lobby asks (TableDirectory) --------------------------------------------------------------

    def new_id(self) -> int:
        """An id from those at hand, never a round trip on the loop: the ids are taken in blocks ahead of need, in a
        thread (``_refill``). With none at hand (a burst took them faster than Redis answered, or Redis does not
        answer) raises ``DirectoryError`` at once, and the lobby refuses the table with "try again in a moment":
        a stalled Redis costs no table's play a moment."""
        self._refill_soon()
        if not self._ids:
            why = "it did not answer a moment ago" if time.monotonic() < self._down_until else "more are on their way"
            raise DirectoryError(f"no table id at hand from {self.url}: {why}")
        return self._ids.pop(0)

    def _refill_soon(self) -> None:
        """More ids asked for in a thread, once half of the block at hand is used (none asked twice at once)."""
        if len(self._ids) <= self._block // 2 and not self._refilling and self._nursery is not None:
            self._refilling = True
            self._nursery.start_soon(self._refill)

    def holder(self, table: int) -> tuple[str, int] | None:
        remote = self._others.get(table)
        if remote is None:
            return None
        return remote.address

    def others(self) -> Sequence[m.TableSummary]:
        if self._listing is None:
            self._listing = [remote.summary for remote in self._others.values()]
        return self._listing

    def changed(self) -> None:
        self._dirty.set()

    def _read_record(self, table: int) -> tuple[bytes | None, bool]:
        """The table's record, if Redis holds it, and whether its id was given out at all."""
        data, given = self.redis.mget(self._key(table), self.prefix + "ids")
        return (data if isinstance(data, bytes) else None), given is not None and int(given) >= table

    async def find(self, table: int) -> tuple[str, int] | None:
        deadline = trio.current_time() + FIND_PATIENCE
        while True:
            try:
                data, given = await trio.to_thread.run_sync(self._read_record, table, limiter=self._limiter)
            except redis.RedisError as exc:
                raise DirectoryError(f"the directory at {self.url} does not answer: {exc}") from None
            if data is not None:
                break
            if not given or trio.current_time() >= deadline or table in self._others:
                return self.holder(table)
            await trio.sleep(FIND_POLL)  # given out a moment ago: its server is writing its record
        try:
            server, summary = _record(data)
        except (ValueError, KeyError, TypeError, msgpack.UnpackException):
            return None
        if server == self.address:
            return None
        if table not in self._others:
            heard = self._heard.get(server)
            self._told({"server": server, "set": [summary], "gone": [], "whole": False})
            if heard is not None:
                self._heard[server] = heard  # a record read is no word from its server: its deadline stays
        return self.holder(table)

    # --- ids ---------------------------------------------------------------------------------------------

    def _take_ids(self) -> list[int]:
        size = self._block
        highest = self._highest
        last = int(self.redis.eval(_TAKE_PAST, 1, self.prefix + "ids", highest, size))
        self._block = min(ID_BLOCK, size * 2)
        self._highest = max(highest, last)
        return [table for table in range(last - size + 1, last + 1) if table > highest]

    async def _refill(self) -> None:
        try:
            ids = await trio.to_thread.run_sync(self._take_ids, limiter=self._limiter)
            self._ids.extend(ids)
        except redis.RedisError as exc:
            if time.monotonic() >= self._down_until:  # once a spell, not once a table asked for
                log.warning("directory_ids_failed error=%s", exc)
            self._down_until = time.monotonic() + RETRY
        finally:
            self._refilling = False

    # --- running -----------------------------------------------------------------------------------------

    _token: trio.lowlevel.TrioToken | None = None
    _nursery: trio.Nursery | None = None

    async def connect(self, highest_id: int = 0) -> None:
        """Reach Redis, bring the id counter past ``highest_id`` (the highest table id this server ever gave: its
        journal's; no server gives one up to it again) and take the first ids. Before the game port opens: a table
        created at once gets a global id. Raises ``DirectoryError`` when Redis does not answer."""
        try:
            await trio.to_thread.run_sync(self._connect, highest_id, limiter=self._limiter)
        except redis.RedisError as exc:
            raise DirectoryError(f"the directory at {self.url} does not answer: {exc}") from None

    def _connect(self, highest_id: int) -> None:
        self._highest = max(self._highest, highest_id)
        self._ids.extend(self._take_ids())

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Learn the other servers' tables, announce this one's, and keep them all current until cancelled (after
        ``connect``, once ``address`` is known). Raises ``DirectoryError`` if Redis does not answer at the start;
        later outages are logged and retried."""
        assert self.address, "the directory needs this server's address first"
        self._token = trio.lowlevel.current_trio_token()
        try:
            found = await trio.to_thread.run_sync(self._subscribe, limiter=self._limiter)
        except redis.RedisError as exc:
            raise DirectoryError(f"the directory at {self.url} does not answer: {exc}") from None
        now = trio.current_time()
        for server, (wires, left) in found.items():
            if server != self.address:
                self._told({"server": server, "set": wires, "gone": [], "whole": True})
                self._heard[server] = now - max(0.0, self.ttl - left)  # dropped when its records would expire
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._publish_changes)
                nursery.start_soon(self._heartbeat)
                nursery.start_soon(self._sweep)
                log.info("directory_joined url=%s address=%s others=%d", self.url, self.address, len(self._others))
                self._dirty.set()  # this server's tables (restored from its journal) told at once
                self._refill_soon()  # the next ids at hand before the first player asks (the first block is one)
                task_status.started()
                await trio.sleep_forever()
        finally:
            self._nursery = None
            self._stop.set()
            # A Redis gone away must not hold the stop: its records then expire by themselves.
            with trio.CancelScope(shield=True, deadline=trio.current_time() + LEAVE_WAIT):
                await trio.to_thread.run_sync(self._leave, abandon_on_cancel=True)

    def _subscribe(self) -> dict[str, tuple[list[object], float]]:
        """In a thread: the listener subscribed, then the records the others hold read (subscribed first: nothing
        told meanwhile is missed), by server, with the seconds left to the first of its records to expire."""
        pubsub = self.redis.pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(self.channel)
        self._listener = threading.Thread(target=self._listen, args=(pubsub,), name="quatro-directory", daemon=True)
        self._listener.start()
        found: dict[str, tuple[list[object], float]] = {}
        for key in self.redis.scan_iter(match=self.prefix + "table:*", count=500):
            pipe = self.redis.pipeline(transaction=False)
            pipe.get(key)
            pipe.pttl(key)
            data, left_ms = pipe.execute()
            if data is None:
                continue
            try:
                server, summary = _record(data)
                wires, left = found.get(server, ([], self.ttl))
                wires.append(summary)
                found[server] = wires, min(left, max(0, int(left_ms)) / 1000)
            except (ValueError, KeyError, TypeError, msgpack.UnpackException):
                log.warning("directory_bad_record key=%s", shown(key))
        return found

    def _leave(self) -> None:
        """In a thread, at a clean stop: this server's records are removed and the others told at once."""
        gone = list(self._published)
        try:
            if gone:
                pipe = self.redis.pipeline(transaction=False)
                pipe.delete(*(self._key(table) for table in gone))
                pipe.publish(
                    self.channel, msgpack.packb({"server": self.address, "set": [], "gone": gone, "whole": True})
                )
                pipe.execute()
        except redis.RedisError as exc:
            log.warning("directory_leave_failed error=%s", exc)
        if self._listener is not None:
            self._listener.join(LISTEN_POLL * 2)
        self.redis.close()

    # --- telling the others ------------------------------------------------------------------------------

    async def _publish_changes(self) -> None:
        """This server's tables that changed since they were last told: their records, and one message."""
        while True:
            await self._dirty.wait()
            self._dirty = trio.Event()
            await self._publish(whole=False)

    async def _heartbeat(self) -> None:
        """Every ``ttl / 3``: every record set again, and the whole list told (the others' sign of life)."""
        while True:
            await trio.sleep(self.ttl / 3)
            await self._publish(whole=True)

    async def _publish(self, *, whole: bool) -> None:
        current: dict[int, Mapping[str, object]] = {summary.table: to_wire(summary) for summary in self.local()}
        published = self._published
        changed = current if whole else {t: w for t, w in current.items() if published.get(t) != w}
        gone = [t for t in published if t not in current]
        if not changed and not gone and not whole:
            return
        self._published = current
        message = {"server": self.address, "set": list(changed.values()), "gone": gone, "whole": whole}
        records = {self._key(t): msgpack.packb({"server": self.address, "summary": w}) for t, w in changed.items()}
        try:
            await trio.to_thread.run_sync(
                self._write, records, [self._key(t) for t in gone], msgpack.packb(message), limiter=self._limiter
            )
            self.published += 1
        except redis.RedisError as exc:
            self._published = {}  # told again in whole once Redis answers
            log.warning("directory_publish_failed error=%s", exc)
            await trio.sleep(RETRY)
            self._dirty.set()

    def _write(self, records: dict[str, bytes], gone: list[str], message: bytes) -> None:
        pipe = self.redis.pipeline(transaction=False)
        # The counter past this server's highest id, each time: a Redis restarted empty is set right within a
        # heartbeat, before another server takes an id this one holds.
        pipe.eval(_AT_LEAST, 1, self.prefix + "ids", self._highest)
        ttl_ms = max(1, round(self.ttl * 1000))
        for key, value in records.items():
            pipe.set(key, value, px=ttl_ms)
        if gone:
            pipe.delete(*gone)
        pipe.publish(self.channel, message)
        pipe.execute()

    # --- hearing the others ------------------------------------------------------------------------------

    def _listen(self, pubsub: redis.client.PubSub) -> None:
        """The listener thread: each message decoded here, and handed to the event loop."""
        try:
            while not self._stop.is_set():
                try:
                    message = pubsub.get_message(timeout=LISTEN_POLL)
                except redis.RedisError as exc:
                    log.warning("directory_listen_failed error=%s", exc)
                    time.sleep(RETRY)
                    try:
                        pubsub.subscribe(self.channel)  # reconnects; the next heartbeats bring every table back
                    except redis.RedisError:
                        pass
                    continue
                if message is None or message.get("type") != "message":
                    continue
                try:
                    told: object = msgpack.unpackb(message["data"], raw=False)
                    if not isinstance(told, dict) or told.get("server") == self.address:
                        continue
                except (ValueError, msgpack.UnpackException):
                    log.warning("directory_bad_message")
                    continue
                try:
                    trio.from_thread.run_sync(self._told, told, trio_token=self._token)
                except trio.RunFinishedError:
                    return
        finally:
            try:
                pubsub.close()
            except redis.RedisError:
                pass

    def _told(self, told: Mapping[str, object]) -> None:
        """Another server's message, or the records it left in Redis (at the start), on the event loop."""
        try:
            server = str(told["server"])
            address = parse_address(server)
            summaries = _summaries(_items(told.get("set")))
            listed = _items(told.get("gone"))
            gone = [t for t in listed if isinstance(t, int)]
            if len(gone) != len(listed):
                raise TypeError("a table gone is named by its id")
        except (KeyError, TypeError, ValueError, WireError) as exc:
            log.warning("directory_bad_message error=%s", exc)
            return
        others = self._others
        before = len(others)
        if told.get("whole"):
            kept = {summary.table for summary in summaries}
            gone += [t for t, remote in others.items() if remote.server == server and t not in kept]
        changed = False
        for t in gone:
            if t in others and others[t].server == server:
                del others[t]
                changed = True
        for summary in summaries:
            old = others.get(summary.table)
            if old is None or old.summary != summary or old.server != server:
                others[summary.table] = _Remote(server, address, summary)
                changed = True
        self._heard[server] = trio.current_time()
        if changed or len(others) != before:
            self._listing = None
            self.on_others_changed()

    async def _sweep(self) -> None:
        """Drop the tables of a server not heard from for ``ttl``: it died, or lost its way to Redis."""
        while True:
            now = trio.current_time()
            deadline = min(self._heard.values(), default=now) + self.ttl
            if deadline > now:
                await trio.sleep_until(min(deadline, now + self.ttl))
                continue
            silent = {server for server, heard in self._heard.items() if heard + self.ttl <= now}
            for server in silent:
                del self._heard[server]
                log.info("directory_server_gone server=%s", shown(server))
            before = len(self._others)
            self._others = {t: r for t, r in self._others.items() if r.server not in silent}
            if len(self._others) != before:
                self._listing = None
                self.on_others_changed()
