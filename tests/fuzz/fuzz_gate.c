/* fuzz_gate.c: libFuzzer target for the `splatsweep gate eval` input (sw_gate_input_from_json)
 * and the engine on whatever it accepts (sw_gate_eval, sw_gate_result_to_json). Any text is
 * either refused with SW_EINVAL and a message, or judged: a verdict and its JSON, never a crash,
 * a NaN in a count or an assert. Seeds: the lab's examples (tests/fixtures/gate) and a gate with
 * model sizes, one run of which ran away (tests/fuzz/corpus/gate). */
#include <jansson.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "sw_gate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  json_error_t jerr;
  json_t *root = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
  if (!root) return 0; /* not JSON: sw_gate_eval_file names the line and column */
  struct sw_gate_input in;
  struct sw_gate_pair *pairs = NULL;
  struct sw_gate_config cfg;
  struct sw_err err = {0};
  int rc = sw_gate_input_from_json(root, &in, &pairs, &cfg, &err);
  fuzz_note("input: %d: %s", rc, err.msg);
  FUZZ_CHECK(rc == 0 || (rc == SW_EINVAL && err.msg[0]) || rc == SW_ENOMEM, "input %d: '%s'", rc,
             err.msg);
  if (rc == 0) {
    /* The bootstrap's cost grows with its reps, not with what is being tested here. */
    if (cfg.boot_reps > 50) cfg.boot_reps = 50;
    struct sw_gate_result *res = malloc(sizeof *res);
    FUZZ_CHECK(res != NULL, "out of memory");
    rc = sw_gate_eval(&in, &cfg, res, &err);
    fuzz_note("eval: %d: %s", rc, err.msg);
    FUZZ_CHECK(rc == 0 || (rc == SW_EINVAL && err.msg[0]) || rc == SW_ENOMEM, "eval %d: '%s'", rc,
               err.msg);
    if (rc == 0) {
      FUZZ_CHECK(res->verdict == SW_GATE_ADOPT || res->verdict == SW_GATE_REJECT ||
                     res->verdict == SW_GATE_INCONCLUSIVE,
                 "verdict %d", (int)res->verdict);
      FUZZ_CHECK(res->n_contaminated >= 0 && res->n_contaminated <= res->n_input &&
                     res->size.n_pairs <= res->n_contaminated,
                 "counts: %d contaminated (%d on model size) of %d", res->n_contaminated,
                 res->size.n_pairs, res->n_input);
      json_t *o = sw_gate_result_to_json(res);
      FUZZ_CHECK(o != NULL, "no gate JSON");
      json_decref(o);
    }
    free(res);
  }
  free(pairs);
  json_decref(root);
  return 0;
}
