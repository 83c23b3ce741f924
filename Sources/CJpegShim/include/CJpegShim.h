#ifndef CJPEGSHIM_H
#define CJPEGSHIM_H

#include <stddef.h>

// libjpeg-turbo (Debian's libjpeg62-turbo-dev) for the q_auto search's JPEG candidates on a
// sample: the same library and settings libvips' jpegload and jpegsave use, without libvips'
// pipeline and thread pool around them, which cost the search more than the coding itself.

/// Decodes a JPEG in memory with libjpeg-turbo straight to 8-bit RGB (or grey) rows: what
/// jpegload gives for a YCbCr, RGB or grey JPEG (the same library, the same defaults), without
/// libvips' pipeline and thread pool around it, which cost the q_auto search more than the
/// decoding. The caller's buffer receives the rows (no copy of a buffer of the shim's own):
/// called with `pixels` null (or `capacity` below width × height × bands) it only reads the
/// header, sets the size and returns 2; then again with a buffer that large, it decodes into
/// it and returns 0. 1 for another colour space (CMYK: use jpegload), -1 when the data is not
/// a JPEG libjpeg can read.
int derive_jpeg_decode(const void *data, size_t length, unsigned char *pixels, size_t capacity, int *width, int *height,
                       int *bands);

/// Encodes 8-bit RGB or grey rows as jpegsave does (the same library and settings: the decoded
/// pixels are identical at every quality, chroma mode and progression) but with libjpeg's
/// standard Huffman tables instead of optimised ones (a larger file, the same pixels, one pass
/// fewer), without metadata and without libvips' pipeline and thread pool: for the q_auto
/// search's JPEG candidates, which are only decoded and scored. Returns 0 with a malloc'd
/// buffer in *data (free it), 1 for another band count, -1 on failure.
int derive_jpeg_encode(const unsigned char *pixels, int width, int height, int bands, int quality, int full_chroma,
                      int progressive, unsigned char **data, size_t *length);

#endif
