/* gs_sort.h: the GPU stable radix sort of 64-bit keys (two uint32 words, low word first) with
 * uint32 values, and the multi-level inclusive prefix scan it (and the forward pass) is built on.
 *
 * Sort: 8-bit digits, one pass per digit from the least significant; each pass is a per-block
 * histogram (sort_hist), a scan of each digit's row of it over the blocks (sort_scan), and a stable
 * scatter
 * (sort_scatter, variant `radix_scatter: serial|ballot` as a specialization constant). The number
 * of passes follows the key width: `radix_passes: full` sorts all 64 bits (8 passes);
 * `radix_passes: skip` sorts only 32 + bits(max high word) bits, since forward keys have
 * tile_id < num_tiles (LAB-PRACTICE's "radix pass skip"; 2,500 tiles: 6 passes). Both give the same
 * order when the skipped digits are zero.
 *
 * Sizes: the key count either comes from the host (n) or is read on the GPU from
 * counters[count_index] (clamped to capacity), so a frame needs no read-back; the work is then
 * dispatched for `capacity` keys and blocks past the true count exit at once.
 *
 * Scratch (ping-pong keys/values, histogram, scan sums) is a grow-only arena: gs_sort_reserve()
 * reallocates only when the capacity grows; gs_sort_release() frees it (the transient regime). */
#ifndef GS_SORT_H
#define GS_SORT_H

#include <stdint.h>

#include "gs_vk.h"

typedef struct gs_sort gs_sort_t;
typedef struct gs_scan gs_scan_t;

/* ---- scan ---- */

int gs_scan_new(gs_vk_t *vk, gs_scan_t **out, struct sw_err *err);
void gs_scan_destroy(gs_scan_t **s);
/* Makes room for scans of up to n elements (grow-only). */
int gs_scan_reserve(gs_scan_t *s, uint32_t n, struct sw_err *err);
void gs_scan_release(gs_scan_t *s);
/* Records an inclusive prefix sum of data[0..n) in place (n <= the reserved size), with barriers
 * between its levels; the caller puts a barrier before and after. */
void gs_scan_record(gs_scan_t *s, VkCommandBuffer cmd, struct gs_vk_buf *data, uint32_t n);

/* ---- sort ---- */

enum gs_sort_scatter { GS_SORT_SCATTER_SERIAL = 0, GS_SORT_SCATTER_BALLOT = 1 };

int gs_sort_new(gs_vk_t *vk, enum gs_sort_scatter scatter, gs_sort_t **out, struct sw_err *err);
void gs_sort_destroy(gs_sort_t **s);

/* Key width to sort when the high word is at most max_hi: 32 + bits(max_hi). */
uint32_t gs_sort_key_bits(uint32_t max_hi);
/* Passes for a key width (1..64 bits): ceil(bits / 8). */
uint32_t gs_sort_passes(uint32_t key_bits);

/* Makes room for `capacity` keys (grow-only) / frees the scratch. */
int gs_sort_reserve(gs_sort_t *s, uint32_t capacity, struct sw_err *err);
void gs_sort_release(gs_sort_t *s);

struct gs_sort_io {
  struct gs_vk_buf *keys;     /* 2 words per key: lo, hi (at least capacity keys) */
  struct gs_vk_buf *values;   /* 1 word per key */
  struct gs_vk_buf *counters; /* holds the count when count_index != UINT32_MAX; else NULL ok */
  uint32_t count_index;       /* UINT32_MAX: use n */
  uint32_t n;
  uint32_t capacity; /* keys the dispatch covers (>= the true count); <= reserved */
  uint32_t key_bits; /* 64 (full) or gs_sort_key_bits(max tile id) (skip) */
};

/* Records the sort. The sorted keys/values end in io->keys/io->values when the pass count is
 * even, else in the sort's scratch: *keys_out / *values_out say where (valid until the next
 * reserve/release). The caller puts a barrier before; the sort ends with one. */
int gs_sort_record(gs_sort_t *s, VkCommandBuffer cmd, const struct gs_sort_io *io,
                   struct gs_vk_buf **keys_out, struct gs_vk_buf **values_out, struct sw_err *err);

/* Times the sort's own steps (labels "radix_hist", "radix_scan", "radix_scatter") into timer on
 * every later gs_sort_record (NULL: off). For profiling the sort alone: do not combine with a
 * caller's stage around the sort, since timer stages do not nest. */
void gs_sort_set_step_timer(gs_sort_t *s, gs_vk_timer_t *timer);

/* Sorts host arrays on the GPU (tests, tools): keys[n] and values[n] replaced by the sorted
 * sequence. key_bits as above. timer may be NULL (else the passes are timed as "radix_sort"). */
int gs_sort_run(gs_sort_t *s, uint64_t *keys, uint32_t *values, uint32_t n, uint32_t key_bits,
                gs_vk_timer_t *timer, struct sw_err *err);

#endif
