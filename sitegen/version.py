"""The version of sitegen, in the /api/version body, the build state and `sitegen --version`."""

__version__ = "0.1.0"
