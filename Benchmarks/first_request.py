"""The first request for a derivative not yet made (issue 39, item 5): how much `derive serve`
adds to the job itself. Run by Benchmarks/first-request.sh, which starts the server.

For each of ROUNDS transformations never derived before (`c_limit,w_<1200+i>`, so nothing is
reused), one signed delivery URL of the uploaded photo is timed from the client; the job's own
time is read from its report in the queue's archive (`timings.total`: fetch, decode, apply,
encode, store). What `derive serve` adds is the difference: parsing the URL, queueing, the
worker's claim, recording the derivative and serving the bytes. Then CONCURRENT requests at
once for one more new transformation: how many jobs they made.

    python3 first_request.py PORT DATABASE PHOTO ROUNDS CONCURRENT
"""
import json
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

import cloudinary
import cloudinary.uploader
import cloudinary.utils

port, database, photo, rounds, concurrent = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
cloudinary.config(cloud_name="bench", api_key="bench-key", api_secret="bench-secret-0123456789", secure=False,
                  cname="127.0.0.1:" + port, upload_prefix="http://127.0.0.1:" + port)
cloudinary.uploader.upload(photo, public_id="first/photo", overwrite=True)


def get(url):
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=600) as response:
        response.read()
        assert response.status == 200, response.status
    return (time.perf_counter() - started) * 1000


def reports():
    """The archived jobs' reports, oldest first: (dedupe key, timings.total in ms)."""
    sql = "SELECT dedupe_key, result FROM {}job_archive ORDER BY id".format("derive." if database.startswith("postgres") else "")
    if database.startswith("postgres"):
        out = subprocess.run(["psql", database, "-At", "-F", "\t", "-c", sql], capture_output=True, text=True, check=True).stdout
        rows = [line.split("\t", 1) for line in out.splitlines() if line]
    else:
        import sqlite3
        rows = sqlite3.connect(database[len("sqlite:"):]).execute(sql).fetchall()
    return [(key, json.loads(result)["timings"]["total"]) for key, result in rows if result]


def url(width):
    return cloudinary.utils.cloudinary_url("first/photo", format="jpg", transformation=[{"crop": "limit", "width": width}], sign_url=True)[0]


get(url(1100))  # warms the server's and the worker's first use
latencies = [get(url(1200 + i)) for i in range(rounds)]
jobs = reports()[-rounds:]
totals = [total for _, total in jobs]
added = [latency - total for latency, total in zip(latencies, totals)]

# CONCURRENT first requests for one new derivative at once.
before = len(reports())
shared = url(1199)
threads = [threading.Thread(target=get, args=(shared,)) for _ in range(concurrent)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
made = len(reports()) - before

print("rounds {}: first request median {:.0f} ms (p90 {:.0f}); the job's own time (its report) median {:.0f} ms; "
      "derive serve adds median {:.0f} ms (min {:.0f}, max {:.0f})".format(
          rounds, statistics.median(latencies), sorted(latencies)[int(0.9 * (len(latencies) - 1))], statistics.median(totals),
          statistics.median(added), min(added), max(added)))
print("{} concurrent first requests for one derivative made {} job(s)".format(concurrent, made))
