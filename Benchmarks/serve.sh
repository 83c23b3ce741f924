#!/usr/bin/env bash
# The `derive serve` benchmark (issue 31): `derive serve` (release build) on the embedded
# SQLite queue, working it in the same process, on a loopback port.
#   1. Uploads per second with eager outputs: UPLOADS signed uploads of distinct 1280x886 JPEGs
#      (Tests/Fixtures/group-of-six.jpg, one pixel changed in each, so no output is reused) through the pinned Cloudinary SDK, each with two eager
#      outputs (320 px WebP fill, 1024 px JPEG) waited for, CONCURRENCY at once.
#   2. Delivery of a recorded derivative: GETS requests of one eager output's URL over
#      kept-alive connections, CONCURRENCY at once: requests per second and p99; then the same
#      file, copied out of the store, served by `python3 -m http.server` and fetched alike.
# The client is Python on the same 2 cores, so both servers share the machine with it.
#
#   bash Benchmarks/serve.sh [UPLOADS] [GETS] [CONCURRENCY]
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh

uploads=${1:-40}
gets=${2:-4000}
concurrency=${3:-4}

ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" python3
ensure_python_modules cloudinary=cloudinary==1.46.3 PIL=pillow
derive="${DERIVE_BINARY:-}"
if [ -z "$derive" ]; then
    swift build -c release --product derive > /dev/null
    derive="$(swift build -c release --show-bin-path)/derive"
fi

work="$(mktemp -d)"
server="" files=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2> /dev/null
    [ -n "$files" ] && kill "$files" 2> /dev/null
    wait 2> /dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
port=$(free_port)
DERIVE_CLOUD_NAME=bench DERIVE_API_KEY=bench-key DERIVE_API_SECRET=bench-secret-0123456789 \
    "$derive" serve --port "$port" --database "sqlite:$work/q.sqlite" --store "$work/store" --wait 600 2> "$work/serve.log" &
server=$!
for _ in $(seq 100); do grep -q "listening" "$work/serve.log" 2> /dev/null && break; sleep 0.1; done
echo "derive serve ($derive) on $(nproc) cores, SQLite, working the queue in process"

echo -n "uploads with 2 eager outputs ($uploads, $concurrency at once): "
python3 Benchmarks/serve_load.py uploads "$port" bench bench-key bench-secret-0123456789 Tests/Fixtures/group-of-six.jpg "$uploads" "$concurrency"

url=$(python3 - "$port" <<'PY'
import sys, cloudinary, cloudinary.utils
cloudinary.config(cloud_name="bench", api_key="bench-key", api_secret="bench-secret-0123456789", secure=False, cname="127.0.0.1:" + sys.argv[1])
import json, urllib.request, base64
auth = base64.b64encode(b"bench-key:bench-secret-0123456789").decode()
request = urllib.request.Request("http://127.0.0.1:%s/v1_1/bench/resources/image/upload/bench/0" % sys.argv[1], headers={"Authorization": "Basic " + auth})
resource = json.load(urllib.request.urlopen(request))
print([d for d in resource["derived"] if d["format"] == "webp"][0]["url"])
PY
)
python3 Benchmarks/serve_load.py get "$url" 200 1 > /dev/null
echo -n "GET of a recorded derivative from derive serve ($gets, $concurrency at once): "
python3 Benchmarks/serve_load.py get "$url" "$gets" "$concurrency"

# The same bytes from python3 -m http.server.
mkdir -p "$work/static"
curl -s -o "$work/static/photo.webp" "$url"
static_port=$(free_port)
(cd "$work/static" && exec python3 -m http.server "$static_port" --bind 127.0.0.1 > /dev/null 2>&1) &
files=$!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$static_port/photo.webp" && break; sleep 0.1; done
python3 Benchmarks/serve_load.py get "http://127.0.0.1:$static_port/photo.webp" 200 1 > /dev/null
echo -n "GET of the same file from python3 -m http.server ($gets, $concurrency at once): "
python3 Benchmarks/serve_load.py get "http://127.0.0.1:$static_port/photo.webp" "$gets" "$concurrency"
echo "($(stat -c %s "$work/static/photo.webp") bytes)"
