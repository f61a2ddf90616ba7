/* gs_image.c: PNG and JPEG decoding by content (see gs_image.h). libjpeg reports fatal errors
 * through error_exit, which here longjmps back with the library's message; its warnings (a
 * truncated or corrupt stream that it would patch over with grey) are errors too, so a damaged
 * file is never trained on silently. */
#include "gs_image.h"

#include <setjmp.h>
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <jpeglib.h>
#include <libexif/exif-data.h>
#include <stdlib.h>
#include <string.h>

#include "gs_png.h"
#include "sw_fs.h"

#define MAX_PIXELS ((uint64_t)1 << 28)

static int is_png(const unsigned char *d, size_t len) {
  return len >= 8 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8);
}

static int is_jpeg(const unsigned char *d, size_t len) {
  return len >= 3 && d[0] == 0xff && d[1] == 0xd8 && d[2] == 0xff;
}

struct jerr {
  struct jpeg_error_mgr mgr;
  jmp_buf jump;
  char msg[JMSG_LENGTH_MAX];
  int warned;
};

static void jerr_exit(j_common_ptr c) {
  struct jerr *e = (struct jerr *)c->err;
  (*c->err->format_message)(c, e->msg);
  longjmp(e->jump, 1);
}

static void jerr_emit(j_common_ptr c, int level) {
  struct jerr *e = (struct jerr *)c->err;
  if (level < 0 && !e->warned) { /* a warning: corrupt data the library would work around */
    (*c->err->format_message)(c, e->msg);
    e->warned = 1;
  }
}

/* The error manager of a decompression: errors jump to je->jump with the message in je->msg,
 * the first warning is kept in je->msg too. */
static struct jpeg_error_mgr *jerr_init(struct jerr *je) {
  memset(je, 0, sizeof *je);
  jpeg_std_error(&je->mgr);
  je->mgr.error_exit = jerr_exit;
  je->mgr.emit_message = jerr_emit;
  return &je->mgr;
}

/* The orientation held by a saved APP1 (EXIF) marker, 1 when none. */
static int orientation_of(struct jpeg_decompress_struct *c) {
  for (jpeg_saved_marker_ptr m = c->marker_list; m; m = m->next) {
    if (m->marker != JPEG_APP0 + 1 || m->data_length < 6 || memcmp(m->data, "Exif\0\0", 6))
      continue;
    ExifData *ed = exif_data_new_from_data(m->data, m->data_length);
    if (!ed) continue;
    int o = 1;
    ExifEntry *e = exif_data_get_entry(ed, EXIF_TAG_ORIENTATION);
    if (e && e->format == EXIF_FORMAT_SHORT && e->components >= 1)
      o = exif_get_short(e->data, exif_data_get_byte_order(ed));
    exif_data_unref(ed);
    return o >= 1 && o <= 8 ? o : 1;
  }
  return 1;
}

/* Maps a pixel (x, y) of the displayed image to the stored one (sw x sh) for EXIF orientation o:
 * 2 mirror, 3 rotate 180, 4 flip, 5 transpose, 6 rotate 90 clockwise to display, 7 transverse,
 * 8 rotate 90 counter-clockwise to display. */
static void orient_src(int o, uint32_t x, uint32_t y, uint32_t sw, uint32_t sh, uint32_t *sx,
                       uint32_t *sy) {
  switch (o) {
  case 2: *sx = sw - 1 - x, *sy = y; break;
  case 3: *sx = sw - 1 - x, *sy = sh - 1 - y; break;
  case 4: *sx = x, *sy = sh - 1 - y; break;
  case 5: *sx = y, *sy = x; break;
  case 6: *sx = y, *sy = sh - 1 - x; break;
  case 7: *sx = sw - 1 - y, *sy = sh - 1 - x; break;
  case 8: *sx = sw - 1 - y, *sy = x; break;
  default: *sx = x, *sy = y; break;
  }
}

/* Decodes (or, rgba NULL, only sizes) a JPEG. */
static int jpeg_decode(const char *name, const unsigned char *data, size_t len, float **rgba,
                       uint32_t *w_out, uint32_t *h_out, struct sw_err *err) {
  struct jpeg_decompress_struct c;
  struct jerr je;
  c.err = jerr_init(&je);
  /* volatile: read after the longjmp */
  uint8_t *volatile raw = NULL;
  float *volatile out = NULL;
  volatile int rc = 0;
  if (setjmp(je.jump)) {
    rc = sw_err_set(err, SW_EINVAL, "%s: corrupt or truncated JPEG (%s)", name, je.msg);
    goto done;
  }
  jpeg_create_decompress(&c);
  jpeg_mem_src(&c, data, (unsigned long)len);
  jpeg_save_markers(&c, JPEG_APP0 + 1, 0xffff);
  jpeg_read_header(&c, TRUE);
  int o = orientation_of(&c);
  uint32_t sw = c.image_width, sh = c.image_height;
  if ((uint64_t)sw * sh > MAX_PIXELS || !sw || !sh) {
    rc = sw_err_set(err, SW_EINVAL,
                    "%s: JPEG claims %ux%u pixels, outside what this loader "
                    "accepts",
                    name, sw, sh);
    goto done;
  }
  uint32_t w = o >= 5 ? sh : sw, h = o >= 5 ? sw : sh;
  *w_out = w;
  *h_out = h;
  if (!rgba) goto done;
  c.out_color_space = JCS_RGB;
  jpeg_start_decompress(&c);
  raw = malloc((size_t)sw * sh * 3);
  out = malloc((size_t)w * h * 4 * sizeof(float));
  if (!raw || !out) {
    rc = sw_err_set(err, SW_ENOMEM, "%s: out of memory for a %ux%u image", name, sw, sh);
    goto done;
  }
  while (c.output_scanline < c.output_height) {
    JSAMPROW r = raw + (size_t)c.output_scanline * sw * 3;
    jpeg_read_scanlines(&c, &r, 1);
  }
  jpeg_finish_decompress(&c);
  if (je.warned) {
    rc = sw_err_set(err, SW_EINVAL, "%s: corrupt or truncated JPEG (%s)", name, je.msg);
    goto done;
  }
  for (uint32_t y = 0; y < h; y++)
    for (uint32_t x = 0; x < w; x++) {
      uint32_t sx, sy;
      orient_src(o, x, y, sw, sh, &sx, &sy);
      const uint8_t *s = raw + 3 * ((size_t)sy * sw + sx);
      float *d = out + 4 * ((size_t)y * w + x);
      d[0] = (float)s[0] / 255.0f;
      d[1] = (float)s[1] / 255.0f;
      d[2] = (float)s[2] / 255.0f;
      d[3] = 1.0f;
    }
  *rgba = out;
  out = NULL;
done:
  jpeg_destroy_decompress(&c);
  free(raw);
  free(out);
  return rc;
}

int gs_image_decode(const char *name, const void *data, size_t len, float **rgba, uint32_t *w,
                    uint32_t *h, struct sw_err *err) {
  *rgba = NULL;
  if (is_png(data, len)) return gs_png_decode_rgba(name, data, len, rgba, w, h, NULL, err);
  if (is_jpeg(data, len)) return jpeg_decode(name, data, len, rgba, w, h, err);
  return sw_err_set(err, SW_EINVAL,
                    "%s: neither a PNG nor a JPEG file (images are read by their "
                    "content: PNG or JPEG)",
                    name);
}

int gs_image_decode_size(const char *name, const void *data, size_t len, uint32_t *w, uint32_t *h,
                         struct sw_err *err) {
  if (is_png(data, len)) return gs_png_decode_size(name, data, len, w, h, err);
  if (is_jpeg(data, len)) return jpeg_decode(name, data, len, NULL, w, h, err);
  return sw_err_set(err, SW_EINVAL,
                    "%s: neither a PNG nor a JPEG file (images are read by their "
                    "content: PNG or JPEG)",
                    name);
}

int gs_image_jpeg_orientation(const void *data, size_t len) {
  if (!is_jpeg(data, len)) return 1;
  struct jpeg_decompress_struct c;
  struct jerr je;
  c.err = jerr_init(&je);
  volatile int o = 1;
  if (setjmp(je.jump)) goto done;
  jpeg_create_decompress(&c);
  jpeg_mem_src(&c, data, (unsigned long)len);
  jpeg_save_markers(&c, JPEG_APP0 + 1, 0xffff);
  jpeg_read_header(&c, TRUE);
  o = orientation_of(&c);
done:
  jpeg_destroy_decompress(&c);
  return o;
}

/* An EXIF block holding only the orientation; *buf freed by the caller. */
static int exif_block(int orientation, unsigned char **buf, unsigned int *len) {
  ExifData *ed = exif_data_new();
  if (!ed) return -1;
  exif_data_set_byte_order(ed, EXIF_BYTE_ORDER_INTEL);
  ExifEntry *e = exif_entry_new();
  if (!e) {
    exif_data_unref(ed);
    return -1;
  }
  exif_content_add_entry(ed->ifd[EXIF_IFD_0], e);
  exif_entry_initialize(e, EXIF_TAG_ORIENTATION);
  exif_set_short(e->data, EXIF_BYTE_ORDER_INTEL, (ExifShort)orientation);
  exif_entry_unref(e);
  *buf = NULL;
  exif_data_save_data(ed, buf, len);
  exif_data_unref(ed);
  return *buf ? 0 : -1;
}

int gs_image_write_jpeg(const char *path, const uint8_t *rgb, uint32_t w, uint32_t h, int quality,
                        int exif_orientation, struct sw_err *err) {
  if (!w || !h) return sw_err_set(err, SW_EINVAL, "%s: empty image %ux%u", path, w, h);
  struct jpeg_compress_struct c;
  struct jerr je;
  memset(&je, 0, sizeof je);
  c.err = jpeg_std_error(&je.mgr);
  je.mgr.error_exit = jerr_exit;
  unsigned char *buf = NULL;
  unsigned char *volatile exif = NULL;
  unsigned long size = 0;
  volatile int rc = 0;
  if (setjmp(je.jump)) {
    rc = sw_err_set(err, SW_EIO, "%s: JPEG encode failed: %s", path, je.msg);
    goto done;
  }
  jpeg_create_compress(&c);
  jpeg_mem_dest(&c, &buf, &size);
  c.image_width = w;
  c.image_height = h;
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality < 1 ? 1 : quality > 100 ? 100 : quality, TRUE);
  jpeg_start_compress(&c, TRUE);
  if (exif_orientation >= 1 && exif_orientation <= 8) {
    unsigned int elen = 0;
    unsigned char *eb = NULL;
    int bad = exif_block(exif_orientation, &eb, &elen);
    exif = eb;
    if (bad) {
      rc = sw_err_set(err, SW_ENOMEM, "%s: out of memory for the EXIF block", path);
      goto done;
    }
    jpeg_write_marker(&c, JPEG_APP0 + 1, exif, elen);
  }
  while (c.next_scanline < c.image_height) {
    JSAMPROW r = (JSAMPROW)(rgb + (size_t)c.next_scanline * w * 3);
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  rc = sw_fs_write_atomic(path, buf, size, err);
done:
  jpeg_destroy_compress(&c);
  free(exif);
  free(buf);
  return rc;
}
