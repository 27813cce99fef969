"""The operator commands that are Kafka clients: `topic`, `group`, `produce`, `consume`, `cluster` and
`dump-log`, one module each, registered in `commands`, with the client helpers they share (`client`) and
how they print (`output`). They speak Kafka's protocol to any broker, trafka or Kafka, through their own small client on
trafka's schema codec (`wire`, `admin`, `consumer`; ADR 101), or read log files; like any other client
they import nothing of the broker's state (ADR 15)."""
