/* fuzz_codec.c: libFuzzer target for the envelope codec (common/sw_codec.c). Any frame decodes to a
 * validated struct sw_msg or a clean SW_EPROTO / SW_ENOMEM, never a crash, a leak or undefined
 * behaviour; a frame that decodes re-encodes (the codec's encoder accepts everything its decoder
 * accepts), and decoding that encoding gives a message whose encoding is the same bytes. Frames
 * of every message type are in the seed corpus (tests/fuzz/corpus/codec, made by
 * codec_seeds.c). */
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "sw_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct sw_msg m;
  struct sw_err err = {0};
  int rc = sw_codec_decode(data, size, &m, &err);
  fuzz_note("codec: %d: %s", rc, err.msg);
  if (rc) {
    FUZZ_CHECK(rc == SW_EPROTO || rc == SW_ENOMEM, "decode returned %d", rc);
    FUZZ_CHECK(err.msg[0] != 0, "decode failed (%d) without a message", rc);
    sw_msg_clear(&m);
    return 0;
  }
  FUZZ_CHECK(m.type > SW_MSG_NONE && m.type < SW_MSG_TYPE_COUNT, "decoded type %d", (int)m.type);
  uint8_t *a = NULL, *b = NULL;
  size_t alen = 0, blen = 0;
  rc = sw_codec_encode(&m, &a, &alen, &err);
  FUZZ_CHECK(rc == 0, "a decoded %s does not re-encode: %s", sw_msg_type_name(m.type), err.msg);
  struct sw_msg again;
  rc = sw_codec_decode(a, alen, &again, &err);
  FUZZ_CHECK(rc == 0, "a re-encoded %s does not decode: %s", sw_msg_type_name(m.type), err.msg);
  FUZZ_CHECK(again.type == m.type && again.seq == m.seq, "type or seq changed");
  rc = sw_codec_encode(&again, &b, &blen, &err);
  FUZZ_CHECK(rc == 0 && blen == alen && !memcmp(a, b, alen), "%s: encoding is not stable",
             sw_msg_type_name(m.type));
  free(a);
  free(b);
  sw_msg_clear(&again);
  sw_msg_clear(&m);
  return 0;
}
