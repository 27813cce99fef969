"""The broker's configuration: the settings classes (`sections`), built by cattrs (`structure`) from defaults, a config file, environment variables and flags (`settings`), Kafka's own config
names mapped onto those settings (`kafka_keys`; `kafka_values`, Kafka's types and bounds; `kafka_names`,
with the list of Kafka's broker keys in `kafka_broker_keys.txt`), and the reader of Kafka's
`server.properties` format (`properties`)."""
