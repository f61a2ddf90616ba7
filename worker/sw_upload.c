/* sw_upload.c: staging and uploading a run's artifacts (sw_upload.h). */
#include "sw_upload.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sw_clock.h"
#include "sw_fs.h"
#include "sw_hostlock.h"
#include "sw_log.h"
#include "sw_sha256.h"

#define TRIES_MAX 8
#define BACKOFF_FIRST_MS 2000
#define UNACKED_MAX_S 86400
#define SCAN_EVERY_MS 5000
#define ENTRIES_MAX 256 /* retry clocks kept in memory */

struct retry {
  char name[64];
  int tries;
  int64_t next_ms;
};

struct sw_upload {
  char *dir;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop, kick, hold;
  struct retry retries[ENTRIES_MAX];
  int n_retries;
  uint64_t uploaded, given_up;
  sw_hostlock_t *lock; /* the host measurement lock, on a descriptor of its own; NULL: none */
};

/* ---- staging ------------------------------------------------------------------------------- */

/* Hard link, or a copy where linking is not possible (another file system). */
static int link_or_copy(const char *from, const char *to, struct sw_err *err) {
  if (link(from, to) == 0) return 0;
  char *data = NULL;
  size_t len = 0;
  int rc = sw_fs_read_all(from, &data, &len, err);
  if (!rc) rc = sw_fs_write_atomic(to, data, len, err);
  free(data);
  return rc;
}

static int stage_one(const char *run_dir, const char *entry, const char *name, uint64_t max_bytes,
                     struct sw_msg_artifact *out, struct sw_err *err) {
  char from[4600], to[4600];
  snprintf(from, sizeof from, "%s/%s", run_dir, name);
  struct stat sb;
  if (stat(from, &sb) != 0 || !S_ISREG(sb.st_mode)) return 1; /* not there: nothing to stage */
  if ((uint64_t)sb.st_size > max_bytes) {
    sw_log_warn("artifact %s: %lld bytes, over the store's limit of %" PRIu64 "; not uploaded",
                from, (long long)sb.st_size, max_bytes);
    return 1;
  }
  snprintf(to, sizeof to, "%s/%s", entry, name);
  if (strchr(name, '/')) {
    char sub[4600];
    snprintf(sub, sizeof sub, "%s", to);
    *strrchr(sub, '/') = '\0';
    int rc = sw_fs_mkdir_p(sub, err);
    if (rc) return rc;
  }
  int rc = link_or_copy(from, to, err);
  if (rc) return rc;
  if ((rc = sw_sha256_file(to, out->sha256, err))) return rc;
  snprintf(out->name, sizeof out->name, "%s", name);
  out->size = (uint64_t)sb.st_size;
  return 0;
}

int sw_upload_stage(sw_upload_t *u, const char *run_dir, uint64_t run_id, uint32_t attempt,
                    const char *url, const char *token, uint64_t max_bytes, bool want_ply,
                    struct sw_msg_artifact **out, size_t *n_out, struct sw_err *err) {
  *out = NULL;
  *n_out = 0;
  char entry[4400];
  snprintf(entry, sizeof entry, "%s/r%" PRIu64 "-a%u", u->dir, run_id, attempt);
  sw_fs_rm_rf(entry, NULL);
  int rc = sw_fs_mkdir_p(entry, err);
  if (rc) return rc;
  struct sw_msg_artifact *a = calloc(SW_MSG_ARTIFACTS_MAX, sizeof *a);
  if (!a) return sw_err_set(err, SW_ENOMEM, "artifacts: out of memory");
  size_t n = 0;
  const char *fixed[] = {"result.json", "trainer.log", want_ply ? "final.ply" : NULL};
  for (size_t i = 0; !rc && i < 3; i++)
    if (fixed[i] && (rc = stage_one(run_dir, entry, fixed[i], max_bytes, &a[n], err)) == 0) n++;
  if (rc == 1) rc = 0;
  char rdir[4500];
  snprintf(rdir, sizeof rdir, "%s/renders", run_dir);
  DIR *d = opendir(rdir);
  struct dirent *de;
  while (!rc && d && (de = readdir(d)) != NULL && n < SW_MSG_ARTIFACTS_MAX) {
    size_t len = strlen(de->d_name);
    char name[SW_MSG_ARTIFACT_NAME_MAX + 1];
    if (len < 5 || strcmp(de->d_name + len - 4, ".png")) continue;
    if (snprintf(name, sizeof name, "renders/%s", de->d_name) >= (int)sizeof name ||
        !sw_msg_artifact_name_ok(name))
      continue;
    int r = stage_one(run_dir, entry, name, max_bytes, &a[n], err);
    if (r == 0)
      n++;
    else if (r < 0)
      rc = r;
  }
  if (d) closedir(d);
  json_t *files = json_array();
  for (size_t i = 0; i < n; i++)
    json_array_append_new(files, json_pack("{s:s,s:I,s:s}", "name", a[i].name, "size",
                                           (json_int_t)a[i].size, "sha256", a[i].sha256));
  json_t *m = json_pack("{s:s,s:s,s:I,s:i,s:o}", "url", url, "token", token, "run",
                        (json_int_t)run_id, "attempt", (int)attempt, "files", files);
  char *text = m ? json_dumps(m, JSON_COMPACT) : NULL;
  json_decref(m);
  char path[4500];
  snprintf(path, sizeof path, "%s/manifest.json", entry);
  if (!rc && (!text || sw_fs_write_atomic(path, text, strlen(text), err)))
    rc = err && err->code ? err->code : SW_ENOMEM;
  free(text);
  if (rc || n == 0) {
    sw_fs_rm_rf(entry, NULL);
    free(a);
    return rc;
  }
  *out = a;
  *n_out = n;
  return 0;
}

void sw_upload_acked(sw_upload_t *u, uint64_t run_id, uint32_t attempt) {
  char path[4500];
  snprintf(path, sizeof path, "%s/r%" PRIu64 "-a%u/manifest.json", u->dir, run_id, attempt);
  if (!sw_fs_exists(path)) return;
  snprintf(path, sizeof path, "%s/r%" PRIu64 "-a%u/acked", u->dir, run_id, attempt);
  struct sw_err err = {0};
  if (sw_fs_write_atomic(path, "", 0, &err)) sw_log_warn("artifacts: %s", err.msg);
  pthread_mutex_lock(&u->mu);
  u->kick = 1;
  pthread_cond_signal(&u->cv);
  pthread_mutex_unlock(&u->mu);
}

/* ---- uploading ----------------------------------------------------------------------------- */

static int on_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d) {
  (void)a;
  (void)b;
  (void)c;
  (void)d;
  sw_upload_t *u = ctx;
  pthread_mutex_lock(&u->mu);
  int stop = u->stop || u->hold;
  pthread_mutex_unlock(&u->mu);
  return stop;
}

static size_t discard(char *p, size_t size, size_t n, void *ctx) {
  (void)p;
  (void)ctx;
  return size * n;
}

/* PUTs one file. Returns 1 done (stored or refused for good: the file is finished with), 0 to
 * retry later. */
static int put_file(sw_upload_t *u, const char *url, const char *token, uint64_t run, int attempt,
                    const char *name, const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 1; /* gone: nothing left to send */
  struct stat sb;
  fstat(fileno(f), &sb);
  char target[1200], auth[128], ebuf[CURL_ERROR_SIZE] = "";
  snprintf(target, sizeof target, "%s/upload/%" PRIu64 "/%d/%s", url, run, attempt, name);
  snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
  CURL *c = curl_easy_init();
  if (!c) {
    fclose(f);
    return 0;
  }
  struct curl_slist *hdr = curl_slist_append(NULL, auth);
  curl_easy_setopt(c, CURLOPT_URL, target);
  curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(c, CURLOPT_READDATA, f);
  curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)sb.st_size);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  /* No overall timeout (a final.ply may be large); a transfer stalled for a minute is cut. */
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, u);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  CURLcode cc = curl_easy_perform(c);
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  curl_slist_free_all(hdr);
  curl_easy_cleanup(c);
  fclose(f);
  if (cc != CURLE_OK) {
    sw_log_warn("artifact %s: %s (will retry)", target, ebuf[0] ? ebuf : curl_easy_strerror(cc));
    return 0;
  }
  if (code == 200 || code == 201) {
    sw_log_info("artifact %s: uploaded (%lld bytes)", name, (long long)sb.st_size);
    pthread_mutex_lock(&u->mu);
    u->uploaded++;
    pthread_mutex_unlock(&u->mu);
    unlink(path);
    return 1;
  }
  if (code == 401 || code == 404 || code == 409 || code == 413 || code == 422) {
    sw_log_warn("artifact %s: refused by the store (HTTP %ld); not retried", target, code);
    unlink(path);
    return 1;
  }
  sw_log_warn("artifact %s: HTTP %ld (will retry)", target, code);
  return 0;
}

static struct retry *retry_of(sw_upload_t *u, const char *name) {
  for (int i = 0; i < u->n_retries; i++)
    if (!strcmp(u->retries[i].name, name)) return &u->retries[i];
  if (u->n_retries == ENTRIES_MAX) return NULL;
  struct retry *r = &u->retries[u->n_retries++];
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", name);
  return r;
}

static void retry_forget(sw_upload_t *u, struct retry *r) {
  if (r) *r = u->retries[--u->n_retries];
}

/* One entry: uploads what is left; the entry goes when nothing is. */
static void do_entry(sw_upload_t *u, const char *name, int64_t now) {
  char entry[4400], path[4600];
  snprintf(entry, sizeof entry, "%s/%s", u->dir, name);
  snprintf(path, sizeof path, "%s/manifest.json", entry);
  struct stat sb;
  if (stat(path, &sb) != 0) {
    sw_fs_rm_rf(entry, NULL); /* a half-staged entry */
    return;
  }
  snprintf(path, sizeof path, "%s/acked", entry);
  if (!sw_fs_exists(path)) {
    if (time(NULL) - sb.st_mtime > UNACKED_MAX_S) {
      sw_log_warn("artifacts %s: never acknowledged in a day; removed", name);
      sw_fs_rm_rf(entry, NULL);
    }
    return;
  }
  struct retry *r = retry_of(u, name);
  if (r && r->next_ms > now) return;
  /* The host's measurement lock: while any worker of this host measures, nothing is sent. */
  if (u->lock) {
    char who[128];
    struct sw_err lerr = {0};
    if (sw_hostlock_try(u->lock, who, sizeof who, &lerr) != 1) return;
  }
  snprintf(path, sizeof path, "%s/manifest.json", entry);
  json_t *m = json_load_file(path, 0, NULL);
  const char *url = json_string_value(json_object_get(m, "url"));
  const char *token = json_string_value(json_object_get(m, "token"));
  int pending = 0;
  size_t i;
  json_t *fobj;
  json_array_foreach(json_object_get(m, "files"), i, fobj) {
    const char *fname = json_string_value(json_object_get(fobj, "name"));
    if (!url || !token || !fname || !sw_msg_artifact_name_ok(fname)) continue;
    snprintf(path, sizeof path, "%s/%s", entry, fname);
    if (!sw_fs_exists(path)) continue;
    pthread_mutex_lock(&u->mu);
    int stop = u->stop || u->hold;
    pthread_mutex_unlock(&u->mu);
    if (stop || !put_file(u, url, token, (uint64_t)json_integer_value(json_object_get(m, "run")),
                          (int)json_integer_value(json_object_get(m, "attempt")), fname, path))
      pending = 1;
    if (stop) break;
  }
  json_decref(m);
  sw_hostlock_release(u->lock);
  pthread_mutex_lock(&u->mu);
  int held = u->stop || u->hold;
  pthread_mutex_unlock(&u->mu);
  if (pending && held) return; /* cut short by a measurement: not a failed try */
  if (!pending) {
    sw_fs_rm_rf(entry, NULL);
    retry_forget(u, r);
    return;
  }
  if (!r) return;
  r->tries++;
  if (r->tries >= TRIES_MAX) {
    sw_log_warn("artifacts %s: given up after %d tries", name, r->tries);
    pthread_mutex_lock(&u->mu);
    u->given_up++;
    pthread_mutex_unlock(&u->mu);
    sw_fs_rm_rf(entry, NULL);
    retry_forget(u, r);
    return;
  }
  r->next_ms = now + ((int64_t)BACKOFF_FIRST_MS << (r->tries - 1));
}

static void *run(void *arg) {
  sw_upload_t *u = arg;
  pthread_mutex_lock(&u->mu);
  while (!u->stop) {
    u->kick = 0;
    pthread_mutex_unlock(&u->mu);
    DIR *d = opendir(u->dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
      if (de->d_name[0] != 'r' || strlen(de->d_name) >= 64) continue;
      do_entry(u, de->d_name, sw_clock_mono_ms());
      pthread_mutex_lock(&u->mu);
      int stop = u->stop || u->hold;
      pthread_mutex_unlock(&u->mu);
      if (stop) break;
    }
    if (d) closedir(d);
    pthread_mutex_lock(&u->mu);
    while (u->hold && !u->stop) pthread_cond_wait(&u->cv, &u->mu);
    if (u->stop || u->kick) continue;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += SCAN_EVERY_MS / 1000;
    pthread_cond_timedwait(&u->cv, &u->mu, &ts);
  }
  pthread_mutex_unlock(&u->mu);
  return NULL;
}

int sw_upload_start(const char *dir, const char *host_lock, const char *holder, sw_upload_t **out,
                    struct sw_err *err) {
  *out = NULL;
  int rc = sw_fs_mkdir_p(dir, err);
  if (rc) return rc;
  sw_upload_t *u = calloc(1, sizeof *u);
  if (!u || !(u->dir = strdup(dir))) {
    free(u);
    return sw_err_set(err, SW_ENOMEM, "uploads: out of memory");
  }
  if (host_lock && (rc = sw_hostlock_open(host_lock, holder, &u->lock, err))) {
    free(u->dir);
    free(u);
    return rc;
  }
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    sw_hostlock_close(&u->lock);
    free(u->dir);
    free(u);
    return sw_err_set(err, SW_EIO, "uploads: libcurl initialisation failed");
  }
  pthread_mutex_init(&u->mu, NULL);
  pthread_cond_init(&u->cv, NULL);
  if (pthread_create(&u->thread, NULL, run, u) != 0) {
    pthread_cond_destroy(&u->cv);
    pthread_mutex_destroy(&u->mu);
    curl_global_cleanup();
    sw_hostlock_close(&u->lock);
    free(u->dir);
    free(u);
    return sw_err_set(err, SW_EIO, "uploads: cannot start the thread");
  }
  *out = u;
  return 0;
}

void sw_upload_stop(sw_upload_t **self_p) {
  if (!self_p || !*self_p) return;
  sw_upload_t *u = *self_p;
  pthread_mutex_lock(&u->mu);
  u->stop = 1;
  pthread_cond_signal(&u->cv);
  pthread_mutex_unlock(&u->mu);
  pthread_join(u->thread, NULL);
  pthread_cond_destroy(&u->cv);
  pthread_mutex_destroy(&u->mu);
  curl_global_cleanup();
  sw_hostlock_close(&u->lock);
  free(u->dir);
  free(u);
  *self_p = NULL;
}

void sw_upload_hold(sw_upload_t *u, int hold) {
  pthread_mutex_lock(&u->mu);
  if (u->hold != hold) {
    u->hold = hold;
    if (!hold) u->kick = 1;
    pthread_cond_signal(&u->cv);
  }
  pthread_mutex_unlock(&u->mu);
}

void sw_upload_counts(sw_upload_t *u, uint64_t *uploaded, uint64_t *given_up) {
  pthread_mutex_lock(&u->mu);
  *uploaded = u->uploaded;
  *given_up = u->given_up;
  pthread_mutex_unlock(&u->mu);
}
