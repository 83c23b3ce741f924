#!/usr/bin/env python3
"""Times the dashboard's pages against a running `derive dashboard` (Benchmarks/dashboard.sh
starts it on a seeded PostgreSQL): each page asked REPEATS times after two warm-up requests,
one at a time, over a kept-alive connection; prints one line per page (median, 95th percentile
and slowest, in milliseconds, and the bytes of the answer) and exits 1 if any page's 95th
percentile is over the budget or any answer is not 200.

usage: dashboard_pages.py URL REPEATS BUDGET_MS PATH...
"""
import http.client
import statistics
import sys
import time
from urllib.parse import urlparse


def main():
    url, repeats, budget = urlparse(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    paths = sys.argv[4:]
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    over = []
    print(f"{'page':<58} {'median':>8} {'p95':>8} {'max':>8} {'bytes':>9}")
    for path in paths:
        times = []
        size = 0
        for attempt in range(repeats + 2):
            started = time.perf_counter()
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            elapsed = (time.perf_counter() - started) * 1000
            if response.status != 200:
                print(f"{path}: HTTP {response.status}: {body[:200]!r}", file=sys.stderr)
                sys.exit(1)
            if attempt >= 2:
                times.append(elapsed)
            size = len(body)
        times.sort()
        p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
        print(f"{path[:58]:<58} {statistics.median(times):8.1f} {p95:8.1f} {times[-1]:8.1f} {size:9d}")
        if p95 > budget:
            over.append(path)
    if over:
        print(f"over the {budget:.0f} ms budget (95th percentile): {', '.join(over)}")
        sys.exit(1)
    print(f"every page's 95th percentile is within {budget:.0f} ms")


if __name__ == "__main__":
    main()
