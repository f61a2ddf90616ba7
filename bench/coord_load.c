/* coord_load.c: load benchmark of the real coordinator: hundreds of simulated workers (DEALER
 * sockets in this one process) speaking the worker protocol against a running
 * `splatsweep coordinator`, each answering every Assign at once with RunStarted, RunFinished
 * (a result of the contract's schema, windows included) and LeaseDone, then Ready again.
 *
 *   coord_load --work EP --control EP [--workers 300] [--runs 3000]
 *
 * It submits a grid of --runs single-run points through the control endpoint, drives the
 * workers until every run is acknowledged, and prints the Ready->Assign latency seen by the
 * workers (p50 / p99), results per second, and the coordinator's own figures from status JSON
 * (its Ready->Assign p50 / p99 and resident memory). Heartbeats go out every second from every
 * simulated worker so none is declared offline. bench/README.md has how to run it. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "sw_clock.h"
#include "sw_codec.h"
#include "sw_result.h"

struct sim {
  void *sock;
  char id[32];
  int welcomed;
  int64_t ready_us; /* 0 when no Ready is outstanding */
  int64_t last_send_ms;
  uint64_t seq;
};

static int send_msg(struct sim *w, struct sw_msg *m) {
  m->seq = ++w->seq;
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  if (sw_codec_encode(m, &buf, &len, &err)) {
    fprintf(stderr, "coord_load: encode %s: %s\n", sw_msg_type_name(m->type), err.msg);
    return -1;
  }
  int rc = zmq_send(w->sock, buf, len, 0);
  free(buf);
  w->last_send_ms = sw_clock_mono_ms();
  return rc < 0 ? -1 : 0;
}

static void send_ready(struct sim *w) {
  struct sw_msg m;
  sw_msg_init(&m, SW_MSG_READY);
  w->ready_us = sw_clock_mono_ns() / 1000;
  send_msg(w, &m);
}

#define ZERO64 "0000000000000000000000000000000000000000000000000000000000000000"
static const char *RESULT =
    /* A result matching docs/result.schema.json (the coordinator checks each one). */
    "{\"schema\":\"splatsweep.result/1\",\"status\":\"ok\",\"trainer\":{\"name\":\"coord_load\","
    "\"version\":\"1\",\"binary_sha256\":\"" ZERO64 "\",\"shaders_sha256\":\"" ZERO64 "\"},"
    "\"config\":{},\"config_sha256\":\"" ZERO64
    "\",\"scene\":{\"path\":\"none\",\"sha256\":\"" ZERO64
    "\",\"train_views\":1,\"test_views\":0,\"width\":1,\"height\":1,\"held_out_split\":false},"
    "\"device\":{\"name\":\"none\",\"driver\":\"\",\"api\":\"none\",\"kind\":\"other\"},"
    "\"metrics\":{\"train_s\":1.0,\"wall_s\":1.0,\"iterations\":1,"
    "\"psnr_db\":30.0,\"ssim\":0.9,\"splats_final\":1,\"splats_mean\":1,\"gpu_busy_frac\":0.5},"
    "\"kernels\":[],\"checkpoints\":[]}";

static long answered;

/* Handles one Assign: every run finished at once, then LeaseDone and Ready. */
static void do_lease(struct sim *w, const struct sw_msg_assign *a) {
  struct sw_msg_sample pre = {
      .t_ms = -100, .load1 = 0.1, .cpu_other = 0.0, .cpu_total = 0.1, .mem_avail = 1u << 30};
  struct sw_msg_sample dur[2] = {
      {.t_ms = 0, .load1 = 0.1, .cpu_total = 1.0, .cpu_trainer = 1.0, .mem_avail = 1u << 30},
      {.t_ms = 10, .load1 = 0.1, .cpu_total = 1.0, .cpu_trainer = 1.0, .mem_avail = 1u << 30}};
  for (size_t i = 0; i < a->n_runs; i++) {
    struct sw_msg m;
    sw_msg_init(&m, SW_MSG_RUN_STARTED);
    m.u.run_started.lease_id = a->lease_id;
    m.u.run_started.epoch = a->epoch;
    m.u.run_started.run_id = a->runs[i].run_id;
    m.u.run_started.attempt = a->attempt;
    send_msg(w, &m);
    sw_msg_init(&m, SW_MSG_RUN_FINISHED);
    struct sw_msg_run_finished *f = &m.u.run_finished;
    f->lease_id = a->lease_id;
    f->epoch = a->epoch;
    f->run_id = a->runs[i].run_id;
    f->attempt = a->attempt;
    f->wall_s = 0.01;
    f->quiet = true;
    f->result_json = (char *)RESULT;
    f->samples = dur;
    f->n_samples = 2;
    f->pre_samples = &pre;
    f->n_pre_samples = 1;
    send_msg(w, &m);
  }
  struct sw_msg d;
  sw_msg_init(&d, SW_MSG_LEASE_DONE);
  d.u.lease_done.lease_id = a->lease_id;
  d.u.lease_done.epoch = a->epoch;
  send_msg(w, &d);
  send_ready(w);
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* One request on the control endpoint; returns the decoded reply (caller clears) or -1. */
static int control_call(void *ctx, const char *ep, struct sw_msg *req, struct sw_msg *rep) {
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  int zero = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  zmq_connect(s, ep);
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  int rc = -1;
  if (sw_codec_encode(req, &buf, &len, &err) == 0 && zmq_send(s, buf, len, 0) >= 0) {
    zmq_pollitem_t it = {s, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&it, 1, 30000) > 0) {
      zmq_msg_t f;
      zmq_msg_init(&f);
      if (zmq_msg_recv(&f, s, 0) >= 0 &&
          sw_codec_decode(zmq_msg_data(&f), zmq_msg_size(&f), rep, &err) == 0)
        rc = 0;
      zmq_msg_close(&f);
    }
  }
  free(buf);
  zmq_close(s);
  if (rc)
    fprintf(stderr, "coord_load: control request failed: %s\n", err.msg[0] ? err.msg : "timeout");
  return rc;
}

int main(int argc, char **argv) {
  struct sw_err perr = {0};
  if (sw_result_check_text(RESULT, &perr)) { /* results the coordinator accepts */
    fprintf(stderr, "coord_load: its result breaks the schema: %s\n", perr.msg);
    return 1;
  }
  const char *work = "tcp://127.0.0.1:7710", *control = "tcp://127.0.0.1:7711";
  int nworkers = 300;
  long runs = 3000;
  static const struct option opts[] = {{"work", required_argument, 0, 'w'},
                                       {"control", required_argument, 0, 'c'},
                                       {"workers", required_argument, 0, 'n'},
                                       {"runs", required_argument, 0, 'r'},
                                       {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    if (c == 'w')
      work = optarg;
    else if (c == 'c')
      control = optarg;
    else if (c == 'n')
      nworkers = atoi(optarg);
    else if (c == 'r')
      runs = atol(optarg);
    else
      return 2;
  }
  if (nworkers < 1 || nworkers > 5000 || runs < 1 || runs > 10000) {
    fprintf(stderr, "coord_load: --workers 1..5000, --runs 1..10000\n");
    return 2;
  }
  void *ctx = zmq_ctx_new();
  zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, nworkers + 64);
  /* The sweep: a grid with `runs` repeats of one point, each its own lease. */
  /* repeats is capped at 1000 by the spec, so larger sweeps use several seeds. */
  long points = (runs + 999) / 1000, repeats = (runs + points - 1) / points;
  runs = points * repeats;
  char seeds[8192] = "";
  for (long i = 0; i < points; i++)
    snprintf(seeds + strlen(seeds), sizeof seeds - strlen(seeds), "%s%ld", i ? ", " : "", i + 1);
  char yaml[10000];
  snprintf(yaml, sizeof yaml,
           "name: coord-load\nkind: grid\ntrainer:\n  exec:\n    command: [\"true\", \"{out}\"]\n"
           "base: {iterations: 1}\nparameters: {seed: [%s]}\nrepeats: %ld\n"
           "contamination: {settle_s: 0, max_wait_s: 1}\n", /* the simulated windows are idle */
           seeds, repeats);
  struct sw_msg req, rep;
  sw_msg_init(&req, SW_MSG_SUBMIT_REQ);
  snprintf(req.u.submit_req.file_name, sizeof req.u.submit_req.file_name, "coord-load.yaml");
  req.u.submit_req.spec_yaml = yaml;
  if (control_call(ctx, control, &req, &rep)) return 1;
  if (rep.type != SW_MSG_SUBMIT_REP || rep.u.submit_rep.error) {
    fprintf(stderr, "coord_load: submit refused: %s\n",
            rep.type == SW_MSG_SUBMIT_REP && rep.u.submit_rep.error ? rep.u.submit_rep.error : "?");
    return 1;
  }
  uint64_t sweep = rep.u.submit_rep.sweep_id;
  sw_msg_clear(&rep);

  struct sim *ws = calloc((size_t)nworkers, sizeof *ws);
  zmq_pollitem_t *items = calloc((size_t)nworkers, sizeof *items);
  int64_t *lat = malloc((size_t)(runs * 2 + 16) * sizeof *lat);
  long nlat = 0;
  for (int i = 0; i < nworkers; i++) {
    ws[i].sock = zmq_socket(ctx, ZMQ_DEALER);
    snprintf(ws[i].id, sizeof ws[i].id, "load-%d", i);
    int zero = 0;
    zmq_setsockopt(ws[i].sock, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(ws[i].sock, ZMQ_ROUTING_ID, ws[i].id, strlen(ws[i].id));
    if (zmq_connect(ws[i].sock, work) != 0) {
      fprintf(stderr, "coord_load: connect %s: %s\n", work, zmq_strerror(errno));
      return 1;
    }
    struct sw_msg h;
    sw_msg_init(&h, SW_MSG_HELLO);
    snprintf(h.u.hello.worker_id, sizeof h.u.hello.worker_id, "%s", ws[i].id);
    snprintf(h.u.hello.fp.hostname, sizeof h.u.hello.fp.hostname, "sim-%d", i);
    h.u.hello.fp.cores = 8;
    send_msg(&ws[i], &h);
    items[i].socket = ws[i].sock;
    items[i].events = ZMQ_POLLIN;
  }
  int64_t t0 = sw_clock_mono_ms(), first_ack = 0, last_ack = 0;
  long acks = 0;
  int64_t last_status = t0;
  int finished = 0;
  while (!finished) {
    int n = zmq_poll(items, nworkers, 100);
    int64_t now = sw_clock_mono_ms();
    for (int i = 0; n > 0 && i < nworkers; i++) {
      if (!(items[i].revents & ZMQ_POLLIN)) continue;
      for (;;) {
        zmq_msg_t f;
        zmq_msg_init(&f);
        if (zmq_msg_recv(&f, ws[i].sock, ZMQ_DONTWAIT) < 0) {
          zmq_msg_close(&f);
          break;
        }
        struct sw_msg m;
        struct sw_err err = {0};
        int rc = sw_codec_decode(zmq_msg_data(&f), zmq_msg_size(&f), &m, &err);
        zmq_msg_close(&f);
        if (rc) {
          fprintf(stderr, "coord_load: bad frame from the coordinator: %s\n", err.msg);
          continue;
        }
        if (m.type == SW_MSG_WELCOME && !ws[i].welcomed) {
          ws[i].welcomed = 1;
          send_ready(&ws[i]);
        } else if (m.type == SW_MSG_ASSIGN) {
          if (ws[i].ready_us) lat[nlat++] = sw_clock_mono_ns() / 1000 - ws[i].ready_us;
          ws[i].ready_us = 0;
          do_lease(&ws[i], &m.u.assign);
        } else if (m.type == SW_MSG_ACK) {
          acks++;
          if (!first_ack) first_ack = now;
          last_ack = now;
        } else if (m.type == SW_MSG_REJECT && m.u.reject.code == SW_REJECT_UNKNOWN) {
          ws[i].welcomed = 0;
          struct sw_msg h;
          sw_msg_init(&h, SW_MSG_HELLO);
          snprintf(h.u.hello.worker_id, sizeof h.u.hello.worker_id, "%s", ws[i].id);
          send_msg(&ws[i], &h);
        }
        sw_msg_clear(&m);
      }
    }
    for (int i = 0; i < nworkers; i++)
      if (ws[i].welcomed && now - ws[i].last_send_ms >= 1000) {
        struct sw_msg hb;
        sw_msg_init(&hb, SW_MSG_HEARTBEAT);
        send_msg(&ws[i], &hb);
      }
    answered = acks;
    if (acks >= runs || now - last_status >= 2000) {
      last_status = now;
      if (acks >= runs) finished = 1;
      if (now - t0 > 600000) {
        fprintf(stderr, "coord_load: not finished after 10 minutes (%ld acks)\n", acks);
        break;
      }
    }
  }
  double secs = (double)(last_ack - first_ack) / 1000.0;
  qsort(lat, (size_t)nlat, sizeof *lat, cmp_i64);
  printf("workers %d, runs %ld, acknowledged %ld\n", nworkers, runs, acks);
  if (nlat)
    printf("Ready->Assign at the workers: p50 %.3f ms, p99 %.3f ms (n=%ld; includes waits "
           "when no work was free)\n",
           (double)lat[(nlat - 1) / 2] / 1000.0,
           (double)lat[(long)((double)(nlat - 1) * 0.99)] / 1000.0, nlat);
  printf("results/s: %.1f (first to last Ack, %.2f s)\n", secs > 0 ? (double)acks / secs : 0, secs);
  sw_msg_init(&req, SW_MSG_STATUS_REQ);
  req.u.status_req.sweep_id = sweep;
  req.u.status_req.format = SW_FMT_JSON;
  if (control_call(ctx, control, &req, &rep) == 0 && rep.type == SW_MSG_STATUS_REP) {
    json_t *st = json_loads(rep.u.status_rep.body, 0, NULL);
    json_t *co = json_object_get(st, "coordinator");
    json_t *l = json_object_get(co, "ready_to_assign_immediate");
    printf("coordinator (Readys answered at once): Ready->Assign p50 %.3f ms, p99 %.3f ms "
           "(n=%" JSON_INTEGER_FORMAT "), VmRSS %" JSON_INTEGER_FORMAT
           " kB, heap in use %" JSON_INTEGER_FORMAT " kB\n",
           json_number_value(json_object_get(l, "p50_ms")),
           json_number_value(json_object_get(l, "p99_ms")),
           json_integer_value(json_object_get(l, "n")),
           json_integer_value(json_object_get(co, "rss_kb")),
           json_integer_value(json_object_get(co, "heap_kb")));
    json_decref(st);
    sw_msg_clear(&rep);
  }
  for (int i = 0; i < nworkers; i++) zmq_close(ws[i].sock);
  zmq_ctx_term(ctx);
  free(ws);
  free(items);
  free(lat);
  return acks >= runs ? 0 : 1;
}
