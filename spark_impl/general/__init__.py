"""The general operator: the oracle's own step per key bucket in transformWithStateInPandas, for queries the production path does not take."""
