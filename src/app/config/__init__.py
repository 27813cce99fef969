"""The broker's configuration: the settings classes and the cattrs converter that builds them from
defaults, a config file, environment variables and flags (`settings`), Kafka's own config names mapped
onto those settings (`kafka_keys`, with the list of Kafka's broker keys in `kafka_broker_keys.txt`), and
the reader of Kafka's `server.properties` format (`properties`)."""
