# Shared by the set-up scripts: install only what is missing, quietly, on Debian.

# What building and running Derive needs: libvips (and pkg-config to find it), OpenSSL's
# libcrypto for content hashes, and a font for text overlays.
DERIVE_BUILD_PACKAGES=(pkg-config libvips-dev libssl-dev fonts-dejavu-core)

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
    python3 -m pip install --quiet "${missing[@]}"
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
