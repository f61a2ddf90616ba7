/* sw_result.c: the text entry point of the result check; sw_result_check itself is generated
 * (sw_result_check.c in the build tree, from docs/result.schema.json). */
#include "sw_result.h"

int sw_result_check_text(const char *text, struct sw_err *err) {
  json_error_t je;
  json_t *doc = text ? json_loads(text, JSON_REJECT_DUPLICATES, &je) : NULL;
  if (!doc)
    return text ? sw_err_set(err, SW_EINVAL, "result.json:%d:%d: %s", je.line, je.column, je.text)
                : sw_err_set(err, SW_EINVAL, "no result.json text");
  int rc = sw_result_check(doc, err);
  json_decref(doc);
  return rc;
}
