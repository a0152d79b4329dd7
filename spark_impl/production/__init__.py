"""The production operator: the default profile's windows, exact per event, partitioned.

Per micro-batch (a ``foreachBatch`` function): the map side packs each input partition's
events into one compact blob per key slice, a shuffle brings each slice's blobs to one task,
and that task runs windtunnel's Java engine over the slice's events in stream order, with
the stream's wall clock merged from every partition's arrivals, and writes the slice's new
state version on the checkpoint's own file system (Hadoop's FileSystem API). The driver
writes the outputs to the sink and commits the version.

- :mod:`~windtunnel.spark_impl.production.plan`: which path a query takes and why (the production
  operator or the general one), and the plan the Java side reads;
- :mod:`~windtunnel.spark_impl.production.run`: running a job on the production operator;
- :mod:`~windtunnel.spark_impl.production.sink`: where its output rows go.
"""
