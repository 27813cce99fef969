"""The config resource types are Kafka's (`ConfigResource.Type`), as kafka-python's admin names them."""

from __future__ import annotations

from kafka.admin import ConfigResourceType as KafkaPythonConfigResourceType

from trafka.domain.configs import ConfigResourceType


def test_config_resource_types_are_kafkas():
    assert {t.name: t.value for t in ConfigResourceType} == {t.name: t.value for t in KafkaPythonConfigResourceType}
