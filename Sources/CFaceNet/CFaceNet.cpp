#include "CFaceNet.h"

#include <opencv2/core.hpp>
#include <opencv2/dnn.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <list>
#include <new>
#include <string>
#include <utility>
#include <vector>

// CenterFace (Xu et al. 2019, MIT licence) predicts, on a grid of a quarter of the input, a heat
// map of face centres, each centre's box size (log, in grid cells) and sub-cell offset, and five
// landmarks. The ONNX file is exported with a fixed input shape; OpenCV 4.6 fixes the shapes of
// its upsampling layers at the first forward pass, so a network serves one input size (run at
// another, it answers wrongly rather than failing). Every image is therefore placed on one
// canvas whose size the caller chooses once per process (DERIVE_FACE_DETECTION_CANVAS), and one
// network is kept: each holds its layers' blobs for the size it ran at (about 250 MB at 1024
// square), so a network per size made a worker of two slots grow to 1.7 GB where it had used
// 200 MB. A canvas of another size replaces the network (read again, about 100 ms).
struct dnet_detector {
    std::string path;
    std::list<std::pair<std::pair<int, int>, cv::dnn::Net>> nets;
    // The last detection's stages in milliseconds, processor time of the calling thread then
    // wall time (dnet_last_timings): filling the blob, the forward pass, reading the boxes.
    double timings[6] = {0, 0, 0, 0, 0, 0};

    cv::dnn::Net &net(int width, int height) {
        const auto key = std::make_pair(width, height);
        for (auto it = nets.begin(); it != nets.end(); ++it) {
            if (it->first == key) {
                nets.splice(nets.begin(), nets, it);
                return nets.front().second;
            }
        }
        for (auto it = nets.begin(); it != nets.end(); ++it) {
            if (it->first == std::make_pair(0, 0)) {  // the network read when opening, not run yet
                it->first = key;
                nets.splice(nets.begin(), nets, it);
                return nets.front().second;
            }
        }
        cv::dnn::Net made = cv::dnn::readNetFromONNX(path);
        made.setPreferableBackend(cv::dnn::DNN_BACKEND_OPENCV);
        made.setPreferableTarget(cv::dnn::DNN_TARGET_CPU);
        nets.emplace_front(key, made);
        if (nets.size() > 1) nets.pop_back();
        return nets.front().second;
    }
};

static double thread_cpu_ms() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double wall_ms() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void say(char *error, size_t size, const char *text) {
    if (size > 0) std::snprintf(error, size, "%s", text);
}

extern "C" dnet_detector *dnet_open(const char *model_path, char *error, size_t error_size) {
    if (error_size > 0) error[0] = 0;
    if (!model_path) {
        say(error, error_size, "no model path");
        return nullptr;
    }
    try {
        cv::setNumThreads(1);  // Derive runs one job per core; OpenCV's own pool would contend
        auto *detector = new dnet_detector();
        detector->path = model_path;
        // Read once here so that a missing or damaged file fails when the detector is built,
        // not at the first photograph; the network is kept for the commonest size.
        detector->nets.emplace_front(std::make_pair(0, 0), cv::dnn::readNetFromONNX(model_path));
        if (detector->nets.front().second.empty()) {
            delete detector;
            say(error, error_size, "the model file holds no network");
            return nullptr;
        }
        return detector;
    } catch (const std::exception &e) {
        say(error, error_size, e.what());
        return nullptr;
    } catch (...) {
        say(error, error_size, "unknown error reading the model");
        return nullptr;
    }
}

extern "C" void dnet_free(dnet_detector *detector) {
    delete detector;
}

static float iou(const dnet_box &a, const dnet_box &b) {
    const int x1 = std::max(a.x, b.x), y1 = std::max(a.y, b.y);
    const int x2 = std::min(a.x + a.width, b.x + b.width), y2 = std::min(a.y + a.height, b.y + b.height);
    const float inter = float(std::max(0, x2 - x1)) * float(std::max(0, y2 - y1));
    const float all = float(a.width) * a.height + float(b.width) * b.height - inter;
    return all > 0 ? inter / all : 0;
}

extern "C" int dnet_detect_on_canvas(dnet_detector *detector, const unsigned char *rgb, int width, int height, size_t stride,
                           int canvas_width, int canvas_height, float threshold, dnet_box *boxes, int capacity,
                           char *error, size_t error_size) {
    if (error_size > 0) error[0] = 0;
    if (!detector || !rgb || width <= 0 || height <= 0 || stride < (size_t)width * 3 || capacity < 0 ||
        canvas_width < 32 || canvas_height < 32 || canvas_width % 32 || canvas_height % 32) {
        say(error, error_size, "invalid arguments");
        return -1;
    }
    if (width > canvas_width || height > canvas_height) {
        say(error, error_size, "the image is larger than the canvas");
        return -1;
    }
    try {
        const int W = canvas_width, H = canvas_height;
        const double cpu0 = thread_cpu_ms(), wall0 = wall_ms();
        // The image at the top left of a canvas of the network's stride; the padding is black
        // and nothing is stretched, so boxes need no rescaling.
        cv::Mat blob({1, 3, H, W}, CV_32F, cv::Scalar(0));
        for (int c = 0; c < 3; c++) {
            float *plane = blob.ptr<float>(0, c);
            for (int y = 0; y < height; y++) {
                const unsigned char *row = rgb + (size_t)y * stride + c;
                float *out = plane + (size_t)y * W;
                for (int x = 0; x < width; x++) out[x] = row[3 * x];
            }
        }
        cv::dnn::Net &net = detector->net(W, H);
        net.setInput(blob, "input.1");
        std::vector<cv::Mat> outs;
        const double cpu1 = thread_cpu_ms(), wall1 = wall_ms();
        net.forward(outs, std::vector<cv::String>{"537", "538", "539"});
        const double cpu2 = thread_cpu_ms(), wall2 = wall_ms();
        const cv::Mat &heat = outs[0], &scale = outs[1], &offset = outs[2];
        const int gh = heat.size[2], gw = heat.size[3];
        const float *hm = heat.ptr<float>(0, 0);
        const float *s0 = scale.ptr<float>(0, 0), *s1 = scale.ptr<float>(0, 1);
        const float *o0 = offset.ptr<float>(0, 0), *o1 = offset.ptr<float>(0, 1);
        std::vector<dnet_box> found;
        for (int y = 0; y < gh; y++) {
            for (int x = 0; x < gw; x++) {
                const int i = y * gw + x;
                if (!(hm[i] > threshold)) continue;
                const float bh = std::exp(s0[i]) * 4, bw = std::exp(s1[i]) * 4;
                const float cx = (x + o1[i] + 0.5f) * 4, cy = (y + o0[i] + 0.5f) * 4;
                const float x1 = std::max(0.f, cx - bw / 2), y1 = std::max(0.f, cy - bh / 2);
                const float x2 = std::min(float(width), cx + bw / 2), y2 = std::min(float(height), cy + bh / 2);
                if (x2 - x1 < 1 || y2 - y1 < 1) continue;
                found.push_back({(int)std::lround(x1), (int)std::lround(y1), (int)std::lround(x2 - x1), (int)std::lround(y2 - y1), hm[i]});
            }
        }
        std::sort(found.begin(), found.end(), [](const dnet_box &a, const dnet_box &b) { return a.score > b.score; });
        // Non-maximum suppression at IoU 0.3, as CenterFace's own decoder does.
        std::vector<dnet_box> kept;
        for (const dnet_box &box : found) {
            bool overlaps = false;
            for (const dnet_box &k : kept) {
                if (iou(box, k) >= 0.3f) {
                    overlaps = true;
                    break;
                }
            }
            if (!overlaps) kept.push_back(box);
        }
        const int count = (int)kept.size();
        for (int i = 0; i < count && i < capacity; i++) boxes[i] = kept[i];
        const double cpu3 = thread_cpu_ms(), wall3 = wall_ms();
        const double stamps[6] = {cpu1 - cpu0, cpu2 - cpu1, cpu3 - cpu2, wall1 - wall0, wall2 - wall1, wall3 - wall2};
        std::copy(stamps, stamps + 6, detector->timings);
        return count;
    } catch (const std::bad_alloc &) {
        say(error, error_size, "out of memory");
        return -1;
    } catch (const std::exception &e) {
        say(error, error_size, e.what());
        return -1;
    } catch (...) {
        say(error, error_size, "unknown error");
        return -1;
    }
}

extern "C" int dnet_last_timings(const dnet_detector *detector, double *milliseconds, int count) {
    if (!detector || !milliseconds || count < 0) return -1;
    const int n = std::min(count, 6);
    std::copy(detector->timings, detector->timings + n, milliseconds);
    return n;
}
