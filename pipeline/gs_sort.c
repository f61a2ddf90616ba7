/* gs_sort.c: host side of the GPU prefix scan and radix sort (see gs_sort.h). */
#include "gs_sort.h"

#include <stdlib.h>
#include <string.h>

#include "gs_shaders.h"
#include "gs_shared.h"

#define SCAN_LEVELS 4

/* sort_scatter lets invocation i own digit i when it sets up a block. */
_Static_assert(GS_RADIX == GS_SORT_WG, "one invocation per digit in sort_scatter");

struct gs_scan {
  gs_vk_t *vk;
  gs_vk_kernel_t *block, *add;
  struct gs_vk_buf *sums[SCAN_LEVELS];
  uint32_t reserved;
};

struct gs_sort {
  gs_vk_t *vk;
  gs_vk_kernel_t *hist, *row_scan, *scatter;
  struct gs_vk_buf *keys_tmp, *vals_tmp, *hist_buf, *totals, *dummy;
  uint32_t capacity;
  gs_vk_timer_t *step_timer;
};

void gs_sort_set_step_timer(gs_sort_t *s, gs_vk_timer_t *timer) { s->step_timer = timer; }

/* ---- scan ---- */

int gs_scan_new(gs_vk_t *vk, gs_scan_t **out, struct sw_err *err) {
  *out = NULL;
  gs_scan_t *s = calloc(1, sizeof *s);
  if (!s) return sw_err_set(err, SW_ENOMEM, "out of memory");
  s->vk = vk;
  int rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "scan_block", NULL, 2,
                                 sizeof(struct gs_pc_scan), NULL, 0, &s->block, err);
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "scan_add", NULL, 2, sizeof(struct gs_pc_scan),
                               NULL, 0, &s->add, err);
  if (rc) {
    gs_scan_destroy(&s);
    return rc;
  }
  *out = s;
  return 0;
}

void gs_scan_release(gs_scan_t *s) {
  for (int i = 0; i < SCAN_LEVELS; i++) gs_vk_buf_destroy(&s->sums[i]);
  s->reserved = 0;
}

void gs_scan_destroy(gs_scan_t **sp) {
  if (!sp || !*sp) return;
  gs_scan_release(*sp);
  gs_vk_kernel_destroy(&(*sp)->block);
  gs_vk_kernel_destroy(&(*sp)->add);
  free(*sp);
  *sp = NULL;
}

int gs_scan_reserve(gs_scan_t *s, uint32_t n, struct sw_err *err) {
  if (n <= s->reserved && s->sums[0]) return 0;
  uint32_t max_groups = gs_vk_info(s->vk)->max_workgroup_count[0];
  uint32_t m = n;
  for (int l = 0; l < SCAN_LEVELS; l++) {
    uint32_t nb = gs_vk_div_up(m ? m : 1, GS_SCAN_BLOCK);
    if (nb > max_groups)
      return sw_err_set(err, SW_EINVAL,
                        "scan of %u elements needs %u workgroups; the device "
                        "allows %u",
                        n, nb, max_groups);
    int rc;
    if (!s->sums[l])
      rc = gs_vk_buf_new(s->vk, 4ull * nb, 0, "scan_sums", &s->sums[l], err);
    else
      rc = gs_vk_buf_reserve(s->sums[l], 4ull * nb, NULL, err);
    if (rc) {
      s->reserved = 0; /* a failed grow may leave a level empty: check them all next time */
      return rc;
    }
    if (nb == 1) break;
    if (l == SCAN_LEVELS - 1)
      return sw_err_set(err, SW_EINVAL, "scan of %u elements needs more than %d levels", n,
                        SCAN_LEVELS);
    m = nb;
  }
  s->reserved = n;
  return 0;
}

static void scan_level(gs_scan_t *s, VkCommandBuffer cmd, struct gs_vk_buf *data, uint32_t n,
                       int level) {
  uint32_t nb = gs_vk_div_up(n, GS_SCAN_BLOCK);
  struct gs_pc_scan pc = {.n = n};
  struct gs_vk_buf *b[2] = {data, s->sums[level]};
  gs_vk_dispatch(cmd, s->block, b, &pc, nb, 1, 1);
  if (nb > 1) {
    gs_vk_barrier(cmd);
    scan_level(s, cmd, s->sums[level], nb, level + 1);
    gs_vk_barrier(cmd);
    gs_vk_dispatch(cmd, s->add, b, &pc, nb, 1, 1);
  }
}

void gs_scan_record(gs_scan_t *s, VkCommandBuffer cmd, struct gs_vk_buf *data, uint32_t n) {
  if (n == 0) return;
  scan_level(s, cmd, data, n, 0);
}

/* ---- sort ---- */

uint32_t gs_sort_key_bits(uint32_t max_hi) {
  uint32_t bits = 0;
  while (bits < 32 && (max_hi >> bits)) bits++;
  return 32 + bits;
}

uint32_t gs_sort_passes(uint32_t key_bits) {
  if (key_bits > 64) key_bits = 64;
  return (key_bits + GS_RADIX_BITS - 1) / GS_RADIX_BITS;
}

int gs_sort_new(gs_vk_t *vk, enum gs_sort_scatter scatter, gs_sort_t **out, struct sw_err *err) {
  *out = NULL;
  const struct gs_vk_device_info *info = gs_vk_info(vk);
  if (scatter == GS_SORT_SCATTER_BALLOT && !info->subgroup_ballot)
    return sw_err_set(err, SW_EDEVICE,
                      "radix_scatter: ballot needs subgroup ballot operations, "
                      "which '%s' lacks",
                      info->name);
  gs_sort_t *s = calloc(1, sizeof *s);
  if (!s) return sw_err_set(err, SW_ENOMEM, "out of memory");
  s->vk = vk;
  /* The scatter module: blocks staged in shared memory where it fits (GS_SORT_STAGED=0|1
   * overrides, for tests). The ballot table is used when a workgroup has at most as many subgroups
   * as the module's table rows and as GS_SPEC_SUBGROUPS allows (GS_SORT_TABLE_ROWS overrides it,
   * for tests of the turn-taking path). */
  int staged = GS_SCATTER_STAGED_SHARED <= info->max_shared_memory;
  const char *force_staged = getenv("GS_SORT_STAGED");
  if (force_staged && *force_staged) staged = atoi(force_staged) != 0;
  if (!staged && GS_SCATTER_FLAT_SHARED > info->max_shared_memory) {
    free(s);
    return sw_err_set(err, SW_EDEVICE,
                      "device '%s' has %u bytes of shared memory; the sort needs "
                      "%d",
                      info->name, info->max_shared_memory, GS_SCATTER_FLAT_SHARED);
  }
  uint32_t rows = GS_SORT_WG;
  const char *force = getenv("GS_SORT_TABLE_ROWS");
  if (force && atoi(force) > 0) rows = (uint32_t)atoi(force);
  uint32_t spec[2] = {scatter == GS_SORT_SCATTER_BALLOT, rows};
  int rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "sort_hist", NULL, 3,
                                 sizeof(struct gs_pc_sort), NULL, 0, &s->hist, err);
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, "sort_scan", NULL, 2,
                               sizeof(struct gs_pc_sort), NULL, 0, &s->row_scan, err);
  if (!rc)
    rc = gs_vk_kernel_embedded(vk, gs_shaders_spirv, staged ? "sort_scatter" : "sort_scatter_flat",
                               NULL, 7, sizeof(struct gs_pc_sort), spec, 2, &s->scatter, err);
  if (!rc) rc = gs_vk_buf_new(vk, 16, 0, "sort_counters", &s->dummy, err);
  if (!rc) rc = gs_vk_buf_new(vk, 4 * GS_RADIX, 0, "sort_digit_totals", &s->totals, err);
  if (rc) {
    gs_sort_destroy(&s);
    return rc;
  }
  *out = s;
  return 0;
}

void gs_sort_release(gs_sort_t *s) {
  gs_vk_buf_destroy(&s->keys_tmp);
  gs_vk_buf_destroy(&s->vals_tmp);
  gs_vk_buf_destroy(&s->hist_buf);
  s->capacity = 0;
}

void gs_sort_destroy(gs_sort_t **sp) {
  if (!sp || !*sp) return;
  gs_sort_t *s = *sp;
  gs_sort_release(s);
  gs_vk_buf_destroy(&s->dummy);
  gs_vk_buf_destroy(&s->totals);
  gs_vk_kernel_destroy(&s->hist);
  gs_vk_kernel_destroy(&s->row_scan);
  gs_vk_kernel_destroy(&s->scatter);
  free(s);
  *sp = NULL;
}

int gs_sort_reserve(gs_sort_t *s, uint32_t capacity, struct sw_err *err) {
  if (capacity < 1) capacity = 1;
  if (capacity <= s->capacity && s->keys_tmp) return 0;
  uint32_t nb = gs_vk_div_up(capacity, GS_SORT_BLOCK);
  if ((uint64_t)nb * GS_RADIX > UINT32_MAX)
    return sw_err_set(err, SW_EINVAL, "sort capacity %u is too large", capacity);
  int rc = gs_vk_buf_ensure(s->vk, &s->keys_tmp, 8ull * capacity, 0, "sort_keys_tmp", err);
  if (!rc) rc = gs_vk_buf_ensure(s->vk, &s->vals_tmp, 4ull * capacity, 0, "sort_values_tmp", err);
  if (!rc) rc = gs_vk_buf_ensure(s->vk, &s->hist_buf, 4ull * nb * GS_RADIX, 0, "sort_hist", err);
  if (rc) {
    s->capacity = 0; /* a failed grow may leave a buffer empty: check them all next time */
    return rc;
  }
  s->capacity = capacity;
  return 0;
}

int gs_sort_record(gs_sort_t *s, VkCommandBuffer cmd, const struct gs_sort_io *io,
                   struct gs_vk_buf **keys_out, struct gs_vk_buf **values_out, struct sw_err *err) {
  *keys_out = io->keys;
  *values_out = io->values;
  if (io->capacity > s->capacity)
    return sw_err_set(err, SW_ESTATE, "sort of %u keys recorded with room for %u", io->capacity,
                      s->capacity);
  if (io->keys->size < 8ull * io->capacity || io->values->size < 4ull * io->capacity)
    return sw_err_set(err, SW_EINVAL, "sort buffers hold fewer than %u keys", io->capacity);
  if (io->capacity == 0) return 0;
  uint32_t nb = gs_vk_div_up(io->capacity, GS_SORT_BLOCK);
  uint32_t groups = nb;
  uint32_t max_groups = gs_vk_info(s->vk)->max_workgroup_count[0];
  if (groups > max_groups) groups = max_groups;
  uint32_t passes = gs_sort_passes(io->key_bits);
  struct gs_vk_buf *kin = io->keys, *vin = io->values, *kout = s->keys_tmp, *vout = s->vals_tmp;
  struct gs_vk_buf *ctr = io->counters ? io->counters : s->dummy;
  for (uint32_t p = 0; p < passes; p++) {
    struct gs_pc_sort pc = {.n = io->n,
                            .count_index = io->count_index,
                            .capacity = io->capacity,
                            .shift = p * GS_RADIX_BITS,
                            .num_blocks = nb};
    gs_vk_timer_t *t = s->step_timer;
    struct gs_vk_buf *hb[3] = {kin, s->hist_buf, ctr};
    if (t) gs_vk_timer_begin(t, cmd, "radix_hist");
    gs_vk_dispatch(cmd, s->hist, hb, &pc, groups, 1, 1);
    gs_vk_barrier(cmd);
    if (t) gs_vk_timer_end(t, cmd);
    if (t) gs_vk_timer_begin(t, cmd, "radix_scan");
    struct gs_vk_buf *rb[2] = {s->hist_buf, s->totals};
    gs_vk_dispatch(cmd, s->row_scan, rb, &pc, GS_RADIX, 1, 1);
    gs_vk_barrier(cmd);
    if (t) gs_vk_timer_end(t, cmd);
    if (t) gs_vk_timer_begin(t, cmd, "radix_scatter");
    struct gs_vk_buf *sb[7] = {kin, vin, kout, vout, s->hist_buf, ctr, s->totals};
    gs_vk_dispatch(cmd, s->scatter, sb, &pc, groups, 1, 1);
    gs_vk_barrier(cmd);
    if (t) gs_vk_timer_end(t, cmd);
    struct gs_vk_buf *tmp = kin;
    kin = kout;
    kout = tmp;
    tmp = vin;
    vin = vout;
    vout = tmp;
  }
  *keys_out = kin;
  *values_out = vin;
  return 0;
}

int gs_sort_run(gs_sort_t *s, uint64_t *keys, uint32_t *values, uint32_t n, uint32_t key_bits,
                gs_vk_timer_t *timer, struct sw_err *err) {
  gs_vk_t *vk = s->vk;
  struct gs_vk_buf *kb = NULL, *vb = NULL, *ko, *vo;
  uint32_t *words = malloc(8ull * (n ? n : 1));
  if (!words) return sw_err_set(err, SW_ENOMEM, "out of memory");
  for (uint32_t i = 0; i < n; i++) {
    words[2 * i] = (uint32_t)keys[i];
    words[2 * i + 1] = (uint32_t)(keys[i] >> 32);
  }
  int rc = gs_sort_reserve(s, n, err);
  if (!rc) rc = gs_vk_buf_new(vk, 8ull * n, 0, "sort_keys", &kb, err);
  if (!rc) rc = gs_vk_buf_new(vk, 4ull * n, 0, "sort_values", &vb, err);
  if (!rc) rc = gs_vk_buf_upload(kb, 0, words, 8ull * n, err);
  if (!rc) rc = gs_vk_buf_upload(vb, 0, values, 4ull * n, err);
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  if (!rc) rc = gs_vk_cmd_begin(vk, &cmd, err);
  if (!rc) {
    if (timer) {
      gs_vk_timer_reset(timer, cmd);
      gs_vk_timer_begin(timer, cmd, "radix_sort");
    }
    struct gs_sort_io io = {.keys = kb,
                            .values = vb,
                            .count_index = UINT32_MAX,
                            .n = n,
                            .capacity = n,
                            .key_bits = key_bits};
    rc = gs_sort_record(s, cmd, &io, &ko, &vo, err);
    if (timer) gs_vk_timer_end(timer, cmd);
    if (rc)
      gs_vk_cmd_discard(vk, &cmd);
    else
      rc = gs_vk_cmd_submit_wait(vk, &cmd, err);
  }
  if (!rc && timer) rc = gs_vk_timer_collect(timer, err);
  if (!rc) rc = gs_vk_buf_download(ko, 0, words, 8ull * n, err);
  if (!rc) rc = gs_vk_buf_download(vo, 0, values, 4ull * n, err);
  if (!rc)
    for (uint32_t i = 0; i < n; i++) keys[i] = words[2 * i] | (uint64_t)words[2 * i + 1] << 32;
  gs_vk_buf_destroy(&kb);
  gs_vk_buf_destroy(&vb);
  free(words);
  if (rc) sw_err_prefix(err, "GPU sort of %u keys", n);
  return rc;
}
