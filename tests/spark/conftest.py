"""Spark suite fixtures: one local SparkSession and one real trafka broker (filesystem store) for the
whole session, and a topic filled with every kind of record the sources must reproduce.

PySpark (the `spark` extra, which the README's test command installs) and a Java runtime are
required: without them the suite fails rather than skips.
"""

from __future__ import annotations

import os
import shutil

import pyspark  # noqa: F401  (the spark extra must be installed)
import pytest

if not (shutil.which("java") or os.environ.get("JAVA_HOME")):
    raise RuntimeError("the Spark tests need a Java runtime (java on PATH or JAVA_HOME); PySpark runs on it")

from tests.integration.broker import BrokerProcess

from .records import Produced, produce_everything


@pytest.fixture(scope="session")
def spark():
    from trafka.spark import build_session  # the public name the README shows

    session = build_session("local[2]", "trafka-tests")
    session.conf.set("spark.sql.shuffle.partitions", "2")
    yield session
    session.stop()


class RunningBroker:
    def __init__(self, process: BrokerProcess, data_dir: str) -> None:
        self.process = process
        self.data_dir = data_dir

    @property
    def bootstrap(self) -> str:
        return self.process.bootstrap

    def source(self, kind: str) -> dict[str, str]:
        """The option that selects a source: `data_dir` or `bootstrap`."""
        return {"data_dir": self.data_dir} if kind == "data_dir" else {"bootstrap": self.bootstrap}


@pytest.fixture(scope="session")
def broker(tmp_path_factory):
    data_dir = str(tmp_path_factory.mktemp("spark-broker") / "logdir")
    process = BrokerProcess(["--data-dir", data_dir]).start()
    yield RunningBroker(process, data_dir)
    assert process.stop() == 0, process.log()


@pytest.fixture(scope="session")
def produced(broker) -> Produced:
    """The `records` topic (3 partitions, small segments) holding keys, headers and every codec."""
    return produce_everything(broker.bootstrap)


@pytest.fixture(params=["data_dir", "bootstrap"])
def source_kind(request) -> str:
    return request.param
