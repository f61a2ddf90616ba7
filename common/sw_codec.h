/* sw_codec.h: the envelope codec: struct sw_msg <-> one protobuf frame (proto/splatsweep.proto).
 *
 * Encode validates before it packs, so a sender never emits what a receiver would refuse.
 * Decode validates every field after unpacking (sw_msg_validate): a frame from the network is
 * either a fully checked struct sw_msg or a clean SW_EPROTO with the reason in err. Neither
 * ever asserts or crashes on its input. */
#ifndef SW_CODEC_H
#define SW_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "sw_err.h"
#include "sw_msg.h"

/* Packs msg into a new buffer (*buf, caller frees with free()) of *len bytes. msg->protocol 0
 * means SW_PROTOCOL_VERSION; another value is sent as is (tests of version handling).
 * Returns 0, SW_EPROTO (msg fails validation; field named in err) or SW_ENOMEM. */
int sw_codec_encode(const struct sw_msg *msg, uint8_t **buf, size_t *len, struct sw_err *err);

/* Unpacks and validates one frame into *out (zeroed first; sw_msg_clear frees it, also after
 * an error). Returns 0, or SW_EPROTO for anything malformed: frame larger than
 * SW_MSG_FRAME_MAX, not protobuf, no body, a field out of contract. When the frame is a
 * well-formed envelope of another protocol version, out->bad_protocol is set, out->protocol
 * and out->seq hold what was received, and the return is SW_EPROTO: answer with
 * Reject(SW_REJECT_PROTOCOL). SW_ENOMEM when out of memory. */
int sw_codec_decode(const void *buf, size_t len, struct sw_msg *out, struct sw_err *err);

#endif
