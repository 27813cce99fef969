"""The console of a broker with SASL and an authorizer, in headless Chromium: a user logs in, sees the
topic an ACL lets them describe and not the other, is refused the other's page, and logs out."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from selenium.webdriver.common.by import By

from tests.integration.clients import TIMEOUT, unique
from tests.integration.secured import PLAIN_USERS, sasl_config, secured_broker

from .test_console import follow

AUTHORIZER = (
    'authorizer_class_name = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"\nsuper_users = "User:alice"'
)


def sasl(user: str) -> dict:
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": user,
        "sasl.password": PLAIN_USERS[user],
        "log_level": 0,
    }


@pytest.fixture(scope="module")
def secured_console(tmp_path_factory):
    config = sasl_config("SASL_PLAINTEXT://127.0.0.1:0", security=AUTHORIZER)
    with secured_broker(
        tmp_path_factory.mktemp("console-login"), config, ("--memory", "--http-port", "0")
    ) as listeners:
        yield listeners["SASL_PLAINTEXT"]


def test_a_user_sees_the_topic_an_acl_allows_and_is_refused_the_other(secured_console, browser, screenshot):
    allowed, refused = unique("bobs"), unique("secret")
    admin = AdminClient({"bootstrap.servers": secured_console["bootstrap"], **sasl("alice")})
    for name in (allowed, refused):
        assert admin.create_topics([NewTopic(name, 1, 1)])[name].result(TIMEOUT) is None
    binding = AclBinding(
        ResourceType.TOPIC,
        allowed,
        ResourcePatternType.LITERAL,
        "User:bob",
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )
    assert admin.create_acls([binding])[binding].result(TIMEOUT) is None
    base = secured_console["process"].http_url

    browser.get(base + "/")
    assert browser.current_url.startswith(base + "/login?next=")
    browser.find_element(By.ID, "username").send_keys("bob")
    browser.find_element(By.ID, "password").send_keys("wrong")
    follow(browser, "log-in")
    assert browser.find_element(By.ID, "login-error").text == "Invalid username or password."
    browser.find_element(By.ID, "password").send_keys(PLAIN_USERS["bob"])
    follow(browser, "log-in")
    assert browser.current_url == base + "/"
    assert browser.find_element(By.ID, "user").text == "bob"
    shown = {row.get_attribute("data-topic") for row in browser.find_elements(By.CSS_SELECTOR, "#topics tbody tr")}
    assert shown == {allowed}
    screenshot("topics-as-bob")

    browser.get(f"{base}/topics/{refused}")
    assert browser.find_element(By.TAG_NAME, "h1").text == "Not authorized"
    assert f"User:bob is not authorized to describe the topic '{refused}'" in browser.page_source.replace("&#39;", "'")
    browser.get(f"{base}/topics/{allowed}")
    assert browser.find_element(By.ID, "topic-name").text == allowed

    browser.get(f"{base}/broker")  # alice's super-user ACL is not bob's
    assert browser.find_element(By.TAG_NAME, "h1").text == "Not authorized"

    follow(browser, "log-out")
    assert browser.current_url == base + "/login"
    browser.get(f"{base}/broker")
    assert browser.current_url.startswith(base + "/login?next=")
    browser.find_element(By.ID, "username").send_keys("alice")  # the super user
    browser.find_element(By.ID, "password").send_keys(PLAIN_USERS["alice"])
    follow(browser, "log-in")
    assert browser.current_url == base + "/broker"
    assert f"SASL_PLAINTEXT://127.0.0.1:{secured_console['port']}" in browser.page_source
    assert PLAIN_USERS["bob"] not in browser.page_source  # the JAAS config is (sensitive)
