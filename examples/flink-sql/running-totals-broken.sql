-- The same job written with HOP instead of CUMULATE: 10-minute windows every minute are
-- "a number every minute" too, but each covers the last 10 minutes instead of the cycle so
-- far (their starts move). windtunnel check catches it.
CREATE TABLE clicks (
  `user` STRING,
  amount BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
) WITH ('connector' = 'kafka');

SELECT window_start, window_end, `user`, COUNT(*) AS clicks, SUM(amount) AS spent
FROM TABLE(HOP(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '10' MINUTE))
GROUP BY window_start, window_end, `user`;
