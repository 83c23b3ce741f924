// The face detector behind a C interface, so Swift never sees C++: dlib's HOG frontal-face
// detector (five HOG filters: front, left- and right-looking, and front rotated either way).
// Its model is compiled into dlib's header, so nothing is loaded from disk or the network.
#ifndef DERIVE_CFACE_SHIM_H
#define DERIVE_CFACE_SHIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One detection, in the pixels of the image passed in. `score` is the detector's margin:
/// above 0 is a face; larger is surer.
typedef struct {
    int x;
    int y;
    int width;
    int height;
    double score;
} dface_box;

typedef struct dface_detector dface_detector;

/// 1 when this CPU can run the detector as built (x86-64-v3 builds need AVX2 and FMA), else 0.
int dface_cpu_supported(void);
/// The instruction set the detector was built for: "x86-64-v3" or "x86-64".
const char *dface_instruction_set(void);

/// A detector; one per thread (detecting mutates scratch buffers). NULL when out of memory.
dface_detector *dface_detector_new(void);
void dface_detector_free(dface_detector *detector);

/// Detects faces in an 8-bit grey image of `width` x `height` with rows `stride` bytes apart.
/// `upsample` doubles the image that many times first (0–2), to find faces smaller than the
/// detector's 80-pixel window. Writes up to `capacity` boxes, best first, and returns how many
/// faces there were (may exceed `capacity`), or -1 on failure with a message in `error`.
int dface_detect(dface_detector *detector, const unsigned char *pixels, int width, int height, size_t stride,
                 int upsample, double threshold, dface_box *boxes, int capacity, char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
