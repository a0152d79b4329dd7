"""windtunnel.spark_impl."""
