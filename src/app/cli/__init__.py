"""The broker's own commands: the `trafka` entry point and `serve` (`main`), `check` (is a broker up),
`user` (SCRAM credentials written into a log dir), `export` (a topic to files with Spark) and `config`
(the settings a broker would run with). They may import the whole broker; the operator commands that are
only Kafka clients live beside them in `trafka.app.ops` and are registered by `main`."""
