"""The Pillow peer for Benchmarks/engine.sh: draft() (DCT-scaled decode) then a LANCZOS
thumbnail, as a careful Pillow user would write it. In scenario `three` it decodes once at the
largest size and derives all three outputs from that decode, like Derive."""
import sys
from PIL import Image

scenario, out, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sys.argv[4:]
for r in range(repeats):
    for i, path in enumerate(files):
        im = Image.open(path)
        if scenario == "one":
            im.draft("RGB", (400, 400))
            im = im.convert("RGB")
            im.thumbnail((400, 400), Image.LANCZOS)
            im.save(f"{out}/{i}.jpg", quality=80)
        else:
            im.draft("RGB", (2048, 2048))
            im = im.convert("RGB")
            for size, name, options in ((320, "s.webp", {"quality": 80}), (1024, "m.jpg", {"quality": 80}),
                                        (2048, "l.webp", {"quality": 80})):
                copy = im.copy()
                copy.thumbnail((size, size), Image.LANCZOS)
                copy.save(f"{out}/{i}{name}", **options)
