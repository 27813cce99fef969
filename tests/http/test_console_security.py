"""The console and the Schema Registry when the Kafka listeners have security: login by the same users,
the same ACLs, HTTP Basic for the registry. The app runs in-process (httpx's ASGITransport) on the
in-memory adapter, under Trio's fake clock, so the failed-login delay is measured without sleeping."""

from __future__ import annotations

import base64
import html
import json
import re

import httpx
import itsdangerous
import pytest
import trio

from tests.batches import make_batch
from trafka.adapters.http import build_app
from trafka.adapters.http.login import LOGIN_FAILED, SESSION_COOKIE
from trafka.app.config.settings import load_settings
from trafka.app.wiring.bootstrap import bootstrap, default_adapters
from trafka.app.wiring.http import observe_broker, schema_registry_routes
from trafka.domain.groups.group_metadata import CommittedOffset
from trafka.domain.groups.offsets import CommitRequest
from trafka.domain.security import ScramCredential, ScramMechanism
from trafka.domain.security.acls import (
    CLUSTER_NAME,
    AclBinding,
    AclPermissionType,
    PatternType,
)
from trafka.domain.security.acls import (
    AclOperation as Op,
)
from trafka.domain.security.acls import (
    ResourceType as Res,
)
from trafka.domain.security.credentials import ScramDeletion
from trafka.domain.topics import TopicPartition

T0 = 1_700_000_000_000
PLAIN_USERS = {"alice": "alice-secret", "admin": "admin-secret"}
JAAS = (
    "org.apache.kafka.common.security.plain.PlainLoginModule required "
    + " ".join(f'user_{name}="{password}"' for name, password in PLAIN_USERS.items())
    + ";"
)
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
DELAY_MS = 250
LIFETIME_MS = 60_000


def secured_settings(authorizer: bool = True, mechanisms: str = "PLAIN,SCRAM-SHA-256"):
    security = {
        "sasl_enabled_mechanisms": mechanisms,
        "connection_failed_authentication_delay_ms": DELAY_MS,
        "listener_name": {"sasl_plaintext": {"plain_sasl_jaas_config": JAAS}},
    }
    if authorizer:
        security.update(authorizer_class_name=AUTHORIZER, super_users="User:admin")
    return load_settings(
        None,
        {},
        {
            "storage": {"kind": "memory"},
            "server": {"listeners": "SASL_PLAINTEXT://127.0.0.1:0"},
            "http": {"port": 0, "session_secret": "a-fixed-secret", "session_lifetime_ms": LIFETIME_MS},
            "security": security,
        },
    )


class Console:
    """The app of one broker, a fake broker clock, and an HTTP client keeping cookies like a browser."""

    def __init__(self, settings, extra_routes=None) -> None:
        self.ctx = bootstrap(settings, default_adapters(settings))
        self.now = T0
        self.view = observe_broker(settings, self.ctx, T0)
        self.view.clock_ms = lambda: self.now
        routes = schema_registry_routes(self.ctx) if extra_routes is None else extra_routes
        self.app = build_app(self.view, extra_routes=routes)
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app, client=("10.0.0.7", 5555)), base_url="http://localhost"
        )

    def add_scram_user(self, name: str, password: str, mechanism=ScramMechanism.SCRAM_SHA_256) -> None:
        credential = ScramCredential.from_password(mechanism, password, b"salt-of-" + name.encode(), 4096)
        self.ctx.services.credentials.upsert(name, mechanism, credential)

    def allow(
        self,
        user: str,
        resource_type: Res,
        name: str,
        operation: Op,
        pattern=PatternType.LITERAL,
        permission=AclPermissionType.ALLOW,
    ) -> None:
        [result] = self.ctx.services.authorization.authorizer.create(
            [AclBinding(resource_type, name, pattern, f"User:{user}", "*", operation, permission)]
        )
        assert result.error == 0

    async def get(self, path: str) -> httpx.Response:
        return await self.client.get(path)

    async def post(self, path: str, form: dict) -> httpx.Response:
        return await self.client.post(path, data=form)

    async def csrf(self, path: str = "/login") -> str:
        page = await self.client.get(path, follow_redirects=True)  # /login goes to / once logged in
        return re.search(r'name="csrf" value="([^"]+)"', page.text).group(1)

    async def login(self, user: str, password: str, next_path: str = "/") -> httpx.Response:
        return await self.post(
            "/login", {"csrf": await self.csrf(), "username": user, "password": password, "next": next_path}
        )


@pytest.fixture
def console():
    return Console(secured_settings())


async def test_without_security_on_the_listeners_the_console_is_open():
    settings = load_settings(None, {}, {"storage": {"kind": "memory"}, "http": {"port": 0}})
    console = Console(settings)
    assert console.view.security is None
    assert (await console.get("/")).status_code == 200
    assert (await console.get("/login")).status_code == 404
    assert SESSION_COOKIE not in (await console.get("/broker")).headers.get("set-cookie", "")


async def test_every_page_and_action_needs_a_login_but_health_and_metrics_stay_open(console):
    for path in ("/", "/topics/t", "/topics/t/delete", "/groups", "/groups/g", "/broker"):
        response = await console.get(path)
        assert response.status_code == 303 and response.headers["location"].startswith("/login?next="), path
    assert (await console.get("/topics/t?partition=1")).headers[
        "location"
    ] == "/login?next=%2Ftopics%2Ft%3Fpartition%3D1"
    csrf = await console.csrf()
    response = await console.post("/topics", {"csrf": csrf, "name": "sneaky", "partitions": "1"})
    assert response.status_code == 403 and console.ctx.services.catalog.get("sneaky") is None
    for path in ("/healthz", "/metrics", "/static/console.css"):
        assert (await console.get(path)).status_code == 200, path
    assert (await console.get("/readyz")).status_code == 503  # open, and honest: the listener is not up


async def test_a_scram_user_logs_in_with_an_httponly_samesite_strict_cookie(console):
    console.add_scram_user("carol", "carol-secret")
    response = await console.login("carol", "carol-secret", "/groups")
    assert response.status_code == 303 and response.headers["location"] == "/groups"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(SESSION_COOKIE + "=")
    assert "httponly" in cookie.lower() and "samesite=strict" in cookie.lower()
    assert f"Max-Age={LIFETIME_MS // 1000}" in cookie
    page = await console.get("/groups")
    assert page.status_code == 200 and '<b id="user">carol</b>' in page.text


async def test_a_plain_user_of_the_jaas_config_logs_in(console):
    assert (await console.login("alice", "alice-secret")).status_code == 303
    assert '<b id="user">alice</b>' in (await console.get("/")).text


async def test_scram_users_of_a_mechanism_no_listener_enables_cannot_log_in(console):
    console.add_scram_user("erin", "erin-secret", ScramMechanism.SCRAM_SHA_512)
    assert (await console.login("erin", "erin-secret")).status_code == 401


async def test_a_bad_password_and_an_unknown_user_look_the_same_and_wait_the_failed_authentication_delay(
    console, autojump_clock
):
    console.add_scram_user("carol", "carol-secret")
    answers = []
    for user, password in (("carol", "wrong"), ("alice", "wrong"), ("nobody", "carol-secret"), ("carol", "")):
        csrf = await console.csrf()
        started = trio.current_time()
        response = await console.post("/login", {"csrf": csrf, "username": user, "password": password})
        assert trio.current_time() - started >= DELAY_MS / 1000
        assert response.status_code == 401 and LOGIN_FAILED in response.text
        answers.append(response.text.replace(f'value="{user}"', "").replace(csrf, ""))
    assert len(set(answers)) == 1
    assert (await console.get("/")).status_code == 303


async def test_the_failed_login_delay_does_not_hold_up_other_requests(console, autojump_clock):
    started = trio.current_time()
    async with trio.open_nursery() as nursery:
        csrf = await console.csrf()
        nursery.start_soon(console.post, "/login", {"csrf": csrf, "username": "alice", "password": "wrong"})
        await trio.sleep(0.01)
        assert (await console.get("/healthz")).status_code == 200
        assert trio.current_time() - started < DELAY_MS / 1000


async def test_the_login_form_is_csrf_guarded(console):
    await console.csrf()
    response = await console.post("/login", {"csrf": "forged", "username": "alice", "password": "alice-secret"})
    assert response.status_code == 403 and "stale" in response.text
    assert (await console.get("/")).status_code == 303
    fresh = Console(secured_settings())  # a cross-site POST: no session, so no token to match
    response = await fresh.post("/login", {"csrf": "", "username": "alice", "password": "alice-secret"})
    assert response.status_code == 403


async def test_console_actions_need_the_sessions_csrf_token(console):
    await console.login("alice", "alice-secret")
    console.allow("alice", Res.CLUSTER, CLUSTER_NAME, Op.CREATE)
    response = await console.post("/topics", {"csrf": "forged", "name": "made", "partitions": "1"})
    assert response.status_code == 403 and console.ctx.services.catalog.get("made") is None
    other = Console(secured_settings())
    await other.login("admin", "admin-secret")
    stolen = await other.csrf("/")  # another session's token is no good here
    assert (await console.post("/topics", {"csrf": stolen, "name": "made", "partitions": "1"})).status_code == 403
    response = await console.post("/topics", {"csrf": await console.csrf("/"), "name": "made", "partitions": "1"})
    assert response.status_code == 303 and console.ctx.services.catalog.get("made") is not None


def _cookie_data(value: str) -> dict:
    return json.loads(base64.b64decode(value.split(".")[0]))


async def test_a_tampered_or_foreign_cookie_is_no_session(console):
    await console.login("alice", "alice-secret")
    cookie = console.client.cookies[SESSION_COOKIE]
    data = _cookie_data(cookie)
    assert set(data) == {"sid"}  # the cookie names a session the server holds; the user is not in it
    forged = base64.b64encode(json.dumps({**data, "sid": "a" * 43, "user": "admin"}).encode()).decode()
    console.client.cookies.set(SESSION_COOKIE, forged + cookie[cookie.index(".") :])
    assert (await console.get("/")).status_code == 303
    signer = itsdangerous.TimestampSigner("another-secret")
    console.client.cookies.set(SESSION_COOKIE, signer.sign(forged.encode()).decode())
    assert (await console.get("/")).status_code == 303
    console.client.cookies.set(SESSION_COOKIE, "garbage")
    assert (await console.get("/")).status_code == 303


async def test_a_session_ends_at_its_lifetime_and_at_logout(console):
    await console.login("alice", "alice-secret")
    console.now += LIFETIME_MS - 1
    assert (await console.get("/")).status_code == 200
    console.now += 1
    assert (await console.get("/")).status_code == 303
    await console.login("alice", "alice-secret")
    csrf = await console.csrf("/")
    assert (await console.post("/logout", {"csrf": "forged"})).status_code == 403
    assert (await console.get("/")).status_code == 200
    response = await console.post("/logout", {"csrf": csrf})
    assert response.status_code == 303 and response.headers["location"] == "/login"
    assert (await console.get("/")).status_code == 303


async def test_logout_ends_the_session_on_the_server_so_a_copied_cookie_is_dead(console):
    """Issue 27 row 14: the cookie was a signed, self-contained session that outlived "Log out"."""
    await console.login("alice", "alice-secret")
    copied = console.client.cookies[SESSION_COOKIE]
    assert (await console.post("/logout", {"csrf": await console.csrf("/")})).status_code == 303
    console.client.cookies.set(SESSION_COOKIE, copied)
    assert (await console.get("/")).status_code == 303


async def test_a_session_ends_when_the_users_credential_is_deleted_or_changed(console):
    console.add_scram_user("carol", "carol-secret")
    await console.login("carol", "carol-secret")
    assert (await console.get("/")).status_code == 200
    [result] = console.ctx.services.credentials.alter(
        [ScramDeletion("carol", ScramMechanism.SCRAM_SHA_256.type_id)], []
    )
    assert result.error == 0
    assert (await console.get("/")).status_code == 303
    console.add_scram_user("carol", "carol-secret")
    await console.login("carol", "carol-secret")
    assert (await console.get("/")).status_code == 200
    console.add_scram_user("carol", "a-new-password")
    assert (await console.get("/")).status_code == 303
    assert (await console.login("carol", "carol-secret")).status_code == 401


async def test_login_redirects_only_within_the_console(console):
    for target in ("https://evil.example/", "//evil.example/x", "/\\evil.example"):
        response = await console.login("alice", "alice-secret", target)
        assert response.headers["location"] == "/", target


async def test_without_an_authorizer_a_logged_in_user_may_do_everything():
    console = Console(secured_settings(authorizer=False))
    console.ctx.services.catalog.create("t", 1)
    await console.login("alice", "alice-secret")
    assert 'data-topic="t"' in (await console.get("/")).text
    assert (await console.get("/broker")).status_code == 200


def produce(console: Console, topic: str, value: bytes) -> None:
    assert (
        console.ctx.services.replicas.produce(TopicPartition(topic, 0), make_batch([(T0, b"key", value)]), T0).error
        == 0
    )


async def test_the_topic_list_and_pages_follow_describe_describe_configs_and_read(console):
    for name in ("open", "described", "hidden"):
        console.ctx.services.catalog.create(name, 1, -1, {"retention.ms": "60000"})
        produce(console, name, f"value-of-{name}".encode())
    console.allow("alice", Res.TOPIC, "open", Op.READ)  # READ implies DESCRIBE
    console.allow("alice", Res.TOPIC, "open", Op.DESCRIBE_CONFIGS)
    console.allow("alice", Res.TOPIC, "described", Op.DESCRIBE)
    await console.login("alice", "alice-secret")
    listing = (await console.get("/")).text
    assert 'data-topic="open"' in listing and 'data-topic="described"' in listing
    assert 'data-topic="hidden"' not in listing and "__consumer_offsets" not in listing
    page = await console.get("/topics/open")
    assert page.status_code == 200 and "value-of-open" in page.text and 'id="configs"' in page.text
    assert 'id="delete-topic"' not in page.text  # no DELETE, no link
    page = await console.get("/topics/described")
    assert page.status_code == 200 and "value-of-described" not in page.text and 'id="no-read"' in page.text
    assert 'id="configs"' not in page.text and 'id="no-configs"' in page.text
    for path in ("/topics/hidden", "/topics/hidden?mode=offset&position=0", "/topics/missing"):
        page = await console.get(path)
        assert page.status_code == 403 and "value-of-hidden" not in page.text
        assert "User:alice is not authorized to describe the topic" in page.text


async def test_creating_a_topic_needs_create_on_the_cluster_or_the_topic(console):
    await console.login("alice", "alice-secret")
    csrf = await console.csrf("/")
    response = await console.post("/topics", {"csrf": csrf, "name": "mine-1", "partitions": "1"})
    assert response.status_code == 403 and "create the topic" in response.text
    assert console.ctx.services.catalog.get("mine-1") is None
    console.allow("alice", Res.TOPIC, "mine-", Op.CREATE, PatternType.PREFIXED)
    assert (await console.post("/topics", {"csrf": csrf, "name": "mine-1", "partitions": "1"})).status_code == 303
    assert console.ctx.services.catalog.get("mine-1") is not None
    assert (await console.post("/topics", {"csrf": csrf, "name": "other", "partitions": "1"})).status_code == 403
    console.allow("alice", Res.CLUSTER, CLUSTER_NAME, Op.CREATE)
    assert (await console.post("/topics", {"csrf": csrf, "name": "other", "partitions": "1"})).status_code == 303


async def test_deleting_a_topic_needs_delete_on_it(console):
    console.ctx.services.catalog.create("keep", 1)
    console.ctx.services.catalog.create("drop", 1)
    console.allow("alice", Res.TOPIC, "drop", Op.DELETE)
    console.allow("alice", Res.TOPIC, "keep", Op.DESCRIBE)
    await console.login("alice", "alice-secret")
    csrf = await console.csrf("/")
    assert (await console.get("/topics/keep/delete")).status_code == 403
    response = await console.post("/topics/keep/delete", {"csrf": csrf})
    assert response.status_code == 403 and console.ctx.services.catalog.get("keep") is not None
    assert (await console.get("/topics/drop/delete")).status_code == 200
    assert (await console.post("/topics/drop/delete", {"csrf": csrf})).status_code == 303
    assert console.ctx.services.catalog.get("drop") is None


def commit(console: Console, group: str, offsets: dict[str, int]) -> None:
    request = CommitRequest(
        group, "", -1, None, tuple((TopicPartition(t, 0), CommittedOffset(o)) for t, o in offsets.items())
    )
    assert set(console.view.offsets.commit(request, T0).values()) == {0}


async def test_groups_follow_describe_on_the_group_and_their_topics_describe_on_each(console):
    for name in ("seen", "unseen"):
        console.ctx.services.catalog.create(name, 1)
        produce(console, name, b"x")
    commit(console, "mine", {"seen": 0, "unseen": 0})
    commit(console, "theirs", {"seen": 0})
    console.allow("alice", Res.GROUP, "mine", Op.DESCRIBE)
    console.allow("alice", Res.TOPIC, "seen", Op.DESCRIBE)
    await console.login("alice", "alice-secret")
    listing = (await console.get("/groups")).text
    assert "/groups/mine" in listing and "/groups/theirs" not in listing
    page = await console.get("/groups/mine")
    assert page.status_code == 200 and 'data-partition="seen-0"' in page.text
    assert 'data-partition="unseen-0"' not in page.text and '<b id="total-lag">1</b>' in page.text
    page = await console.get("/groups/theirs")
    assert page.status_code == 403 and "describe the group 'theirs'" in html.unescape(page.text)
    assert (await console.get("/groups/nobody")).status_code == 403  # existence is not told either


async def test_resetting_offsets_needs_read_on_the_group_and_on_each_topic(console):
    for name in ("a", "b"):
        console.ctx.services.catalog.create(name, 1)
        produce(console, name, b"x")
    commit(console, "g", {"a": 1, "b": 1})
    console.allow("alice", Res.GROUP, "g", Op.READ)
    console.allow("alice", Res.TOPIC, "a", Op.READ)
    await console.login("alice", "alice-secret")
    csrf = await console.csrf("/")
    form = {"csrf": csrf, "group": "g", "target": "earliest", "confirm": "yes"}
    response = await console.post("/groups/reset", form)
    assert response.status_code == 403 and "reset the offsets" in response.text
    assert {tp.topic: c.offset for tp, c in console.view.offsets.fetch("g", None).items()} == {"a": 1, "b": 1}
    console.allow("alice", Res.TOPIC, "b", Op.READ)
    assert (await console.post("/groups/reset", form)).status_code == 303
    assert {tp.topic: c.offset for tp, c in console.view.offsets.fetch("g", None).items()} == {"a": 0, "b": 0}
    commit(console, "h", {"a": 1})
    console.allow("alice", Res.GROUP, "h", Op.DESCRIBE)  # may look, may not commit
    assert (await console.post("/groups/reset", {**form, "group": "h"})).status_code == 403


async def test_the_broker_page_needs_describe_configs_on_the_cluster(console):
    await console.login("alice", "alice-secret")
    page = await console.get("/broker")
    assert page.status_code == 403 and "describe the broker's configs" in html.unescape(page.text)
    console.allow("alice", Res.CLUSTER, CLUSTER_NAME, Op.DESCRIBE_CONFIGS)
    page = await console.get("/broker")
    assert page.status_code == 200 and "security.listener_name.sasl_plaintext.plain_sasl_jaas_config" in page.text
    assert "alice-secret" not in page.text and "a-fixed-secret" not in page.text  # PASSWORD configs, as Kafka
    assert "(sensitive)" in page.text


async def test_a_deny_wins_and_a_super_user_sees_everything(console):
    console.ctx.services.catalog.create("team-a", 1)
    console.ctx.services.catalog.create("team-b", 1)
    commit(console, "g", {"team-a": 0})
    console.allow("alice", Res.TOPIC, "team-", Op.ALL, PatternType.PREFIXED)
    console.allow("alice", Res.TOPIC, "team-b", Op.DESCRIBE, permission=AclPermissionType.DENY)
    await console.login("alice", "alice-secret")
    listing = (await console.get("/")).text
    assert 'data-topic="team-a"' in listing and 'data-topic="team-b"' not in listing
    assert (await console.get("/topics/team-b")).status_code == 403
    await console.login("admin", "admin-secret")  # the super user, with no ACL of its own
    assert 'data-topic="team-b"' in (await console.get("/")).text
    for path in ("/topics/team-b", "/groups/g", "/broker"):
        assert (await console.get(path)).status_code == 200, path


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


async def test_the_schema_registry_needs_http_basic_auth_by_the_same_users(console, autojump_clock):
    console.add_scram_user("carol", "carol-secret")
    response = await console.client.get("/subjects")
    assert response.status_code == 401 and response.json() == {"error_code": 401, "message": "Unauthorized"}
    assert response.headers["www-authenticate"].startswith("Basic ")
    for headers in (
        basic("carol", "wrong"),
        basic("nobody", "x"),
        {"Authorization": "Basic !!"},
        {"Authorization": "Bearer token"},
    ):
        started = trio.current_time()
        response = await console.client.get("/subjects", headers=headers)
        assert response.status_code == 401 and response.json()["error_code"] == 401
        assert trio.current_time() - started >= DELAY_MS / 1000
    for user, password in (("carol", "carol-secret"), ("alice", "alice-secret")):
        response = await console.client.get("/subjects", headers=basic(user, password))
        assert response.status_code == 200 and response.json() == []
    console.allow("alice", Res.TOPIC, "s", Op.WRITE)  # the registry obeys the topic's ACLs (row 4)
    response = await console.client.post(
        "/subjects/s-value/versions", headers=basic("alice", "alice-secret"), json={"schema": '{"type": "string"}'}
    )
    assert response.status_code == 200 and response.json() == {"id": 1}
    assert (await console.client.get("/login")).status_code == 200  # the console is still a login away


def count_derivations(monkeypatch) -> list[str]:
    """Every PBKDF2 the password checks run, by mechanism name."""
    calls: list[str] = []
    original = ScramMechanism.salted_password

    def counted(self, password, salt, iterations):
        calls.append(self.mechanism_name)
        return original(self, password, salt, iterations)

    monkeypatch.setattr(ScramMechanism, "salted_password", counted)
    return calls


async def test_a_good_basic_credential_costs_one_derivation_until_the_credential_changes(monkeypatch):
    """Issue 27 row 6: registry clients send Basic credentials on every request."""
    console = Console(secured_settings(authorizer=False))
    console.add_scram_user("carol", "carol-secret")
    calls = count_derivations(monkeypatch)
    for _ in range(5):
        assert (await console.client.get("/subjects", headers=basic("carol", "carol-secret"))).status_code == 200
    assert calls == ["SCRAM-SHA-256"]
    console.add_scram_user("carol", "carol-secret")  # a new salt: checked again
    assert (await console.client.get("/subjects", headers=basic("carol", "carol-secret"))).status_code == 200
    assert len(calls) == 2


async def test_an_unknown_user_costs_the_derivations_of_a_known_one(monkeypatch, autojump_clock):
    console = Console(secured_settings(mechanisms="PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"))
    for mechanism in ScramMechanism:
        console.add_scram_user("carol", "carol-secret", mechanism)
    calls = count_derivations(monkeypatch)
    assert (await console.client.get("/subjects", headers=basic("carol", "wrong"))).status_code == 401
    known = sorted(calls)
    calls.clear()
    assert (await console.client.get("/subjects", headers=basic("nobody", "wrong"))).status_code == 401
    assert sorted(calls) == known == ["SCRAM-SHA-256", "SCRAM-SHA-512"]


async def test_password_checks_are_rate_limited_per_client_address(monkeypatch, autojump_clock):
    console = Console(secured_settings())
    calls = count_derivations(monkeypatch)
    statuses = [(await console.client.get("/subjects", headers=basic("nobody", "x"))).status_code for _ in range(15)]
    assert statuses == [401] * 10 + [429] * 5 and len(calls) == 10
    response = await console.login("alice", "alice-secret")  # the same address: no check is made
    assert response.status_code == 429 and "Too many login attempts" in response.text
    other = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=console.app, client=("10.0.0.8", 5555)), base_url="http://localhost"
    )
    assert (await other.get("/subjects", headers=basic("alice", "alice-secret"))).status_code == 200
    console.now += 1000  # two checks a second come back
    assert (await console.login("alice", "alice-secret")).status_code == 303


async def test_registry_calls_are_authorized_by_the_topics_acls(console):
    """Issue 27 row 4: a user with no ACLs could delete subjects and set the global mode."""
    admin, alice = basic("admin", "admin-secret"), basic("alice", "alice-secret")
    schema = {"schema": '{"type": "string"}'}
    client = console.client
    assert (await client.post("/subjects/orders-value/versions", headers=admin, json=schema)).status_code == 200
    assert (await client.post("/subjects/common.Money/versions", headers=admin, json=schema)).status_code == 200
    # No ACLs: nothing to read, nothing to change, the lists are empty.
    assert (await client.get("/subjects", headers=alice)).json() == []
    for method, path, body in (
        ("GET", "/subjects/orders-value/versions", None),
        ("GET", "/subjects/orders-value/versions/1", None),
        ("POST", "/subjects/orders-value", schema),
        ("POST", "/subjects/orders-value/versions", schema),
        ("DELETE", "/subjects/orders-value", None),
        ("DELETE", "/subjects/orders-value/versions/1", None),
        ("PUT", "/config/orders-value", {"compatibility": "NONE"}),
        ("PUT", "/mode/orders-value", {"mode": "READONLY"}),
        ("GET", "/config", None),
        ("PUT", "/config", {"compatibility": "NONE"}),
        ("PUT", "/mode", {"mode": "READONLY"}),
        ("GET", "/subjects/common.Money/versions", None),
    ):
        response = await client.request(method, path, headers=alice, json=body)
        assert response.status_code == 403 and response.json()["error_code"] == 40301, (method, path, response.text)
    assert (await client.get("/schemas/ids/1", headers=alice)).json()["error_code"] == 40403
    assert (await client.get("/schemas/types", headers=alice)).status_code == 200
    # READ on the topic (a consumer): reads the subject and its schema, changes nothing.
    console.allow("alice", Res.TOPIC, "orders", Op.READ)
    assert (await client.get("/subjects", headers=alice)).json() == ["orders-value"]
    assert (await client.get("/subjects/orders-value/versions", headers=alice)).json() == [1]
    assert (await client.get("/schemas/ids/1", headers=alice)).status_code == 200
    assert (await client.post("/subjects/orders-value", headers=alice, json=schema)).status_code == 200
    assert (await client.delete("/subjects/orders-value", headers=alice)).status_code == 403
    # WRITE (a producer): registers, still may not delete or reconfigure.
    console.allow("alice", Res.TOPIC, "orders", Op.WRITE)
    new = {"schema": '{"type": "record", "name": "R", "fields": []}'}
    console_ok = await client.put("/config/orders-value", headers=admin, json={"compatibility": "NONE"})
    assert console_ok.status_code == 200
    assert (await client.post("/subjects/orders-value/versions", headers=alice, json=new)).status_code == 200
    assert (await client.put("/mode/orders-value", headers=alice, json={"mode": "READONLY"})).status_code == 403
    assert (await client.delete("/subjects/orders-value/versions/2", headers=alice)).status_code == 403
    # ALTER_CONFIGS on the topic: the subject's config, mode and deletes; the global ones need ALTER on the cluster.
    console.allow("alice", Res.TOPIC, "orders", Op.ALTER_CONFIGS)
    assert (await client.delete("/subjects/orders-value/versions/2", headers=alice)).status_code == 200
    assert (await client.put("/mode", headers=alice, json={"mode": "READONLY"})).status_code == 403
    console.allow("alice", Res.CLUSTER, CLUSTER_NAME, Op.ALTER)
    assert (await client.put("/config", headers=alice, json={"compatibility": "FULL"})).status_code == 200
    # A subject not named after a topic is the cluster's (ALTER implies DESCRIBE, as in Kafka).
    assert (await client.get("/subjects/common.Money/versions", headers=alice)).status_code == 200


async def test_deleting_a_group_needs_delete_on_it_and_its_configs_describe_configs(console):
    console.ctx.services.catalog.create("a", 1)
    produce(console, "a", b"x")
    commit(console, "g", {"a": 1})
    console.ctx.services.share.groups.alter_configs("g", {"share.auto.offset.reset": (0, "earliest")}, False)
    console.allow("alice", Res.GROUP, "g", Op.DESCRIBE)
    await console.login("alice", "alice-secret")
    page = html.unescape((await console.get("/groups/g")).text)
    assert "not authorized to describe this group's configs" in page and "<code>earliest</code>" not in page
    console.allow("alice", Res.GROUP, "g", Op.DESCRIBE_CONFIGS)
    assert "<code>earliest</code>" in (await console.get("/groups/g")).text
    form = {"csrf": await console.csrf("/"), "group": "g", "confirm": "yes"}
    response = await console.post("/groups/delete", form)
    assert response.status_code == 403 and "delete the group" in html.unescape(response.text)
    assert console.ctx.services.groups.offsets.fetch("g", None)  # nothing deleted
    console.allow("alice", Res.GROUP, "g", Op.DELETE)
    assert (await console.post("/groups/delete", form)).status_code == 303
    assert console.ctx.services.groups.offsets.fetch("g", None) == {}
