/* sw_json.c: small jansson getters (sw_json.h). */
#include "sw_json.h"

#include <math.h>

const char *sw_json_str(const json_t *v, const char *def) {
  return json_is_string(v) ? json_string_value(v) : def;
}

double sw_json_num(const json_t *obj, const char *key) {
  const json_t *v = json_object_get(obj, key);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

json_int_t sw_json_int(const json_t *obj, const char *key) {
  return json_integer_value(json_object_get(obj, key));
}

json_t *sw_json_real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }
