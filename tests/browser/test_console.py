"""The console in headless Chromium against a broker fed by confluent-kafka."""

from __future__ import annotations

import json

from confluent_kafka import Consumer, TopicPartition
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.integration.clients import TIMEOUT, confluent_admin, create_topic, produce_batches, unique


def follow(browser, element_id: str) -> None:
    """Click a link or submit button and wait until the next page has replaced this one."""
    page = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(By.ID, element_id).click()
    WebDriverWait(browser, TIMEOUT).until(lambda _: _replaced(page))


def _replaced(element) -> bool:
    """expected_conditions.staleness_of, also when Chromium reports the old page's node as detached
    ("Node with given id does not belong to the document") instead of as stale."""
    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as error:
        if "does not belong to the document" in str(error):
            return True
        raise
    return False


def _records(browser) -> list[tuple[int, str, str]]:
    rows = browser.find_elements(By.CSS_SELECTOR, "#records tr.record")
    return [
        (
            int(row.get_attribute("data-offset")),
            row.find_element(By.CSS_SELECTOR, "td.key").text,
            row.find_element(By.CSS_SELECTOR, "td.value").text,
        )
        for row in rows
        if row.is_displayed()
    ]


def test_the_topic_page_shows_produced_records_with_key_and_json_value(console_broker, browser, screenshot):
    topic = unique("orders")
    create_topic(console_broker.bootstrap, topic, 2)
    sent = [
        (0, f"customer-{i}".encode(), json.dumps({"order": i, "items": ["book"] * (i % 3)}).encode()) for i in range(12)
    ]
    produce_batches(console_broker.bootstrap, topic, [sent[:5], sent[5:]])
    browser.get(f"{console_broker.http_url}/topics/{topic}")
    assert browser.find_element(By.ID, "topic-name").text == topic
    shown = _records(browser)
    assert [offset for offset, _, _ in shown] == list(range(12))
    for (_offset, key, value), (_, sent_key, sent_value) in zip(shown, sent):
        assert key == sent_key.decode()
        assert json.loads(value) == json.loads(sent_value)
    pretty = browser.find_element(By.CSS_SELECTOR, "#records tr.record td.value").text
    assert pretty.startswith("{\n")  # rendered as pretty JSON
    screenshot("topic")

    Select(browser.find_element(By.ID, "render")).select_by_value("hex")
    assert _records(browser)[0][2] == sent[0][2].hex(" ")
    Select(browser.find_element(By.ID, "render")).select_by_value("text")
    assert _records(browser)[0][2] == sent[0][2].decode()

    search = browser.find_element(By.ID, "search")
    search.send_keys("customer-7")
    assert [offset for offset, _, _ in _records(browser)] == [7]

    browser.get(f"{console_broker.http_url}/topics/{topic}?partition=0&mode=offset&position=4&limit=3")
    assert [offset for offset, _, _ in _records(browser)] == [4, 5, 6]
    follow(browser, "next-page")
    assert [offset for offset, _, _ in _records(browser)] == [7, 8, 9]
    browser.get(f"{console_broker.http_url}/topics/{topic}?partition=1")
    assert _records(browser) == []


def test_a_group_with_lag_shows_the_right_lag(console_broker, browser, screenshot):
    topic, group = unique("events"), unique("billing")
    create_topic(console_broker.bootstrap, topic, 2)
    produce_batches(console_broker.bootstrap, topic, [[(0, None, b"a")] * 10, [(1, None, b"b")] * 7])
    consumer = Consumer(
        {
            "bootstrap.servers": console_broker.bootstrap,
            "group.id": group,
            "log_level": 0,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.subscribe([topic])
        consumed = []
        while len(consumed) < 4:
            consumed += [m for m in consumer.consume(4 - len(consumed), timeout=TIMEOUT) if m.partition() == 0]
        consumer.commit(offsets=[TopicPartition(topic, 0, 4), TopicPartition(topic, 1, 7)], asynchronous=False)
        browser.get(f"{console_broker.http_url}/groups/{group}")
        assert browser.find_element(By.ID, "group-state").text == "STABLE"
        members = browser.find_elements(By.CSS_SELECTOR, "#members tbody tr")
        assert len(members) == 1 and f"{topic}-0, {topic}-1" in members[0].text
    finally:
        consumer.close()

    browser.get(f"{console_broker.http_url}/groups/{group}")
    assert browser.find_element(By.ID, "group-state").text == "EMPTY"
    lag = {
        row.get_attribute("data-partition"): int(row.find_element(By.CSS_SELECTOR, "td.lag").text)
        for row in browser.find_elements(By.CSS_SELECTOR, "#lag tbody tr")
    }
    assert lag == {f"{topic}-0": 6, f"{topic}-1": 0}
    assert browser.find_element(By.ID, "total-lag").text == "6"
    screenshot("group")

    follow(browser, "preview-reset")  # earliest
    plan = [row.text for row in browser.find_elements(By.CSS_SELECTOR, "#reset-plan tbody tr")]
    assert plan == [f"{topic}-0 4 0", f"{topic}-1 7 0"]
    follow(browser, "confirm-reset")
    assert browser.find_element(By.ID, "total-lag").text == "17"

    browser.get(f"{console_broker.http_url}/groups")
    row = browser.find_element(By.CSS_SELECTOR, f'#groups tr[data-group="{group}"]')
    assert row.find_element(By.CSS_SELECTOR, "td.total-lag").text == "17"
    screenshot("groups")


def test_create_sort_and_delete_a_topic_from_the_page(console_broker, browser, screenshot):
    topic = unique("made-in-browser")
    browser.get(console_broker.http_url + "/")
    browser.find_element(By.ID, "new-topic-name").send_keys(topic)
    partitions = browser.find_element(By.ID, "new-topic-partitions")
    partitions.clear()
    partitions.send_keys("3")
    follow(browser, "create-topic-button")
    assert browser.find_element(By.ID, "topic-name").text == topic
    admin = confluent_admin(console_broker.bootstrap)
    assert len(admin.list_topics(topic, timeout=TIMEOUT).topics[topic].partitions) == 3

    browser.get(console_broker.http_url + "/")
    browser.find_element(By.ID, "new-topic-name").send_keys(topic)
    follow(browser, "create-topic-button")
    assert "already exists" in browser.find_element(By.ID, "error").text

    browser.get(console_broker.http_url + "/")
    heading = browser.find_element(By.XPATH, '//table[@id="topics"]//th[text()="Partitions"]')
    heading.click()
    heading.click()  # descending: the 3-partition topic comes before the 2-partition ones
    counts = [int(td.text) for td in browser.find_elements(By.CSS_SELECTOR, "#topics tbody tr td:nth-child(2)")]
    assert counts == sorted(counts, reverse=True) and counts[0] == 3
    assert heading.get_attribute("aria-sort") == "descending"
    screenshot("topics")

    browser.get(f"{console_broker.http_url}/topics/{topic}")
    follow(browser, "delete-topic")
    follow(browser, "cancel-delete")
    assert browser.find_element(By.ID, "topic-name").text == topic
    follow(browser, "delete-topic")
    follow(browser, "confirm-delete")
    assert browser.find_elements(By.CSS_SELECTOR, f'#topics tr[data-topic="{topic}"]') == []
    assert topic not in admin.list_topics(timeout=TIMEOUT).topics


def test_the_broker_page(console_broker, browser, screenshot):
    import trafka

    browser.get(console_broker.http_url + "/broker")
    assert browser.find_element(By.ID, "version").text == f"trafka {trafka.__version__}"
    config = browser.find_element(By.ID, "config").text
    assert "http.port 0 configured" in config and "storage.kind memory configured" in config
    assert f"PLAINTEXT://127.0.0.1:{console_broker.port}" in browser.page_source
    screenshot("broker")


def _group_row_lag(browser, table: str) -> dict[str, int]:
    return {
        row.get_attribute("data-partition"): int(row.find_element(By.CSS_SELECTOR, "td.lag").text)
        for row in browser.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr")
    }


def _open_when(browser, url: str, state: str) -> None:
    """Open the group's page once the group is in `state` (a member's leave is asynchronous)."""

    def shown(_) -> bool:
        browser.get(url)
        return browser.find_element(By.ID, "group-state").text == state

    WebDriverWait(browser, TIMEOUT, poll_frequency=0.2).until(shown)


def _delete_group(browser, console_broker, group: str) -> None:
    browser.get(f"{console_broker.http_url}/groups/{group}")
    follow(browser, "delete-group")
    follow(browser, "cancel-delete-group")
    assert browser.find_element(By.ID, "group-id").text == group
    follow(browser, "delete-group")
    assert group in browser.find_element(By.ID, "delete-question").text
    follow(browser, "confirm-delete-group")
    assert browser.find_elements(By.CSS_SELECTOR, f'#groups tr[data-group="{group}"]') == []


def test_a_kip848_consumer_group_is_shown_reset_and_deleted(console_broker, browser, screenshot):
    topic, group = unique("kip848"), unique("cg")
    create_topic(console_broker.bootstrap, topic, 2)
    produce_batches(console_broker.bootstrap, topic, [[(0, None, b"a")] * 6, [(1, None, b"b")] * 3])
    consumer = Consumer(
        {
            "bootstrap.servers": console_broker.bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "log_level": 0,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.subscribe([topic])
        consumed = []
        while len(consumed) < 9:
            consumed += consumer.consume(9 - len(consumed), timeout=TIMEOUT)
        consumer.commit(offsets=[TopicPartition(topic, 0, 2), TopicPartition(topic, 1, 3)], asynchronous=False)
        browser.get(f"{console_broker.http_url}/groups/{group}")
        assert browser.find_element(By.ID, "group-state").text == "STABLE"
        assert "consumer uniform" in browser.find_element(By.TAG_NAME, "main").text
        members = browser.find_elements(By.CSS_SELECTOR, "#members tbody tr")
        assert len(members) == 1 and f"{topic}-0, {topic}-1" in members[0].text
        assert browser.find_elements(By.ID, "preview-reset") == []  # not while it has a member
        assert browser.find_elements(By.ID, "delete-group") == []
    finally:
        consumer.close()

    _open_when(browser, f"{console_broker.http_url}/groups/{group}", "EMPTY")
    assert _group_row_lag(browser, "lag") == {f"{topic}-0": 4, f"{topic}-1": 0}
    follow(browser, "preview-reset")  # earliest
    plan = [row.text for row in browser.find_elements(By.CSS_SELECTOR, "#reset-plan tbody tr")]
    assert plan == [f"{topic}-0 2 0", f"{topic}-1 3 0"]
    follow(browser, "confirm-reset")
    assert browser.find_element(By.ID, "total-lag").text == "9"
    _delete_group(browser, console_broker, group)
    listed = confluent_admin(console_broker.bootstrap).list_consumer_groups().result(timeout=TIMEOUT)
    assert group not in {g.group_id for g in listed.valid}


def test_a_share_group_shows_its_share_partitions_and_is_reset_and_deleted(console_broker, browser, screenshot):
    from confluent_kafka import AcknowledgeType, ShareConsumer
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    topic, group = unique("jobs"), unique("sg")
    create_topic(console_broker.bootstrap, topic, 1)
    produce_batches(console_broker.bootstrap, topic, [[(0, None, b"job-%d" % i) for i in range(8)]])
    admin = confluent_admin(console_broker.bootstrap)
    earliest = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[earliest])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=TIMEOUT)
    consumer = ShareConsumer(
        {
            "bootstrap.servers": console_broker.bootstrap,
            "group.id": group,
            "log_level": 0,
            "share.acknowledgement.mode": "explicit",
            "max.poll.records": 4,
        }
    )
    try:
        consumer.subscribe([topic])
        got = []
        while len(got) < 4:
            for m in consumer.poll(0.5) or []:
                if m.error() is None and len(got) < 4:
                    got.append(m.offset())
                    kind = AcknowledgeType.REJECT if m.offset() == 1 else AcknowledgeType.ACCEPT
                    consumer.acknowledge(m, kind)
        consumer.commit_sync()
        browser.get(f"{console_broker.http_url}/groups/{group}")
        assert browser.find_element(By.ID, "group-state").text == "STABLE"
        assert "share simple" in browser.find_element(By.TAG_NAME, "main").text
        assert len(browser.find_elements(By.CSS_SELECTOR, "#members tbody tr")) == 1
        (row,) = browser.find_elements(By.CSS_SELECTOR, "#share-partitions tbody tr")
        cells = {
            name: int(row.find_element(By.CSS_SELECTOR, f"td.{name}").text) for name in ("start-offset", "archived")
        }
        assert cells == {"start-offset": 4, "archived": 1}  # 0-3 done: 1 rejected (archived), the rest accepted
        assert _group_row_lag(browser, "share-partitions") == {f"{topic}-0": 4}
        override = browser.find_element(By.CSS_SELECTOR, 'tr.override[data-config="share.auto.offset.reset"]')
        assert "earliest" in override.text and "override" in override.text
        screenshot("share-group")
    finally:
        consumer.close()

    browser.get(f"{console_broker.http_url}/groups")
    row = browser.find_element(By.CSS_SELECTOR, f'#groups tr[data-group="{group}"]')
    assert "share" in row.text
    _open_when(browser, f"{console_broker.http_url}/groups/{group}", "EMPTY")
    Select(browser.find_element(By.ID, "reset-target")).select_by_value("latest")
    follow(browser, "preview-reset")
    plan = [row.text for row in browser.find_elements(By.CSS_SELECTOR, "#reset-plan tbody tr")]
    assert plan[0].split()[-1] == "8"
    follow(browser, "confirm-reset")
    assert browser.find_element(By.CSS_SELECTOR, "#share-partitions td.start-offset").text == "8"
    assert browser.find_element(By.ID, "total-lag").text == "0"
    _delete_group(browser, console_broker, group)
