/* gs_png.h: PNG read and write through libspng, with errors that name the file and say whether it
 * is missing, truncated or corrupt. Images in memory are row-major, interleaved channels. */
#ifndef GS_PNG_H
#define GS_PNG_H

#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"

/* Reads any PNG (grey, grey+alpha, palette, RGB, RGBA; 1- to 16-bit) as RGBA floats in [0, 1]
 * (8-bit samples / 255, 16-bit / 65535; no alpha channel -> alpha 1). *rgba_out (4 floats per
 * pixel) owned by the caller (free). *bit_depth_out (may be NULL) gets the file's sample depth.
 * Errors: SW_ENOTFOUND (no such file), SW_EINVAL (not a PNG, corrupt, truncated), SW_EIO,
 * SW_ENOMEM. */
int gs_png_read_rgba(const char *path, float **rgba_out, uint32_t *width, uint32_t *height,
                     int *bit_depth_out, struct sw_err *err);

/* The same two, decoding a file already in memory; path only names it in errors. */
int gs_png_decode_rgba(const char *path, const void *data, size_t len, float **rgba_out,
                       uint32_t *width, uint32_t *height, int *bit_depth_out, struct sw_err *err);
int gs_png_decode_size(const char *path, const void *data, size_t len, uint32_t *width,
                       uint32_t *height, struct sw_err *err);

/* Reads only the size from the PNG header (the file must still be a well-formed PNG header). */
int gs_png_read_size(const char *path, uint32_t *width, uint32_t *height, struct sw_err *err);

/* Writes 8-bit RGB (channels 3) or RGBA (channels 4) samples, atomically. */
int gs_png_write8(const char *path, const uint8_t *pixels, uint32_t width, uint32_t height,
                  int channels, struct sw_err *err);
/* Writes 16-bit RGB or RGBA samples (host order), atomically. */
int gs_png_write16(const char *path, const uint16_t *pixels, uint32_t width, uint32_t height,
                   int channels, struct sw_err *err);
/* Writes float RGB or RGBA in [0, 1] as 8-bit (clamped, rounded to nearest), atomically. */
int gs_png_write_float(const char *path, const float *pixels, uint32_t width, uint32_t height,
                       int channels, struct sw_err *err);

#endif
