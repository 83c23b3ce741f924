#!/usr/bin/env python3
"""Cross-checks Derive's PSD reader (pg_name:, pg_embedded:) against psd-tools on the PSD
fixtures in Tests/Fixtures/psd. Not part of CI: it needs `pip install psd-tools numpy pillow`.

For each fixture and each layer (and each pair of adjacent layers), runs
`derive run <psd> --chain 'pg_name:<names>/f_png'` and compares every pixel with psd-tools'
composite of the same layers (`PSDImage.composite(layer_filter=..., force=FORCE)`): prints the
largest channel difference of premultiplied RGBA (a colour weighs as much as it shows). For each
smart object, compares the bytes `pg_embedded:<n>` decodes from with psd-tools' embedded data.
Also prints the pixel values PhotoshopLayersTests expects.

Usage (from the repository's root, after `swift build --product derive`):
    python3 Benchmarks/psd/verify.py [path/to/derive]
"""
import io
import os
import json
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import numpy as np
from PIL import Image
from psd_tools import PSDImage

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(os.environ.get("PSD_FIXTURES", ROOT / "Tests" / "Fixtures" / "psd"))
FORCE = os.environ.get("PSD_FORCE", "1") == "1"
DERIVE = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / ".build" / "debug" / "derive")


def derive_png(psd: Path, chain: str) -> np.ndarray:
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run([DERIVE, "run", str(psd), "--chain", chain, "--out", out],
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"{chain}: {run.stderr.strip()}")
        location = json.loads(run.stdout)[0]["outputs"][0]["location"]
        return np.array(Image.open(location).convert("RGBA")).astype(int)


def psd_tools_composite(psd: PSDImage, names: list[str]) -> np.ndarray:
    # A layer inside a group is drawn by psd-tools only when its group passes the filter too.
    def wanted(layer) -> bool:
        if layer.is_group():
            return layer.name in names or any(d.name in names for d in layer.descendants())
        return layer.name in names or any(p.name in names for p in parents(layer))
    image = psd.composite(layer_filter=wanted, force=FORCE)
    return np.array(image.convert("RGBA")).astype(int)


def parents(layer):
    parent = layer.parent
    while parent is not None and getattr(parent, "kind", None) == "group":
        yield parent
        parent = parent.parent


def clip_base(layer) -> list:
    """The layer a clipped layer is clipped to, with a group's members (psd-tools' order)."""
    siblings = list(layer.parent)
    index = siblings.index(layer)
    for below in reversed(siblings[:index]):
        if not below.clipping:
            return [below] + (list(below.descendants()) if below.is_group() else [])
    return []


def compare(a: np.ndarray, b: np.ndarray) -> int:
    """The largest difference of premultiplied RGBA (a colour counts as much as it shows)."""
    if a.shape != b.shape:
        return 10**6
    def premultiplied(x: np.ndarray) -> np.ndarray:
        out = x.astype(float)
        out[:, :, :3] *= out[:, :, 3:4] / 255
        return out
    return int(np.rint(np.abs(premultiplied(a) - premultiplied(b)).max()))


def main() -> int:
    worst = 0
    for path in sorted(FIXTURES.glob("*.ps[db]")):
        psd = PSDImage.open(path)
        pixel_layers = [layer for layer in psd.descendants() if not layer.is_group()]
        print(f"== {path.name} {psd.size}, layers {[layer.name for layer in psd.descendants()]}")
        sets = [[layer.name] for layer in pixel_layers]
        sets += [[a.name, b.name] for a, b in zip(pixel_layers, pixel_layers[1:])]
        for names in sets:
            chain = "pg_name:" + ";".join(urllib.parse.quote(n, safe="") for n in names) + "/f_png"
            try:
                ours = derive_png(path, chain)
            except RuntimeError as error:
                print(f"   {names}: {error}")
                continue
            try:
                theirs = psd_tools_composite(psd, names)
            except Exception as error:  # psd-tools needs aggdraw for strokes
                print(f"   {names}: psd-tools cannot render it: {str(error).splitlines()[0]}")
                continue
            difference = compare(ours, theirs)
            off = int((np.abs(ours[:, :, 3] - theirs[:, :, 3]) > 2).sum()) if ours.shape == theirs.shape else -1
            # psd-tools draws a blend mode other than normal as it is; Derive as normal.
            chosen = [layer for layer in pixel_layers if layer.name in names]
            modes = {str(layer.blend_mode) for layer in chosen}
            note = "" if modes <= {"BlendMode.NORMAL"} else f" (blend modes {sorted(modes)}: Derive draws normal)"
            # psd-tools draws a clipped layer only with its base; Derive draws it where its
            # base is, named or not: such a set is printed, not counted.
            if any(layer.clipping and not any(other.name in names for other in clip_base(layer)) for layer in chosen):
                note += " (a clipped layer without its base: psd-tools draws nothing)"
            if any(layer.has_vector_mask() for layer in chosen):
                # Derive fills the path with exact coverage; psd-tools with aggdraw.
                note += f" (a vector mask: {off} edge pixels' alpha differ by more than 2)"
            print(f"   pg_name {names}: largest difference {difference}{note}")
            if not note:
                worst = max(worst, difference)
        smart = [layer for layer in psd.descendants() if layer.kind == "smartobject"]
        for number, layer in enumerate(smart, 1):
            so = layer.smart_object
            if so.kind != "data":
                print(f"   pg_embedded:{number} ({layer.name}): linked to {so.filename}, outside the document")
                continue
            ours = derive_png(path, f"pg_embedded:{number}/f_png")
            theirs = np.array(Image.open(io.BytesIO(so.data)).convert("RGBA")).astype(int)
            difference = compare(ours, theirs)
            print(f"   pg_embedded:{number} ({layer.name}): {so.filename}, {len(so.data)} bytes, "
                  f"{theirs.shape[1]}x{theirs.shape[0]}, largest difference {difference}")
            worst = max(worst, difference)
    print(f"largest difference over every normal-mode comparison: {worst}")
    return 0 if worst <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
