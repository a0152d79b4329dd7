"""windtunnel.cli."""
