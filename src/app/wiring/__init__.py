"""The composition root and what runs a wired broker: `bootstrap` builds the broker's context from the
settings and every adapter (the only place that knows them all), `runtime` runs and stops it, and
`http`, `security`, `tls` and `spark` turn the settings into the HTTP listener (health, metrics, console,
Schema Registry), SASL and ACLs, TLS contexts, and the Spark data source's log-dir reader."""
