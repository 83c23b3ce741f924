"""A real HTTP origin for Derive's fetch tests, on loopback only. It serves the shared fixtures
and misbehaves on request, and it records every request so tests can count what arrived.

    python3 Tests/Servers/origin.py --port 8080 --fixtures ../shared/fixtures
"""
import argparse, hashlib, json, os, socket, struct, threading, time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

LOCK = threading.Lock()
REQUESTS = []          # {"method", "path", "headers"}
COUNTERS = {}          # per-path counters for /flaky and /s3-flaky
MUTABLE = {}           # /mutable/<name> -> the fixture it serves now (set with PUT ?fixture=...)


class Origin(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        with LOCK:
            REQUESTS.append({"method": self.command, "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}})

    def send(self, status, body=b"", headers=None, length=True):
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if length:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def fixture(self, name, query, extra=None):
        path = os.path.realpath(os.path.join(self.server.fixtures, name))
        if not path.startswith(os.path.realpath(self.server.fixtures)) or not os.path.isfile(path):
            return self.send(404, b"no such fixture")
        body = open(path, "rb").read()
        etag = '"' + hashlib.sha1(body).hexdigest() + '"'
        headers = {"ETag": etag, "Last-Modified": formatdate(1700000000, usegmt=True),
                   "Content-Type": query.get("type", ["image/jpeg"])[0]}
        if "cc" in query:
            headers["Cache-Control"] = query["cc"][0]
        headers.update(extra or {})
        if self.headers.get("If-None-Match") == etag:
            return self.send(304, b"", {"ETag": etag, "Cache-Control": headers.get("Cache-Control", "max-age=0")})
        self.send(200, body, headers)

    def do_GET(self):
        self.record()
        url = urlparse(self.path)
        query = parse_qs(url.query)
        parts = url.path.strip("/").split("/")
        route = parts[0]
        if route == "fixture":
            return self.fixture("/".join(parts[1:]), query)
        if route == "redirect":
            return self.send(int(query.get("status", ["302"])[0]), b"", {"Location": query["to"][0]})
        if route == "chain":
            n = int(parts[1])
            if n == 0:
                return self.fixture("photos/grace_hopper_noexif.jpg", query)
            return self.send(302, b"", {"Location": f"/chain/{n - 1}"})
        if route == "drip":
            total, delay = int(query["bytes"][0]), float(query["delay"][0])
            body = open(os.path.join(self.server.fixtures, "photos/grace_hopper_noexif.jpg"), "rb").read()[:total]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            for i in range(0, len(body), 4096):
                self.wfile.write(body[i:i + 4096])
                self.wfile.flush()
                time.sleep(delay)
            return
        if route == "stall":
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"\xff\xd8\xff" + b"\0" * 97)
            self.wfile.flush()
            time.sleep(float(query.get("seconds", ["30"])[0]))
            return
        if route == "big":
            total = int(query["bytes"][0])
            declared = query.get("declare", ["1"])[0] == "1"
            self.send_response(200)
            if declared:
                self.send_header("Content-Length", str(total))
            else:
                self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"\xff\xd8\xff" + b"\0" * 65533
            sent = 0
            try:
                while sent < total:
                    piece = chunk[:min(len(chunk), total - sent)]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if not declared else piece)
                    sent += len(piece)
                if not declared:
                    self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            with LOCK:
                COUNTERS["big-sent"] = sent
            return
        if route == "status":
            headers = {"Retry-After": query["retry_after"][0]} if "retry_after" in query else {}
            return self.send(int(parts[1]), b"nope", headers)
        if route == "flaky":
            key = url.path
            with LOCK:
                COUNTERS[key] = COUNTERS.get(key, 0) + 1
                count = COUNTERS[key]
            if count <= int(query.get("fail", ["1"])[0]):
                headers = {"Retry-After": query["retry_after"][0]} if "retry_after" in query else {}
                return self.send(int(query.get("status", ["503"])[0]), b"busy", headers)
            return self.fixture("photos/grace_hopper_noexif.jpg", query)
        if route == "mutable":
            with LOCK:
                current = MUTABLE.get("/".join(parts[1:]))
            if current is None:
                return self.send(404, b"nothing here yet")
            return self.fixture(current, query)
        if route == "moody":
            # An origin having a bad day, per URL: the first request stalls mid-body for
            # ?stall= seconds, the second is reset mid-body, and every later one is served
            # whole but with a different photograph each time (a source changing between
            # attempts). With ?calm=1 every request is served whole, each with a different photograph; ?delay= waits first.
            with LOCK:
                COUNTERS[self.path] = COUNTERS.get(self.path, 0) + 1
                count = COUNTERS[self.path]
            photos = ["photos/grace_hopper_noexif.jpg", "photos/nikon-coolpix-p6000_gps.jpg", "photos/coffee_noexif.png"]
            body = open(os.path.join(self.server.fixtures, photos[count % 3]), "rb").read()
            time.sleep(float(query.get("delay", ["0"])[0]))
            if count > 2 or "calm" in query:
                return self.send(200, body, {"Content-Type": "image/jpeg"})
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[:len(body) // 3])
            self.wfile.flush()
            if count == 1:
                time.sleep(float(query.get("stall", ["3"])[0]))
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return
        if route == "slow":
            time.sleep(float(query.get("delay", ["0.5"])[0]))
            return self.fixture("photos/grace_hopper_noexif.jpg", query)
        if route == "auth":
            if self.headers.get("Authorization") == "Bearer " + query.get("token", ["secret"])[0]:
                return self.fixture("photos/grace_hopper_noexif.jpg", query)
            return self.send(401, b"who are you")
        if route == "text":
            return self.send(200, b"this is not an image, whatever the header says", {"Content-Type": "image/jpeg"})
        if route == "s3-uploads" and "uploads" in parse_qs(url.query, keep_blank_values=True):
            return self.multipart_uploads(query)
        if route == "requests":
            prefix = query.get("path", [""])[0]
            with LOCK:
                found = [r for r in REQUESTS if r["path"].startswith(prefix)]
                big = COUNTERS.get("big-sent")
            return self.send(200, json.dumps({"requests": found, "bigSent": big}).encode(), {"Content-Type": "application/json"})
        self.send(404, b"unknown route")

    def multipart_uploads(self, query):
        """ListMultipartUploads as S3 answers it, with real times (moto reports one fixed time for
        every upload): in the folder the prefix names, an upload begun two hours ago and one begun
        a minute ago, in two pages; beside them an old one in a folder that merely starts with the
        prefix, and one outside it, as a server ignoring the prefix would send."""
        prefix = query.get("prefix", [""])[0]
        folder = prefix.rstrip("/") + "/"
        now = time.time()
        uploads = [(folder + "a-old.webp", "upload-old", now - 7200), (folder + "b-recent.webp", "upload-recent", now - 60),
                   (folder.rstrip("/") + "-other/c-old.webp", "upload-other", now - 7200),
                   ("elsewhere/d-old.webp", "upload-elsewhere", now - 7200)]
        first = "key-marker" not in query
        page = uploads[:1] if first else uploads[1:]
        entries = "".join(
            f"<Upload><Key>{key}</Key><UploadId>{upload}</UploadId><StorageClass>STANDARD</StorageClass>"
            f"<Initiated>{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(started))}.{int(started % 1 * 1000):03d}Z</Initiated></Upload>"
            for key, upload, started in page)
        more = f"<IsTruncated>true</IsTruncated><NextKeyMarker>{page[-1][0]}</NextKeyMarker><NextUploadIdMarker>{page[-1][1]}</NextUploadIdMarker>" \
            if first else "<IsTruncated>false</IsTruncated>"
        body = f'<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult><Bucket>s3-uploads</Bucket><Prefix>{prefix}</Prefix>{more}{entries}</ListMultipartUploadsResult>'
        self.send(200, body.encode(), {"Content-Type": "application/xml"})

    def do_DELETE(self):
        # /s3-uploads/<key>?uploadId=...: an abort, recorded for the test to read.
        self.record()
        if urlparse(self.path).path.startswith("/s3-uploads/"):
            return self.send(204, b"")
        self.send(404, b"")

    def do_HEAD(self):
        self.do_GET()

    def do_PUT(self):
        self.record()
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        url = urlparse(self.path)
        if url.path.startswith("/mutable/"):
            # A source that changes: PUT /mutable/<name>?fixture=photos/x.jpg makes it serve that file.
            with LOCK:
                MUTABLE[url.path[len("/mutable/"):]] = parse_qs(url.query)["fixture"][0]
            return self.send(204, b"")
        if url.path.startswith("/s3-flaky/"):
            with LOCK:
                COUNTERS[url.path] = COUNTERS.get(url.path, 0) + 1
                count = COUNTERS[url.path]
            if count <= 2:
                return self.send(503, b"<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>")
            return self.send(200, b"", {"ETag": '"abc"'})
        self.send(404, b"")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--fixtures", required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Origin)
    server.daemon_threads = True
    server.fixtures = os.path.realpath(args.fixtures)
    server.serve_forever()


if __name__ == "__main__":
    main()
