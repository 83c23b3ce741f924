#include "CJpegShim.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>


struct derive_jpeg_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
};

static void derive_jpeg_fail(j_common_ptr info) {
    longjmp(((struct derive_jpeg_error *) info->err)->jump, 1);
}

static void derive_jpeg_quiet(j_common_ptr info, int level) {
    (void) info;
    (void) level;
}

/// libjpeg's error manager made to jump back (to the caller's setjmp) instead of exiting the
/// process, and to print nothing: a bad candidate is an error code, never a message on stderr.
static struct jpeg_error_mgr *derive_jpeg_errors(struct derive_jpeg_error *error) {
    struct jpeg_error_mgr *manager = jpeg_std_error(&error->manager);
    manager->error_exit = derive_jpeg_fail;
    manager->emit_message = derive_jpeg_quiet;
    return manager;
}

int derive_jpeg_decode(const void *data, size_t length, unsigned char *pixels, size_t capacity, int *width, int *height,
                       int *bands) {
    struct jpeg_decompress_struct info;
    struct derive_jpeg_error error;
    info.err = derive_jpeg_errors(&error);
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&info);
        return -1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, (const unsigned char *) data, (unsigned long) length);
    jpeg_read_header(&info, TRUE);
    if (info.jpeg_color_space != JCS_YCbCr && info.jpeg_color_space != JCS_GRAYSCALE && info.jpeg_color_space != JCS_RGB) {
        jpeg_destroy_decompress(&info);
        return 1;
    }
    info.out_color_space = info.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_calc_output_dimensions(&info);
    *width = (int) info.output_width;
    *height = (int) info.output_height;
    *bands = info.output_components;
    size_t stride = (size_t) info.output_width * (size_t) info.output_components;
    if (pixels == NULL || capacity < stride * info.output_height) {
        jpeg_destroy_decompress(&info);
        return 2;
    }
    jpeg_start_decompress(&info);
    while (info.output_scanline < info.output_height) {
        JSAMPROW row = pixels + (size_t) info.output_scanline * stride;
        jpeg_read_scanlines(&info, &row, 1);
    }
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    return 0;
}

int derive_jpeg_encode(const unsigned char *pixels, int width, int height, int bands, int quality, int full_chroma,
                      int progressive, unsigned char **data, size_t *length) {
    struct jpeg_compress_struct info;
    struct derive_jpeg_error error;
    unsigned char *volatile out = NULL;
    unsigned long size = 0;
    *data = NULL;
    *length = 0;
    if (bands != 1 && bands != 3) {
        return 1;
    }
    info.err = derive_jpeg_errors(&error);
    if (setjmp(error.jump)) {
        jpeg_destroy_compress(&info);
        free(out);
        return -1;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, (unsigned char **) &out, &size);
    info.image_width = (JDIMENSION) width;
    info.image_height = (JDIMENSION) height;
    info.input_components = bands;
    info.in_color_space = bands == 3 ? JCS_RGB : JCS_GRAYSCALE;
    // What jpegsave sets, in its order: defaults, quality (baseline tables), progression, and
    // whole chroma by clearing luma's 2x2 sampling. Not its optimised Huffman tables: a second
    // pass over the coefficients that changes the size, never the pixels, and these candidates
    // are only decoded and scored.
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    if (progressive) {
        jpeg_simple_progression(&info);
    }
    if (bands == 3 && full_chroma) {
        info.comp_info[0].h_samp_factor = 1;
        info.comp_info[0].v_samp_factor = 1;
    }
    jpeg_start_compress(&info, TRUE);
    size_t stride = (size_t) width * (size_t) bands;
    while (info.next_scanline < info.image_height) {
        JSAMPROW row = (JSAMPROW) (pixels + (size_t) info.next_scanline * stride);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    *data = out;
    *length = size;
    return 0;
}
