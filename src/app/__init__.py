"""trafka's composition root, configuration and command line: the only layer that knows every adapter.

Laid out by role: `wiring` (the composition root and what runs a wired broker), `config` (settings and
Kafka's keys), `cli` (the broker's own commands), `ops` (the operator commands, Kafka clients that
import nothing of the broker), and the embedding face with its test helpers (`embedded`)."""
