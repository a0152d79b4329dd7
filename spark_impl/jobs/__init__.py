"""Windowed jobs: sources (files, Kafka, DataFrames), sinks, running a spec as a streaming query and what it reports."""
