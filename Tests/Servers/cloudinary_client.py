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

if stage == "tags":
    # An upload's tags and context reach its eager job, where conditions read them.
    branch = "if_!sale!_in_tags/c_scale,w_30/if_else/c_scale,w_90/if_end"
    out["tagged"] = attempt(lambda: cloudinary.uploader.upload(image, public_id="tagged", tags=["sale", "new"], eager=branch))
    out["untagged"] = attempt(lambda: cloudinary.uploader.upload(image, public_id="untagged", eager=branch))
    out["context"] = attempt(lambda: cloudinary.uploader.upload(image, public_id="context", context={"size": "small"},
                                                                eager="if_ctx:!size!_eq_!small!/c_scale,w_40/if_end"))
    out["bad_tag"] = attempt(lambda: cloudinary.uploader.upload(image, public_id="bad-tag", tags=["line\nbreak"]))
    print(json.dumps(out))
    sys.exit(0)

def sniff(head):
    """The format of an answer's first bytes, by their magic numbers."""
    if head[:3] == b"\xff\xd8\xff":
        return "image/jpeg"
    if head[:8] == b"\x89PNG\r\n\x1a\n":
        return "image/png"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[4:12] in (b"ftypavif", b"ftypavis"):
        return "image/avif"
    if head[:4] == b"GIF8":
        return "image/gif"
    if head[:2] == b"\xff\x0a" or head[:12] == b"\x00\x00\x00\x0cJXL \r\n\x87\n":
        return "image/jxl"
    return None


def fetch(url, headers=None, method="GET"):
    """A plain HTTP request: the status, the headers delivery sets, and what the bytes are."""
    request = urllib.request.Request(url, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            body = response.read()
            status, found = response.status, response.headers
    except urllib.error.HTTPError as error:
        body = error.read()
        status, found = error.code, error.headers
    answer = {"status": status, "bytes": len(body), "sniffed": sniff(body[:16])}
    for name in ("Content-Type", "ETag", "Cache-Control", "Vary", "Last-Modified", "Content-Range", "Accept-Ranges", "Accept-CH",
                 "Content-Length", "X-Cld-Error"):
        answer[name.lower()] = found.get(name)
    if status == 200 and answer["sniffed"] in ("image/jpeg", "image/png", "image/webp", "image/gif"):
        from PIL import Image
        import io
        answer["size"] = list(Image.open(io.BytesIO(body)).size)
    return answer


browsers_webp = "image/webp,image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5"

if stage == "delivery":
    import time
    # The Accept headers browsers send for images (<img>): Chrome 120+, Safari 15, Firefox
    # 120+, and a browser that shows only JPEG (and GIF).
    browsers = {
        "chrome": "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8",
        "safari15": "image/webp,image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5",
        "firefox": "image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5",
        "old": "image/jpeg,image/gif;q=0.9",
    }
    first = cloudinary.uploader.upload(image, public_id="flat")
    out["folder_upload"] = attempt(lambda: cloudinary.uploader.upload(image, public_id="gh", folder="p"))
    # f_auto per browser, on the allowed list (unsigned), twice each: the second is recorded.
    auto = cloudinary.utils.cloudinary_url("flat", width=120, crop="scale", fetch_format="auto")[0]
    out["auto_url"] = auto
    out["auto"] = {name: [fetch(auto, {"Accept": accept}) for _ in range(2)] for name, accept in browsers.items()}
    out["auto_garbage"] = fetch(auto, {"Accept": "image/avif;q=zz,,;;,\t" + "image/webp;" * 900})
    # A control character is no header value (RFC 9110): the HTTP layer answers 400.
    out["auto_control"] = fetch(auto, {"Accept": "image/avif,\x7f"})
    # An image with alpha (argument 8): a JPEG-only browser gets PNG, Safari 15 WebP.
    cloudinary.uploader.upload(sys.argv[7], public_id="alpha")
    alpha = cloudinary.utils.cloudinary_url("alpha", width=120, crop="scale", fetch_format="auto")[0]
    out["alpha"] = {name: fetch(alpha, {"Accept": browsers[name]}) for name in ("safari15", "old")}
    # q_auto with Save-Data: on, and without.
    quality = cloudinary.utils.cloudinary_url("flat", width=200, crop="scale", quality="auto", format="jpg")[0]
    out["quality"] = fetch(quality)
    out["save_data"] = fetch(quality, {"Save-Data": "on"})
    # Client hints: w_auto from Width / Sec-CH-Width, dpr_auto from DPR, with none.
    width = cloudinary.utils.cloudinary_url("flat", width="auto", crop="scale", format="jpg", sign_url=True)[0]
    out["w_auto_url"] = width
    out["w_auto_hint"] = fetch(width, {"Sec-CH-Width": "412"})
    out["w_auto_width"] = fetch(width, {"Width": "480"})
    out["w_auto_none"] = fetch(width)
    out["w_auto_bad"] = fetch(width, {"Sec-CH-Width": "-5e999"})
    density = cloudinary.utils.cloudinary_url("flat", width=100, crop="scale", dpr="auto", format="png", sign_url=True)[0]
    out["dpr_auto_2"] = fetch(density, {"Sec-CH-DPR": "1.75"})
    out["dpr_auto_none"] = fetch(density)
    # URL forms: versionless with a folder, with a transformation (signed, and unsigned: refused).
    url = cloudinary.utils.cloudinary_url
    out["folder_versionless"] = fetch(url("p/gh", format="jpg", force_version=False)[0])
    out["folder_v1"] = fetch(url("p/gh", format="jpg")[0])
    out["folder_transformed"] = fetch(url("p/gh", format="jpg", width=30, crop="scale", force_version=False, sign_url=True)[0])
    out["folder_transformed_unsigned"] = fetch(url("p/gh", format="jpg", width=34, crop="scale", force_version=False)[0])
    # An overwritten asset: its old version's URL serves the current image, not for a year.
    time.sleep(1.1)
    second = cloudinary.uploader.upload(image, public_id="flat", overwrite=True, tags=["again"])
    out["versions"] = [first["version"], second["version"]]
    out["old_version"] = fetch(url("flat", format="jpg", version=first["version"])[0])
    out["current_version"] = fetch(url("flat", format="jpg", version=second["version"])[0])
    # An extension naming another format, signed and not; no extension at all.
    out["webp_signed"] = fetch(url("flat", format="webp", sign_url=True)[0])
    out["webp_unsigned"] = fetch(url("flat", format="webp")[0])  # recorded by the signed one: served as written
    out["png_unsigned"] = fetch(url("flat", format="png")[0])
    out["no_extension"] = fetch(url("flat")[0])
    # Chained transformations, a named one (a Derive preset), raw_transformation.
    out["chained"] = fetch(url("flat", transformation=[{"width": 40, "crop": "scale"}, {"angle": 90}], format="png", sign_url=True)[0])
    out["named"] = fetch(url("flat", transformation="thumb", format="jpg", sign_url=True)[0])
    out["named_unknown"] = fetch(url("flat", transformation="nosuch", format="jpg", sign_url=True)[0])
    out["raw"] = fetch(url("flat", transformation={"raw_transformation": "c_scale,w_45"}, format="jpg", sign_url=True)[0])
    # The other routes the SDK writes: SEO suffix, root path, shortened, private CDN.
    out["suffix"] = fetch(url("flat", url_suffix="six-people", format="jpg")[0])
    out["suffix_signed"] = fetch(url("flat", url_suffix="six-people", format="jpg", width=35, crop="scale", sign_url=True)[0])
    out["root"] = fetch(url("flat", format="jpg", use_root_path=True)[0])
    out["root_folder"] = fetch(url("p/gh", format="jpg", use_root_path=True)[0])
    out["shorten"] = fetch(url("flat", format="jpg", shorten=True)[0])
    out["private_cdn"] = fetch(url("flat", format="jpg", private_cdn=True)[0])
    out["private_type"] = fetch(url("flat", format="jpg", type="private")[0])
    out["video"] = fetch(url("flat", format="mp4", resource_type="video")[0])
    # HEAD, Range, If-None-Match, If-Modified-Since.
    plain = url("flat", format="jpg")[0]
    out["head"] = fetch(plain, method="HEAD")
    out["range"] = fetch(plain, {"Range": "bytes=0-99"})
    out["range_suffix"] = fetch(plain, {"Range": "bytes=-10"})
    out["range_past"] = fetch(plain, {"Range": "bytes=99999999-"})
    out["range_several"] = fetch(plain, {"Range": "bytes=0-1,5-9"})
    out["range_stale"] = fetch(plain, {"Range": "bytes=0-99", "If-Range": "\"not-the-etag\""})
    whole = fetch(plain)
    out["whole"] = whole
    out["etag_match"] = fetch(plain, {"If-None-Match": whole["etag"]})
    out["modified_since"] = fetch(plain, {"If-Modified-Since": whole["last-modified"]})
    out["modified_before"] = fetch(plain, {"If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"})
    print(json.dumps(out))
    sys.exit(0)

if stage == "fetch":
    # type=fetch from a loopback origin (argument 8: its port), allowed by DERIVE_FETCH_ALLOW and
    # DERIVE_SERVE_FETCH_DOMAINS=127.0.0.1; localhost is not on the list, 127.0.0.2 not allowed.
    origin = "http://127.0.0.1:%s/group-of-six.jpg" % sys.argv[7]
    url = cloudinary.utils.cloudinary_url
    out["plain"] = [fetch(url(origin, type="fetch")[0]) for _ in range(2)]
    out["unsigned_transformed"] = fetch(url(origin, type="fetch", width=50, crop="scale")[0])
    out["signed_transformed"] = [fetch(url(origin, type="fetch", width=50, crop="scale", sign_url=True)[0]) for _ in range(2)]
    out["auto"] = fetch(url(origin, type="fetch", fetch_format="auto", width=60, crop="scale", sign_url=True)[0], {"Accept": browsers_webp})
    out["other_domain"] = fetch(url(origin.replace("127.0.0.1", "localhost"), type="fetch")[0])
    out["private_address"] = fetch(url(origin.replace("127.0.0.1", "127.0.0.2"), type="fetch", sign_url=True)[0])
    out["missing"] = fetch(url(origin.replace("group-of-six", "nothing"), type="fetch")[0])
    out["not_image"] = fetch(url(origin.replace("group-of-six.jpg", "README.md"), type="fetch")[0])
    out["forged"] = fetch(url(origin, type="fetch", width=51, crop="scale", sign_url=True)[0].replace("s--", "s--A", 1))
    print(json.dumps(out))
    sys.exit(0)

if stage == "mappings":
    # Upload mappings (auto-upload) to a loopback origin (argument 8: its port) that
    # DERIVE_FETCH_ALLOW allows: the Admin API's five calls, then deliveries of a mapped folder.
    origin = "http://127.0.0.1:%s/" % sys.argv[7]
    api, url = cloudinary.api, cloudinary.utils.cloudinary_url
    out["create"] = attempt(lambda: api.create_upload_mapping("legacy", template=origin + "nowhere/"))
    out["create_again"] = attempt(lambda: api.create_upload_mapping("legacy", template=origin))
    out["create_other"] = attempt(lambda: api.create_upload_mapping("old/site", template="https://images.example.com/"))
    out["bad_template"] = attempt(lambda: api.create_upload_mapping("bad", template="ftp://images.example.com/"))
    out["update"] = attempt(lambda: api.update_upload_mapping("legacy", template=origin))
    out["update_missing"] = attempt(lambda: api.update_upload_mapping("missing", template=origin))
    out["one"] = attempt(lambda: api.upload_mapping("legacy"))
    out["first_page"] = attempt(lambda: api.upload_mappings(max_results=1))
    cursor = out["first_page"].get("ok", {}).get("next_cursor")
    out["second_page"] = attempt(lambda: api.upload_mappings(max_results=1, next_cursor=cursor))
    out["plain"] = [fetch(url("legacy/group-of-six", format="jpg")[0]) for _ in range(2)]
    out["versionless"] = fetch(url("legacy/group-of-six", format="jpg", force_version=False)[0])
    out["signed_transformed"] = fetch(url("legacy/group-of-six", format="jpg", width=50, crop="scale", sign_url=True)[0])
    out["unsigned_transformed"] = fetch(url("legacy/group-of-six", format="jpg", width=40, crop="scale")[0])
    out["missing"] = fetch(url("legacy/nothing-here", format="jpg")[0])
    out["resource"] = attempt(lambda: api.resource("legacy/group-of-six"))
    out["delete"] = attempt(lambda: api.delete_upload_mapping("legacy"))
    out["delete_again"] = attempt(lambda: api.delete_upload_mapping("legacy"))
    out["after_delete_recorded"] = fetch(url("legacy/group-of-six", format="jpg")[0])
    out["after_delete_new"] = fetch(url("legacy/jpeg-with-multiple-paths", format="jpg")[0])
    configure(api_secret="not-the-secret")
    out["wrong_secret"] = attempt(lambda: api.upload_mappings())
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
