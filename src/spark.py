"""Topics as Spark DataFrames: the `trafka` data source for PySpark (needs the `trafka[spark]` extra).

from trafka.spark import build_session
spark = build_session("local[*]")          # or trafka.spark.register(your_session)
df = spark.read.format("trafka").option("topic", "events").option("data_dir", "/tmp/trafka-logs").load()
"""

from trafka.app.wiring.spark import TrafkaSource, build_session, register

__all__ = ["TrafkaSource", "build_session", "register"]
