#include "CFaceShim.h"

#include <dlib/image_processing/frontal_face_detector.h>
#include <dlib/image_transforms.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <vector>

struct dface_detector {
    dlib::frontal_face_detector detector = dlib::get_frontal_face_detector();
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
