"""Client libraries' own integration suites against Apache Kafka and trafka: see __main__.py (issue 41)."""
