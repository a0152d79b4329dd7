-- Per-user running totals, restarting every 10 minutes, reported every minute; events may be
-- 10 s out of order.
CREATE TABLE clicks (
  `user` STRING,
  amount BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
) WITH ('connector' = 'kafka');

SELECT window_start, window_end, `user`, COUNT(*) AS clicks, SUM(amount) AS spent
FROM TABLE(CUMULATE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '10' MINUTE))
GROUP BY window_start, window_end, `user`;
