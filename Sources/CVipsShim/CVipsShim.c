#include "CVipsShim.h"
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dvips_init(const char *program, int malloc_arenas) {
    // Each libvips worker thread would get its own glibc malloc arena, and a long-running worker
    // grows by tens of megabytes for nothing; a few arenas keep memory flat at the same speed
    // (the caller's choice: two, or one per worker slot). An operator's MALLOC_ARENA_MAX wins.
    if (getenv("MALLOC_ARENA_MAX") == NULL) {
        mallopt(M_ARENA_MAX, malloc_arenas > 0 ? malloc_arenas : 2);
    }
    // The q_auto search allocates and frees planes of a few hundred kilobytes to a few
    // megabytes for every candidate it scores. Above glibc's mmap threshold each is mapped,
    // faulted in page by page and unmapped again, and unmapping in a process with other busy
    // threads costs a TLB shootdown: a round of two candidates ran 13-16 ms instead of 8-11.
    // Keeping blocks under 8 MiB in the heap, and up to 32 MiB of free heap before trimming,
    // lets them be reused. Images larger than that are still mapped and returned at once.
    // An operator's MALLOC_MMAP_THRESHOLD_ or MALLOC_TRIM_THRESHOLD_ wins.
    if (getenv("MALLOC_MMAP_THRESHOLD_") == NULL && getenv("MALLOC_TRIM_THRESHOLD_") == NULL) {
        mallopt(M_MMAP_THRESHOLD, 8 * 1024 * 1024);
        mallopt(M_TRIM_THRESHOLD, 32 * 1024 * 1024);
    }
    return VIPS_INIT(program);
}

void dvips_block_untrusted(int block) {
    vips_block_untrusted_set(block);
}

int dvips_block_operation(const char *name, int block) {
    if (g_type_from_name(name) == 0) {
        return -1;
    }
    vips_operation_block_set(name, block);
    return 0;
}

void dvips_configure(int concurrency, int cache_max_operations, size_t cache_max_memory, int cache_max_files) {
    vips_concurrency_set(concurrency);
    vips_cache_set_max(cache_max_operations);
    vips_cache_set_max_mem(cache_max_memory);
    vips_cache_set_max_files(cache_max_files);
}

static int set_value(VipsOperation *op, const char *name, GValue *value) {
    GParamSpec *pspec;
    VipsArgumentClass *argument_class;
    VipsArgumentInstance *argument_instance;
    if (vips_object_get_argument(VIPS_OBJECT(op), name, &pspec, &argument_class, &argument_instance)) {
        g_value_unset(value);
        return -1;
    }
    /* GLib would only warn and keep the default: make a mistyped argument an error. */
    if (!g_value_type_transformable(G_VALUE_TYPE(value), G_PARAM_SPEC_VALUE_TYPE(pspec))) {
        vips_error("derive", "argument %s of %s takes a %s, not a %s", name, vips_nickname_find(G_OBJECT_TYPE(op)),
                   g_type_name(G_PARAM_SPEC_VALUE_TYPE(pspec)), G_VALUE_TYPE_NAME(value));
        g_value_unset(value);
        return -1;
    }
    g_object_set_property(G_OBJECT(op), name, value);
    g_value_unset(value);
    return 0;
}

int dvips_set_int(VipsOperation *op, const char *name, int v) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, G_TYPE_INT);
    g_value_set_int(&value, v);
    return set_value(op, name, &value);
}

int dvips_set_double(VipsOperation *op, const char *name, double v) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, G_TYPE_DOUBLE);
    g_value_set_double(&value, v);
    return set_value(op, name, &value);
}

int dvips_set_bool(VipsOperation *op, const char *name, int v) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, G_TYPE_BOOLEAN);
    g_value_set_boolean(&value, v);
    return set_value(op, name, &value);
}

int dvips_set_string(VipsOperation *op, const char *name, const char *v) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, G_TYPE_STRING);
    g_value_set_string(&value, v);
    return set_value(op, name, &value);
}

int dvips_set_enum(VipsOperation *op, const char *name, const char *nick) {
    GParamSpec *pspec;
    VipsArgumentClass *argument_class;
    VipsArgumentInstance *argument_instance;
    if (vips_object_get_argument(VIPS_OBJECT(op), name, &pspec, &argument_class, &argument_instance)) {
        return -1;
    }
    GType type = G_PARAM_SPEC_VALUE_TYPE(pspec);
    int number;
    if (G_TYPE_IS_ENUM(type)) {
        number = vips_enum_from_nick("derive", type, nick);
    } else if (G_TYPE_IS_FLAGS(type)) {
        number = vips_flags_from_nick("derive", type, nick);
    } else {
        vips_error("derive", "argument %s is not an enum", name);
        return -1;
    }
    if (number < 0) {
        return -1;
    }
    GValue value = G_VALUE_INIT;
    g_value_init(&value, type);
    if (G_TYPE_IS_ENUM(type)) {
        g_value_set_enum(&value, number);
    } else {
        g_value_set_flags(&value, number);
    }
    return set_value(op, name, &value);
}

int dvips_set_image(VipsOperation *op, const char *name, VipsImage *image) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, VIPS_TYPE_IMAGE);
    g_value_set_object(&value, image);
    return set_value(op, name, &value);
}

int dvips_set_images(VipsOperation *op, const char *name, VipsImage **images, int count) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, VIPS_TYPE_ARRAY_IMAGE);
    vips_value_set_array_image(&value, count);
    VipsImage **array = vips_value_get_array_image(&value, NULL);
    for (int i = 0; i < count; i++) {
        array[i] = images[i];
        g_object_ref(images[i]);
    }
    return set_value(op, name, &value);
}

int dvips_set_doubles(VipsOperation *op, const char *name, const double *values, int count) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, VIPS_TYPE_ARRAY_DOUBLE);
    vips_value_set_array_double(&value, values, count);
    return set_value(op, name, &value);
}

int dvips_set_blob(VipsOperation *op, const char *name, const void *data, size_t length) {
    VipsBlob *blob = vips_blob_new(NULL, data, length);
    GValue value = G_VALUE_INIT;
    g_value_init(&value, VIPS_TYPE_BLOB);
    g_value_set_boxed(&value, blob);
    vips_area_unref(VIPS_AREA(blob));
    return set_value(op, name, &value);
}

int dvips_build(VipsOperation **op) {
    // With the cache off (Derive's default) build directly: no hashing, no cache lock.
    int status = vips_cache_get_max() > 0 ? vips_cache_operation_buildp(op) : vips_object_build(VIPS_OBJECT(*op));
    if (status) {
        vips_object_unref_outputs(VIPS_OBJECT(*op));
        return -1;
    }
    return 0;
}

VipsImage *dvips_get_image(VipsOperation *op, const char *name) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, VIPS_TYPE_IMAGE);
    g_object_get_property(G_OBJECT(op), name, &value);
    VipsImage *image = VIPS_IMAGE(g_value_get_object(&value));
    if (image) {
        g_object_ref(image);
    }
    g_value_unset(&value);
    return image;
}

int dvips_get_int(VipsOperation *op, const char *name, int *out) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, G_TYPE_INT);
    g_object_get_property(G_OBJECT(op), name, &value);
    *out = g_value_get_int(&value);
    g_value_unset(&value);
    return 0;
}

int dvips_get_double(VipsOperation *op, const char *name, double *out) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, G_TYPE_DOUBLE);
    g_object_get_property(G_OBJECT(op), name, &value);
    *out = g_value_get_double(&value);
    g_value_unset(&value);
    return 0;
}

VipsBlob *dvips_get_blob(VipsOperation *op, const char *name, const void **data, size_t *length) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, VIPS_TYPE_BLOB);
    g_object_get_property(G_OBJECT(op), name, &value);
    VipsBlob *blob = g_value_dup_boxed(&value);
    g_value_unset(&value);
    *data = NULL;
    *length = 0;
    if (blob) {
        *data = vips_blob_get(blob, length);
    }
    return blob;
}

void dvips_blob_unref(VipsBlob *blob) {
    if (blob) {
        vips_area_unref(VIPS_AREA(blob));
    }
}

void dvips_unref(void *object) {
    if (object) {
        g_object_unref(object);
    }
}

char *dvips_error_copy(void) {
    char *message = g_strdup(vips_error_buffer());
    vips_error_clear();
    return message;
}

void dvips_image_set_int(VipsImage *image, const char *name, int value) {
    vips_image_set_int(image, name, value);
}

void dvips_image_set_ints(VipsImage *image, const char *name, const int *values, int count) {
    vips_image_set_array_int(image, name, values, count);
}

char *dvips_image_get_as_string(VipsImage *image, const char *name) {
    char *out = NULL;
    if (vips_image_get_as_string(image, name, &out)) {
        vips_error_clear();
        return NULL;
    }
    return out;
}

char **dvips_image_fields(VipsImage *image) {
    return vips_image_get_fields(image);
}

void *dvips_image_write_to_memory(VipsImage *image, size_t *length) {
    return vips_image_write_to_memory(image, length);
}

VipsImage *dvips_image_new_from_memory_copy(const void *data, size_t length, int width, int height, int bands) {
    return vips_image_new_from_memory_copy(data, length, width, height, bands, VIPS_FORMAT_UCHAR);
}

int dvips_set_memory_source(VipsOperation *op, const char *name, const void *data, size_t length) {
    VipsSource *source = vips_source_new_from_memory(data, length);
    if (source == NULL) {
        return -1;
    }
    GValue value = G_VALUE_INIT;
    g_value_init(&value, VIPS_TYPE_SOURCE);
    g_value_set_object(&value, source);
    g_object_unref(source);
    return set_value(op, name, &value);
}

int dvips_set_owned_blob(VipsOperation *op, const char *name, void *data, size_t length) {
    VipsBlob *blob = vips_blob_new((VipsCallbackFn) g_free, data, length);
    GValue value = G_VALUE_INIT;
    g_value_init(&value, VIPS_TYPE_BLOB);
    g_value_set_boxed(&value, blob);
    vips_area_unref(VIPS_AREA(blob));
    return set_value(op, name, &value);
}

void *dvips_gunzip(const void *data, size_t length, size_t limit, size_t *out_length, int *status) {
    GConverter *converter = G_CONVERTER(g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP));
    size_t capacity = limit < 64 * 1024 ? (limit > 0 ? limit : 1) : 64 * 1024, used = 0, consumed = 0;
    char *out = g_malloc(capacity);
    int grow = 0;
    *status = -1;
    for (;;) {
        if (grow || used == capacity) {
            if (capacity >= limit) {
                *status = -2;
                break;
            }
            capacity = capacity * 2 > limit ? limit : capacity * 2;
            out = g_realloc(out, capacity);
            grow = 0;
        }
        gsize read = 0, written = 0;
        GError *error = NULL;
        GConverterResult result = g_converter_convert(converter, (const char *) data + consumed, length - consumed,
                                                      out + used, capacity - used, G_CONVERTER_INPUT_AT_END,
                                                      &read, &written, &error);
        consumed += read;
        used += written;
        if (result == G_CONVERTER_ERROR) {
            // NO_SPACE asks for a larger output buffer; anything else (PARTIAL_INPUT for a cut
            // stream, INVALID_DATA) is damaged data.
            grow = g_error_matches(error, G_IO_ERROR, G_IO_ERROR_NO_SPACE);
            g_error_free(error);
            if (grow) {
                continue;
            }
            break;
        }
        if (result == G_CONVERTER_FINISHED) {
            *status = 0;
            break;
        }
        if (read == 0 && written == 0 && used < capacity) {
            break; // no progress although all input was given: the stream ends early
        }
    }
    g_object_unref(converter);
    if (*status != 0) {
        g_free(out);
        return NULL;
    }
    *out_length = used;
    return out;
}

VipsImage *dvips_mosaic(VipsImage *image, int tile_width, int tile_height, int across, int count,
                        const int *xs, const int *ys) {
    const VipsPel *data = vips_image_get_data(image);
    if (data == NULL || across < 1 || count < across || count % across != 0) {
        return NULL;
    }
    VipsImage *out = vips_image_new_memory();
    VipsImage *inputs[] = {image, NULL};
    if (vips_image_pipeline_array(out, VIPS_DEMAND_STYLE_THINSTRIP, inputs)) {
        g_object_unref(out);
        return NULL;
    }
    out->Xsize = tile_width * across;
    out->Ysize = tile_height * (count / across);
    if (vips_image_write_prepare(out)) {
        g_object_unref(out);
        return NULL;
    }
    size_t pel = VIPS_IMAGE_SIZEOF_PEL(image), row = (size_t) tile_width * pel;
    for (int i = 0; i < count; i++) {
        int left = (i % across) * tile_width, top = (i / across) * tile_height;
        for (int y = 0; y < tile_height; y++) {
            memcpy(VIPS_IMAGE_ADDR(out, left, top + y), VIPS_IMAGE_ADDR(image, xs[i], ys[i] + y), row);
        }
    }
    return out;
}
