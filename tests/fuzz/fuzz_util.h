/* fuzz_util.h: what the libFuzzer targets in tests/fuzz share. The loaders under test read
 * files by path, so a target writes each input into a private temporary folder first (one per
 * process, made on first use under $TMPDIR or /tmp, removed at exit). */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* The private folder (created on first call); aborts when it cannot be made, because a target
 * that cannot write its input would otherwise fuzz nothing. */
const char *fuzz_dir(void);

/* Writes data to fuzz_dir()/name (truncating) and returns the full path in a static buffer.
 * Aborts on an I/O error. */
const char *fuzz_write(const char *name, const uint8_t *data, size_t size);

/* A NUL-terminated copy of data (caller frees), for loaders that take C strings. */
char *fuzz_text(const uint8_t *data, size_t size);

/* Prints what the loader said when FUZZ_VERBOSE is set in the environment (to see what a seed or
 * a crash input does: `FUZZ_VERBOSE=1 fuzz_ply -runs=0 corpus/ply`). */
void fuzz_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Fails the run (abort, which libFuzzer reports with the input) when cond is false: the
 * properties a target checks beyond "no crash". */
#define FUZZ_CHECK(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond)) fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                                \
  } while (0)
void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

#endif
