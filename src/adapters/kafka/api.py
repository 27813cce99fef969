"""A Kafka API as trafka serves it, and the registry of the APIs served.

Each module under `apis/` is one API's room (or a tight family's, as JoinGroup/SyncGroup/Heartbeat/
LeaveGroup): it declares a `KafkaApi` with everything that is that API's, and nothing else needs
editing to serve it:

- the request and response classes (compiled from Kafka's schemas, ADR 92) and the version range it honours (ApiVersions is
  computed from the registry, so the broker never advertises what it cannot serve);
- its handler, which declares the services it uses as its first parameter's type (the room's `Uses`,
  a frozen class naming them) and is given just those (`inject`, ADR 103);
- what it needs authorized (`authorization`): the checks in the order Kafka's KafkaApis makes them,
  a filter for the APIs that leave out what may not be described instead of refusing, or `None` for
  the three APIs Kafka serves before authentication (ApiVersions, SaslHandshake, SaslAuthenticate);
- how a refusal is answered from the request alone (`refusal`, Kafka's `getErrorResponse`): used by
  authorization, by SASL for a request sent mid-exchange, and by injected faults;
- whether it only reads (`read_only`): a fault may then serve it and set every error code, the way a
  broker answers while it is not the leader;
- optionally a `Lane`: a measured shortcut for its commonest request shape (Produce's), with the
  client quota that closes it;
- optionally a `FastDecoder`: a hand-written decoder for some of its versions (Produce's, ADR 9);
- how it counts against the client quotas (`quota`, KIP-219): its handler's time by default, bytes
  in or out, a controller mutation throttle, or nothing for the APIs needed to connect;
- what a simulated cluster (`trafka.Cluster`, ADR 42) checks before or rewrites after serving it
  (`cluster`): the partitions' leader, the group's or transactional id's coordinator, the nodes an
  answer names; nothing for an API every node serves alike;
- optionally how a version it does not serve is answered (`unsupported_version`; ApiVersions only:
  Kafka closes the connection for any other).

The handler a room gives is kept composed with the broker's unit of work (`committing`, ADR 79): what
the call decided is written and what it released woken before its answer leaves, whoever calls it.

`registry.register(api)` adds one; `apis.build_registry()` registers every room.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Collection, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import attrs
import trio

from trafka.domain.quotas import QuotaType

if TYPE_CHECKING:
    from trafka.domain.quotas import ClientQuotas, QuotaSensors

    from .cluster import ClusterMap
    from .request_context import ClientInfo
    from .security.checks import Authorization


@attrs.frozen
class Deferred:
    """A response that needs waiting for (a long-poll Fetch); the connection awaits it in a task."""

    wait: Callable[[], Awaitable[Any]]


@attrs.frozen
class Held(Deferred):
    """A response `seconds` away (a request an interceptor delays): the connection reads nothing more
    until it is answered, as Kafka mutes a connection while a request is in flight; the delay is parked
    in the purgatory, whose timer calls `then()` (ADR 106). `then()` gives the outcome a handler would
    (a response, a `Deferred`, `Parked`, `NO_RESPONSE`) or raises `CloseConnection`."""

    seconds: float = 0.0
    then: Callable[[], Any] = attrs.field(kw_only=True)

    @classmethod
    def after(cls, seconds: float, then: Callable[[], Any]) -> Held:
        async def wait() -> Any:  # for a caller that treats it as any Deferred
            await trio.sleep(seconds)
            outcome = then()
            return await outcome.wait() if isinstance(outcome, Deferred) else outcome

        return cls(wait, seconds, then=then)


@attrs.frozen
class Parked:
    """A request that waits (Kafka's DelayedOperation, ADR 80): park it on `keys` (the partitions a
    fetch reads, a group's answer token) for at most `max_wait_ms` (None: until a key's notify answers
    it). The purgatory calls `complete(expired)` at each notify of a key, in the notifying task, and
    once at the deadline with `expired` true: the answer, or None to stay parked (never None when
    expired). The room tried once already, so `complete` is not called at parking. A room that parks
    returns this and waits for nothing itself."""

    keys: Collection[Hashable]
    max_wait_ms: float | None
    complete: Callable[[bool], Any]

    def then(self, change: Callable[[Any], Any]) -> Parked:
        """The same wait, its answer passed through `change` (a layer's change to the response)."""
        complete = self.complete

        def changed(expired: bool) -> Any:
            answer = complete(expired)
            return None if answer is None else change(answer)

        return Parked(self.keys, self.max_wait_ms, changed)


NO_RESPONSE = object()
"""Returned by a handler when Kafka sends nothing back (Produce with acks=0)."""


class CloseConnection(Exception):
    """Raised by a handler when Kafka would close the connection (an acks=0 produce that failed)."""


Services = Any
"""What the pipeline's layers pass along (the broker's `context.BrokerContext`). This module, which every
room and layer imports, names none of the services, so no import circle runs through it
(`tests/unit/test_import_cycles.py`, type-only imports counted). A room's handler never sees it: it
declares what it uses and receives just that (`inject`)."""


def declared_uses(handle: Callable[..., Any]) -> type | None:
    """The class a room's handler declares as its first parameter's type (its `Uses`: an attrs class
    whose fields name the services it reaches), or None for a function that takes the context as is."""
    try:
        first = next(iter(inspect.signature(handle).parameters.values()))
    except (StopIteration, TypeError, ValueError):
        return None
    declared = first.annotation
    if isinstance(declared, str):  # postponed annotations: the name, in the handler's module
        declared = getattr(handle, "__globals__", {}).get(declared)
    return declared if isinstance(declared, type) and attrs.has(declared) else None


def inject(handle: Callable[..., Any]) -> Callable[..., Any]:
    """`handle` given the services it declares in place of the context (cosmicpython's
    `inject_dependencies` reads the signature the same way; ADR 103). The view is built once per broker
    (`BrokerContext.view`); a function that declares nothing is returned as is."""
    uses = declared_uses(handle)
    if uses is None:
        return handle

    def injected(ctx: Services, /, *args: Any) -> Any:
        return handle(ctx.view(uses), *args)

    injected.__wrapped__ = handle  # type: ignore[attr-defined]
    injected.uses = uses  # type: ignore[attr-defined]
    return injected


class Handle(Protocol):
    """A handler: the request body decoded at `version`, answered with a response object, a `Deferred`
    one, or `NO_RESPONSE`."""

    def __call__(self, ctx: Services, request: Any, version: int, client: ClientInfo, /) -> Any: ...


def committing(handle: Handle) -> Handle:
    """`handle` given what it declares (`inject`), then the unit of work's commit (`unit_of_work.py`): at
    once, and for a `Deferred` again when its wait ends. A `Parked` answer is committed by the purgatory
    after it completes it (ADR 80)."""
    if getattr(handle, "commits", False):  # already composed (an `attrs.evolve`d API)
        return handle
    uses = declared_uses(handle)
    serve = inject(handle)

    def handle_and_commit(ctx: Services, request: Any, version: int, client: ClientInfo, /) -> Any:
        # `serve`'s call made here, one frame less per request (ADR 134)
        outcome = handle(ctx if uses is None else ctx.view(uses), request, version, client)
        uow = ctx.services.unit_of_work
        uow.commit()
        if type(outcome) is not Deferred:
            return outcome
        wait = outcome.wait

        async def wait_and_commit() -> Any:
            answer = await wait()
            uow.commit()
            return answer

        return Deferred(wait_and_commit)

    handle_and_commit.__wrapped__ = serve  # type: ignore[attr-defined]
    handle_and_commit.commits = True  # type: ignore[attr-defined]
    handle_and_commit.uses = uses  # type: ignore[attr-defined]
    return handle_and_commit


class Refusal(Protocol):
    """The request answered with `error` from its own fields, serving nothing; None when Kafka sends no
    response (the connection is then closed)."""

    def __call__(self, api: KafkaApi, request: Any, version: int, error: int, /) -> Any | None: ...


def top_level_error(api: KafkaApi, request: Any, version: int, error: int) -> Any | None:
    """The refusal of an API whose response carries a top-level error code: that code, nothing else.
    None at a version whose response has none."""
    error_code = api.response.fields.get("error_code")
    if error_code is None or not error_code.for_version_q(version):
        return None
    return api.empty_response(version, error_code=error)


def never(quotas: ClientQuotas) -> bool:
    return False


@attrs.frozen
class Lane:
    """Consecutive requests of one shape answered together, without request or response objects (the
    one-partition Produce requests of ADR 29): `decode` reads a frame of that shape into a tuple (None
    for any other frame), `answer` answers a run of them, one encoded response each, with the answers
    and effects the API's handler would give one after another; `answer_one`, if given, answers a run
    of one as `answer` does. `closed_by(quotas)` is true while a
    client quota the lane does not account applies (its requests then take the pipeline)."""

    decode: Callable[[bytes], Any | None]
    answer: Callable[[Services, Sequence[Any]], list[bytes]] = attrs.field(converter=inject)  # given what it declares
    closed_by: Callable[[ClientQuotas], bool] = never
    # `answer` for one request (a producer waiting for each answer), its encoded response; taking what
    # `answer`'s function declares (its `Uses`), which the shared lane resolves once (ADR 135)
    answer_one: Callable[[Any, Any], bytes] | None = None


@attrs.frozen
class FastDecoder:
    """A hand-written decoder for `versions` of an API, proven equal to kafka-python's (ADR 9):
    `decode(frame, version)` gives (correlation id, client id, body); `error` is what it raises for a
    malformed frame."""

    versions: tuple[int, int]
    decode: Callable[[bytes, int], tuple[int, str | None, Any]]
    error: type[Exception]
    # True where a frame's size is entries to walk (Fetch's partitions), not bytes kept as they are
    # (Produce's records): a large frame is then decoded off the event loop as the schema codec's are.
    off_loop_when_large: bool = False


class QuotaCharge(NamedTuple):
    """What serving a request cost against the client quotas: the outcome to send (a throttled Fetch's
    without its data), the bandwidth quota used and its throttle, and the request-time throttle (ms)."""

    outcome: Any
    kind: QuotaType
    bandwidth_throttle_ms: int
    request_throttle_ms: int


class QuotaUse(Protocol):
    """How a served request is recorded against the client quotas of `user` and `client_id`, after its
    handler took `percent` of one thread for a second (Kafka's request quota unit)."""

    def __call__(
        self, sensors: QuotaSensors, request: Any, outcome: Any, user: str, client_id: str, percent: float, now: int, /
    ) -> QuotaCharge: ...


def handler_time(
    sensors: QuotaSensors, request: Any, outcome: Any, user: str, client_id: str, percent: float, now: int
) -> QuotaCharge:
    """Most APIs: the handler's time against the request quota (`request_percentage`)."""
    return QuotaCharge(outcome, QuotaType.REQUEST, 0, sensors.record(QuotaType.REQUEST, user, client_id, percent, now))


class ClusterCheck(Protocol):
    """What a simulated cluster's node does with a request before (or after) serving it: refuse what it
    does not lead or coordinate, or rewrite the answer to name the cluster's nodes."""

    def __call__(
        self,
        cluster: ClusterMap,
        node: int,
        api: KafkaApi,
        serve: Handle,
        ctx: Services,
        body: Any,
        version: int,
        client: ClientInfo,
        /,
    ) -> Any: ...


@attrs.frozen
class KafkaApi:
    request: Any  # the request class `trafka.schema_codec` compiled (its API_KEY and schema)
    response: Any
    versions: tuple[int, int]
    handle: Handle = attrs.field(converter=committing)  # the room's handler, followed by the commit
    authorization: Authorization | None
    refusal: Refusal
    read_only: bool
    lane: Lane | None = None
    fast_decoder: FastDecoder | None = None
    quota: QuotaUse | None = handler_time  # None: not counted (the APIs a client needs to connect)
    cluster: ClusterCheck | None = None
    unsupported_version: Callable[[KafkaApi], tuple[Any, int]] | None = None  # (response, its version)
    fault_injectable: bool = True  # False: `fail_next` refuses it (ApiVersions: every connection opens with it)
    # The lowest version ApiVersions advertises when it is below the lowest served (Produce: Kafka 4 serves
    # v3+ yet advertises v0, KAFKA-18659, since librdkafka will not produce to a broker without v0-2).
    advertised_min_version: int | None = None
    api_key: int = attrs.field(init=False)
    name: str = attrs.field(init=False)  # "Produce": what logs and metrics call the API, read per request

    @api_key.default
    def _api_key(self) -> int:
        return int(self.request.API_KEY)

    @name.default
    def _name(self) -> str:
        return str(self.request.__name__).removesuffix("Request")

    @property
    def min_version(self) -> int:
        return self.versions[0]

    @property
    def max_version(self) -> int:
        return self.versions[1]

    def uses(self, ctx: Services) -> Any:
        """What this room's handler declared it uses, for the room's own functions a layer calls (the
        names a check authorizes, the partitions a cluster node must lead): the context itself for an
        API whose handler declares nothing."""
        uses = getattr(self.handle, "uses", None)
        return ctx if uses is None else ctx.view(uses)

    def refuse(self, request: Any, version: int, error: int) -> Any | None:
        return self.refusal(self, request, version, error)

    def empty_response(self, version: int, **fields: Any) -> Any:
        """A response of this API with `fields`, and no throttling where the version has the field."""
        response = self.response(version=version, **fields)
        if "throttle_time_ms" in response.fields:
            response.throttle_time_ms = 0
        return response


def _check_schema(api: KafkaApi) -> None:
    low, high = api.versions
    schema_low = int(str(api.request.json["validVersions"]).split("-")[0])
    if not schema_low <= low <= high <= api.request.max_version:
        raise ValueError(f"{api.request.__name__} has no schema for versions {low}-{high}")


class Room(NamedTuple):
    """What ApiVersions advertises of a room, known before its module is imported (ADR 110): its name, its
    module under `apis/`, the lowest version advertised, the versions served, and whether it has a `Lane`
    (the server shares it from the start)."""

    name: str
    module: str
    advertised_min: int
    min_version: int
    max_version: int
    lane: bool = False

    @classmethod
    def of(cls, api: KafkaApi, module: str) -> Room:
        advertised = api.min_version if api.advertised_min_version is None else api.advertised_min_version
        return cls(api.name, module, advertised, api.min_version, api.max_version, api.lane is not None)


class HandlerRegistry:
    """The APIs served: each registered (`register`) or, in a registry built from a table of rooms
    (`apis.build_registry`, ADR 110), imported on its first `get` by `load`. ApiVersions reads the table
    (`supported`), so a broker that is never sent a group request never imports a group room."""

    def __init__(self, rooms: Mapping[int, Room] | None = None, load: Callable[[int], KafkaApi] | None = None) -> None:
        self._apis: dict[int, KafkaApi] = {}
        self._rooms: dict[int, Room] = dict(rooms or {})
        self._load = load

    def register(self, api: KafkaApi) -> None:
        _check_schema(api)
        if api.api_key in self._apis:
            raise ValueError(f"{api.request.__name__} registered twice")
        self._apis[api.api_key] = api

    def get(self, api_key: int) -> KafkaApi | None:
        api = self._apis.get(api_key)
        if api is None and api_key in self._rooms:  # the first request of this API: its room is imported
            api = self._loaded(api_key)
        return api

    def _loaded(self, api_key: int) -> KafkaApi:
        loaded = self._apis.get(api_key)  # loaded meanwhile (a frame decoded off the loop, ADR 78)
        if loaded is not None:
            return loaded
        room = self._rooms[api_key]
        assert self._load is not None
        api = self._load(api_key)
        if Room.of(api, room.module) != room:  # the table is checked by a test; a stale one fails loudly
            raise RuntimeError(f"the rooms' table says {room}, the room declares {Room.of(api, room.module)}")
        _check_schema(api)
        return self._apis.setdefault(api_key, api)

    def apis(self) -> list[KafkaApi]:
        """Every served API, by key (every room imported)."""
        for api_key in self._rooms.keys() - self._apis.keys():
            self._loaded(api_key)
        return [api for _, api in sorted(self._apis.items())]

    def rooms(self) -> dict[int, Room]:
        """Every served API's `Room`, by key, without importing any."""
        registered = {key: Room.of(api, "") for key, api in self._apis.items() if key not in self._rooms}
        return dict(sorted({**registered, **self._rooms}.items()))

    def with_lane(self) -> KafkaApi | None:
        """The API whose room declares a `Lane`, if one is served."""
        return next((self.get(key) for key, room in self.rooms().items() if room.lane), None)

    def versions(self, api_key: int) -> tuple[int, int] | None:
        """The versions served of `api_key`, or None, without importing its room."""
        room = self._rooms.get(api_key)
        if room is not None:
            return room.min_version, room.max_version
        api = self._apis.get(api_key)
        return None if api is None else api.versions

    def key_of(self, name: str) -> int | None:
        """The key of the API served under `name` ("Produce", any case), without importing its room."""
        wanted = name.lower()
        return next((key for key, room in self.rooms().items() if room.name.lower() == wanted), None)

    def narrowed(self, ranges: Mapping[int, tuple[int, int]]) -> HandlerRegistry:
        """The APIs of `ranges` only, each within both its own and that range (a pinned Kafka release)."""
        narrowed: dict[int, Room] = {}
        for key, room in self.rooms().items():
            if key not in ranges:
                continue
            low, high = max(room.min_version, ranges[key][0]), min(room.max_version, ranges[key][1])
            if low <= high:
                advertised = low if room.advertised_min == room.min_version else room.advertised_min
                narrowed[key] = room._replace(advertised_min=advertised, min_version=low, max_version=high)

        def load(api_key: int) -> KafkaApi:
            api = self.get(api_key)
            assert api is not None
            room = narrowed[api_key]
            return attrs.evolve(api, versions=(room.min_version, room.max_version))

        return HandlerRegistry(narrowed, load)

    def supported(self) -> list[tuple[int, int, int]]:
        """(api_key, min_version, max_version) for every served API, by key, as ApiVersions advertises it."""
        return [(key, room.advertised_min, room.max_version) for key, room in self.rooms().items()]
