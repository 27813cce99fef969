"""trafka's composition root, configuration and command line: the only layer that knows every adapter."""
