"""The log cleaner's runtime (ADRs 36, 54): `runtime` runs Kafka's LogCleaner threads as Trio tasks
beside the event loop, cleaning in worker threads or, for filesystem logs, in a cleaner process of
its own (`process`, started as `python -m trafka.app.cleaner.process`); `throttle` is Kafka's
Throttler both share. The rules themselves are the domain's (`trafka.domain.compaction`)."""
