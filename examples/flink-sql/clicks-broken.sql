-- The same job with a watermark bound too tight for its data (1 s, not 10 s): events the
-- spec keeps are late here and vanish. windtunnel check catches it.
CREATE TABLE clicks (
  `user` STRING,
  amount BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'kafka');

SELECT window_start, window_end, `user`, COUNT(*) AS clicks, SUM(amount) AS spent
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, `user`;
