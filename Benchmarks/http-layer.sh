#!/usr/bin/env bash
# Issue 39's HTTP-layer measurement: what a request costs in each layer Derive could serve
# with, side by side with nginx, in one run, with the same client.
#   - nginx (Debian's nginx-light, 2 workers, sendfile) serving a recorded derivative's file
#     from a folder, and a 200 from `return` for the health check;
#   - derive serve (release build, on Hummingbird since issue 39; its delivery cache answers
#     the derivative from memory after the first request): the recorded derivative's URL and
#     /healthz;
#   - the bare layers of Benchmarks/HTTPLayer (FlyingFox, Hummingbird 2, SwiftNIO's HTTP/1
#     pipeline), each serving the same bytes from memory and "ok": the ceiling of each layer
#     before Derive does any work.
# wrk -t2 -cCONNECTIONS -dDURATION --latency against each, one after the other; prints
# requests per second and p50/p99 in a table. With --build-cost, first the clean debug build
# of each bare layer's package (what adding it costs CI).
#
#   bash Benchmarks/http-layer.sh [--connections 32] [--duration 10s] [--build-cost]
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh

connections=32 duration=10s build_cost=0
while [ $# -gt 0 ]; do
    case "$1" in
        --connections) connections=$2; shift 2 ;;
        --duration) duration=$2; shift 2 ;;
        --build-cost) build_cost=1; shift ;;
        *) echo "usage: bash Benchmarks/http-layer.sh [--connections N] [--duration 10s] [--build-cost]" >&2; exit 2 ;;
    esac
done

ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" python3 nginx-light wrk
ensure_python_modules cloudinary=cloudinary==1.46.3 PIL=pillow
derive="${DERIVE_BINARY:-}"
if [ -z "$derive" ]; then
    swift build -c release --product derive > /dev/null
    derive="$(swift build -c release --show-bin-path)/derive"
fi
layers=Benchmarks/HTTPLayer
if [ "$build_cost" = 1 ]; then
    # What each layer adds to CI: a clean debug build (the test command builds debug) of the
    # bare server and its packages, wall and processor time.
    for product in flyingfox-file hummingbird-file nio-file; do
        scratch="$(mktemp -d)"
        /usr/bin/time -f "clean debug build of $product: %e s wall, %U s user + %S s system" \
            swift build --package-path "$layers" --scratch-path "$scratch" --product "$product" > /dev/null 2> "$scratch.log" || { cat "$scratch.log"; exit 1; }
        tail -1 "$scratch.log"
        rm -rf "$scratch" "$scratch.log"
    done
fi
swift build -c release --package-path "$layers" > /dev/null 2>&1 || swift build -c release --package-path "$layers"
bin="$(swift build -c release --package-path "$layers" --show-bin-path)"

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
    wait 2> /dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# derive serve with one recorded derivative (an eager 320 px WebP of the group photograph).
port=$(free_port)
DERIVE_CLOUD_NAME=bench DERIVE_API_KEY=bench-key DERIVE_API_SECRET=bench-secret-0123456789 \
    "$derive" serve --port "$port" --database "sqlite:$work/q.sqlite" --store "$work/store" --wait 600 2> "$work/serve.log" &
pids+=($!)
for _ in $(seq 100); do grep -q "listening" "$work/serve.log" 2> /dev/null && break; sleep 0.1; done
python3 Benchmarks/serve_load.py uploads "$port" bench bench-key bench-secret-0123456789 Tests/Fixtures/group-of-six.jpg 1 1 > /dev/null
url=$(python3 - "$port" <<'PY'
import sys, json, urllib.request, base64
auth = base64.b64encode(b"bench-key:bench-secret-0123456789").decode()
request = urllib.request.Request("http://127.0.0.1:%s/v1_1/bench/resources/image/upload/bench/0" % sys.argv[1], headers={"Authorization": "Basic " + auth})
print([d for d in json.load(urllib.request.urlopen(request))["derived"] if d["format"] == "webp"][0]["url"])
PY
)
mkdir -p "$work/static"
curl -sf -o "$work/static/f" "$url"
size=$(stat -c %s "$work/static/f")
# nginx's workers run as nobody: they must be able to read the folder.
chmod 755 "$work" "$work/static" && chmod 644 "$work/static/f"

# nginx from the folder.
nginx_port=$(free_port)
mkdir -p "$work/nginx"
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    client_body_temp_path $work/nginx;
    server {
        listen 127.0.0.1:$nginx_port;
        root $work/static;
        location = /f { default_type image/webp; }
        location = /healthz { return 200 "ok\n"; }
    }
}
CONF
nginx -c "$work/nginx/nginx.conf" -g "daemon off;" &
pids+=($!)
wait_for_port "$nginx_port" nginx

for product in flyingfox-file hummingbird-file nio-file; do
    layer_port=$(free_port)
    "$bin/$product" "$layer_port" "$work/static/f" &
    pids+=($!)
    wait_for_port "$layer_port" "$product"
    eval "port_${product//-/_}=$layer_port"
done

measure() {  # measure NAME URL
    curl -sf -o /dev/null "$2" || { echo "$1: $2 does not answer 200" >&2; exit 1; }
    wrk -t2 -c"$connections" -d"$duration" --latency "$2" > "$work/wrk.txt"
    python3 - "$1" "$work/wrk.txt" <<'PY'
import re, sys
text = open(sys.argv[2]).read()
def ms(label):
    match = re.search(r"^\s*%s\s+([\d.]+)(us|ms|s)\s*$" % label, text, re.M)
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value
rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
print("| %s | %s | %.2f | %.2f |%s" % (sys.argv[1], format(round(rate), ","), ms("50%"), ms("99%"),
                                      " %s non-2xx" % errors.group(1) if errors else ""))
PY
}

echo "$(nproc) cores; wrk -t2 -c$connections -d$duration --latency; the recorded derivative is $size bytes"
echo "| server and path | requests/s | p50 ms | p99 ms |"
echo "|---|---|---|---|"
measure "nginx, the file" "http://127.0.0.1:$nginx_port/f"
measure "derive serve, recorded derivative" "$url"
measure "FlyingFox alone, the bytes" "http://127.0.0.1:$port_flyingfox_file/f"
measure "Hummingbird alone, the bytes" "http://127.0.0.1:$port_hummingbird_file/f"
measure "SwiftNIO alone, the bytes" "http://127.0.0.1:$port_nio_file/f"
measure "nginx, /healthz" "http://127.0.0.1:$nginx_port/healthz"
measure "derive serve, /healthz" "http://127.0.0.1:$port/healthz"
measure "FlyingFox alone, /healthz" "http://127.0.0.1:$port_flyingfox_file/healthz"
measure "Hummingbird alone, /healthz" "http://127.0.0.1:$port_hummingbird_file/healthz"
measure "SwiftNIO alone, /healthz" "http://127.0.0.1:$port_nio_file/healthz"
