"""Harnesses: scenarios run on Spark for ``windtunnel replay``, ``windtunnel check`` and the
tests, each through the same streaming path users get."""
