"""Stock Spark: a spec compiled to withWatermark + window()/session_window() (the spark profile), its stages and its runs as jobs."""
