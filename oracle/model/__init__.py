"""The stream model and its values: errors, time parsing, field paths, stream items,
results, window specs, rules and aggregations. Imports nothing else of the oracle.
"""
