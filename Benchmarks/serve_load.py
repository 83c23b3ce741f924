"""The `derive serve` benchmark's client (Benchmarks/serve.sh runs it).

    python3 serve_load.py uploads PORT CLOUD KEY SECRET IMAGE COUNT CONCURRENCY
    python3 serve_load.py get URL COUNT CONCURRENCY

`uploads`: COUNT signed multipart uploads of distinct images (the fixture with one pixel
changed each) through the real Cloudinary SDK (pinned), each with two eager outputs, CONCURRENCY at once; each waits for its outputs (no eager_async), so the
rate is of uploads whose derivatives exist. `get`: COUNT GETs of one URL over kept-alive
connections, CONCURRENCY at once. Prints one JSON line: requests per second and latency
percentiles in milliseconds.
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse


def percentiles(latencies):
    ordered = sorted(latencies)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000
    return {"p50": round(pick(0.50), 2), "p99": round(pick(0.99), 2), "max": round(ordered[-1] * 1000, 2)}


def run(count, concurrency, one):
    latencies, failures, lock = [], [], threading.Lock()
    counter = iter(range(count))

    def worker():
        state = {}
        while True:
            with lock:
                index = next(counter, None)
            if index is None:
                return
            started = time.perf_counter()
            try:
                one(state, index)
                elapsed = time.perf_counter() - started
                with lock:
                    latencies.append(elapsed)
            except Exception as error:
                with lock:
                    failures.append(repr(error))

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    result = {"requests": len(latencies), "failures": len(failures), "seconds": round(seconds, 3),
              "per_second": round(len(latencies) / seconds, 1)}
    if latencies:
        result.update(percentiles(latencies))
    if failures:
        result["first_failure"] = failures[0]
    return result


def uploads(port, cloud, key, secret, image, count, concurrency):
    import cloudinary
    import cloudinary.uploader
    cloudinary.config(cloud_name=cloud, api_key=key, api_secret=secret, secure=False, upload_prefix="http://127.0.0.1:%s" % port)

    # Every upload a different image (one pixel changed, encoded again before the clock starts):
    # the same bytes twice would let the worker reuse the recorded outputs without decoding.
    import io
    from PIL import Image
    base = Image.open(image).convert("RGB")
    payloads = []
    for index in range(count):
        copy = base.copy()
        copy.putpixel((index % copy.width, (index // copy.width) % copy.height), (index % 256, 255 - index % 256, 7))
        buffer = io.BytesIO()
        copy.save(buffer, "JPEG", quality=90)
        payloads.append(buffer.getvalue())

    def one(state, index):
        result = cloudinary.uploader.upload(io.BytesIO(payloads[index]), public_id="bench/%d" % index,
                                            eager="c_fill,w_320,h_320/webp|c_scale,w_1024")
        if len(result.get("eager", [])) != 2 or "width" not in result["eager"][0]:
            raise RuntimeError("eager outputs missing: %r" % result)

    return run(count, concurrency, one)


def gets(url, count, concurrency):
    parsed = urllib.parse.urlsplit(url)
    path = parsed.path + ("?" + parsed.query if parsed.query else "")

    def one(state, index):
        if "connection" not in state:
            state["connection"] = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        connection = state["connection"]
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200 or not body:
            raise RuntimeError("HTTP %d" % response.status)

    return run(count, concurrency, one)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "uploads":
        port, cloud, key, secret, image, count, concurrency = sys.argv[2:9]
        print(json.dumps(uploads(port, cloud, key, secret, image, int(count), int(concurrency))))
    else:
        url, count, concurrency = sys.argv[2:5]
        print(json.dumps(gets(url, int(count), int(concurrency))))
