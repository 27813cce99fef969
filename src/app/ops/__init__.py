"""The operator commands that are Kafka clients: `topic`, `group`, `produce`, `consume`, `cluster` and
`dump-log`, one module each, registered in `commands`, with the client helpers they share (`client`) and
how they print (`output`). They speak Kafka's protocol through kafka-python to any broker, trafka or
Kafka, or read log files; like any other client they import nothing of the broker (ADR 15)."""
