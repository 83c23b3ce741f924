#!/usr/bin/env bash
# A contact sheet of every effect Derive has, on one photograph, so a person can look at them
# all at once: each example in Docs/effects/examples.tsv (EffectExamplesTests keeps it complete)
# derived by `derive run` after a 240x180 fill, then laid out with its label by Pillow.
# Usage: bash Scripts/effects-contact-sheet.sh [PHOTO] [OUT]
#   (default: the shared fixtures' grace_hopper_noexif.jpg, Docs/effects/contact-sheet.jpg)
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh
ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" python3 python3-pip
ensure_python_modules PIL=pillow
fixtures="${DERIVE_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
photo="${1:-$fixtures/photos/grace_hopper_noexif.jpg}"
out="${2:-Docs/effects/contact-sheet.jpg}"

swift build --product derive >/dev/null
derive="$(swift build --show-bin-path)/derive"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$derive" run "$photo" --chain 'c_fill,w_240,h_180,g_auto/f_png' --out "$work/original" >/dev/null
grep -v '^#' Docs/effects/examples.tsv | while IFS=$'\t' read -r label chain; do
    [ -n "$label" ] || continue
    if ! "$derive" run "$photo" --chain "c_fill,w_240,h_180,g_auto/$chain/f_png" --out "$work/$label" >/dev/null 2>"$work/$label.err"; then
        echo "$label ($chain) failed: $(head -1 "$work/$label.err")" >&2
    fi
done

python3 - "$work" "$out" <<'PY'
import pathlib, sys
from PIL import Image, ImageDraw

work, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
examples = [("original", "(none)")]
for line in pathlib.Path("Docs/effects/examples.tsv").read_text().splitlines():
    if line and not line.startswith("#"):
        label, chain = line.split("\t", 1)
        examples.append((label, chain))
columns, cell_w, cell_h, caption = 6, 240, 180, 30
rows = (len(examples) + columns - 1) // columns
sheet = Image.new("RGB", (columns * (cell_w + 8) + 8, rows * (cell_h + caption + 8) + 8), "white")
draw = ImageDraw.Draw(sheet)
for index, (label, chain) in enumerate(examples):
    x, y = 8 + index % columns * (cell_w + 8), 8 + index // columns * (cell_h + caption + 8)
    files = sorted((work / label).glob("**/*.png"))
    if files:
        image = Image.open(files[0]).convert("RGBA")
        # Transparency shows as a checkerboard.
        board = Image.new("RGBA", image.size, "white")
        for cx in range(0, image.width, 12):
            for cy in range(0, image.height, 12):
                if (cx // 12 + cy // 12) % 2:
                    board.paste((220, 220, 220, 255), (cx, cy, cx + 12, cy + 12))
        sheet.paste(Image.alpha_composite(board, image).convert("RGB"), (x, y))
    else:
        draw.rectangle((x, y, x + cell_w - 1, y + cell_h - 1), outline="red")
    draw.text((x, y + cell_h + 3), label, fill="black")
    draw.text((x, y + cell_h + 15), chain[:38], fill=(90, 90, 90))
out.parent.mkdir(parents=True, exist_ok=True)
sheet.save(out, quality=85)
print(f"{out}: {len(examples)} images")
PY
