/* codec_seeds.c: writes the seed corpus of fuzz_codec, one real-shaped frame of every message type,
 * into the folder given (tests/fuzz/corpus/codec holds its output; run it again after a change to
 * proto/splatsweep.proto: `build-fuzz/bin/codec_seeds tests/fuzz/corpus/codec`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw_codec.h"

static void put(const char *dir, const struct sw_msg *m) {
  uint8_t *buf = NULL;
  size_t len = 0;
  struct sw_err err = {0};
  if (sw_codec_encode(m, &buf, &len, &err)) {
    fprintf(stderr, "codec_seeds: %s: %s\n", sw_msg_type_name(m->type), err.msg);
    exit(1);
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.bin", dir, sw_msg_type_name(m->type));
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
    perror(path);
    exit(1);
  }
  free(buf);
}

static struct sw_msg_sample sample(int64_t t_ms) {
  return (struct sw_msg_sample){.t_ms = t_ms,
                                .load1 = 0.4,
                                .cpu_other = 0.1,
                                .cpu_total = 1.2,
                                .mem_avail = 8ull << 30,
                                .cpu_trainer = 1.0,
                                .cpu_self = 0.05,
                                .has_gpu = true,
                                .gpu_util = 97,
                                .gpu_sm_mhz = 1980,
                                .gpu_temp_c = 61,
                                .gpu_power_w = 410,
                                .gpu_foreign = 0};
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: codec_seeds DIR\n");
    return 2;
  }
  const char *dir = argv[1];
  struct sw_msg m;

  sw_msg_init(&m, SW_MSG_HELLO);
  m.seq = 1;
  struct sw_msg_hello *h = &m.u.hello;
  strcpy(h->worker_id, "h200-a-0");
  strcpy(h->fp.hostname, "h200-a");
  strcpy(h->fp.os, "Linux 6.1.0");
  strcpy(h->fp.arch, "x86_64");
  strcpy(h->fp.cpu_model, "AMD EPYC 9654");
  h->fp.cores = 16;
  h->fp.mem_bytes = 128ull << 30;
  strcpy(h->fp.gpu_name, "NVIDIA H200");
  strcpy(h->fp.gpu_driver, "550.54");
  strcpy(h->fp.gpu_api, "vulkan 1.3");
  h->fp.gpu_kind = SW_GPU_DISCRETE;
  strcpy(h->fp.machine_id, "0123456789abcdef");
  sw_msg_kv_add(&h->fp.extra, &h->fp.n_extra, "kernel", "6.1.0-18-amd64");
  sw_msg_kv_add(&h->labels, &h->n_labels, "site", "lab-a");
  sw_msg_name_add(&h->capabilities, &h->n_capabilities, "builtin");
  sw_msg_name_add(&h->capabilities, &h->n_capabilities, "exec");
  sw_msg_name_add(&h->features, &h->n_features, "spool");
  memset(h->trainer_sha256, 'e', 64);
  put(dir, &m);
  sw_msg_clear(&m);

  sw_msg_init(&m, SW_MSG_WELCOME);
  m.seq = 1;
  strcpy(m.u.welcome.session_id, "s-7f3a");
  m.u.welcome.heartbeat_ms = 1000;
  m.u.welcome.liveness = 5;
  m.u.welcome.lease_ttl_ms = 30000;
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_READY);
  m.seq = 2;
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_ASSIGN);
  m.seq = 3;
  struct sw_msg_run runs[2] = {{.run_id = 11,
                                .arm = "off",
                                .config_json = "{\"iterations\":200,\"radix_passes\":\"full\"}",
                                .trainer_json = "{\"builtin\":{}}",
                                .scene_json = "{\"generate\":{\"kind\":\"bricks\"}}"},
                               {.run_id = 12,
                                .arm = "on",
                                .config_json = "{\"iterations\":200,\"radix_passes\":\"skip\"}",
                                .trainer_json = "{\"builtin\":{}}",
                                .scene_json = "{\"generate\":{\"kind\":\"bricks\"}}"}};
  m.u.assign = (struct sw_msg_assign){.lease_id = 5,
                                      .epoch = 1,
                                      .deadline_ms = 1764633600000,
                                      .sweep_id = 1,
                                      .gate_id = 1,
                                      .pair_id = 3,
                                      .attempt = 1,
                                      .runs = runs,
                                      .n_runs = 2};
  m.u.assign.contamination = (struct sw_msg_contamination){.cpu_other_max = 0.5,
                                                           .settle_s = 5,
                                                           .max_wait_s = 300,
                                                           .sample_interval_s = 1,
                                                           .require_windows = true,
                                                           .rerun_once = true,
                                                           .cpu_other_mean_max = 0.2,
                                                           .over_max_s = 2,
                                                           .gpu_foreign = true};
  put(dir, &m); /* borrowed pointers: not cleared */

  sw_msg_init(&m, SW_MSG_RUN_STARTED);
  m.seq = 4;
  m.u.run_started = (struct sw_msg_run_started){5, 1, 11, 1, 5.2};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_PROGRESS);
  m.seq = 5;
  m.u.progress = (struct sw_msg_progress){5, 1, 11, 1, 100, 3.5, 0.042, 120000};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_RUN_FINISHED);
  m.seq = 6;
  struct sw_msg_sample during[3] = {sample(0), sample(1000), sample(2000)};
  struct sw_msg_sample pre[2] = {sample(-2000), sample(-1000)};
  m.u.run_finished = (struct sw_msg_run_finished){
      .lease_id = 5,
      .epoch = 1,
      .run_id = 11,
      .attempt = 1,
      .exit_status = 0,
      .wall_s = 7.5,
      .waited_s = 5.2,
      .quiet = true,
      .result_json =
          "{\"schema\":\"splatsweep.result/1\",\"metrics\":{\"train_s\":6.9,\"psnr_db\":24.1}}",
      .samples = during,
      .n_samples = 3,
      .pre_samples = pre,
      .n_pre_samples = 2,
      .env_before = "{\"governor\":\"performance\"}",
      .env_after = "{\"governor\":\"performance\"}",
      .run_start_wall_ms = 1764633605000,
      .run_end_wall_ms = 1764633612500};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_LEASE_DONE);
  m.seq = 7;
  m.u.lease_done = (struct sw_msg_lease_done){5, 1};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_ACK);
  m.seq = 8;
  m.u.ack = (struct sw_msg_ack){6, 11, 1};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_CANCEL);
  m.seq = 9;
  m.u.cancel = (struct sw_msg_cancel){5, "sweep cancelled"};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_HEARTBEAT);
  m.seq = 10;
  m.u.heartbeat = (struct sw_msg_heartbeat){5, 1};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_REJECT);
  m.seq = 11;
  m.u.reject = (struct sw_msg_reject){SW_REJECT_STALE_LEASE, "lease 5 expired"};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_SUBMIT_REQ);
  m.seq = 12;
  strcpy(m.u.submit_req.file_name, "quickstart.yaml");
  m.u.submit_req.spec_yaml = "name: q\nkind: gate\ntrainer: {builtin: {}}\n"
                             "scene: {generate: {resolution: 64}}\n"
                             "arms: {off: {radix_passes: full}, on: {radix_passes: skip}}\n";
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_SUBMIT_REP);
  m.seq = 13;
  m.u.submit_rep = (struct sw_msg_submit_rep){0, "q.yaml:3:1: unknown key 'trainr' in spec"};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_STATUS_REQ);
  m.seq = 14;
  m.u.status_req = (struct sw_msg_status_req){1, SW_FMT_JSON};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_STATUS_REP);
  m.seq = 15;
  m.u.status_rep =
      (struct sw_msg_status_rep){SW_FMT_JSON, "{\"sweeps\":[{\"id\":1,\"state\":\"running\"}]}"};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_REPORT_REQ);
  m.seq = 16;
  m.u.report_req = (struct sw_msg_report_req){1, SW_FMT_MD};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_REPORT_REP);
  m.seq = 17;
  m.u.report_rep = (struct sw_msg_report_rep){SW_FMT_MD, "# q\n\n| pair | off | on |\n"};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_CANCEL_REQ);
  m.seq = 18;
  m.u.cancel_req = (struct sw_msg_cancel_req){1, "wrong scene"};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_CANCEL_REP);
  m.seq = 19;
  m.u.cancel_rep = (struct sw_msg_cancel_rep){1, 4};
  put(dir, &m);

  sw_msg_init(&m, SW_MSG_ERROR);
  m.seq = 20;
  m.u.error = (struct sw_msg_error){SW_EINVAL, "no sweep 9"};
  put(dir, &m);
  return 0;
}
