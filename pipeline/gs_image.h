/* gs_image.h: decoding the image files a scene holds, by content rather than by name: PNG through
 * gs_png (libspng), JPEG through libjpeg-turbo with the EXIF orientation (libexif) applied, so an
 * image comes out as it is meant to be seen. Images in memory are RGBA floats in [0, 1], row-major
 * (JPEG: alpha 1). */
#ifndef GS_IMAGE_H
#define GS_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"

/* Decodes a PNG or JPEG file held in memory; name only names it in errors. *rgba (4 floats per
 * pixel) owned by the caller. Errors: SW_EINVAL naming the file (neither PNG nor JPEG, corrupt,
 * truncated, more than 2^28 pixels), SW_ENOMEM. */
int gs_image_decode(const char *name, const void *data, size_t len, float **rgba, uint32_t *w,
                    uint32_t *h, struct sw_err *err);

/* The size the decoded image will have (after the EXIF orientation), reading headers only. */
int gs_image_decode_size(const char *name, const void *data, size_t len, uint32_t *w, uint32_t *h,
                         struct sw_err *err);

/* The EXIF orientation of a JPEG (1..8; 1 when it has none or the tag is invalid). */
int gs_image_jpeg_orientation(const void *data, size_t len);

/* Writes 8-bit RGB as a baseline JPEG (quality 1..100), atomically; for the scene generator and
 * tests. exif_orientation 0 writes no EXIF block, 1..8 an APP1 block holding that orientation. */
int gs_image_write_jpeg(const char *path, const uint8_t *rgb, uint32_t w, uint32_t h, int quality,
                        int exif_orientation, struct sw_err *err);

#endif
