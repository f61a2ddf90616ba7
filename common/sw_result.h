/* sw_result.h: checks a result.json against docs/result.schema.json, the published schema of
 * DESIGN.md section 7 (a trainer's result, or a foreign trainer's result mapped by the spec).
 * The checks are C generated from that file at build time by common/schema_to_c.py (one function
 * per schema node; a keyword the generator does not compile stops the build), and tests compare
 * them with python3-jsonschema on valid and broken results. The coordinator runs them on every
 * result before it reaches the store; the trainer's tests on what it writes. */
#ifndef SW_RESULT_H
#define SW_RESULT_H

#include <jansson.h>

#include "sw_err.h"

/* 0 when doc matches the schema; SW_EINVAL with "JSON-POINTER: what is wrong" of the first
 * violation found (e.g. "/metrics/ssim: 7 is above the maximum 1"). doc is borrowed. */
int sw_result_check(const json_t *doc, struct sw_err *err);

/* Same from text. Text that is not JSON, or an object with a key given twice, is SW_EINVAL
 * with the line and column. */
int sw_result_check_text(const char *text, struct sw_err *err);

#endif
