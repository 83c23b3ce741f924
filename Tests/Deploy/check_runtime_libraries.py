"""Checks that the runtime stage of Deploy/Dockerfile installs every C library derive links.

    python3 Tests/Deploy/check_runtime_libraries.py .build/debug/derive Deploy/Dockerfile

Reads the binary's direct dependencies (readelf NEEDED), finds the Debian package that ships
each one on this machine (dpkg -S), and requires that package to be installed by the runtime
stage's apt-get line or pulled in by it (apt-cache depends --recurse), or to be part of every
Debian base image (Priority: required). Swift's own libraries are skipped: the image links
them statically (--static-swift-stdlib). Prints what it found; exits 1 on a missing library.
"""
import os
import re
import subprocess
import sys

SWIFT_RUNTIME = ("libswift", "libFoundation", "libdispatch", "libBlocksRuntime", "lib_FoundationICU", "libXCTest", "libTesting")


def run(*command):
    return subprocess.run(command, capture_output=True, text=True, check=False).stdout


def runtime_packages(dockerfile):
    text = open(dockerfile).read().replace("\\\n", " ")
    final = text[text.rindex("\nFROM "):]
    packages = set()
    for command in re.findall(r"apt-get install([^&\n]*)", final):
        packages.update(word for word in command.split() if not word.startswith("-"))
    return packages


def closure(packages):
    output = run("apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks",
                 "--no-replaces", "--no-enhances", *sorted(packages))
    found = set(packages)
    for line in output.splitlines():
        line = line.strip()
        match = re.match(r"\|?(?:Pre)?Depends: <?([^>\s]+)>?", line)
        name = match.group(1) if match else (line if line and ":" not in line and " " not in line else None)
        if name:
            found.add(name.split(":")[0])
    return found


def required_packages():
    output = run("dpkg-query", "-W", "-f=${Package} ${Priority}\n")
    return {line.split()[0] for line in output.splitlines() if line.endswith(" required")}


def owner(library):
    for line in run("ldconfig", "-p").splitlines():
        if line.strip().startswith(library + " "):
            path = line.rsplit("=>", 1)[1].strip()
            for candidate in (path, os.path.realpath(path), "/usr" + path if path.startswith("/lib") else path):
                answer = run("dpkg", "-S", candidate).strip()
                if answer:
                    return answer.split(":")[0]
    return None


def main():
    binary, dockerfile = sys.argv[1], sys.argv[2]
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", run("readelf", "-d", binary))
    if not needed:
        sys.exit(f"no NEEDED entries in {binary}: is it a dynamically linked ELF file?")
    listed = runtime_packages(dockerfile)
    available = closure(listed) | required_packages()
    missing = []
    for library in needed:
        if library.startswith(SWIFT_RUNTIME):
            continue
        package = owner(library)
        if package is None:
            missing.append(f"{library} (no Debian package on this machine ships it)")
        elif package not in available:
            missing.append(f"{library} (from {package})")
        else:
            print(f"{library}: {package}")
    if missing:
        sys.exit("the runtime image lacks: " + ", ".join(missing) + f"; it installs {', '.join(sorted(listed))}")
    print(f"every library derive links is in the runtime image ({', '.join(sorted(listed))})")


if __name__ == "__main__":
    main()
