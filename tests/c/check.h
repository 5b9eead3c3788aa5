/* What the C test programs share: a failure counter with a CHECK that prints the library's last
 * error message, a seeded generator, and bf16 conversions. Each program defines TEST_SEED
 * before including it. */
#ifndef GEMM_TEST_CHECK_H
#define GEMM_TEST_CHECK_H

#include "gemm.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                               \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, " [last error: %s]\n", gemm_last_error_message());                 \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static uint64_t rng = TEST_SEED;
static float rnd(void) { /* xorshift64, values in [-1, 1) */
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (float)((rng >> 40) & 0xFFFFFF) / 8388608.0f - 1.0f;
}

static uint16_t to_bf16(float f) { /* round to nearest even */
    uint32_t u; memcpy(&u, &f, 4);
    u += 0x7FFF + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}
static float from_bf16(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }

#endif
