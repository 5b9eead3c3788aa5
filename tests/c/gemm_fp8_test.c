/* fp8 GEMMs with scales through the C ABI: gemm_run_scaled (host memory, computed by the host
 * CPU) and gemm_run_device_scaled (device memory of an emulated GPU, the caller's stream) on the
 * same problem must give the same bits: gfx942 with FNUZ e4m3 x e5m2 (mixed flavours), gfx950
 * with OCP e4m3 in the NN layout; per-tensor scales and both scale vectors, then a row vector
 * only. The inputs are multiples of 1/4 in [-2, 2] and the scales powers of two, so every sum is
 * exact and the summation order cannot make the two differ. Then the statuses of bad input
 * (NULL scales, a NULL vector with a length, a vector of the wrong length, scales for bf16),
 * nothing launched (the emulator's counter) and C untouched.
 *
 * Run by tests/tests/c_fp8_abi.rs with GEMM_HIP_LIBRARY pointing at libgemm_emu_hip.so (two
 * GPUs: gfx942 and gfx950), which this program opens for its own HIP calls. Exit 0 = pass. */
#define _POSIX_C_SOURCE 200809L
#define TEST_SEED 0x9e3779b9u
#include "check.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*hipMalloc_t)(void **, size_t);
typedef int (*hipFree_t)(void *);
typedef int (*hipMemcpy_t)(void *, const void *, size_t, int);
typedef int (*hipSetDevice_t)(int);
typedef int (*hipStreamCreate_t)(void **);
typedef int (*hipStreamDestroy_t)(void *);
typedef int (*hipStreamSynchronize_t)(void *);
typedef unsigned long long (*counter_t)(int, const char *);
enum { H2D = 1, D2H = 2 };

static hipMalloc_t hMalloc;
static hipFree_t hFree;
static hipMemcpy_t hMemcpy;
static hipSetDevice_t hSetDevice;
static hipStreamCreate_t hStreamCreate;
static hipStreamDestroy_t hStreamDestroy;
static hipStreamSynchronize_t hStreamSynchronize;
static counter_t launches_of;

static void *sym(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "missing %s in the HIP runtime\n", name);
        exit(2);
    }
    return p;
}

/* q/4 (q in -8..8) as an fp8 code with `mant` mantissa bits and exponent bias `bias`: every such
 * value is a normal number in e4m3 (bias 7 OCP, 8 FNUZ) and e5m2 (15 OCP, 16 FNUZ). */
static uint8_t fp8_quarter(int q, int mant, int bias) {
    if (q == 0) return 0;
    uint8_t sign = q < 0 ? 0x80 : 0;
    int a = q < 0 ? -q : q; /* the value is a * 2^-2 = (a / 2^e) 2^(e-2) */
    int e = 0;
    while ((2 << e) <= a) e++; /* 2^e <= a < 2^(e+1) */
    int frac = ((a << mant) >> e) - (1 << mant); /* exact: a has at most 3 significant bits */
    return (uint8_t)(sign | ((e - 2 + bias) << mant) | frac);
}

enum { M = 48, N = 24, K = 64 }; /* NN: lda = M, a multiple of 16 as the fp8 kernels need */

static void run_device(gemm_context_t *ctx, int d, gemm_dtype_t at, gemm_dtype_t bt, int ta, int tb) {
    const int a_mant = at == GEMM_DTYPE_FP8_E5M2FNUZ || at == GEMM_DTYPE_FP8_E5M2 ? 2 : 3;
    const int b_mant = bt == GEMM_DTYPE_FP8_E5M2FNUZ || bt == GEMM_DTYPE_FP8_E5M2 ? 2 : 3;
    const int fnuz = at == GEMM_DTYPE_FP8_E4M3FNUZ || at == GEMM_DTYPE_FP8_E5M2FNUZ;
    const int a_bias = (a_mant == 3 ? 7 : 15) + fnuz, b_bias = (b_mant == 3 ? 7 : 15) + fnuz;
    /* Column-major: A stored M x K (NN) or K x M (T), B K x N or N x K. */
    const size_t lda = ta ? K : M, ldb = tb ? N : K, ldc = M + 3;
    static uint8_t ha[M * K], hb[K * N];
    static float hc0[N * (M + 3)], host_c[N * (M + 3)], dev_c[N * (M + 3)];
    static float row[M], col[N];
    for (size_t i = 0; i < sizeof ha; i++) ha[i] = fp8_quarter((int)(rnd() * 8.5f), a_mant, a_bias);
    for (size_t i = 0; i < sizeof hb; i++) hb[i] = fp8_quarter((int)(rnd() * 8.5f), b_mant, b_bias);
    for (size_t i = 0; i < N * ldc; i++) hc0[i] = (float)(int)(rnd() * 8.0f) * 0.5f;
    for (int i = 0; i < M; i++) row[i] = (float)(1 << (i % 3)) * (i % 5 == 0 ? -0.5f : 0.25f);
    for (int j = 0; j < N; j++) col[j] = (float)(1 << (j % 4)) * 0.5f;
    gemm_problem_t p = {GEMM_COL_MAJOR, ta ? GEMM_TRANS : GEMM_NO_TRANS, tb ? GEMM_TRANS : GEMM_NO_TRANS, at, bt,
                        GEMM_DTYPE_F32, M, N, K, lda, ldb, ldc, 1.5f, 0.5f, GEMM_MATH_DEFAULT};

    CHECK(hSetDevice(d) == 0, "device %d", d);
    void *da = NULL, *db = NULL, *dc = NULL, *drow = NULL, *dcol = NULL, *s = NULL;
    CHECK(hMalloc(&da, sizeof ha) == 0 && hMalloc(&db, sizeof hb) == 0 && hMalloc(&dc, sizeof hc0) == 0 &&
              hMalloc(&drow, sizeof row) == 0 && hMalloc(&dcol, sizeof col) == 0 && hStreamCreate(&s) == 0,
          "allocations on %d", d);
    hMemcpy(da, ha, sizeof ha, H2D);
    hMemcpy(db, hb, sizeof hb, H2D);
    hMemcpy(drow, row, sizeof row, H2D);
    hMemcpy(dcol, col, sizeof col, H2D);

    for (int mode = 0; mode < 2; mode++) {
        /* mode 0: both vectors; mode 1: the row vector only, beta = 0 over NaN. */
        gemm_fp8_scales_t host_s = {2.0f, 0.25f, 4.0f, row, M, mode ? NULL : col, mode ? 0 : N};
        gemm_fp8_scales_t dev_s = {2.0f, 0.25f, 4.0f, drow, M, mode ? NULL : dcol, mode ? 0 : N};
        p.beta = mode ? 0.0f : 0.5f;
        for (size_t i = 0; i < N * ldc; i++) host_c[i] = mode ? NAN : hc0[i];
        hMemcpy(dc, host_c, sizeof hc0, H2D);
        CHECK(gemm_run_scaled(ctx, &p, ha, hb, host_c, &host_s) == GEMM_STATUS_SUCCESS, "host scaled %d/%d", d, mode);
        CHECK(gemm_run_device_scaled(ctx, (size_t)d, s, &p, da, db, dc, &dev_s) == GEMM_STATUS_SUCCESS,
              "device scaled %d/%d", d, mode);
        CHECK(hStreamSynchronize(s) == 0, "sync");
        hMemcpy(dev_c, dc, sizeof hc0, D2H);
        int differ = 0, nonzero = 0;
        for (size_t j = 0; j < N; j++) {
            for (size_t i = 0; i < M; i++) {
                differ += memcmp(&host_c[i + j * ldc], &dev_c[i + j * ldc], 4) != 0;
                nonzero += host_c[i + j * ldc] != 0.0f;
            }
        }
        char kernel[256] = "";
        gemm_last_kernel(kernel, sizeof kernel);
        CHECK(differ == 0, "device %d mode %d: %d elements differ from the host (%s)", d, mode, differ, kernel);
        CHECK(nonzero > M * N / 2, "device %d mode %d: a trivial result", d, mode);
    }

    /* Bad input: each status, nothing launched, C untouched. */
    unsigned long long before = launches_of(d, "launches");
    gemm_fp8_scales_t bad = {1.0f, 1.0f, 1.0f, NULL, M, NULL, 0};
    CHECK(gemm_run_device_scaled(ctx, (size_t)d, s, &p, da, db, dc, NULL) == GEMM_STATUS_NULL_POINTER, "NULL scales");
    CHECK(gemm_run_device_scaled(ctx, (size_t)d, s, &p, da, db, dc, &bad) == GEMM_STATUS_NULL_POINTER,
          "NULL row with a length");
    gemm_fp8_scales_t short_row = {1.0f, 1.0f, 1.0f, drow, M - 1, NULL, 0};
    CHECK(gemm_run_device_scaled(ctx, (size_t)d, s, &p, da, db, dc, &short_row) == GEMM_STATUS_INVALID_SIZE,
          "row vector one short");
    gemm_fp8_scales_t long_col = {1.0f, 1.0f, 1.0f, NULL, 0, col, N + 1};
    CHECK(gemm_run_scaled(ctx, &p, ha, hb, host_c, &long_col) == GEMM_STATUS_INVALID_SIZE, "host column vector too long");
    gemm_problem_t bf = p;
    bf.a_type = bf.b_type = GEMM_DTYPE_BF16;
    gemm_fp8_scales_t unit = {1.0f, 1.0f, 1.0f, NULL, 0, NULL, 0};
    CHECK(gemm_run_device_scaled(ctx, (size_t)d, s, &bf, da, db, dc, &unit) == GEMM_STATUS_UNSUPPORTED_DTYPE,
          "scales for bf16");
    CHECK(launches_of(d, "launches") == before, "refused calls launched nothing");
    float after[N * (M + 3)];
    hMemcpy(after, dc, sizeof after, D2H);
    CHECK(memcmp(after, dev_c, sizeof after) == 0, "C untouched by the refused calls");

    hFree(da);
    hFree(db);
    hFree(dc);
    hFree(drow);
    hFree(dcol);
    hStreamDestroy(s);
}

int main(void) {
    (void)to_bf16; /* check.h's bf16 helpers: this test has no bf16 data */
    (void)from_bf16;
    const char *path = getenv("GEMM_HIP_LIBRARY");
    if (!path) {
        fprintf(stderr, "GEMM_HIP_LIBRARY is not set\n");
        return 2;
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        return 2;
    }
#define LOAD(var, name) *(void **)(&var) = sym(lib, name)
    LOAD(hMalloc, "hipMalloc");
    LOAD(hFree, "hipFree");
    LOAD(hMemcpy, "hipMemcpy");
    LOAD(hSetDevice, "hipSetDevice");
    LOAD(hStreamCreate, "hipStreamCreate");
    LOAD(hStreamDestroy, "hipStreamDestroy");
    LOAD(hStreamSynchronize, "hipStreamSynchronize");
    LOAD(launches_of, "gemm_emu_hip_counter");
#undef LOAD
    gemm_context_t *ctx = NULL;
    CHECK(gemm_context_create(NULL, &ctx) == GEMM_STATUS_SUCCESS && ctx, "default context");
    if (!ctx) return 1;
    run_device(ctx, 0, GEMM_DTYPE_FP8_E4M3FNUZ, GEMM_DTYPE_FP8_E5M2FNUZ, 1, 0);
    run_device(ctx, 1, GEMM_DTYPE_FP8_E4M3, GEMM_DTYPE_FP8_E4M3, 0, 0);
    CHECK(gemm_context_destroy(ctx) == GEMM_STATUS_SUCCESS, "destroy");
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("fp8 scaled C ABI, host and emulated GPUs: all checks passed\n");
    return 0;
}
