"""Hostile Photoshop documents for Benchmarks/psd/hostile.sh (after the review that found them):
small files whose layers cost far more to decode and composite than their size says.

  python3 hostile.py clipbase N SIDE out.psd   1x1 canvas, a group G of a SIDE^2 RLE base and N clipped 1x1 layers
  python3 hostile.py groups N SIDE out.psd     SIDE^2 canvas, N groups each the base of a clipped 1x1 layer
  python3 hostile.py vmsk K SIDE out.psd       SIDE^2 canvas, one 1x1 layer whose vector mask has K empty shapes
  python3 hostile.py vshapes K SIDE out.psd    SIDE^2 canvas and layer, a vector mask of K triangles
  python3 hostile.py full N SIDE out.psd       SIDE^2 canvas, N SIDE^2 RLE layers
"""
import struct, sys


def rle_rows(w, h, value=255):
    row = b''
    left = w
    while left > 0:
        n = min(128, left)
        row += struct.pack('bB', 1 - n, value)
        left -= n
    return struct.pack('>H', 1) + struct.pack('>H', len(row)) * h + row * h


def raw(w, h, value=255):
    return struct.pack('>H', 0) + bytes([value]) * (w * h)


def pascal(name):
    b = name.encode()
    s = bytes([len(b)]) + b
    while len(s) % 4:
        s += b'\0'
    return s


def block(key, data):
    return b'8BIM' + key + struct.pack('>I', len(data)) + data


class L:
    def __init__(s, name, rect=(0, 0, 0, 0), section=0, hidden=False, clipped=False, colour=(255, 0, 0), vmsk=None, rle=False):
        s.__dict__.update(locals())


def layer_bytes(l):
    t, lf, b, r = l.rect
    w, h = r - lf, b - t
    enc = rle_rows if l.rle else raw
    chans = [(-1, enc(w, h, 255)), (0, enc(w, h, l.colour[0])), (1, enc(w, h, l.colour[1])), (2, enc(w, h, l.colour[2]))]
    rec = struct.pack('>iiiiH', t, lf, b, r, len(chans))
    for cid, data in chans:
        rec += struct.pack('>hI', cid, len(data))
    extra = struct.pack('>I', 0) + struct.pack('>I', 0) + pascal(l.name)
    extra += block(b'lsct', struct.pack('>I', l.section))
    if l.vmsk is not None:
        extra += block(b'vmsk', l.vmsk)
    rec += b'8BIM' + b'norm' + bytes([255, 1 if l.clipped else 0, 2 if l.hidden else 0, 0]) + struct.pack('>I', len(extra)) + extra
    return rec, b''.join(d for _, d in chans)


def psd(w, h, layers):
    recs = b''
    data = b''
    for l in layers:
        r, d = layer_bytes(l)
        recs += r
        data += d
    info = struct.pack('>h', len(layers)) + recs + data
    if len(info) % 2:
        info += b'\0'
    section = struct.pack('>I', len(info)) + info + struct.pack('>I', 0)
    head = b'8BPS' + struct.pack('>H', 1) + b'\0' * 6 + struct.pack('>HIIHH', 3, h, w, 8, 3)
    return head + struct.pack('>I', 0) + struct.pack('>I', 0) + struct.pack('>I', len(section)) + section


def vmask(shapes, knots=()):
    """Version 3, flags 0; per shape a closed subpath record (operation 1, combine) and its knots."""
    d = struct.pack('>II', 3, 0)
    for _ in range(shapes):
        d += struct.pack('>HHh', 0, len(knots), 1) + b'\0' * 20
        for y, x in knots:
            p = struct.pack('>ii', int(y * (1 << 24)), int(x * (1 << 24)))
            d += struct.pack('>H', 2) + p * 3
    return d


kind, n, side, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
if kind == 'clipbase':
    # In a group G, so that pg_name:G names them all (a chain is at most 8 KiB).
    layers = [L('</Layer group>', section=3), L('base', (0, 0, side, side), rle=True)]
    layers += [L('c%d' % i, (0, 0, 1, 1), clipped=True) for i in range(n)] + [L('G', section=1)]
    doc = psd(1, 1, layers)
elif kind == 'groups':
    layers = []
    for i in range(n):
        layers += [L('</Layer group>', section=3), L('g%d' % i, section=1), L('c%d' % i, (0, 0, 1, 1), clipped=True)]
    doc = psd(side, side, layers)
elif kind == 'vmsk':
    doc = psd(side, side, [L('v', (0, 0, 1, 1), vmsk=vmask(n))])
elif kind == 'vshapes':
    doc = psd(side, side, [L('v', (0, 0, side, side), rle=True, vmsk=vmask(n, [(0.1, 0.1), (0.9, 0.5), (0.1, 0.9)]))])
elif kind == 'full':
    doc = psd(side, side, [L('f%d' % i, (0, 0, side, side), rle=True) for i in range(n)])
else:
    sys.exit('unknown kind ' + kind)
open(out, 'wb').write(doc)
