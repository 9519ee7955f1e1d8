"""Run a two-worker ``distributed.LocalCluster`` until stdin closes (a test's own process).

Prints the scheduler's address, then, when stdin closes, how many tasks each worker ran as one
JSON object. In a process of its own: the cluster's threads stay out of the test process.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    from distributed import Client, LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        print(cluster.scheduler_address, flush=True)
        sys.stdin.read()
        with Client(cluster.scheduler_address) as client:
            done = client.run(lambda dask_worker: dask_worker.state.executed_count)
        print(json.dumps(done), flush=True)


if __name__ == "__main__":
    main()
