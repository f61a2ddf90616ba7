/* sw_scene_prep.c: scene generation, download, verification and unpacking for a worker. */
#include "sw_scene_prep.h"

#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sw_fs.h"
#include "sw_sha256.h"

static int run_generator(const char *splat_train, json_t *g, const char *out, struct sw_err *err) {
  if (!splat_train || !*splat_train)
    return sw_err_set(err, SW_EINVAL, "scene.generate: splat-train not found to generate it");
  char views[32], tviews[32], res[32], seed[32];
  json_t *kind = json_object_get(g, "kind");
  snprintf(views, sizeof views, "%lld",
           (long long)json_integer_value(json_object_get(g, "train_views")));
  snprintf(tviews, sizeof tviews, "%lld",
           (long long)json_integer_value(json_object_get(g, "test_views")));
  snprintf(res, sizeof res, "%lld",
           (long long)json_integer_value(json_object_get(g, "resolution")));
  snprintf(seed, sizeof seed, "%lld", (long long)json_integer_value(json_object_get(g, "seed")));
  char *argv[] = {(char *)splat_train,
                  "scene",
                  "--kind",
                  (char *)(json_is_string(kind) ? json_string_value(kind) : "bricks"),
                  "--out",
                  (char *)out,
                  "--train-views",
                  views,
                  "--test-views",
                  tviews,
                  "--resolution",
                  res,
                  "--seed",
                  seed,
                  NULL};
  pid_t pid = fork();
  if (pid < 0) return sw_err_set(err, SW_ECHILD, "scene.generate: fork: %s", strerror(errno));
  if (pid == 0) {
    /* The generator's chatter belongs in the worker's log, never on a report's stdout. */
    dup2(2, 1);
    execv(argv[0], argv);
    _exit(127);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return sw_err_set(err, SW_ECHILD, "scene.generate: %s scene --out %s failed (status %d)",
                      splat_train, out, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  return 0;
}

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *ud) {
  return fwrite(ptr, size, nmemb, (FILE *)ud);
}

static int download(const char *url, const char *path, struct sw_err *err) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.part", path);
  FILE *f = fopen(tmp, "wb");
  if (!f) return sw_err_set(err, SW_EIO, "scene.url: %s: %s", tmp, strerror(errno));
  CURL *c = curl_easy_init();
  if (!c) {
    fclose(f);
    return sw_err_set(err, SW_ENET, "scene.url: curl init failed");
  }
  char ebuf[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, ebuf);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  CURLcode cc = curl_easy_perform(c);
  curl_easy_cleanup(c);
  int bad = fclose(f) != 0;
  if (cc != CURLE_OK) {
    unlink(tmp);
    return sw_err_set(err, SW_ENET, "scene.url: %s: %s", url,
                      ebuf[0] ? ebuf : curl_easy_strerror(cc));
  }
  if (bad || rename(tmp, path) != 0) {
    unlink(tmp);
    return sw_err_set(err, SW_EIO, "scene.url: writing %s failed", path);
  }
  return 0;
}

/* Unpacks an archive into dir, refusing absolute paths and ".." components. Returns 0, or 1
 * when the file is not an archive (the caller then uses it as is), or a negative code. */
static int unpack(const char *file, const char *dir, struct sw_err *err) {
  struct archive *a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_all(a);
  if (archive_read_open_filename(a, file, 65536) != ARCHIVE_OK) {
    archive_read_free(a);
    return 1;
  }
  struct archive *w = archive_write_disk_new();
  /* Entry names are checked below before they are prefixed with dir (which makes them
   * absolute, so libarchive's own no-absolute-paths check cannot be used here). */
  archive_write_disk_set_options(w, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                        ARCHIVE_EXTRACT_SECURE_SYMLINKS);
  int rc = 0, entries = 0;
  struct archive_entry *e;
  int r;
  while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
    const char *name = archive_entry_pathname(e);
    if (!name || name[0] == '/' || strstr(name, "../") || !strcmp(name, "..")) {
      rc = sw_err_set(err, SW_EINVAL, "scene.url: archive entry '%s' escapes the directory",
                      name ? name : "(null)");
      break;
    }
    char full[8400];
    snprintf(full, sizeof full, "%s/%s", dir, name);
    archive_entry_set_pathname(e, full);
    if (archive_write_header(w, e) != ARCHIVE_OK) {
      rc = sw_err_set(err, SW_EIO, "scene.url: %s: %s", full, archive_error_string(w));
      break;
    }
    const void *buf;
    size_t size;
    la_int64_t off;
    while ((r = archive_read_data_block(a, &buf, &size, &off)) == ARCHIVE_OK) {
      if (archive_write_data_block(w, buf, size, off) != ARCHIVE_OK) {
        rc = sw_err_set(err, SW_EIO, "scene.url: %s: %s", full, archive_error_string(w));
        break;
      }
    }
    if (rc) break;
    if (r != ARCHIVE_EOF) {
      rc = sw_err_set(err, SW_EIO, "scene.url: %s: %s", file, archive_error_string(a));
      break;
    }
    archive_write_finish_entry(w);
    entries++;
  }
  if (!rc && r != ARCHIVE_EOF && r != ARCHIVE_OK)
    rc = entries ? sw_err_set(err, SW_EIO, "scene.url: %s: %s", file, archive_error_string(a)) : 1;
  archive_read_free(a);
  archive_write_free(w);
  return rc;
}

/* 1 when dir holds a scene the trainer reads: the description files its loader detects formats
 * by (pipeline/gs_scene.c, detect(); the worker does not link the pipeline, so the list is
 * repeated here, and only decides which folder to hand to the trainer, whose loader judges it). */
static int holds_scene(const char *dir) {
  static const char *marks[] = {"transforms_train.json", "transforms.json",
                                "sparse/0/cameras.bin",  "sparse/0/cameras.txt",
                                "sparse/cameras.bin",    "sparse/cameras.txt"};
  char probe[4400];
  for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
    snprintf(probe, sizeof probe, "%s/%s", dir, marks[i]);
    if (sw_fs_exists(probe)) return 1;
  }
  return 0;
}

/* A scene archive usually wraps the scene in one folder; use it when that is so. */
static void descend_single(char *path, size_t cap) {
  char probe[4400];
  if (holds_scene(path)) return;
  DIR *d = opendir(path);
  if (!d) return;
  char only[256] = "";
  int dirs = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char sub[4400];
    struct stat st;
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode)) {
      dirs++;
      snprintf(only, sizeof only, "%s", e->d_name);
    }
  }
  closedir(d);
  if (dirs == 1) {
    snprintf(probe, sizeof probe, "%s/%s", path, only);
    if (holds_scene(probe) && strlen(path) + strlen(only) + 2 < cap) {
      strcat(path, "/");
      strcat(path, only);
    }
  }
}

int sw_scene_prepare(const char *scene_json, const char *cache_dir, const char *splat_train,
                     char *path_out, size_t cap, struct sw_err *err) {
  path_out[0] = '\0';
  json_error_t je;
  json_t *s = json_loads(scene_json ? scene_json : "{}", 0, &je);
  if (!json_is_object(s)) {
    json_decref(s);
    return sw_err_set(err, SW_EINVAL, "scene spec is not a JSON object: %s", je.text);
  }
  int rc = 0;
  json_t *gen = json_object_get(s, "generate");
  json_t *path = json_object_get(s, "path");
  json_t *url = json_object_get(s, "url");
  if (json_is_object(gen)) {
    char *canon = json_dumps(gen, JSON_SORT_KEYS | JSON_COMPACT);
    char hex[SW_SHA256_HEX_LEN], dir[4200], mark[4300];
    sw_sha256_buf(canon, strlen(canon), hex);
    free(canon);
    snprintf(dir, sizeof dir, "%s/gen-%.16s", cache_dir, hex);
    snprintf(mark, sizeof mark, "%s/.complete", dir);
    if (!sw_fs_exists(mark)) {
      sw_fs_rm_rf(dir, NULL);
      rc = sw_fs_mkdir_p(cache_dir, err);
      if (!rc) rc = run_generator(splat_train, gen, dir, err);
      if (!rc) rc = sw_fs_write_atomic(mark, "ok\n", 3, err);
    }
    if (!rc) snprintf(path_out, cap, "%s", dir);
  } else if (json_is_string(path)) {
    const char *p = json_string_value(path);
    struct stat st;
    /* A relative path names a data set in the worker's data folders ($SW_DATASETS, a
     * colon-separated list): each machine keeps its copy where it likes, and one spec serves
     * the whole fleet (docs/spec.md). */
    char found[4096] = "";
    if (p[0] == '/') {
      if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) snprintf(found, sizeof found, "%s", p);
    } else if (!sw_fs_find_in(getenv("SW_DATASETS"), p, SW_FS_FIND_DIR, found, sizeof found)) {
      found[0] = '\0';
    }
    if (!found[0] && p[0] != '/')
      rc = sw_err_set(err, SW_ENOTFOUND,
                      "scene.path: %s is not a directory under any folder of SW_DATASETS (%s) on "
                      "this worker",
                      p, getenv("SW_DATASETS") ? getenv("SW_DATASETS") : "unset");
    else if (!found[0])
      rc = sw_err_set(err, SW_ENOTFOUND, "scene.path: %s is not a directory on this worker", p);
    else
      snprintf(path_out, cap, "%s", found);
  } else if (json_is_string(url)) {
    const char *want = json_string_value(json_object_get(s, "sha256"));
    if (!want || strlen(want) != 64) {
      rc = sw_err_set(err, SW_EINVAL, "scene.url: a 64-digit sha256 is required");
    } else {
      char file[4200], dir[4200], mark[4300], got[SW_SHA256_HEX_LEN];
      snprintf(file, sizeof file, "%s/%s.dl", cache_dir, want);
      snprintf(dir, sizeof dir, "%s/%s", cache_dir, want);
      snprintf(mark, sizeof mark, "%s/.complete", dir);
      rc = sw_fs_mkdir_p(cache_dir, err);
      if (!rc && !sw_fs_exists(mark)) {
        if (!sw_fs_exists(file)) rc = download(json_string_value(url), file, err);
        if (!rc) rc = sw_sha256_file(file, got, err);
        if (!rc && strcmp(got, want) != 0) {
          unlink(file);
          rc = sw_err_set(err, SW_EINVAL, "scene.url: %s: sha256 %s, expected %s",
                          json_string_value(url), got, want);
        }
        if (!rc) {
          sw_fs_rm_rf(dir, NULL);
          rc = sw_fs_mkdir_p(dir, err);
          if (!rc) {
            int u = unpack(file, dir, err);
            if (u < 0)
              rc = u;
            else if (u == 1)
              rc = sw_err_set(err, SW_EINVAL, "scene.url: %s is not an archive libarchive reads",
                              json_string_value(url));
          }
          if (!rc) rc = sw_fs_write_atomic(mark, "ok\n", 3, err);
        }
      }
      if (!rc) {
        snprintf(path_out, cap, "%s", dir);
        descend_single(path_out, cap);
      }
    }
  }
  json_decref(s);
  return rc;
}
