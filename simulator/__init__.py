"""windtunnel.simulator."""
