/* sw_json.h: the small jansson getters every module that reads stored or received JSON needs,
 * written once. Each accepts NULL (a missing key) and falls back as its comment says, so a
 * reader of optional fields never needs a type check of its own. */
#ifndef SW_JSON_H
#define SW_JSON_H

#include <jansson.h>

/* The string v holds (borrowed), or def when v is NULL or not a string. */
const char *sw_json_str(const json_t *v, const char *def);
/* The number at obj[key], integer or real, or NAN when absent or not a number. */
double sw_json_num(const json_t *obj, const char *key);
/* The integer at obj[key], or 0 when absent or not an integer. */
json_int_t sw_json_int(const json_t *obj, const char *key);
/* A new reference: a real holding v, or JSON null when v is NaN or infinite (JSON has neither). */
json_t *sw_json_real_or_null(double v);

#endif
