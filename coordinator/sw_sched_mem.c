/* sw_sched_mem.c: the scheduler's lowest layer: the in-memory mirror of running sweeps (each
 * with its spec as common/ loads it) and the lease rows' closing. It calls only the store;
 * every other scheduler file may call it (sw_sched.h draws the layers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_sched_int.h"

int sched_grow(void **arr, int *cap, int need, size_t elem) {
  if (need <= *cap) return 0;
  int ncap = *cap ? *cap * 2 : 16;
  while (ncap < need) ncap *= 2;
  void *p = realloc(*arr, (size_t)ncap * elem);
  if (!p) return -1;
  *arr = p;
  *cap = ncap;
  return 0;
}

struct sweep_mem *sched_sweep(sw_sched_t *s, int64_t sweep_id) {
  for (int i = 0; i < s->n_sweeps; i++)
    if (s->sweeps[i].id == sweep_id) return &s->sweeps[i];
  return NULL;
}

void sched_sweep_free(struct sweep_mem *sw) {
  sw_spec_destroy(&sw->spec);
  free(sw->trainer_json);
  free(sw->scene_json);
  free(sw->contamination_json);
  memset(sw, 0, sizeof *sw);
}

/* A member of the normalised spec (sw_spec_to_json) as compact text: the same text the store's
 * spec_json holds, so what a lease carries is what the readers see. */
static char *member_text(const json_t *normal, const char *key) {
  const json_t *v = json_object_get(normal, key);
  return v ? json_dumps(v, JSON_COMPACT) : NULL;
}

int sched_sweep_add(sw_sched_t *s, int64_t sweep_id, struct sw_spec **spec, int priority,
                    struct sw_err *err) {
  struct sw_spec *sp = *spec;
  *spec = NULL;
  if (sched_grow((void **)&s->sweeps, &s->cap_sweeps, s->n_sweeps + 1, sizeof *s->sweeps)) {
    sw_spec_destroy(&sp);
    return sw_err_set(err, SW_ENOMEM, "loading sweep: out of memory");
  }
  struct sweep_mem *sw = &s->sweeps[s->n_sweeps];
  memset(sw, 0, sizeof *sw);
  sw->id = sweep_id;
  sw->spec = sp;
  sw->is_grid = sp->kind == SW_SPEC_GRID;
  sw->priority = priority;
  snprintf(sw->runner, sizeof sw->runner, "%s",
           sp->trainer.kind == SW_TRAINER_EXEC ? "exec" : "builtin");
  json_t *normal = sw_spec_to_json(sp);
  sw->trainer_json = member_text(normal, "trainer");
  sw->scene_json = member_text(normal, "scene");
  sw->contamination_json = member_text(normal, "contamination");
  json_decref(normal);
  if (!sw->trainer_json || !sw->scene_json || !sw->contamination_json) {
    sched_sweep_free(sw);
    return sw_err_set(err, SW_ENOMEM, "loading sweep: out of memory");
  }
  s->n_sweeps++;
  return 0;
}

void sched_sweep_drop(sw_sched_t *s, int64_t sweep_id) {
  for (int i = 0; i < s->n_sweeps; i++) {
    if (s->sweeps[i].id != sweep_id) continue;
    sched_sweep_free(&s->sweeps[i]);
    s->sweeps[i] = s->sweeps[--s->n_sweeps];
    return;
  }
}

int sched_lease_close_db(sw_sched_t *s, int64_t lease_id, const char *state, int64_t now,
                         struct sw_err *err) {
  static const char *const SQL =
      "UPDATE leases SET state = ?2, closed_ms = ?3 WHERE id = ?1 AND state = 'active'";
  sqlite3_stmt *st;
  int rc = sw_store_stmt(s->store, SQL, &st, err);
  if (rc) return rc;
  sqlite3_bind_int64(st, 1, lease_id);
  sqlite3_bind_text(st, 2, state, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 3, now);
  rc = sqlite3_step(st);
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : sw_store_fail(s->store, err, "closing lease");
}
