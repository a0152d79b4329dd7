-- Per-user clicks in 1-minute tumbling windows; events may be 10 s out of order.
CREATE TABLE clicks (
  `user` STRING,
  amount BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '10' SECOND
) WITH ('connector' = 'kafka');

SELECT window_start, window_end, `user`, COUNT(*) AS clicks, SUM(amount) AS spent
FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '1' MINUTE))
GROUP BY window_start, window_end, `user`;
