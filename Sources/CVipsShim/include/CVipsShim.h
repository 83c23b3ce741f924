// What Swift cannot call on its own in libvips and GLib: variadic functions, macros, and GValue
// set-up. One function per argument type, so every libvips operation is reachable by name
// (vips_operation_new + properties + vips_cache_operation_buildp) without a shim per operation.
#ifndef DERIVE_CVIPS_SHIM_H
#define DERIVE_CVIPS_SHIM_H

#include <stddef.h>
#include <vips/vips.h>

int dvips_init(const char *program, int malloc_arenas);

/// libvips' own EXIF parser (exif.c, exported from libvips.so though not in its public headers):
/// sets the `exif-ifdN-Tag` string fields from the image's `exif-data` block, rendered exactly as
/// the savers' EXIF update compares them. fl_keep_attribution needs that agreement, or the
/// savers rebuild the tags from the display strings. Returns 0 on success.
int vips__exif_parse(VipsImage *image);
void dvips_block_untrusted(int block);
int dvips_block_operation(const char *name, int block);
void dvips_configure(int concurrency, int cache_max_operations, size_t cache_max_memory, int cache_max_files);

// Setting an operation's input arguments. Each returns 0 on success, -1 if the argument does
// not exist or has another type (the message is in vips_error_buffer).
int dvips_set_int(VipsOperation *op, const char *name, int value);
int dvips_set_double(VipsOperation *op, const char *name, double value);
int dvips_set_bool(VipsOperation *op, const char *name, int value);
int dvips_set_string(VipsOperation *op, const char *name, const char *value);
int dvips_set_enum(VipsOperation *op, const char *name, const char *nick);
int dvips_set_image(VipsOperation *op, const char *name, VipsImage *image);
int dvips_set_images(VipsOperation *op, const char *name, VipsImage **images, int count);
int dvips_set_doubles(VipsOperation *op, const char *name, const double *values, int count);
/// The blob does not copy: the caller keeps `data` alive for as long as any image reads it.
int dvips_set_blob(VipsOperation *op, const char *name, const void *data, size_t length);

/// Sets a memory source over `data` (not copied, as with dvips_set_blob): for loaders that read
/// only from sources, such as ppmload_source.
int dvips_set_memory_source(VipsOperation *op, const char *name, const void *data, size_t length);
/// Sets a blob that takes ownership of g_malloc'd `data` (freed with the blob).
int dvips_set_owned_blob(VipsOperation *op, const char *name, void *data, size_t length);

/// Inflates a gzip stream with GIO's zlib converter into a g_malloc'd buffer. Returns it with
/// *status 0; or NULL with *status -1 when the stream is damaged or ends early, -2 when the
/// inflated data would pass `limit` bytes (a decompression bomb is stopped there).
void *dvips_gunzip(const void *data, size_t length, size_t limit, size_t *out_length, int *status);

/// Builds through the operation cache when it is on; on success `*op` may be replaced by a
/// cached twin.
/// On failure unrefs the operation's outputs; the caller still owns `*op`.
int dvips_build(VipsOperation **op);

// Reading outputs after a successful build. Images come with a new reference.
VipsImage *dvips_get_image(VipsOperation *op, const char *name);
int dvips_get_int(VipsOperation *op, const char *name, int *out);
int dvips_get_double(VipsOperation *op, const char *name, double *out);
/* The blob output `name`: a new reference (or NULL), with its data and length. Release it
   with dvips_blob_unref once the data is copied. */
VipsBlob *dvips_get_blob(VipsOperation *op, const char *name, const void **data, size_t *length);
void dvips_blob_unref(VipsBlob *blob);

void dvips_unref(void *object);

/// Copies the error buffer and clears it (libvips keeps one per process).
char *dvips_error_copy(void);

/// Sets/gets metadata on an image (GValue plumbing in C).
void dvips_image_set_int(VipsImage *image, const char *name, int value);
void dvips_image_set_ints(VipsImage *image, const char *name, const int *values, int count);
/// A string field as text (libvips formats EXIF fields as "value (description)").
char *dvips_image_get_as_string(VipsImage *image, const char *name);
/// The names of every metadata field, NULL-terminated; free with g_strfreev.
char **dvips_image_fields(VipsImage *image);
/// Allocates a contiguous copy of an image's pixels (8-bit images only); free with g_free.
void *dvips_image_write_to_memory(VipsImage *image, size_t *length);
VipsImage *dvips_image_new_from_memory_copy(const void *data, size_t length, int width, int height, int bands);

/// The q_auto search's mosaic: `count` tiles of tile_width×tile_height cut from `image` (its
/// pixels rendered into memory if they are not) at (xs[i], ys[i]), `across` to a row, copied
/// into a new image in memory with `image`'s metadata, as extract_area and arrayjoin would
/// make it but without a pipeline of operations to build and run. NULL on failure.
VipsImage *dvips_mosaic(VipsImage *image, int tile_width, int tile_height, int across, int count,
                        const int *xs, const int *ys);

#endif
