#!/usr/bin/env python3
"""Images of the kinds that break a sampled metric (issue 29), for Benchmarks/quality.py: night
scenes, near-black frames, skies and gradients, screenshots with large flat areas, line art.
Large flat or dark regions are where an encoder's blocks show, and where a mosaic of tiles
spread on a grid sees least.

Every image is made reproducibly on a fresh machine: the synthetic ones from fixed seeds
(NumPy's PCG64), the night scenes from the shared fixture photographs (../shared/fixtures,
provenance in its README), their exposure cut in linear light and a moon or street lights
added. Two of each kind: one for tuning (the sampling and its margins were adjusted looking at
these), one for reporting (never looked at while tuning). quality.py reports both splits.

Usage: python3 Benchmarks/hard_images.py FIXTURES_DIR OUT_DIR   (writes the PNGs, prints them)
"""
import os
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFont

# (name, split, recipe)
KINDS = [
    ("night-landscape", "tune"), ("night-street", "report"),
    ("nearblack-moon", "tune"), ("nearblack-stars", "report"),
    ("sky-clouds", "tune"), ("gradient-radial", "report"),
    ("flat-dashboard", "tune"), ("flat-slides", "report"),
    ("lineart-plan", "tune"), ("lineart-colour", "report"),
]


def font(size):
    for path in ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf"):
        if os.path.exists(path):
            return ImageFont.truetype(path, size)
    return ImageFont.load_default()


def to_linear(a):
    a = a / 255.0
    return np.where(a <= 0.04045, a / 12.92, ((a + 0.055) / 1.055) ** 2.4)


def to_srgb(a):
    a = np.clip(a, 0, 1)
    return np.where(a <= 0.0031308, a * 12.92, 1.055 * a ** (1 / 2.4) - 0.055) * 255


def quantise(a, rng):
    """To 8 bits with a little sensor noise (a camera's dark frames are never clean)."""
    return Image.fromarray(np.clip(np.round(a + rng.normal(0, 0.6, a.shape)), 0, 255).astype(np.uint8))


def glow(h, w, cy, cx, radius, fall):
    yy, xx = np.mgrid[0:h, 0:w]
    d = np.sqrt((yy - cy) ** 2 + (xx - cx) ** 2)
    disc = (d <= radius).astype(float)
    halo = np.exp(-np.maximum(0, d - radius) / fall)
    return disc, halo, d


def smooth_noise(h, w, rng, scale):
    """Clouds: white noise blurred at a few scales (box filters of a cumulative sum)."""
    out = np.zeros((h, w))
    for octave, weight in ((scale, 1.0), (scale // 2, 0.5), (scale // 4, 0.25)):
        n = rng.normal(0, 1, (h // octave + 2, w // octave + 2))
        big = np.array(Image.fromarray(n.astype(np.float32)).resize((w, h), Image.BICUBIC))
        out += weight * big
    return out / 1.75


def night(fixtures, name, rng, stops, lights):
    """A fixture photograph taken down `stops` of exposure, with a moon or lamps added."""
    image = Image.open(os.path.join(fixtures, name)).convert("RGB")
    image.thumbnail((1200, 1200), Image.LANCZOS)
    a = to_linear(np.asarray(image, dtype=float)) * 2.0 ** -stops
    # Night is blue: keep a little more of blue than of red.
    a *= np.array([0.7, 0.85, 1.25])
    h, w = a.shape[:2]
    for cy, cx, r, colour in lights:
        disc, halo, _ = glow(h, w, cy * h, cx * w, r, r * 1.5)
        a += (disc[..., None] * 0.9 + halo[..., None] * 0.05) * np.array(colour)
    return quantise(to_srgb(a), rng)


def nearblack_moon(rng):
    h, w = 900, 1200
    disc, halo, d = glow(h, w, 330, 760, 70, 90)
    # The moon's surface: mottled grey; around it a faint halo; everywhere else all but black.
    surface = 0.35 + 0.12 * smooth_noise(h, w, rng, 24)
    a = np.zeros((h, w, 3)) + 0.0004
    a += halo[..., None] * 0.012 * np.array([0.9, 0.95, 1.1])
    a = np.where(disc[..., None] > 0, surface[..., None] * np.array([1.0, 0.98, 0.92]), a)
    return quantise(to_srgb(a), rng)


def nearblack_stars(rng):
    h, w = 800, 1200
    a = np.zeros((h, w, 3)) + 0.0006
    # A faint glow of a town along the bottom, stars, a darker hill's silhouette.
    yy = np.mgrid[0:h, 0:w][0]
    a += (np.exp(-(h - yy) / 180.0)[..., None]) * 0.01 * np.array([1.2, 0.8, 0.5])
    for _ in range(300):
        y, x = rng.integers(0, h * 2 // 3), rng.integers(0, w)
        a[y, x] += rng.uniform(0.02, 0.6)
    hill = (h * 0.78 + 40 * np.sin(np.arange(w) / 90.0) + 25 * np.sin(np.arange(w) / 37.0)).astype(int)
    for x in range(w):
        a[hill[x]:, x] *= 0.25
    return quantise(to_srgb(a), rng)


def sky(rng):
    h, w = 800, 1200
    yy = np.mgrid[0:h, 0:w][0] / h
    top, bottom = np.array([40, 90, 170]), np.array([170, 200, 235])
    a = top * (1 - yy[..., None]) + bottom * yy[..., None]
    clouds = np.clip(smooth_noise(h, w, rng, 160) * 0.8 + 0.1 - yy * 0.3, 0, 1)
    a = a * (1 - clouds[..., None] * 0.6) + np.array([245, 245, 250]) * clouds[..., None] * 0.6
    # A strip of dark ground along the bottom.
    a[int(h * 0.9):] = np.array([30, 45, 25]) + rng.normal(0, 6, (h - int(h * 0.9), w, 1))
    return quantise(a, rng)


def radial(rng):
    h, w = 900, 1200
    yy, xx = np.mgrid[0:h, 0:w]
    d = np.sqrt((yy - h * 0.4) ** 2 + (xx - w * 0.6) ** 2) / np.hypot(h, w)
    a = np.array([250, 170, 90]) * (1 - d[..., None] * 1.4) + np.array([60, 20, 90]) * d[..., None] * 1.4
    image = quantise(np.clip(a, 0, 255), rng)
    draw = ImageDraw.Draw(image)
    draw.text((80, 760), "Sunset sale — everything must go", fill=(255, 255, 255), font=font(44))
    return image


def dashboard(rng):
    w, h = 1280, 800
    image = Image.new("RGB", (w, h), (244, 246, 250))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, w, 56], fill=(28, 33, 43))
    draw.text((24, 16), "Analytics", fill=(235, 235, 240), font=font(22))
    for i, (x0, colour) in enumerate([(40, (33, 150, 243)), (450, (76, 175, 80)), (860, (255, 152, 0))]):
        draw.rounded_rectangle([x0, 90, x0 + 380, 250], radius=10, fill=(255, 255, 255), outline=(222, 226, 232))
        draw.text((x0 + 24, 110), ["Visitors", "Orders", "Refunds"][i], fill=(110, 115, 125), font=font(18))
        draw.text((x0 + 24, 150), f"{rng.integers(1000, 99999):,}", fill=colour, font=font(44))
    draw.rounded_rectangle([40, 290, 1240, 760], radius=10, fill=(255, 255, 255), outline=(222, 226, 232))
    points = [(80 + i * 40, 700 - int(200 + 150 * np.sin(i / 4.0) + rng.normal(0, 20))) for i in range(29)]
    draw.line(points, fill=(33, 150, 243), width=3)
    return image


def slides(rng):
    w, h = 1280, 720
    image = Image.new("RGB", (w, h), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    # A dark title band with a subtle vertical gradient, then plain white with a few bullets.
    for y in range(170):
        c = int(52 - y * 0.08)
        draw.line([0, y, w, y], fill=(c, c + 8, c + 30))
    draw.text((70, 60), "Quarterly review", fill=(255, 255, 255), font=font(56))
    for i, text in enumerate(["Revenue up 12% on the quarter", "Two new regions opened", "Hiring plan on track"]):
        draw.ellipse([90, 250 + i * 90, 106, 266 + i * 90], fill=(33, 150, 243))
        draw.text((130, 238 + i * 90), text, fill=(40, 40, 40), font=font(34))
    draw.rectangle([0, h - 40, w, h], fill=(236, 239, 243))
    return image


def plan(rng):
    w, h = 1200, 900
    image = Image.new("RGB", (w, h), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    # A floor plan: walls, doors' arcs, hatching, dimensions.
    draw.rectangle([100, 100, 1100, 800], outline=(0, 0, 0), width=6)
    draw.line([500, 100, 500, 500], fill=(0, 0, 0), width=4)
    draw.line([100, 500, 800, 500], fill=(0, 0, 0), width=4)
    draw.line([800, 500, 800, 800], fill=(0, 0, 0), width=4)
    for x0, y0 in ((500, 300), (300, 500), (800, 650)):
        draw.arc([x0 - 80, y0 - 80, x0 + 80, y0 + 80], 0, 90, fill=(0, 0, 0), width=1)
    for k in range(-700, 700, 14):
        draw.line([800 + k, 500, 800 + k + 300, 800], fill=(90, 90, 90), width=1)
    draw.rectangle([801, 100, 1097, 497], fill=(255, 255, 255), outline=(0, 0, 0), width=4)
    draw.text((200, 250), "Living 24 m²", fill=(0, 0, 0), font=font(26))
    draw.text((560, 250), "Kitchen", fill=(0, 0, 0), font=font(26))
    draw.line([100, 850, 1100, 850], fill=(0, 0, 0), width=1)
    draw.text((560, 855), "10.00 m", fill=(0, 0, 0), font=font(20))
    return image


def colour_lineart(rng):
    w, h = 1000, 1000
    image = Image.new("RGB", (w, h), (252, 250, 245))
    draw = ImageDraw.Draw(image)
    colours = [(200, 30, 40), (20, 90, 180), (20, 140, 60), (0, 0, 0)]
    for i in range(40):
        cx, cy = rng.integers(100, 900, 2)
        r = int(rng.integers(30, 200))
        draw.ellipse([cx - r, cy - r, cx + r, cy + r], outline=colours[i % 4], width=int(rng.integers(1, 4)))
    for i in range(30):
        x0, y0, x1, y1 = rng.integers(0, 1000, 4)
        draw.line([x0, y0, x1, y1], fill=colours[i % 4], width=1)
    return image


def make(fixtures, out):
    os.makedirs(out, exist_ok=True)
    made = []
    for name, split in KINDS:
        rng = np.random.default_rng(sum(map(ord, name)))
        if name == "night-landscape":
            image = night(fixtures, "orientation/landscape_1.jpg", rng, 7, [(0.12, 0.8, 28, (1.0, 0.97, 0.85))])
        elif name == "night-street":
            image = night(fixtures, "photos/jolla-phone.jpg", rng, 6,
                          [(0.3, 0.15, 6, (1.0, 0.7, 0.3)), (0.28, 0.5, 6, (1.0, 0.7, 0.3)), (0.32, 0.85, 6, (1.0, 0.7, 0.3))])
        elif name == "nearblack-moon":
            image = nearblack_moon(rng)
        elif name == "nearblack-stars":
            image = nearblack_stars(rng)
        elif name == "sky-clouds":
            image = sky(rng)
        elif name == "gradient-radial":
            image = radial(rng)
        elif name == "flat-dashboard":
            image = dashboard(rng)
        elif name == "flat-slides":
            image = slides(rng)
        elif name == "lineart-plan":
            image = plan(rng)
        else:
            image = colour_lineart(rng)
        path = os.path.join(out, f"hard-{split}-{name}.png")
        image.save(path)
        made.append((path, split))
    return made


if __name__ == "__main__":
    for path, split in make(sys.argv[1], sys.argv[2]):
        image = Image.open(path)
        mean = np.asarray(image.convert("L"), dtype=float).mean()
        print(f"{split:6} {path} {image.size[0]}x{image.size[1]} mean {mean:.1f}")
