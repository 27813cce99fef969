# trafka: a Kafka-compatible broker. Two images from one file:
#   docker build -t trafka .                          the broker (the default, last stage)
#   docker build --target spark -t trafka-spark .     `trafka export` with the spark extra and a JRE
# docker-compose.yml builds both.

FROM python:3.11-slim AS base

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# A fixed non-root uid/gid, so a named volume's files keep one owner across rebuilds.
RUN groupadd --system --gid 10001 trafka \
 && useradd --system --uid 10001 --gid trafka --create-home --home-dir /home/trafka \
        --shell /usr/sbin/nologin trafka \
 && mkdir -p /var/lib/trafka /exports \
 && chown trafka:trafka /var/lib/trafka /exports

# Only what `pip install .` needs (see .dockerignore).
COPY pyproject.toml README.md /tmp/trafka-src/
COPY src /tmp/trafka-src/src


# `trafka export` writes Parquet through PySpark, which needs a JVM (default-jre-headless: Java 17
# on Debian bookworm, 21 on trixie; PySpark 4 runs on both).
FROM base AS spark
RUN apt-get update \
 && apt-get install -y --no-install-recommends default-jre-headless procps \
 && rm -rf /var/lib/apt/lists/*
RUN pip install "/tmp/trafka-src[spark]" && rm -rf /tmp/trafka-src
USER trafka
WORKDIR /home/trafka
CMD ["trafka", "export", "--help"]


FROM base AS broker
RUN pip install "/tmp/trafka-src[all]" && rm -rf /tmp/trafka-src
# The code attrs generates for trafka's classes, cached as pip compiles the bytecode (ADR 128): the image
# sets PYTHONDONTWRITEBYTECODE and runs as a user who cannot write site-packages, so no start would.
RUN python -m trafka._attrs_code
USER trafka
WORKDIR /home/trafka
VOLUME /var/lib/trafka
EXPOSE 9092 29092 8080
# Healthy = the broker answers a Kafka ApiVersions request with error code 0 (`trafka check`).
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
    CMD ["trafka", "check", "--host", "127.0.0.1", "--port", "9092", "--timeout", "3"]
# SIGTERM (docker stop) shuts down gracefully: requests answered, logs flushed, exit status 0.
STOPSIGNAL SIGTERM
# Configured as the apache/kafka image is: KAFKA_* variables (KAFKA_ADVERTISED_LISTENERS,
# KAFKA_NUM_PARTITIONS, KRaft ones accepted and ignored), so a compose service written for that image
# runs this one unchanged. In a container trafka listens on every interface; its log dir is the volume
# unless the service sets KAFKA_LOG_DIRS.
ENV TRAFKA_SERVER_HOST=0.0.0.0 \
    KAFKA_LOG_DIRS=/var/lib/trafka
CMD ["trafka", "serve"]
