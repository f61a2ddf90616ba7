/* test_codec.c: the envelope codec. Every message type survives encode -> decode unchanged;
 * out-of-contract messages are refused on both sides with the field named; a frame of another
 * protocol version is flagged for a Reject; and random, truncated, bit-flipped and
 * length-bombed frames always end in a clean error, never a crash (run under -DSW_SANITIZE=ON
 * too). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "sw_codec.h"
#include "sw_msg.h"

/* Encodes m, decodes the frame into out; both must succeed. Returns the frame length. */
static size_t roundtrip(const struct sw_msg *m, struct sw_msg *out) {
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  int rc = sw_codec_encode(m, &buf, &len, &err);
  ck_assert_msg(rc == 0, "encode %s: %s", sw_msg_type_name(m->type), err.msg);
  rc = sw_codec_decode(buf, len, out, &err);
  ck_assert_msg(rc == 0, "decode %s: %s", sw_msg_type_name(m->type), err.msg);
  ck_assert_int_eq(out->type, m->type);
  ck_assert_uint_eq(out->seq, m->seq);
  ck_assert_uint_eq(out->protocol, SW_PROTOCOL_VERSION);
  ck_assert(!out->bad_protocol);
  free(buf);
  return len;
}

/* Encode must refuse m with SW_EPROTO and an error naming `field`. */
static void refused(const struct sw_msg *m, const char *field) {
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  int rc = sw_codec_encode(m, &buf, &len, &err);
  ck_assert_msg(rc == SW_EPROTO, "%s with bad %s was encoded", sw_msg_type_name(m->type), field);
  ck_assert_ptr_null(buf);
  ck_assert_msg(strstr(err.msg, field) != NULL, "error '%s' does not name %s", err.msg, field);
}

static void fill_hello(struct sw_msg *m) {
  sw_msg_init(m, SW_MSG_HELLO);
  m->seq = 7;
  struct sw_msg_hello *h = &m->u.hello;
  strcpy(h->worker_id, "mac-studio-1");
  strcpy(h->fp.hostname, "studio.lab");
  strcpy(h->fp.os, "Darwin 24.1");
  strcpy(h->fp.arch, "arm64");
  strcpy(h->fp.cpu_model, "Apple M4 Max");
  h->fp.cores = 16;
  h->fp.mem_bytes = 128ull << 30;
  strcpy(h->fp.gpu_name, "Apple M4 Max (40-core GPU) \xc2\xb5");
  strcpy(h->fp.gpu_driver, "MoltenVK 1.2.11");
  strcpy(h->fp.gpu_api, "vulkan 1.3");
  h->fp.gpu_kind = SW_GPU_INTEGRATED;
  ck_assert_int_eq(sw_msg_kv_add(&h->fp.extra, &h->fp.n_extra, "kernel", "24.1.0"), 0);
  ck_assert_int_eq(sw_msg_kv_add(&h->labels, &h->n_labels, "site", "lab-a"), 0);
  ck_assert_int_eq(sw_msg_kv_add(&h->labels, &h->n_labels, "rack", ""), 0);
  ck_assert_int_eq(sw_msg_name_add(&h->capabilities, &h->n_capabilities, "builtin"), 0);
  ck_assert_int_eq(sw_msg_name_add(&h->capabilities, &h->n_capabilities, "exec"), 0);
  ck_assert_int_eq(sw_msg_name_add(&h->features, &h->n_features, "spool"), 0);
  memset(h->trainer_sha256, 'a', 64);
  h->trainer_sha256[64] = 0;
}

START_TEST(hello_roundtrip) {
  struct sw_msg m, d;
  fill_hello(&m);
  roundtrip(&m, &d);
  const struct sw_msg_hello *a = &m.u.hello, *b = &d.u.hello;
  ck_assert_str_eq(b->worker_id, a->worker_id);
  ck_assert_str_eq(b->fp.hostname, a->fp.hostname);
  ck_assert_str_eq(b->fp.os, a->fp.os);
  ck_assert_str_eq(b->fp.arch, a->fp.arch);
  ck_assert_str_eq(b->fp.cpu_model, a->fp.cpu_model);
  ck_assert_uint_eq(b->fp.cores, 16);
  ck_assert_uint_eq(b->fp.mem_bytes, 128ull << 30);
  ck_assert_str_eq(b->fp.gpu_name, a->fp.gpu_name);
  ck_assert_str_eq(b->fp.gpu_driver, a->fp.gpu_driver);
  ck_assert_str_eq(b->fp.gpu_api, a->fp.gpu_api);
  ck_assert_int_eq(b->fp.gpu_kind, SW_GPU_INTEGRATED);
  ck_assert_uint_eq(b->fp.n_extra, 1);
  ck_assert_str_eq(b->fp.extra[0].key, "kernel");
  ck_assert_str_eq(b->fp.extra[0].value, "24.1.0");
  ck_assert_uint_eq(b->n_labels, 2);
  ck_assert_str_eq(b->labels[0].key, "site");
  ck_assert_str_eq(b->labels[0].value, "lab-a");
  ck_assert_str_eq(b->labels[1].value, "");
  ck_assert_uint_eq(b->n_capabilities, 2);
  ck_assert_str_eq(b->capabilities[1].name, "exec");
  ck_assert_uint_eq(b->n_features, 1);
  ck_assert_str_eq(b->features[0].name, "spool");
  ck_assert_str_eq(b->trainer_sha256, a->trainer_sha256);
  sw_msg_clear(&m);
  sw_msg_clear(&d);
}
END_TEST

START_TEST(welcome_ready_roundtrip) {
  struct sw_msg m, d;
  sw_msg_init(&m, SW_MSG_WELCOME);
  m.seq = 1;
  strcpy(m.u.welcome.session_id, "s-0001");
  m.u.welcome.heartbeat_ms = 1000;
  m.u.welcome.liveness = 5;
  m.u.welcome.lease_ttl_ms = 60000;
  roundtrip(&m, &d);
  ck_assert_str_eq(d.u.welcome.session_id, "s-0001");
  ck_assert_uint_eq(d.u.welcome.heartbeat_ms, 1000);
  ck_assert_uint_eq(d.u.welcome.liveness, 5);
  ck_assert_uint_eq(d.u.welcome.lease_ttl_ms, 60000);
  sw_msg_clear(&d);

  sw_msg_init(&m, SW_MSG_READY);
  m.seq = UINT64_MAX;
  size_t len = roundtrip(&m, &d);
  ck_assert_uint_gt(len, 0);
  sw_msg_clear(&d);
}
END_TEST

START_TEST(assign_roundtrip) {
  struct sw_msg m, d;
  sw_msg_init(&m, SW_MSG_ASSIGN);
  m.seq = 42;
  struct sw_msg_assign *a = &m.u.assign;
  a->lease_id = 9;
  a->epoch = 3;
  a->deadline_ms = 1764460000000;
  a->sweep_id = 1;
  a->gate_id = 2;
  a->pair_id = 5;
  a->attempt = 2;
  a->contamination = (struct sw_msg_contamination){.load1_max = 1.5,
                                                   .cpu_other_max = 0.5,
                                                   .settle_s = 10,
                                                   .max_wait_s = 300,
                                                   .sample_interval_s = 1,
                                                   .require_windows = true,
                                                   .rerun_once = false,
                                                   .cpu_other_mean_max = 0.25,
                                                   .over_max_s = 3,
                                                   .gpu_foreign = true,
                                                   .shared_host = true};
  struct sw_msg_run runs[2] = {
      {11, "on", "{\"radix_scatter\":\"ballot\",\"iterations\":2000}", "{\"builtin\":{}}",
       "{\"path\":\"/data/lego\"}", ""},
      {12, "off", "{\"radix_scatter\":\"serial\",\"iterations\":2000}", "{\"builtin\":{}}", "{}",
       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}};
  a->runs = runs;
  a->n_runs = 2;
  snprintf(a->artifact_url, sizeof a->artifact_url, "http://coord.lab:7790");
  a->artifact_max_bytes = 1u << 30;
  a->artifact_ply = true;
  roundtrip(&m, &d);
  const struct sw_msg_assign *b = &d.u.assign;
  ck_assert_str_eq(b->artifact_url, "http://coord.lab:7790");
  ck_assert_uint_eq(b->artifact_max_bytes, 1u << 30);
  ck_assert(b->artifact_ply);
  ck_assert_str_eq(b->runs[0].artifact_token, "");
  ck_assert_str_eq(b->runs[1].artifact_token, runs[1].artifact_token);
  ck_assert_uint_eq(b->lease_id, 9);
  ck_assert_uint_eq(b->epoch, 3);
  ck_assert_int_eq(b->deadline_ms, 1764460000000);
  ck_assert_uint_eq(b->sweep_id, 1);
  ck_assert_uint_eq(b->gate_id, 2);
  ck_assert_uint_eq(b->pair_id, 5);
  ck_assert_uint_eq(b->attempt, 2);
  ck_assert_uint_eq(b->n_runs, 2);
  for (int i = 0; i < 2; i++) {
    ck_assert_uint_eq(b->runs[i].run_id, runs[i].run_id);
    ck_assert_str_eq(b->runs[i].arm, runs[i].arm);
    ck_assert_str_eq(b->runs[i].config_json, runs[i].config_json);
    ck_assert_str_eq(b->runs[i].trainer_json, runs[i].trainer_json);
    ck_assert_str_eq(b->runs[i].scene_json, runs[i].scene_json);
  }
  ck_assert(b->contamination.load1_max == 1.5);
  ck_assert(b->contamination.cpu_other_max == 0.5);
  ck_assert(b->contamination.settle_s == 10);
  ck_assert(b->contamination.max_wait_s == 300);
  ck_assert(b->contamination.sample_interval_s == 1);
  ck_assert(b->contamination.require_windows);
  ck_assert(!b->contamination.rerun_once);
  ck_assert(b->contamination.cpu_other_mean_max == 0.25);
  ck_assert(b->contamination.over_max_s == 3);
  ck_assert(b->contamination.gpu_foreign);
  ck_assert(b->contamination.shared_host);
  sw_msg_clear(&d);
}
END_TEST

START_TEST(run_messages_roundtrip) {
  struct sw_msg m, d;
  sw_msg_init(&m, SW_MSG_RUN_STARTED);
  m.u.run_started = (struct sw_msg_run_started){9, 3, 11, 1, 12.5};
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.run_started.lease_id, 9);
  ck_assert_uint_eq(d.u.run_started.epoch, 3);
  ck_assert_uint_eq(d.u.run_started.run_id, 11);
  ck_assert_uint_eq(d.u.run_started.attempt, 1);
  ck_assert(d.u.run_started.waited_s == 12.5);
  sw_msg_clear(&d);

  sw_msg_init(&m, SW_MSG_PROGRESS);
  m.u.progress = (struct sw_msg_progress){9, 3, 11, 1, 1200, 33.25, 0.0421, 322000};
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.progress.iter, 1200);
  ck_assert(d.u.progress.train_s == 33.25);
  ck_assert(d.u.progress.loss == 0.0421);
  ck_assert_uint_eq(d.u.progress.splats, 322000);
  sw_msg_clear(&d);

  sw_msg_init(&m, SW_MSG_LEASE_DONE);
  m.u.lease_done = (struct sw_msg_lease_done){9, 3};
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.lease_done.lease_id, 9);
  ck_assert_uint_eq(d.u.lease_done.epoch, 3);

  sw_msg_init(&m, SW_MSG_ACK);
  m.u.ack = (struct sw_msg_ack){77, 11, 2};
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.ack.ack_seq, 77);
  ck_assert_uint_eq(d.u.ack.run_id, 11);
  ck_assert_uint_eq(d.u.ack.attempt, 2);

  sw_msg_init(&m, SW_MSG_HEARTBEAT);
  m.u.heartbeat = (struct sw_msg_heartbeat){0, 0};
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.heartbeat.lease_id, 0);
  m.u.heartbeat = (struct sw_msg_heartbeat){9, 4};
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.heartbeat.lease_id, 9);
  ck_assert_uint_eq(d.u.heartbeat.epoch, 4);

  sw_msg_init(&m, SW_MSG_CANCEL);
  m.u.cancel.lease_id = 9;
  m.u.cancel.reason = "sweep cancelled";
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.cancel.lease_id, 9);
  ck_assert_str_eq(d.u.cancel.reason, "sweep cancelled");
  sw_msg_clear(&d);

  sw_msg_init(&m, SW_MSG_REJECT);
  m.u.reject.code = SW_REJECT_STALE_LEASE;
  m.u.reject.reason = "lease 9 epoch 3 expired";
  roundtrip(&m, &d);
  ck_assert_int_eq(d.u.reject.code, SW_REJECT_STALE_LEASE);
  ck_assert_str_eq(d.u.reject.reason, "lease 9 epoch 3 expired");
  sw_msg_clear(&d);
}
END_TEST

START_TEST(run_finished_roundtrip) {
  struct sw_msg m, d;
  sw_msg_init(&m, SW_MSG_RUN_FINISHED);
  m.seq = 100;
  struct sw_msg_run_finished *f = &m.u.run_finished;
  *f = (struct sw_msg_run_finished){.lease_id = 9,
                                    .epoch = 3,
                                    .run_id = 11,
                                    .attempt = 1,
                                    .exit_status = 0,
                                    .wall_s = 127.53,
                                    .waited_s = 10.2,
                                    .quiet = true};
  f->result_json = "{\"schema\":\"splatsweep.result/1\",\"metrics\":{\"train_s\":127.53}}";
  struct sw_msg_sample s[3] = {{.t_ms = 0,
                                .load1 = 0.4,
                                .cpu_other = 0.05,
                                .cpu_total = 1.0,
                                .mem_avail = 1u << 30,
                                .cpu_trainer = 0.9,
                                .cpu_self = 0.05,
                                .has_gpu = true,
                                .gpu_util = 97,
                                .gpu_sm_mhz = 1980,
                                .gpu_temp_c = 41,
                                .gpu_power_w = 312.5,
                                .gpu_throttle = 4,
                                .gpu_foreign = 0},
                               {.t_ms = 1000,
                                .load1 = 0.5,
                                .cpu_other = 0.1,
                                .cpu_total = 1.1,
                                .mem_avail = 1u << 30,
                                .gpu_foreign = -1},
                               {.t_ms = 2000,
                                .load1 = 9.0,
                                .cpu_other = 3.5,
                                .cpu_total = 4.5,
                                .mem_avail = 123,
                                .has_gpu = true,
                                .gpu_foreign = 2}};
  struct sw_msg_sample pre[1] = {
      {.t_ms = -5000, .load1 = 0.2, .cpu_other = 0.0, .cpu_total = 0.1, .mem_avail = 5}};
  f->env_before = "{\"trainer_sha256\":\"ab\",\"driver\":\"580.1\"}";
  f->env_after = "{\"trainer_sha256\":\"cd\",\"driver\":\"580.1\"}";
  f->run_start_wall_ms = 1764600000123;
  f->run_end_wall_ms = 1764600127653;
  f->samples = s;
  f->n_samples = 3;
  f->pre_samples = pre;
  f->n_pre_samples = 1;
  struct sw_msg_artifact arts[2] = {
      {"trainer.log", 1234, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
      {"renders/view-0.png", 99,
       "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"}};
  f->artifacts = arts;
  f->n_artifacts = 2;
  roundtrip(&m, &d);
  const struct sw_msg_run_finished *g = &d.u.run_finished;
  ck_assert_uint_eq(g->n_artifacts, 2);
  ck_assert_str_eq(g->artifacts[1].name, "renders/view-0.png");
  ck_assert_uint_eq(g->artifacts[0].size, 1234);
  ck_assert_str_eq(g->artifacts[1].sha256, arts[1].sha256);
  /* Names that could leave the run's folder, and bad hashes, are refused by the validator. */
  const char *bad_names[] = {"../x", "/etc/passwd", "a/b/c",   ".hidden", "renders/.x", "a//b",
                             "",     "sp ace",      "renders/"};
  for (size_t k = 0; k < sizeof bad_names / sizeof *bad_names; k++)
    ck_assert_msg(!sw_msg_artifact_name_ok(bad_names[k]), "%s", bad_names[k]);
  ck_assert(sw_msg_artifact_name_ok("final.ply") && sw_msg_artifact_name_ok("renders/v-1.png"));
  struct sw_err verr = {0};
  snprintf(arts[0].sha256, sizeof arts[0].sha256, "XYZ");
  ck_assert_int_eq(sw_msg_validate(&m, &verr), SW_EPROTO);
  ck_assert_ptr_nonnull(strstr(verr.msg, "artifacts[0].sha256"));
  snprintf(arts[0].sha256, sizeof arts[0].sha256, "%s", g->artifacts[0].sha256);
  ck_assert_uint_eq(g->lease_id, 9);
  ck_assert_uint_eq(g->run_id, 11);
  ck_assert_int_eq(g->exit_status, 0);
  ck_assert(g->wall_s == 127.53);
  ck_assert(g->waited_s == 10.2);
  ck_assert(g->quiet);
  ck_assert_str_eq(g->result_json, f->result_json);
  ck_assert_ptr_null(g->error);
  ck_assert_uint_eq(g->n_samples, 3);
  ck_assert_uint_eq(g->n_pre_samples, 1);
  ck_assert_int_eq(g->pre_samples[0].t_ms, -5000);
  ck_assert(g->samples[0].cpu_trainer == 0.9 && g->samples[0].cpu_self == 0.05);
  ck_assert(g->samples[0].has_gpu && g->samples[0].gpu_util == 97);
  ck_assert(g->samples[0].gpu_sm_mhz == 1980 && g->samples[0].gpu_temp_c == 41);
  ck_assert(g->samples[0].gpu_power_w == 312.5 && g->samples[0].gpu_throttle == 4);
  ck_assert_int_eq(g->samples[0].gpu_foreign, 0);
  ck_assert(!g->samples[1].has_gpu);
  ck_assert_int_eq(g->samples[1].gpu_foreign, -1);
  ck_assert_int_eq(g->samples[2].gpu_foreign, 2);
  ck_assert_str_eq(g->env_before, f->env_before);
  ck_assert_str_eq(g->env_after, f->env_after);
  ck_assert_int_eq(g->run_start_wall_ms, 1764600000123);
  ck_assert_int_eq(g->run_end_wall_ms, 1764600127653);
  for (int i = 0; i < 3; i++) {
    ck_assert_int_eq(g->samples[i].t_ms, s[i].t_ms);
    ck_assert(g->samples[i].load1 == s[i].load1);
    ck_assert(g->samples[i].cpu_other == s[i].cpu_other);
    ck_assert(g->samples[i].cpu_total == s[i].cpu_total);
    ck_assert_uint_eq(g->samples[i].mem_avail, s[i].mem_avail);
  }
  sw_msg_clear(&d);

  /* A failed run: no result, an error text, a signal exit status. */
  f->result_json = NULL;
  f->error = "trainer killed by SIGKILL";
  f->exit_status = 137;
  f->n_samples = 0;
  f->samples = NULL;
  roundtrip(&m, &d);
  ck_assert_ptr_null(d.u.run_finished.result_json);
  ck_assert_str_eq(d.u.run_finished.error, "trainer killed by SIGKILL");
  ck_assert_int_eq(d.u.run_finished.exit_status, 137);
  ck_assert_uint_eq(d.u.run_finished.n_samples, 0);
  sw_msg_clear(&d);
}
END_TEST

START_TEST(control_roundtrip) {
  struct sw_msg m, d;
  sw_msg_init(&m, SW_MSG_SUBMIT_REQ);
  strcpy(m.u.submit_req.file_name, "sweeps/quickstart.yaml");
  m.u.submit_req.spec_yaml = "name: q\nkind: gate\n";
  roundtrip(&m, &d);
  ck_assert_str_eq(d.u.submit_req.file_name, "sweeps/quickstart.yaml");
  ck_assert_str_eq(d.u.submit_req.spec_yaml, "name: q\nkind: gate\n");
  sw_msg_clear(&d);

  sw_msg_init(&m, SW_MSG_SUBMIT_REP);
  m.u.submit_rep.sweep_id = 12;
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.submit_rep.sweep_id, 12);
  ck_assert_ptr_null(d.u.submit_rep.error);
  m.u.submit_rep.sweep_id = 0;
  m.u.submit_rep.error = "q.yaml:3:1: unknown key 'foo' in spec";
  roundtrip(&m, &d);
  ck_assert_str_eq(d.u.submit_rep.error, m.u.submit_rep.error);
  sw_msg_clear(&d);

  sw_msg_init(&m, SW_MSG_STATUS_REQ);
  m.u.status_req.sweep_id = 0;
  m.u.status_req.format = SW_FMT_JSON;
  roundtrip(&m, &d);
  ck_assert_int_eq(d.u.status_req.format, SW_FMT_JSON);

  sw_msg_init(&m, SW_MSG_STATUS_REP);
  m.u.status_rep.format = SW_FMT_JSON;
  m.u.status_rep.body = "{\"sweeps\":[]}";
  roundtrip(&m, &d);
  ck_assert_str_eq(d.u.status_rep.body, "{\"sweeps\":[]}");
  sw_msg_clear(&d);

  sw_msg_init(&m, SW_MSG_REPORT_REQ);
  m.u.report_req.sweep_id = 4;
  m.u.report_req.format = SW_FMT_HTML;
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.report_req.sweep_id, 4);
  ck_assert_int_eq(d.u.report_req.format, SW_FMT_HTML);

  sw_msg_init(&m, SW_MSG_REPORT_REP);
  m.u.report_rep.format = SW_FMT_MD;
  m.u.report_rep.body = "# radix-ballot\n\nverdict: adopt\n";
  roundtrip(&m, &d);
  ck_assert_int_eq(d.u.report_rep.format, SW_FMT_MD);
  ck_assert_str_eq(d.u.report_rep.body, m.u.report_rep.body);
  sw_msg_clear(&d);

  sw_msg_init(&m, SW_MSG_CANCEL_REQ);
  m.u.cancel_req.sweep_id = 4;
  m.u.cancel_req.reason = "wrong base config";
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.cancel_req.sweep_id, 4);
  ck_assert_str_eq(d.u.cancel_req.reason, "wrong base config");
  sw_msg_clear(&d);

  sw_msg_init(&m, SW_MSG_CANCEL_REP);
  m.u.cancel_rep.sweep_id = 4;
  m.u.cancel_rep.runs_cancelled = 6;
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.cancel_rep.runs_cancelled, 6);

  sw_msg_init(&m, SW_MSG_ERROR);
  m.u.error.code = SW_ENOTFOUND;
  m.u.error.message = "no sweep 99";
  roundtrip(&m, &d);
  ck_assert_int_eq(d.u.error.code, SW_ENOTFOUND);
  ck_assert_str_eq(d.u.error.message, "no sweep 99");
  sw_msg_clear(&d);
}
END_TEST

START_TEST(validation_refuses) {
  struct sw_msg m;
  fill_hello(&m);
  m.u.hello.worker_id[0] = 0;
  refused(&m, "worker_id");
  strcpy(m.u.hello.worker_id, "w\x01");
  refused(&m, "worker_id");
  strcpy(m.u.hello.worker_id, "w\xc3\x28"); /* broken UTF-8 */
  refused(&m, "worker_id");
  strcpy(m.u.hello.worker_id, "w\xed\xa0\x80"); /* a UTF-16 surrogate */
  refused(&m, "worker_id");
  strcpy(m.u.hello.worker_id, "w1");
  m.u.hello.trainer_sha256[3] = 'G';
  refused(&m, "trainer_sha256");
  m.u.hello.trainer_sha256[3] = 'a';
  m.u.hello.fp.gpu_kind = (enum sw_gpu_kind)17;
  refused(&m, "gpu_kind");
  m.u.hello.fp.gpu_kind = SW_GPU_CPU;
  memset(m.u.hello.fp.os, 'x', sizeof m.u.hello.fp.os); /* no terminating NUL */
  refused(&m, "fingerprint.os");
  sw_msg_clear(&m);

  struct sw_msg_run run = {1, "off", "{\"a\":1}", "{\"builtin\":{}}", "{}", ""};
  sw_msg_init(&m, SW_MSG_ASSIGN);
  m.u.assign =
      (struct sw_msg_assign){.lease_id = 1, .sweep_id = 1, .attempt = 1, .runs = &run, .n_runs = 1};
  m.u.assign.n_runs = 0;
  refused(&m, "Assign.runs");
  m.u.assign.n_runs = 1;
  run.config_json = "[1,2]";
  refused(&m, "runs[0].config_json");
  run.config_json = "{\"a\":1} trailing";
  refused(&m, "runs[0].config_json");
  run.config_json = "{\"a\":1,\"a\":2}";
  refused(&m, "runs[0].config_json");
  run.config_json = "{\"a\":1}";
  /* An empty arm is a grid run of a grid without parameters; a gate run needs its arm. */
  run.arm[0] = 0;
  uint8_t *okbuf = NULL;
  size_t oklen = 0;
  struct sw_err okerr = {0};
  ck_assert_int_eq(sw_codec_encode(&m, &okbuf, &oklen, &okerr), 0);
  free(okbuf);
  m.u.assign.gate_id = 4;
  refused(&m, "runs[0].arm");
  strcpy(run.arm, "off");
  run.scene_json = NULL;
  refused(&m, "runs[0].scene_json");
  run.scene_json = "{}";
  m.u.assign.attempt = 0;
  refused(&m, "attempt");
  m.u.assign.attempt = 1;
  m.u.assign.contamination.settle_s = NAN;
  refused(&m, "contamination.settle_s");
  m.u.assign.contamination.settle_s = 10;
  m.u.assign.contamination.cpu_other_mean_max = -0.1;
  refused(&m, "contamination.cpu_other_mean_max");
  m.u.assign.contamination.cpu_other_mean_max = 0.2;
  m.u.assign.contamination.over_max_s = NAN;
  refused(&m, "contamination.over_max_s");
  m.u.assign.contamination.over_max_s = 2;
  m.u.assign.lease_id = 0;
  refused(&m, "lease_id");

  struct sw_msg_sample s = {.load1 = INFINITY};
  sw_msg_init(&m, SW_MSG_RUN_FINISHED);
  m.u.run_finished = (struct sw_msg_run_finished){
      .lease_id = 1, .run_id = 1, .attempt = 1, .samples = &s, .n_samples = 1};
  refused(&m, "samples[0].load1");
  s.load1 = -1;
  refused(&m, "samples[0].load1");
  s.load1 = 0.5;
  m.u.run_finished.wall_s = -3;
  refused(&m, "wall_s");
  m.u.run_finished.wall_s = 3;
  m.u.run_finished.n_samples = SW_MSG_SAMPLES_MAX + 1;
  refused(&m, "samples");

  sw_msg_init(&m, SW_MSG_STATUS_REP);
  m.u.status_rep.format = SW_FMT_JSON;
  m.u.status_rep.body = "not json";
  refused(&m, "StatusReply.body");
  m.u.status_rep.format = (enum sw_msg_format)9;
  refused(&m, "format");

  sw_msg_init(&m, SW_MSG_SUBMIT_REP);
  refused(&m, "SubmitReply");
  sw_msg_init(&m, SW_MSG_ERROR);
  m.u.error.code = 0;
  m.u.error.message = "x";
  refused(&m, "Error.code");
  sw_msg_init(&m, SW_MSG_NONE);
  refused(&m, "no body");
}
END_TEST

START_TEST(protocol_version_flagged) {
  struct sw_msg m, d;
  sw_msg_init(&m, SW_MSG_HEARTBEAT);
  m.protocol = 2;
  m.seq = 55;
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_codec_encode(&m, &buf, &len, &err), 0);
  ck_assert_int_eq(sw_codec_decode(buf, len, &d, &err), SW_EPROTO);
  ck_assert(d.bad_protocol);
  ck_assert_uint_eq(d.protocol, 2);
  ck_assert_uint_eq(d.seq, 55);
  ck_assert_ptr_nonnull(strstr(err.msg, "protocol version 2"));
  sw_msg_clear(&d);
  free(buf);

  /* A malformed frame of the right version is not a version error. */
  sw_err_clear(&err);
  const uint8_t junk[] = {0x08, 0x01, 0xff};
  ck_assert_int_eq(sw_codec_decode(junk, sizeof junk, &d, &err), SW_EPROTO);
  ck_assert(!d.bad_protocol);
  /* An envelope without a body. */
  const uint8_t empty[] = {0x08, 0x01, 0x10, 0x05};
  sw_err_clear(&err);
  ck_assert_int_eq(sw_codec_decode(empty, sizeof empty, &d, &err), SW_EPROTO);
  ck_assert(!d.bad_protocol);
  ck_assert_ptr_nonnull(strstr(err.msg, "no body"));
  ck_assert_uint_eq(d.seq, 5);
  sw_msg_clear(&d);
}
END_TEST

START_TEST(decode_refuses_overlong_fields) {
  /* A Welcome whose session id exceeds SW_MSG_ID_MAX: hand-built protobuf, since encode
   * refuses to produce it. Envelope{protocol=1, welcome{session_id=<200 x 'a'>, ...}}. */
  uint8_t frame[300];
  size_t n = 0;
  frame[n++] = 0x08, frame[n++] = 0x01; /* protocol = 1 */
  frame[n++] = 0x5a;                    /* field 11 (welcome), length-delimited */
  frame[n++] = 0xcb, frame[n++] = 0x01; /* length 203 */
  frame[n++] = 0x0a;                    /* session_id */
  frame[n++] = 0xc8, frame[n++] = 0x01; /* length 200 */
  memset(frame + n, 'a', 200);
  n += 200;
  struct sw_msg d;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_codec_decode(frame, n, &d, &err), SW_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.msg, "Welcome.session_id"));
  sw_msg_clear(&d);

  /* A frame larger than the maximum is refused before parsing. */
  sw_err_clear(&err);
  ck_assert_int_eq(sw_codec_decode(frame, (size_t)SW_MSG_FRAME_MAX + 1, &d, &err), SW_EPROTO);
  ck_assert_ptr_nonnull(strstr(err.msg, "exceeds"));
}
END_TEST

START_TEST(decode_refuses_embedded_nul) {
  /* protobuf-c hands strings over NUL-terminated, so "a\0b" would reach the checks as "a".
   * Encode a Hello with worker id "aQb", then patch the Q into a NUL on the wire. */
  struct sw_msg m, d;
  fill_hello(&m);
  strcpy(m.u.hello.worker_id, "aQb");
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_codec_encode(&m, &buf, &len, &err), 0);
  sw_msg_clear(&m);
  ck_assert_int_eq(sw_codec_decode(buf, len, &d, &err), 0); /* unpatched: fine */
  ck_assert_str_eq(d.u.hello.worker_id, "aQb");
  sw_msg_clear(&d);
  size_t at = 0;
  while (at + 3 <= len && memcmp(buf + at, "aQb", 3) != 0) at++;
  ck_assert_uint_lt(at + 3, len + 1);
  buf[at + 1] = 0;
  sw_err_clear(&err);
  ck_assert_int_eq(sw_codec_decode(buf, len, &d, &err), SW_EPROTO);
  ck_assert_msg(strstr(err.msg, "worker_id with an embedded NUL") != NULL, "error: %s", err.msg);
  sw_msg_clear(&d);
  free(buf);
}
END_TEST

START_TEST(validation_refuses_wide_epochs) {
  /* 2^32 + 1 must not pass as epoch 1 anywhere an epoch is named. */
  const uint64_t wide = (1ull << 32) + 1;
  struct sw_msg m, d;
  sw_msg_init(&m, SW_MSG_HEARTBEAT);
  m.u.heartbeat = (struct sw_msg_heartbeat){.lease_id = 3, .epoch = wide};
  refused(&m, "Heartbeat.epoch");
  m.u.heartbeat.epoch = SW_MSG_EPOCH_MAX + 1;
  refused(&m, "Heartbeat.epoch");
  m.u.heartbeat.epoch = SW_MSG_EPOCH_MAX; /* the largest legal epoch survives unchanged */
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.heartbeat.epoch, SW_MSG_EPOCH_MAX);

  sw_msg_init(&m, SW_MSG_LEASE_DONE);
  m.u.lease_done = (struct sw_msg_lease_done){.lease_id = 3, .epoch = wide};
  refused(&m, "LeaseDone.epoch");
  sw_msg_init(&m, SW_MSG_RUN_STARTED);
  m.u.run_started =
      (struct sw_msg_run_started){.lease_id = 3, .epoch = wide, .run_id = 1, .attempt = 1};
  refused(&m, "RunStarted.epoch");
  sw_msg_init(&m, SW_MSG_PROGRESS);
  m.u.progress = (struct sw_msg_progress){.lease_id = 3, .epoch = wide, .run_id = 1, .attempt = 1};
  refused(&m, "Progress.epoch");
  sw_msg_init(&m, SW_MSG_RUN_FINISHED);
  m.u.run_finished =
      (struct sw_msg_run_finished){.lease_id = 3, .epoch = wide, .run_id = 1, .attempt = 1};
  refused(&m, "RunFinished.epoch");
  struct sw_msg_run run = {1, "off", "{}", "{}", "{}", ""};
  sw_msg_init(&m, SW_MSG_ASSIGN);
  m.u.assign = (struct sw_msg_assign){
      .lease_id = 3, .epoch = wide, .sweep_id = 1, .attempt = 1, .runs = &run, .n_runs = 1};
  refused(&m, "Assign.epoch");

  /* The decoder refuses it too: Envelope{protocol=1, heartbeat{lease_id=3, epoch=2^32+1}}. */
  const uint8_t frame[] = {0x08, 0x01, 0xa2, 0x01, 0x08, 0x08, 0x03,
                           0x10, 0x81, 0x80, 0x80, 0x80, 0x10};
  struct sw_err err = {0};
  int rc = sw_codec_decode(frame, sizeof frame, &d, &err);
  ck_assert_msg(rc == SW_EPROTO && strstr(err.msg, "epoch"), "decode: rc %d, %s", rc, err.msg);
}
END_TEST

START_TEST(validation_refuses_too_many_samples) {
  struct sw_msg m, d;
  struct sw_msg_sample *s = calloc(20001, sizeof *s);
  ck_assert_ptr_nonnull(s);
  sw_msg_init(&m, SW_MSG_RUN_FINISHED);
  m.u.run_finished = (struct sw_msg_run_finished){
      .lease_id = 1, .run_id = 1, .attempt = 1, .samples = s, .n_samples = 20001};
  refused(&m, "RunFinished.samples: 20001 samples, more than 20000");
  m.u.run_finished.n_samples = 0;
  m.u.run_finished.pre_samples = s;
  m.u.run_finished.n_pre_samples = 20001;
  refused(&m, "RunFinished.pre_samples");
  m.u.run_finished.n_pre_samples = 20000; /* what the worker keeps at most */
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.run_finished.n_pre_samples, 20000);
  sw_msg_clear(&d);
  free(s);
}
END_TEST

START_TEST(validation_bounds_hello) {
  struct sw_msg m;
  fill_hello(&m);
  struct sw_msg_hello *h = &m.u.hello;
  struct sw_msg_kv *kvs = calloc(65, sizeof *kvs);
  struct sw_msg_name *names = calloc(17, sizeof *names);
  ck_assert(kvs && names);
  for (int i = 0; i < 65; i++) strcpy(kvs[i].key, "k"), strcpy(kvs[i].value, "v");
  for (int i = 0; i < 17; i++) strcpy(names[i].name, "exec");
  struct sw_msg_kv *labels = h->labels, *extra = h->fp.extra;
  struct sw_msg_name *caps = h->capabilities, *feats = h->features;
  size_t n_labels = h->n_labels, n_extra = h->fp.n_extra, n_caps = h->n_capabilities,
         n_feats = h->n_features;

  h->labels = kvs, h->n_labels = 33;
  refused(&m, "Hello.labels: 33 entries, more than 32");
  h->n_labels = 32;
  memset(kvs[5].key, 'k', 65);
  refused(&m, "Hello.labels[5].key: longer than 64 bytes");
  kvs[5].key[64] = 0;
  memset(kvs[5].value, 'v', 257);
  refused(&m, "Hello.labels[5].value: longer than 256 bytes");
  kvs[5].value[256] = 0;
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  ck_assert_int_eq(sw_codec_encode(&m, &buf, &len, &err), 0); /* at every limit: fine */
  free(buf);
  h->labels = labels, h->n_labels = n_labels;

  h->fp.extra = kvs, h->fp.n_extra = 65;
  refused(&m, "Hello.fingerprint.extra: 65 entries, more than 64");
  h->fp.n_extra = 64;
  kvs[5].key[64] = 'k', kvs[5].key[65] = 0;
  refused(&m, "Hello.fingerprint.extra[5].key");
  h->fp.extra = extra, h->fp.n_extra = n_extra;

  h->capabilities = names, h->n_capabilities = 17;
  refused(&m, "Hello.capabilities: 17 entries, more than 16");
  h->n_capabilities = 16;
  memset(names[2].name, 'c', 65);
  refused(&m, "Hello.capabilities[2]: longer than 64 bytes");
  h->capabilities = caps, h->n_capabilities = n_caps;
  names[2].name[0] = 'c', names[2].name[1] = 0;
  h->features = names, h->n_features = 17;
  refused(&m, "Hello.features: 17 entries, more than 16");
  h->features = feats, h->n_features = n_feats;

  /* The builders hold the same limits. */
  struct sw_msg_kv *kv = NULL;
  size_t n = 0;
  char key[66], value[258];
  memset(key, 'k', 65), key[65] = 0;
  memset(value, 'v', 257), value[257] = 0;
  ck_assert_int_eq(sw_msg_kv_add(&kv, &n, key, "v"), SW_EINVAL);
  ck_assert_int_eq(sw_msg_kv_add(&kv, &n, "k", value), SW_EINVAL);
  key[64] = 0, value[256] = 0;
  ck_assert_int_eq(sw_msg_kv_add(&kv, &n, key, value), 0);
  free(kv);
  free(kvs);
  free(names);
  sw_msg_clear(&m);
}
END_TEST

/* xorshift64*: a seeded generator so a failing fuzz case can be replayed. */
static uint64_t rng_next(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

/* Decodes buf and checks the outcome is clean: success with a valid message, or an error with
 * a message. Returns 1 on success. */
static int decode_clean(const uint8_t *buf, size_t len) {
  struct sw_msg d;
  struct sw_err err = {0};
  int rc = sw_codec_decode(buf, len, &d, &err);
  if (rc == 0) {
    struct sw_err verr = {0};
    ck_assert_int_eq(sw_msg_validate(&d, &verr), 0);
  } else {
    ck_assert(rc == SW_EPROTO || rc == SW_ENOMEM);
    ck_assert_msg(err.msg[0] != 0, "error without a message");
  }
  sw_msg_clear(&d);
  return rc == 0;
}

/* Builds a frame of every type for the mutation fuzzers. */
static size_t sample_frames(uint8_t **frames, size_t *lens) {
  struct sw_msg m;
  struct sw_err err = {0};
  size_t k = 0;
  fill_hello(&m);
  ck_assert_int_eq(sw_codec_encode(&m, &frames[k], &lens[k], &err), 0);
  k++;
  sw_msg_clear(&m);
  struct sw_msg_run run = {1, "off", "{\"a\":[1,2,{\"b\":null}]}", "{\"builtin\":{}}", "{}", ""};
  sw_msg_init(&m, SW_MSG_ASSIGN);
  m.u.assign =
      (struct sw_msg_assign){.lease_id = 1, .sweep_id = 1, .attempt = 1, .runs = &run, .n_runs = 1};
  ck_assert_int_eq(sw_codec_encode(&m, &frames[k], &lens[k], &err), 0);
  k++;
  struct sw_msg_sample s[2] = {
      {.t_ms = 0, .load1 = 1, .cpu_other = 0.5, .cpu_total = 1, .mem_avail = 1},
      {.t_ms = 1000, .load1 = 1, .cpu_other = 0.5, .cpu_total = 1, .mem_avail = 1}};
  sw_msg_init(&m, SW_MSG_RUN_FINISHED);
  m.u.run_finished = (struct sw_msg_run_finished){.lease_id = 1,
                                                  .run_id = 1,
                                                  .attempt = 1,
                                                  .result_json = "{\"metrics\":{}}",
                                                  .samples = s,
                                                  .n_samples = 2};
  ck_assert_int_eq(sw_codec_encode(&m, &frames[k], &lens[k], &err), 0);
  k++;
  sw_msg_init(&m, SW_MSG_SUBMIT_REQ);
  m.u.submit_req.spec_yaml = "name: x\n";
  ck_assert_int_eq(sw_codec_encode(&m, &frames[k], &lens[k], &err), 0);
  k++;
  sw_msg_init(&m, SW_MSG_PROGRESS);
  m.u.progress = (struct sw_msg_progress){1, 1, 1, 1, 10, 1.0, 0.5, 100};
  ck_assert_int_eq(sw_codec_encode(&m, &frames[k], &lens[k], &err), 0);
  k++;
  return k;
}

START_TEST(fuzz_random_bytes) {
  uint64_t seed = 0x5eed0001;
  uint8_t buf[512];
  for (int i = 0; i < 20000; i++) {
    size_t len = rng_next(&seed) % sizeof buf;
    for (size_t j = 0; j < len; j++) buf[j] = (uint8_t)rng_next(&seed);
    /* Half of the inputs start like a real envelope so the parser gets past the first byte. */
    if (i % 2 && len > 3) buf[0] = 0x08, buf[1] = 0x01;
    decode_clean(buf, len);
  }
  decode_clean(NULL, 0);
  decode_clean(buf, 0);
}
END_TEST

START_TEST(fuzz_truncated_and_flipped) {
  uint8_t *frames[8];
  size_t lens[8];
  size_t nf = sample_frames(frames, lens);
  uint64_t seed = 0x5eed0002;
  for (size_t f = 0; f < nf; f++) {
    /* Every truncation of every frame. The whole frame decodes; a prefix may or may not. */
    for (size_t cut = 0; cut < lens[f]; cut++) decode_clean(frames[f], cut);
    ck_assert(decode_clean(frames[f], lens[f]));
    uint8_t *copy = malloc(lens[f]);
    ck_assert_ptr_nonnull(copy);
    for (int i = 0; i < 4000; i++) {
      memcpy(copy, frames[f], lens[f]);
      int flips = 1 + (int)(rng_next(&seed) % 4);
      for (int b = 0; b < flips; b++) {
        size_t bit = rng_next(&seed) % (lens[f] * 8);
        copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
      }
      decode_clean(copy, lens[f]);
    }
    free(copy);
    free(frames[f]);
  }
}
END_TEST

START_TEST(fuzz_giant_lengths) {
  /* Length prefixes that claim far more data than the frame has, at each nesting level. */
  const uint8_t claims[][16] = {
      {0x08, 0x01, 0x5a, 0xff, 0xff, 0xff, 0xff, 0x0f}, /* welcome: 4 GiB */
      {0x08, 0x01, 0x52, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
      {0x08, 0x01, 0x6a, 0x05, 0x42, 0xff, 0xff, 0xff, 0x7f},       /* assign.runs: 256 MiB */
      {0x08, 0x01, 0x82, 0x01, 0x04, 0x6a, 0x80, 0x80, 0x80, 0x08}, /* samples */
      {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, /* bad varint */
  };
  for (size_t i = 0; i < sizeof claims / sizeof claims[0]; i++) {
    ck_assert(!decode_clean(claims[i], sizeof claims[i]));
  }
  /* A large but legal body: 100k samples is the limit and decodes. */
  struct sw_msg m, d;
  sw_msg_init(&m, SW_MSG_RUN_FINISHED);
  struct sw_msg_sample *s = calloc(SW_MSG_SAMPLES_MAX, sizeof *s);
  ck_assert_ptr_nonnull(s);
  m.u.run_finished = (struct sw_msg_run_finished){
      .lease_id = 1, .run_id = 1, .attempt = 1, .samples = s, .n_samples = SW_MSG_SAMPLES_MAX};
  roundtrip(&m, &d);
  ck_assert_uint_eq(d.u.run_finished.n_samples, SW_MSG_SAMPLES_MAX);
  sw_msg_clear(&d);
  free(s);
}
END_TEST

START_TEST(names_and_helpers) {
  ck_assert_str_eq(sw_msg_type_name(SW_MSG_RUN_FINISHED), "RunFinished");
  ck_assert_str_eq(sw_msg_type_name((enum sw_msg_type)99), "?");
  ck_assert_int_eq(sw_gpu_kind_parse("discrete"), SW_GPU_DISCRETE);
  ck_assert_int_eq(sw_gpu_kind_parse("quantum"), SW_GPU_UNKNOWN);
  ck_assert_str_eq(sw_gpu_kind_name(SW_GPU_CPU), "cpu");
  enum sw_msg_format f;
  ck_assert_int_eq(sw_msg_format_parse("html", &f), 0);
  ck_assert_int_eq(f, SW_FMT_HTML);
  ck_assert_int_eq(sw_msg_format_parse("pdf", &f), SW_EINVAL);
  ck_assert_str_eq(sw_msg_format_name(SW_FMT_MD), "md");
  struct sw_msg_kv *kv = NULL;
  size_t n = 0;
  char big[SW_MSG_VALUE_MAX + 2];
  memset(big, 'v', sizeof big - 1);
  big[sizeof big - 1] = 0;
  ck_assert_int_eq(sw_msg_kv_add(&kv, &n, "k", big), SW_EINVAL);
  ck_assert_uint_eq(n, 0);
  for (int i = 0; i < SW_MSG_KV_MAX; i++) ck_assert_int_eq(sw_msg_kv_add(&kv, &n, "k", "v"), 0);
  ck_assert_int_eq(sw_msg_kv_add(&kv, &n, "k", "v"), SW_EINVAL);
  free(kv);
  sw_msg_clear(NULL);
}
END_TEST

static Suite *codec_suite(void) {
  Suite *s = suite_create("codec");
  TCase *rt = tcase_create("roundtrip");
  tcase_add_test(rt, hello_roundtrip);
  tcase_add_test(rt, welcome_ready_roundtrip);
  tcase_add_test(rt, assign_roundtrip);
  tcase_add_test(rt, run_messages_roundtrip);
  tcase_add_test(rt, run_finished_roundtrip);
  tcase_add_test(rt, control_roundtrip);
  tcase_add_test(rt, names_and_helpers);
  suite_add_tcase(s, rt);
  TCase *val = tcase_create("validation");
  tcase_add_test(val, validation_refuses);
  tcase_add_test(val, protocol_version_flagged);
  tcase_add_test(val, decode_refuses_overlong_fields);
  tcase_add_test(val, decode_refuses_embedded_nul);
  tcase_add_test(val, validation_refuses_wide_epochs);
  tcase_add_test(val, validation_refuses_too_many_samples);
  tcase_add_test(val, validation_bounds_hello);
  suite_add_tcase(s, val);
  TCase *fz = tcase_create("fuzz");
  tcase_add_test(fz, fuzz_random_bytes);
  tcase_add_test(fz, fuzz_truncated_and_flipped);
  tcase_add_test(fz, fuzz_giant_lengths);
  suite_add_tcase(s, fz);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(codec_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
