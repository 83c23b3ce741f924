"""Drives `derive serve` with the real Cloudinary Python SDK (PyPI `cloudinary`, pinned in
Scripts/test.sh) the way an application would: upload_prefix at Derive's API, the delivery
host as the SDK's cname. Prints one JSON object of what each step saw; ServeTests asserts it.

    python3 cloudinary_client.py PORT CLOUD KEY SECRET IMAGE
"""
import base64
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

import cloudinary
import cloudinary.api
import cloudinary.uploader
import cloudinary.utils

PINNED = "1.46.3"
port, cloud, key, secret, image = sys.argv[1:6]
stage = sys.argv[6] if len(sys.argv) > 6 else "all"
host = "127.0.0.1:%s" % port


def configure(api_secret=secret):
    cloudinary.reset_config()
    cloudinary.config(cloud_name=cloud, api_key=key, api_secret=api_secret, secure=False, cname=host,
                      upload_prefix="http://" + host)


def get(url, headers=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            body = response.read()
            return {"status": response.status, "type": response.headers.get("Content-Type"), "etag": response.headers.get("ETag"),
                    "cache": response.headers.get("Cache-Control"), "bytes": len(body), "head": base64.b64encode(body[:16]).decode()}
    except urllib.error.HTTPError as error:
        return {"status": error.code, "body": error.read().decode("utf-8", "replace")}


def attempt(call):
    try:
        return {"ok": call()}
    except Exception as error:  # the SDK raises its own classes per HTTP status
        return {"error": type(error).__name__, "message": str(error)}


out = {"sdk": cloudinary.VERSION, "pinned": PINNED}
configure()


def send_parts(upload_id, parts, total):
    """Parts of a chunked upload by hand, as upload_large sends them, with its headers."""
    results = []
    for first, chunk in parts:
        headers = {"Content-Range": "bytes %d-%d/%d" % (first, first + len(chunk) - 1, total), "X-Unique-Upload-Id": upload_id}
        results.append(attempt(lambda: cloudinary.uploader.upload_large_part(("resumed.jpg", chunk), http_headers=headers,
                                                                             resource_type="image", public_id="resumed")))
    return results


if stage in ("first-parts", "last-part"):
    # A chunked upload interrupted by a restart of derive serve: three parts, the server killed
    # after the first two, the third sent to the restarted server.
    with open(image, "rb") as handle:
        content = handle.read()
    third = len(content) // 3
    parts = [(0, content[:third]), (third, content[third:2 * third]), (2 * third, content[2 * third:])]
    chosen = parts[:2] if stage == "first-parts" else parts[2:]
    out[stage] = send_parts("resumable-upload-1", chosen, len(content))
    if stage == "last-part":
        out["resumed_get"] = get(cloudinary.utils.cloudinary_url("resumed", format="jpg")[0])
    print(json.dumps(out))
    sys.exit(0)

if stage == "webhook":
    # eager_async with a notification_url: the upload notification, then the eager one, each
    # checked with the SDK's own verify_notification_signature.
    import http.server
    import threading
    import time
    received = []

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
            received.append({"body": body, "timestamp": self.headers.get("X-Cld-Timestamp"), "signature": self.headers.get("X-Cld-Signature")})
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    receiver = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    hook = "http://127.0.0.1:%d/hook" % receiver.server_address[1]
    out["async"] = attempt(lambda: cloudinary.uploader.upload(image, public_id="hooked", eager="c_scale,w_25", eager_async=True,
                                                              notification_url=hook))
    deadline = time.time() + 90
    while len(received) < 2 and time.time() < deadline:
        time.sleep(0.1)
    out["notifications"] = [{"type": json.loads(item["body"]).get("notification_type"), "body": json.loads(item["body"]),
                             "verified": cloudinary.utils.verify_notification_signature(item["body"], item["timestamp"], item["signature"]),
                             "forged": cloudinary.utils.verify_notification_signature(item["body"] + " ", item["timestamp"], item["signature"])}
                            for item in received]
    time.sleep(1)  # the record of the last notification is written just after it is answered
    out["hooked_resource"] = attempt(lambda: cloudinary.api.resource("hooked"))
    print(json.dumps(out))
    sys.exit(0)

if stage == "faces":
    # Faces in the admin read: none before a job looked, then those a g_face eager output's detection found.
    out["before"] = attempt(lambda: cloudinary.uploader.upload(image, public_id="faces-later"))
    out["before_faces"] = attempt(lambda: cloudinary.api.resource("faces-later", faces=True))
    out["upload"] = attempt(lambda: cloudinary.uploader.upload(image, public_id="faces", eager="c_thumb,g_face,w_60,h_60"))
    out["faces"] = attempt(lambda: cloudinary.api.resource("faces", faces=True))
    out["not_asked"] = attempt(lambda: cloudinary.api.resource("faces"))
    print(json.dumps(out))
    sys.exit(0)

# upload_large: the SDK's chunked upload, in 4 parts.
out["large"] = attempt(lambda: cloudinary.uploader.upload_large(image, chunk_size=40000, resource_type="image", public_id="large",
                                                                eager="c_scale,w_20"))

# A signed upload with two eager outputs, the SDK's dict form and a string.
out["signed"] = attempt(lambda: cloudinary.uploader.upload(
    image, public_id="photo", folder="tests", tags=["one", "two"], context={"alt": "six people"},
    eager=[{"width": 64, "height": 48, "crop": "fill", "format": "png"}, "c_scale,w_50"]))
if "ok" in out["signed"]:
    result = out["signed"]["ok"]
    out["eager_get"] = [get(item["url"]) for item in result.get("eager", [])]
    first = out["eager_get"][0] if out["eager_get"] else {}
    if first.get("etag"):
        out["eager_not_modified"] = get(result["eager"][0]["url"], {"If-None-Match": first["etag"]})
    out["original_get"] = get(cloudinary.utils.cloudinary_url("tests/photo", format="jpg")[0])

# The same with SHA-256 signatures.
cloudinary.config(signature_algorithm="sha256")
out["signed_sha256"] = attempt(lambda: cloudinary.uploader.upload(image, public_id="photo256"))
configure()

# A data: URI, and a remote URL on loopback (refused by the fetcher's SSRF rules).
with open(image, "rb") as handle:
    data_uri = "data:image/jpeg;base64," + base64.b64encode(handle.read()).decode()
out["data_uri"] = attempt(lambda: cloudinary.uploader.upload(data_uri, public_id="from-data"))
out["loopback_url"] = attempt(lambda: cloudinary.uploader.upload("http://127.0.0.1:9/x.jpg", public_id="remote"))

# Unsigned: a preset marked unsigned, one that is not, and a parameter the client may not set.
out["unsigned"] = attempt(lambda: cloudinary.uploader.unsigned_upload(image, "thumbs", public_id="unsigned-photo"))
out["unsigned_not_allowed_preset"] = attempt(lambda: cloudinary.uploader.unsigned_upload(image, "signed-only"))
out["unsigned_eager"] = attempt(lambda: cloudinary.uploader.unsigned_upload(image, "thumbs", eager="w_10"))

# A wrong secret, and a stale timestamp.
configure(api_secret="not-the-secret")
out["wrong_secret"] = attempt(lambda: cloudinary.uploader.upload(image, public_id="never"))
configure()
# The SDK always stamps the current time: a stale request is signed and sent by hand.
def post_form(params):
    body = urllib.parse.urlencode(params).encode()
    request = urllib.request.Request("http://%s/v1_1/%s/image/upload" % (host, cloud), data=body,
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return {"status": response.status, "body": json.loads(response.read())}
    except urllib.error.HTTPError as error:
        return {"status": error.code, "body": json.loads(error.read())}


stale = cloudinary.utils.sign_request({"public_id": "stale", "timestamp": 1000000000}, {})
stale["file"] = data_uri
out["stale"] = post_form(stale)
fresh = cloudinary.utils.sign_request({"public_id": "by-hand", "timestamp": cloudinary.utils.now()}, {})
fresh["file"] = data_uri
out["by_hand"] = post_form(fresh)

# Delivery: a signed URL for a transformation not made yet, the same forged, and unsigned.
signed_url = cloudinary.utils.cloudinary_url("tests/photo", width=30, height=20, crop="fill", format="webp", sign_url=True)[0]
out["signed_url"] = signed_url
out["signed_get"] = get(signed_url)
out["signed_again"] = get(signed_url)
start = signed_url.index("s--") + 3
forged = signed_url[:start] + ("A" if signed_url[start] != "A" else "B") + signed_url[start + 1:]
out["forged_get"] = get(forged)
out["unsigned_get"] = get(cloudinary.utils.cloudinary_url("tests/photo", width=31, height=20, crop="fill", format="webp")[0])
out["long_signed_get"] = get(cloudinary.utils.cloudinary_url("tests/photo", width=32, crop="scale", format="png", sign_url=True,
                                                             long_url_signature=True)[0])
out["allowed_get"] = get(cloudinary.utils.cloudinary_url("tests/photo", width=33, crop="scale", format="jpg")[0])
out["missing_get"] = get(cloudinary.utils.cloudinary_url("tests/nothing", format="jpg")[0])

# The admin read, and with a wrong secret.
out["resource"] = attempt(lambda: cloudinary.api.resource("tests/photo"))
configure(api_secret="not-the-secret")
out["resource_wrong_secret"] = attempt(lambda: cloudinary.api.resource("tests/photo"))
print(json.dumps(out))
