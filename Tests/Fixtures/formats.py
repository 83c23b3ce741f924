#!/usr/bin/env python3
"""Real files of the source formats Derive reads beyond shared/fixtures (BigTIFF, JPEG 2000,
Netpbm, Radiance HDR, OpenEXR, SVGZ, ICO, TGA, PSD, BMP), taken from two public test suites
that ship in pinned registry packages:

  * Pillow's test images, from its PyPI source distribution;
  * libvips' test-suite images, from Debian 12's source package of libvips (the upstream
    tarball, as Debian's archive holds it).

Each archive is fetched with its registry's own client at the pinned version into the cache
folder once, and its SHA-256 is checked (Benchmarks/faces/dataset.py does the fetching, as for
the face set); every extracted file's SHA-256 is checked too. Nothing here is copied into the
repository, and nothing is downloaded while the tests run.

Usage: formats.py [CACHE_DIR]   (default ${XDG_CACHE_HOME:-~/.cache}/derive/formats)
Prints the folder holding the files; FormatFixtures (Tests/DeriveTestSupport) reads it from
DERIVE_FORMAT_FIXTURES.
"""
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "Benchmarks", "faces"))
import dataset  # noqa: E402  (fetch and members: the project's pinned-archive reader)

ARCHIVES = {
    "pillow": {
        "registry": "pypi", "package": "pillow", "version": "11.3.0", "file": "pillow-11.3.0.tar.gz",
        "sha256": "3828ee7586cd0b2091b6209e5ad53e20d0649bbe87164a459d0676e035e8f523",
        "folder": "pillow-11.3.0/Tests/images/",
    },
    "libvips": {
        "registry": "debian-source", "suite": "bookworm", "package": "vips", "version": "8.14.1-3+deb12u3",
        "file": "vips_8.14.1.orig.tar.gz",
        "sha256": "a4a6b282216f7522b42ebb5cd64cfd82a0d1a632033e9c0502f021e945fed641",
        "folder": "libvips-8.14.1/test/test-suite/images/",
    },
}

# (archive, path in its folder, SHA-256 of the file). The file keeps its name in the cache.
FILES = [
    ("pillow", "hopper_bigtiff.tif", "01c97b3bfea06cd171a186186a8112db6c6a9463d22e1be5d11fedbb82c8713e"),
    ("pillow", "hopper.ppm", "4c5f7cecc9d468eb37c886840d8f7e7824267e7e315d08751318efddb09a5efb"),
    ("pillow", "hopper_8bit.pgm", "ebb5ef17836b456bb0a4253f4673a173d4a4ba23b77afda8062d43acb892eafa"),
    ("pillow", "hopper_1bit.pbm", "4a83367b5d55ef1dda49e6504860990d1adbff1f9a547e50eb868a8214a8c840"),
    ("pillow", "hopper_8bit_plain.ppm", "0963a5aec582d73a5e617997d5a31e814ed83a168c82977db74a629835716cb4"),
    ("pillow", "hopper.pfm", "11395479d5209ffe1dd334595f1ad74f50f01eddbeb510c9e2679e42b988e444"),
    ("pillow", "hopper.psd", "108d58d6470f4787e8d16893d965a211efce0b28abdcb11e1b18af8081b96370"),
    ("pillow", "hopper.bmp", "f1a94f3add0a2e54365dc94b51da099bd0de8289b955fc8304a8627b7b0d6aea"),
    ("pillow", "test-card-lossless.jp2", "0095420ff07a0fd7c6a9b6366079d6ff3eac58863f98ea832316927240747730"),
    ("pillow", "rgb_trns_ycbc.j2k", "d653d62a999f9360ae5cb3355b841a0e4fd6b9a6f97f8f92a79f76b9b05c346b"),
    ("pillow", "rgb32rle.tga", "eecda5ea4233631a1c55b6068b61d7e1fc6b3a3c1dc89b61dc6a153f5514f830"),
    ("libvips", "sample.hdr", "da490dacb84ac376de781fb9b927c2f98c88089164d7e9ee7c7eceaf9f0e7d9d"),
    ("libvips", "sample.exr", "dd7355a2c2a694bae041500af4f61ae96bdc02a6e9474fa53d4e4ccef83c8774"),
    ("libvips", "logo.svgz", "dfc7e7e1647c918f7f15d3d79a47cd373c4f645c52dd55c917e5f3740c377511"),
    ("libvips", "favicon.ico", "461350ef07af2b4376c277ba9cb62a98e535ef6a13760ebfacc82cf95d347acb"),
    ("libvips", "targa.tga", "2d002d24a71867f1bd025121c705be460925a0c3b2881e18cf3c49dab2259498"),
]


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def main():
    cache = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "derive", "formats")
    out = os.path.join(cache, "files")
    os.makedirs(out, exist_ok=True)

    def present(name, digest):
        path = os.path.join(out, name)
        return os.path.exists(path) and sha256(open(path, "rb").read()) == digest

    readers = {}
    for key, name, digest in FILES:
        if present(name, digest):
            continue
        if key not in readers:
            readers[key] = dataset.members(dataset.fetch(ARCHIVES[key], cache))
        data = readers[key](ARCHIVES[key]["folder"] + name)
        if sha256(data) != digest:
            sys.exit(f"formats.py: {name} in {ARCHIVES[key]['file']} has SHA-256 {sha256(data)}, pinned {digest}")
        with open(os.path.join(out, name + ".part"), "wb") as f:
            f.write(data)
        os.replace(os.path.join(out, name + ".part"), os.path.join(out, name))
    print(out)


if __name__ == "__main__":
    main()
