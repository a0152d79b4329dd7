"""windtunnel.conformance."""
