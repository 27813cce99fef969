"""The shop's own `app` package: the name trafka no longer takes from anyone."""
