/* gs_png.c: PNG decode/encode through libspng (in-memory buffers, so a short file is detected as
 * truncated rather than as an I/O error), with errors naming the file. */
#include "gs_png.h"

#include <spng.h>
#include <stdlib.h>
#include <string.h>

#include "sw_fs.h"

static int spng_fail(struct sw_err *err, const char *path, const char *what, int rc) {
  if (rc == SPNG_EOF || rc == SPNG_IO_ERROR)
    return sw_err_set(err, SW_EINVAL, "%s: truncated PNG (%s ended early)", path, what);
  if (rc == SPNG_ESIGNATURE)
    return sw_err_set(err, SW_EINVAL, "%s: not a PNG file (bad signature)", path);
  return sw_err_set(err, SW_EINVAL, "%s: corrupt PNG (%s: %s)", path, what, spng_strerror(rc));
}

/* Starts a decoder on an in-memory file, up to its header. On success the caller frees
 * *ctx_out (the decoder reads from data, which must outlive it). */
static int decoder_start(const char *path, const void *data, size_t len, spng_ctx **ctx_out,
                         struct spng_ihdr *ihdr, struct sw_err *err) {
  *ctx_out = NULL;
  spng_ctx *ctx = spng_ctx_new(0);
  if (!ctx) return sw_err_set(err, SW_ENOMEM, "%s: out of memory for the PNG decoder", path);
  int src = spng_set_png_buffer(ctx, data, len);
  if (!src) src = spng_get_ihdr(ctx, ihdr);
  if (src) {
    int rc = spng_fail(err, path, "header", src);
    spng_ctx_free(ctx);
    return rc;
  }
  *ctx_out = ctx;
  return 0;
}

int gs_png_read_rgba(const char *path, float **rgba_out, uint32_t *width, uint32_t *height,
                     int *bit_depth_out, struct sw_err *err) {
  *rgba_out = NULL;
  char *data = NULL;
  size_t len = 0;
  int rc = sw_fs_read_all(path, &data, &len, err);
  if (rc) return rc;
  rc = gs_png_decode_rgba(path, data, len, rgba_out, width, height, bit_depth_out, err);
  free(data);
  return rc;
}

int gs_png_decode_size(const char *name, const void *data, size_t len, uint32_t *width,
                       uint32_t *height, struct sw_err *err) {
  spng_ctx *ctx = NULL;
  struct spng_ihdr ihdr;
  int rc = decoder_start(name, data, len, &ctx, &ihdr, err);
  if (rc) return rc;
  *width = ihdr.width;
  *height = ihdr.height;
  spng_ctx_free(ctx);
  return 0;
}

int gs_png_decode_rgba(const char *path, const void *data, size_t len, float **rgba_out,
                       uint32_t *width, uint32_t *height, int *bit_depth_out, struct sw_err *err) {
  *rgba_out = NULL;
  spng_ctx *ctx = NULL;
  struct spng_ihdr ihdr;
  int rc = decoder_start(path, data, len, &ctx, &ihdr, err);
  if (rc) return rc;
  float *out = NULL;
  void *raw = NULL;
  int src;
  /* A header claiming a gigantic image is refused before allocating for it. */
  if ((uint64_t)ihdr.width * ihdr.height > ((uint64_t)1 << 28)) {
    rc = sw_err_set(err, SW_EINVAL, "%s: PNG claims %ux%u pixels, more than this loader accepts",
                    path, ihdr.width, ihdr.height);
    goto done;
  }
  int deep = ihdr.bit_depth == 16;
  int fmt = deep ? SPNG_FMT_RGBA16 : SPNG_FMT_RGBA8;
  size_t size = 0, png_size = 0;
  src = spng_decoded_image_size(ctx, fmt, &size);
  if (!src) src = spng_decoded_image_size(ctx, SPNG_FMT_PNG, &png_size);
  if (src) {
    rc = spng_fail(err, path, "image size", src);
    goto done;
  }
  /* Deflate expands at most 1032-fold, so a file too short to hold the image its header claims
   * is refused before allocating for it (fuzzing: 60 bytes asked for 4 GiB). */
  if (png_size / 1032 > len) {
    rc = sw_err_set(err, SW_EINVAL, "%s: truncated PNG (%zu bytes cannot hold a %ux%u image)", path,
                    len, ihdr.width, ihdr.height);
    goto done;
  }
  raw = malloc(size);
  out = malloc((size_t)ihdr.width * ihdr.height * 4 * sizeof(float));
  if (!raw || !out) {
    rc = sw_err_set(err, SW_ENOMEM, "%s: out of memory for a %ux%u image", path, ihdr.width,
                    ihdr.height);
    goto done;
  }
  src = spng_decode_image(ctx, raw, size, fmt, SPNG_DECODE_TRNS);
  if (src) {
    rc = spng_fail(err, path, "image data", src);
    goto done;
  }
  size_t n = (size_t)ihdr.width * ihdr.height * 4;
  if (deep) {
    const uint16_t *s = raw;
    for (size_t i = 0; i < n; i++) out[i] = (float)s[i] / 65535.0f;
  } else {
    const uint8_t *s = raw;
    for (size_t i = 0; i < n; i++) out[i] = (float)s[i] / 255.0f;
  }
  *rgba_out = out;
  out = NULL;
  *width = ihdr.width;
  *height = ihdr.height;
  if (bit_depth_out) *bit_depth_out = ihdr.bit_depth;
  rc = 0;
done:
  spng_ctx_free(ctx);
  free(raw);
  free(out);
  return rc;
}

static int encode(const char *path, const void *pixels, uint32_t width, uint32_t height,
                  int channels, int depth, struct sw_err *err) {
  if (channels != 3 && channels != 4)
    return sw_err_set(err, SW_EINVAL, "%s: PNG writer takes 3 or 4 channels, not %d", path,
                      channels);
  if (width == 0 || height == 0)
    return sw_err_set(err, SW_EINVAL, "%s: empty image %ux%u", path, width, height);
  spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
  if (!ctx) return sw_err_set(err, SW_ENOMEM, "%s: out of memory for the PNG encoder", path);
  struct spng_ihdr ihdr = {0};
  ihdr.width = width;
  ihdr.height = height;
  ihdr.bit_depth = (uint8_t)depth;
  ihdr.color_type = channels == 4 ? SPNG_COLOR_TYPE_TRUECOLOR_ALPHA : SPNG_COLOR_TYPE_TRUECOLOR;
  size_t len = (size_t)width * height * channels * (depth / 8);
  int rc = 0;
  int src = spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
  if (!src) src = spng_set_ihdr(ctx, &ihdr);
  if (!src) src = spng_encode_image(ctx, pixels, len, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
  if (src) {
    rc = sw_err_set(err, SW_EIO, "%s: PNG encode failed: %s", path, spng_strerror(src));
  } else {
    size_t out_len = 0;
    void *buf = spng_get_png_buffer(ctx, &out_len, &src);
    if (!buf) {
      rc = sw_err_set(err, SW_EIO, "%s: PNG encode failed: %s", path, spng_strerror(src));
    } else {
      rc = sw_fs_write_atomic(path, buf, out_len, err);
      free(buf);
    }
  }
  spng_ctx_free(ctx);
  return rc;
}

int gs_png_write8(const char *path, const uint8_t *pixels, uint32_t width, uint32_t height,
                  int channels, struct sw_err *err) {
  return encode(path, pixels, width, height, channels, 8, err);
}

int gs_png_write16(const char *path, const uint16_t *pixels, uint32_t width, uint32_t height,
                   int channels, struct sw_err *err) {
  return encode(path, pixels, width, height, channels, 16, err);
}

int gs_png_write_float(const char *path, const float *pixels, uint32_t width, uint32_t height,
                       int channels, struct sw_err *err) {
  size_t n = (size_t)width * height * (size_t)channels;
  uint8_t *px = malloc(n ? n : 1);
  if (!px) return sw_err_set(err, SW_ENOMEM, "%s: out of memory", path);
  for (size_t i = 0; i < n; i++) {
    float v = pixels[i];
    /* NaN maps to 0 so a broken render still writes a viewable file. */
    v = v > 0.0f ? (v < 1.0f ? v : 1.0f) : 0.0f;
    px[i] = (uint8_t)(v * 255.0f + 0.5f);
  }
  int rc = encode(path, px, width, height, channels, 8, err);
  free(px);
  return rc;
}

int gs_png_read_size(const char *path, uint32_t *width, uint32_t *height, struct sw_err *err) {
  char *data = NULL;
  size_t len = 0;
  int rc = sw_fs_read_all(path, &data, &len, err);
  if (rc) return rc;
  rc = gs_png_decode_size(path, data, len, width, height, err);
  free(data);
  return rc;
}
