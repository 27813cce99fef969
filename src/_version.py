"""trafka's release, read by packaging (pyproject's dynamic version) and re-exported as `trafka.__version__`."""

__version__ = "0.2.0"
