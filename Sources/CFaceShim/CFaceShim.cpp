#include "CFaceShim.h"

// Debian's dlib is configured with BLAS and LAPACK, which the detector needs only for one small
// SVD when it is built; dlib's own SVD does that, and the process is spared loading LAPACK, BLAS
// and gfortran at start (see Package.swift). dlib/config.h has no include guard: the two
// headers that include it come first, so the switches stay off for everything after them.
#include <dlib/algs.h>
#include <dlib/assert.h>
#include <dlib/test_for_odr_violations.h>
#undef DLIB_USE_BLAS
#undef DLIB_USE_LAPACK
#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_transforms.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <sstream>
#include <vector>

// dlib's frontal face detector scans a pyramid whose levels shrink by 5/6 (pyramid_down<6>);
// its weights do not depend on the step, so Derive loads them into a scanner whose levels
// shrink by 3/4: 30% less to scan (the levels add up to 2.3 times the image, not 3.3),
// and on the labelled set (Benchmarks/faces: 101 faces, at detection sizes 1300, 1100 and
// 900) it finds the same faces, small and turned ones included. DFACE_PYRAMID=6 builds dlib's
// own step.
#ifndef DFACE_PYRAMID
#define DFACE_PYRAMID 4
#endif

typedef dlib::object_detector<dlib::scan_fhog_pyramid<dlib::pyramid_down<DFACE_PYRAMID>>> dface_scanner;

static dface_scanner make_detector() {
    std::ostringstream out;
    dlib::serialize(dlib::get_frontal_face_detector(), out);
    std::istringstream in(out.str());
    dface_scanner detector;
    dlib::deserialize(detector, in);
    return detector;
}

struct dface_detector {
    dface_scanner detector = make_detector();
};

extern "C" dface_detector *dface_detector_new(void) {
    try {
        return new dface_detector();
    } catch (...) {
        return nullptr;
    }
}

extern "C" void dface_detector_free(dface_detector *detector) {
    delete detector;
}

extern "C" int dface_detect(dface_detector *detector, const unsigned char *pixels, int width, int height, size_t stride,
                            int upsample, double threshold, dface_box *boxes, int capacity, char *error, size_t error_size) {
    if (error_size > 0) error[0] = 0;
    if (!detector || !pixels || width <= 0 || height <= 0 || stride < (size_t)width || upsample < 0 || upsample > 2) {
        if (error_size > 0) std::snprintf(error, error_size, "invalid arguments");
        return -1;
    }
    try {
        dlib::array2d<unsigned char> image(height, width);
        for (int row = 0; row < height; row++) {
            std::copy(pixels + (size_t)row * stride, pixels + (size_t)row * stride + width, &image[row][0]);
        }
        for (int i = 0; i < upsample; i++) dlib::pyramid_up(image);
        std::vector<dlib::rect_detection> found;
        detector->detector(image, found, threshold);
        std::sort(found.begin(), found.end(), [](const dlib::rect_detection &a, const dlib::rect_detection &b) {
            return a.detection_confidence > b.detection_confidence;
        });
        const double scale = 1.0 / double(1 << upsample);
        const int count = (int)found.size();
        for (int i = 0; i < count && i < capacity; i++) {
            const dlib::rectangle &r = found[i].rect;
            boxes[i].x = (int)(r.left() * scale + 0.5);
            boxes[i].y = (int)(r.top() * scale + 0.5);
            boxes[i].width = (int)(r.width() * scale + 0.5);
            boxes[i].height = (int)(r.height() * scale + 0.5);
            boxes[i].score = found[i].detection_confidence;
        }
        return count;
    } catch (const std::bad_alloc &) {
        if (error_size > 0) std::snprintf(error, error_size, "out of memory");
        return -1;
    } catch (const std::exception &e) {
        if (error_size > 0) std::snprintf(error, error_size, "%s", e.what());
        return -1;
    } catch (...) {
        if (error_size > 0) std::snprintf(error, error_size, "unknown error");
        return -1;
    }
}
