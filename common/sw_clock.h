/* sw_clock.h: monotonic and wall clocks in integer units. */
#ifndef SW_CLOCK_H
#define SW_CLOCK_H

#include <stdint.h>

/* Monotonic time in nanoseconds / milliseconds (CLOCK_MONOTONIC), for intervals and deadlines. */
int64_t sw_clock_mono_ns(void);
int64_t sw_clock_mono_ms(void);
/* Wall-clock time in milliseconds since the Unix epoch, for records shown to people. */
int64_t sw_clock_wall_ms(void);
/* Formats a wall time (ms since epoch) as ISO 8601 UTC into buf (at least 32 bytes). */
void sw_clock_iso8601(int64_t wall_ms, char *buf, unsigned len);

#endif
