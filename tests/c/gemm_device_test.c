/* The device-memory C ABI as a GPU inference pipeline calls it: device pointers from the HIP
 * runtime's own hipMalloc, the caller's own stream, the caller's own hipMemcpyAsync queued on
 * that stream before and after the GEMMs, and results read only after hipStreamSynchronize.
 *
 * Run by tests/tests/c_device_abi.rs with GEMM_HIP_LIBRARY pointing at the emulated HIP runtime
 * (libgemm_emu_hip.so, two GPUs: gfx942 and gfx950). The program opens that same library for its
 * own HIP calls (dlopen of the same path gives the same runtime the GEMM library loaded), as an
 * application linked against libamdhip64 shares it with the libraries it uses. On both GPUs it
 * checks gemm_run_device, gemm_strided_batched_device and gemm_grouped_device (mixed sizes, an
 * empty group; one launch of a grouped kernel when the groups are aligned), two decode-shaped
 * Linear layers (the decode and the decode-rows kernels) and a mixture-of-experts decode (one
 * launch of the grouped decode-rows kernel) against its own reference, then every bad input:
 * the status, no kernel launched (the emulator's launch counter) and device memory untouched.
 * Exit status 0 = pass. */
#define _POSIX_C_SOURCE 200809L
#define TEST_SEED 0x2545f491u
#include "check.h"

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The HIP runtime calls this program makes itself (prototypes of hip_runtime_api.h). */
typedef int (*hipMalloc_t)(void **, size_t);
typedef int (*hipFree_t)(void *);
typedef int (*hipHostMalloc_t)(void **, size_t, unsigned);
typedef int (*hipHostFree_t)(void *);
typedef int (*hipMemcpyAsync_t)(void *, const void *, size_t, int, void *);
typedef int (*hipMemcpy_t)(void *, const void *, size_t, int);
typedef int (*hipSetDevice_t)(int);
typedef int (*hipStreamCreate_t)(void **);
typedef int (*hipStreamDestroy_t)(void *);
typedef int (*hipStreamSynchronize_t)(void *);
typedef unsigned long long (*counter_t)(int, const char *);
enum { H2D = 1, D2H = 2 };

static hipMalloc_t hMalloc;
static hipFree_t hFree;
static hipHostMalloc_t hHostMalloc;
static hipHostFree_t hHostFree;
static hipMemcpyAsync_t hMemcpyAsync;
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

static unsigned long long launches(int device) { return launches_of(device, "launches"); }

/* The dot product of k bf16 pairs x[l * xs] * y[l * ys] in double, and in *mag the sum of the
 * products' magnitudes (the scale of the allowed rounding error). */
static double dot_bf16(const uint16_t *x, size_t xs, const uint16_t *y, size_t ys, size_t k, double *mag) {
    double sum = 0;
    *mag = 0;
    for (size_t l = 0; l < k; l++) {
        double t = (double)from_bf16(x[l * xs]) * from_bf16(y[l * ys]);
        sum += t;
        *mag += fabs(t);
    }
    return sum;
}

/* Row-major C (m x n, ldc) = alpha A (m x k, lda) B (k x n, ldb) + beta C0: bf16 in, f32 out.
 * Checks every entry and that padding columns kept their values. */
static void check_gemm(const char *what, const uint16_t *a, size_t lda, const uint16_t *b, size_t ldb,
                       const float *c0, const float *c, size_t m, size_t n, size_t k, size_t ldc, float alpha,
                       float beta) {
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < ldc; j++) {
            if (j >= n) {
                CHECK(c[i * ldc + j] == c0[i * ldc + j], "%s: padding C[%zu][%zu] changed", what, i, j);
                continue;
            }
            double mag;
            double want = dot_bf16(a + i * lda, 1, b + j, ldb, k, &mag);
            want = alpha * want + beta * c0[i * ldc + j];
            CHECK(fabs(c[i * ldc + j] - want) <= 1e-5 * (mag + fabs(c0[i * ldc + j])) + 1e-6,
                  "%s: C[%zu][%zu] = %g, want %g", what, i, j, c[i * ldc + j], want);
        }
}

static gemm_problem_t bf16_problem(size_t m, size_t n, size_t k, size_t ldc, float alpha, float beta) {
    gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16,
                        GEMM_DTYPE_F32, m, n, k, k, n, ldc, alpha, beta, GEMM_MATH_DEFAULT};
    return p;
}

enum { M = 70, N = 45, K = 33, LDC = 48, BATCH = 4, SC = M * LDC + 7 };
static uint16_t ha[BATCH * M * K], hb[K * N];
static float hc0[BATCH * SC];

/* A grouped GEMM of four row-major bf16 -> f32 groups (group 1 empty) on GPU `d`, queued on
 * `s`: each group against the reference, the empty group's C untouched, `want` launches, and
 * gemm_last_kernel names a grouped kernel exactly when one launch ran them all. */
static void grouped(gemm_context_t *ctx, int d, void *s, void *da, void *db, void *dc, float *out, const size_t gm[4],
                    const size_t gn[4], const size_t gk[4], unsigned long long want) {
    enum { G = 4 };
    char what[256];
    const size_t coff[G] = {0, 1000, 2000, 6000};
    gemm_problem_t ps[G];
    const void *as[G], *bs[G];
    void *cs[G];
    /* Row-major A with lda = k reads the first m*k elements of A; B with ldb = n reads B as a
     * k x n matrix: the device holds the same bytes at da and db as ha and hb on the host. */
    for (int g = 0; g < G; g++) {
        ps[g] = bf16_problem(gm[g], gn[g], gk[g], gn[g], 1.0f, 1.0f);
        as[g] = da;
        bs[g] = db;
        cs[g] = (float *)dc + coff[g];
    }
    CHECK(hMemcpyAsync(dc, hc0, sizeof hc0, H2D, s) == 0, "reset C");
    CHECK(hStreamSynchronize(s) == 0, "hipStreamSynchronize");
    unsigned long long before = launches(d);
    gemm_status_t gst[G];
    gemm_status_t st = gemm_grouped_device(ctx, (size_t)d, s, G, ps, as, bs, cs, gst);
    CHECK(st == GEMM_STATUS_SUCCESS, "gemm_grouped_device on %d: %s", d, gemm_status_string(st));
    char kernel[128] = "";
    CHECK(gemm_last_kernel(kernel, sizeof kernel) == GEMM_STATUS_SUCCESS, "gemm_last_kernel");
    CHECK((strstr(kernel, "_grouped") != NULL) == (want == 1), "grouped call on %d ran %s", d, kernel);
    CHECK(hMemcpyAsync(out, dc, sizeof hc0, D2H, s) == 0, "download C");
    CHECK(hStreamSynchronize(s) == 0, "hipStreamSynchronize");
    CHECK(launches(d) - before == want, "grouped call on %d: %llu launches, want %llu", d, launches(d) - before, want);
    for (int g = 0; g < G; g++) {
        CHECK(gst[g] == GEMM_STATUS_SUCCESS, "group %d: %s", g, gemm_status_string(gst[g]));
        snprintf(what, sizeof what, "group %d (%zux%zux%zu) on %d (%s)", g, gm[g], gn[g], gk[g], d, kernel);
        /* hb viewed as gk x gn with ldb = gn: the same element order as on the device. */
        check_gemm(what, ha, gk[g], hb, gn[g], hc0 + coff[g], out + coff[g], gm[g], gn[g], gk[g], gn[g], 1.0f, 1.0f);
    }
    /* The empty group wrote nothing: its C region (and everything outside the groups) is C0. */
    for (size_t i = 1000; i < 2000; i++) CHECK(out[i] == hc0[i], "empty group wrote C[%zu]", i);
}

/* Everything on one GPU. `other` is a device allocation of the other GPU (for wrong-device
 * checks), `other_stream` a stream of the other GPU. */
static void on_device(gemm_context_t *ctx, int d, void *other, void *other_stream) {
    char what[256];
    CHECK(hSetDevice(d) == 0, "hipSetDevice(%d)", d);
    void *s = NULL;
    CHECK(hStreamCreate(&s) == 0 && s, "hipStreamCreate on %d", d);
    void *da = NULL, *db = NULL, *dc = NULL;
    CHECK(hMalloc(&da, sizeof ha) == 0 && hMalloc(&db, sizeof hb) == 0 && hMalloc(&dc, sizeof hc0) == 0,
          "hipMalloc on %d", d);
    float *out = NULL; /* pinned: the download is truly asynchronous, read only after the sync */
    CHECK(hHostMalloc((void **)&out, sizeof hc0, 0) == 0 && out, "hipHostMalloc");

    /* One GEMM: upload, GEMM, download, all queued on the caller's stream, one sync at the end. */
    gemm_problem_t p = bf16_problem(M, N, K, LDC, 1.5f, -0.5f);
    CHECK(hMemcpyAsync(da, ha, sizeof ha, H2D, s) == 0, "upload A");
    CHECK(hMemcpyAsync(db, hb, sizeof hb, H2D, s) == 0, "upload B");
    CHECK(hMemcpyAsync(dc, hc0, sizeof hc0, H2D, s) == 0, "upload C");
    gemm_status_t st = gemm_run_device(ctx, (size_t)d, s, &p, da, db, dc);
    CHECK(st == GEMM_STATUS_SUCCESS, "gemm_run_device on %d: %s", d, gemm_status_string(st));
    char kernel[128] = "";
    CHECK(gemm_last_kernel(kernel, sizeof kernel) == GEMM_STATUS_SUCCESS && strlen(kernel) > 0,
          "the kernel that ran is reported");
    CHECK(hMemcpyAsync(out, dc, sizeof hc0, D2H, s) == 0, "download C");
    CHECK(hStreamSynchronize(s) == 0, "hipStreamSynchronize");
    snprintf(what, sizeof what, "gemm_run_device on %d (%s)", d, kernel);
    check_gemm(what, ha, K, hb, N, hc0, out, M, N, K, LDC, 1.5f, -0.5f);

    /* A strided batch: B shared (stride 0), gaps between the C matrices, beta = 0. */
    CHECK(hMemcpyAsync(dc, hc0, sizeof hc0, H2D, s) == 0, "reset C");
    p = bf16_problem(M, N, K, LDC, 1.0f, 0.0f);
    st = gemm_strided_batched_device(ctx, (size_t)d, s, &p, da, M * K, db, 0, dc, SC, BATCH);
    CHECK(st == GEMM_STATUS_SUCCESS, "gemm_strided_batched_device on %d: %s", d, gemm_status_string(st));
    CHECK(hMemcpyAsync(out, dc, sizeof hc0, D2H, s) == 0, "download C");
    CHECK(hStreamSynchronize(s) == 0, "hipStreamSynchronize");
    for (int it = 0; it < BATCH; it++) {
        snprintf(what, sizeof what, "strided item %d on %d", it, d);
        check_gemm(what, ha + it * M * K, K, hb, N, hc0 + it * SC, out + it * SC, M, N, K, LDC, 1.0f, 0.0f);
        for (int g = M * LDC; g < SC; g++) CHECK(out[it * SC + g] == hc0[it * SC + g], "gap after item %d", it);
    }

    /* Grouped: mixed sizes, an empty group, all in one call; each group its own pointers.
     * Leading dimensions of 8 elements: one launch of a grouped kernel (a problem table on the
     * device). Ragged ones (lda 33, 7): one launch per non-empty group. */
    {
        const size_t gm[4] = {17, 0, 64, 5}, gn[4] = {40, 8, 24, 16}, gk[4] = {32, 8, 16, 8};
        grouped(ctx, d, s, da, db, dc, out, gm, gn, gk, 1);
    }
    {
        const size_t gm[4] = {17, 0, 64, 5}, gn[4] = {9, 12, 40, 33}, gk[4] = {33, 8, 16, 7};
        grouped(ctx, d, s, da, db, dc, out, gm, gn, gk, 3);
    }

    /* Bad input: a status for each, nothing launched, device memory untouched. */
    CHECK(hMemcpyAsync(dc, hc0, sizeof hc0, H2D, s) == 0, "reset C");
    CHECK(hStreamSynchronize(s) == 0, "sync");
    unsigned long long before = launches(d);
    p = bf16_problem(M, N, K, LDC, 1.0f, 1.0f);
    static float host_buf[M * K];
    struct {
        const char *what;
        gemm_status_t got, want;
    } cases[32];
    int nc = 0;
#define CASE(w, call, expect) cases[nc++] = (__typeof__(cases[0])){w, call, expect}
    CASE("NULL context", gemm_run_device(NULL, (size_t)d, s, &p, da, db, dc), GEMM_STATUS_NULL_POINTER);
    CASE("NULL problem", gemm_run_device(ctx, (size_t)d, s, NULL, da, db, dc), GEMM_STATUS_NULL_POINTER);
    CASE("NULL a", gemm_run_device(ctx, (size_t)d, s, &p, NULL, db, dc), GEMM_STATUS_NULL_POINTER);
    CASE("no device 7", gemm_run_device(ctx, 7, s, &p, da, db, dc), GEMM_STATUS_NO_SUCH_DEVICE);
    CASE("a on the other GPU", gemm_run_device(ctx, (size_t)d, s, &p, other, db, dc), GEMM_STATUS_WRONG_DEVICE);
    CASE("stream of the other GPU", gemm_run_device(ctx, (size_t)d, other_stream, &p, da, db, dc),
         GEMM_STATUS_WRONG_DEVICE);
    CASE("host memory as a", gemm_run_device(ctx, (size_t)d, s, &p, host_buf, db, dc),
         GEMM_STATUS_NOT_DEVICE_MEMORY);
    CASE("misaligned a", gemm_run_device(ctx, (size_t)d, s, &p, (char *)da + 1, db, dc), GEMM_STATUS_MISALIGNED);
    CASE("C past the end of its allocation",
         gemm_run_device(ctx, (size_t)d, s, &p, da, db, (float *)dc + BATCH * SC - 10), GEMM_STATUS_INVALID_SIZE);
    {
        gemm_problem_t q = p;
        q.ldc = N - 1;
        CASE("ldc too small", gemm_run_device(ctx, (size_t)d, s, &q, da, db, dc), GEMM_STATUS_INVALID_LEADING_DIM);
        q = p;
        q.a_type = 99;
        CASE("unknown dtype", gemm_run_device(ctx, (size_t)d, s, &q, da, db, dc), GEMM_STATUS_INVALID_VALUE);
        q = bf16_problem(8, 8, 8, 8, 1.0f, 0.0f); /* small enough for the bf16 buffers as f32 */
        q.a_type = q.b_type = GEMM_DTYPE_F32;
        q.c_type = GEMM_DTYPE_BF16; /* the f32 kernels write f32 */
        CASE("f32 x f32 -> bf16 (no kernel)", gemm_run_device(ctx, (size_t)d, s, &q, da, db, dc),
             GEMM_STATUS_UNSUPPORTED_DTYPE);
        q.c_type = GEMM_DTYPE_F32;
        q.math = 5;
        CASE("unknown math mode", gemm_run_device(ctx, (size_t)d, s, &q, da, db, dc), GEMM_STATUS_INVALID_VALUE);
    }
    CASE("strided: overlapping outputs",
         gemm_strided_batched_device(ctx, (size_t)d, s, &p, da, M * K, db, 0, dc, 10, 2),
         GEMM_STATUS_OVERLAPPING_OUTPUTS);
    CASE("strided: batch past the end of A",
         gemm_strided_batched_device(ctx, (size_t)d, s, &p, da, M * K, db, 0, dc, SC, BATCH + 1),
         GEMM_STATUS_INVALID_SIZE);
    CASE("strided: misaligned C",
         gemm_strided_batched_device(ctx, (size_t)d, s, &p, da, M * K, db, 0, (char *)dc + 2, SC, 2),
         GEMM_STATUS_MISALIGNED);
    {
        gemm_problem_t ps[2] = {bf16_problem(8, 8, 8, 8, 1.0f, 0.0f), bf16_problem(8, 8, 8, 8, 1.0f, 0.0f)};
        const void *as[2] = {da, other}, *bs[2] = {db, db};
        void *cs[2] = {dc, (float *)dc + 64};
        gemm_status_t gst[2] = {GEMM_STATUS_INTERNAL_ERROR, GEMM_STATUS_INTERNAL_ERROR};
        CASE("grouped: one group on the other GPU", gemm_grouped_device(ctx, (size_t)d, s, 2, ps, as, bs, cs, gst),
             GEMM_STATUS_BATCH_PARTIAL_FAILURE);
        CHECK(gst[0] == GEMM_STATUS_SUCCESS && gst[1] == GEMM_STATUS_WRONG_DEVICE, "group statuses %d %d", gst[0],
              gst[1]);
        as[1] = da;
        ps[1].ldb = 3;
        CASE("grouped: one group with a bad ldb", gemm_grouped_device(ctx, (size_t)d, s, 2, ps, as, bs, cs, gst),
             GEMM_STATUS_BATCH_PARTIAL_FAILURE);
        CHECK(gst[0] == GEMM_STATUS_SUCCESS && gst[1] == GEMM_STATUS_INVALID_LEADING_DIM, "group statuses %d %d",
              gst[0], gst[1]);
        CASE("grouped: NULL arrays", gemm_grouped_device(ctx, (size_t)d, s, 2, NULL, as, bs, cs, gst),
             GEMM_STATUS_NULL_POINTER);
    }
#undef CASE
    for (int i = 0; i < nc; i++)
        CHECK(cases[i].got == cases[i].want, "device %d, %s: got %d (%s), want %d", d, cases[i].what, cases[i].got,
              gemm_status_string(cases[i].got), cases[i].want);
    CHECK(hStreamSynchronize(s) == 0, "sync after bad input");
    CHECK(launches(d) == before, "bad input launched %llu kernel(s) on %d", launches(d) - before, d);
    memset(out, 0, sizeof hc0);
    CHECK(hMemcpy(out, dc, sizeof hc0, D2H) == 0, "read C back");
    for (int i = 0; i < BATCH * SC; i++) CHECK(out[i] == hc0[i], "bad input changed C[%d] on %d", i, d);

    CHECK(hHostFree(out) == 0 && hFree(da) == 0 && hFree(db) == 0 && hFree(dc) == 0, "free");
    CHECK(hStreamDestroy(s) == 0, "hipStreamDestroy");
}

/* Decode (issue 23): a Linear layer's y = x W^T, bf16 -> f32, on GPU `d`, checked
 * against the reference, with the runtime's kernel named `family` (or the reduction of its
 * split). Two shapes:
 * - 3 rows of x, W of 300 x 1003 (K not a multiple of 8, rows padded to 1008): a decode kernel
 *   (gemm-compiler lower/decode.rs, "_dec"), beta = 0.5;
 * - 24 rows of x, W of 28672 x 136 (Llama-8B gate_up's rows over a short K, rows padded to 144):
 *   a decode-rows kernel (lower/decode_rows.rs, "_decr": the activations in LDS, each wave on
 *   its own weight rows), beta = 0 over NaN. */
enum { DM = 3, DN = 300, DK = 1003, DLD = 1008 };
enum { RM = 24, RN = 28672, RK = 136, RLD = 144 };
static uint16_t dx[DM * DLD], dw[DN * DLD], rx[RM * RLD], rw[(size_t)RN * RLD];
static float dc0[DM * DN], dout[DM * DN], rc0[RM * RN], rout[RM * RN];

static void decode(gemm_context_t *ctx, int d, size_t m, size_t n, size_t k, size_t ld, const uint16_t *x,
                   const uint16_t *w, const float *c0, float *out, float beta, const char *family) {
    CHECK(hSetDevice(d) == 0, "hipSetDevice(%d)", d);
    void *s = NULL, *px = NULL, *pw = NULL, *pc = NULL;
    size_t xb = m * ld * 2, wb = n * ld * 2, cb = m * n * 4;
    CHECK(hStreamCreate(&s) == 0, "stream");
    CHECK(hMalloc(&px, xb) == 0 && hMalloc(&pw, wb) == 0 && hMalloc(&pc, cb) == 0, "alloc");
    CHECK(hMemcpy(px, x, xb, H2D) == 0 && hMemcpy(pw, w, wb, H2D) == 0 && hMemcpy(pc, c0, cb, H2D) == 0, "upload");
    gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_TRANS, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16, GEMM_DTYPE_F32,
                        m, n, k, ld, ld, n, 1.5f, beta, GEMM_MATH_DEFAULT};
    gemm_status_t st = gemm_run_device(ctx, (size_t)d, s, &p, px, pw, pc);
    CHECK(st == GEMM_STATUS_SUCCESS, "decode %zux%zux%zu on %d: %s", m, n, k, d, gemm_status_string(st));
    char kernel[128] = "";
    CHECK(gemm_last_kernel(kernel, sizeof kernel) == GEMM_STATUS_SUCCESS, "gemm_last_kernel");
    CHECK(strstr(kernel, family) != NULL || strstr(kernel, "splitk_reduce") != NULL, "decode %zux%zux%zu on %d ran %s",
          m, n, k, d, kernel);
    CHECK(hStreamSynchronize(s) == 0 && hMemcpy(out, pc, cb, D2H) == 0, "download");
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double want = 0, mag = 0;
            for (size_t l = 0; l < k; l++) {
                double t = (double)from_bf16(x[i * ld + l]) * from_bf16(w[j * ld + l]);
                want += t;
                mag += fabs(t);
            }
            /* beta = 0: C is not read (it holds NaN). */
            double cin = beta == 0.0f ? 0.0 : c0[i * n + j];
            want = 1.5 * want + beta * cin;
            CHECK(fabs(out[i * n + j] - want) <= 1e-5 * (mag + fabs(cin)) + 1e-6,
                  "decode on %d (%s): C[%zu][%zu] = %g, want %g", d, kernel, i, j, out[i * n + j], want);
        }
    CHECK(hFree(px) == 0 && hFree(pw) == 0 && hFree(pc) == 0 && hStreamDestroy(s) == 0, "free");
}

/* Mixture-of-experts decode (issue 23): six experts of a Linear layer, y_g = x_g W_g^T in bf16
 * (row-major x of em[g] tokens, W of en[g] x ek[g]), in one gemm_grouped_device call on GPU `d`:
 * experts without tokens first and in the middle, then 1, 5, 16 and 3 tokens, weight rows past
 * multiples of 64, K tails past the kernel's 256-deep step, padded leading dimensions
 * (lda = k + 8, ldb = k + 16, ldc = n + 8). The activations of all experts share one
 * allocation, the weights another and C a third, each expert a region of them. Twice: beta = 0
 * over NaN, then beta != 0 over that result; each call one launch of the grouped decode-rows
 * kernel ("_decr", "_grouped": gemm-compiler catalogue.rs GROUPED_DECODE_ROWS), every element
 * against the reference, C's padding and the empty experts' regions untouched. About 5200
 * weight rows per expert: enough that both archs' tables rank the decode-rows kernel (128-row
 * blocks) first (with half as many a grouped decode kernel, "_dec8_grouped" or "_dec2_grouped",
 * runs them). */
enum { NE = 6, EMPTY_ROWS = 2 };
static const size_t em[NE] = {0, 1, 5, 0, 16, 3}, en[NE] = {5128, 5136, 5200, 5008, 5264, 5152},
                    ek[NE] = {264, 264, 200, 264, 136, 232};

static void moe(gemm_context_t *ctx, int d) {
    size_t oa[NE], ob[NE], oc[NE], xn = 0, wn = 0, cn = 0;
    for (int g = 0; g < NE; g++) {
        oa[g] = xn;
        ob[g] = wn;
        oc[g] = cn;
        xn += em[g] * (ek[g] + 8);
        wn += en[g] * (ek[g] + 16);
        cn += (em[g] > EMPTY_ROWS ? em[g] : EMPTY_ROWS) * (en[g] + 8);
    }
    uint16_t *x = malloc(xn * 2), *w = malloc(wn * 2), *c0 = malloc(cn * 2), *out = malloc(cn * 2);
    CHECK(x && w && c0 && out, "malloc");
    if (!x || !w || !c0 || !out) return;
    /* Padding past K holds values too: the kernel must not read them into the sums. */
    for (size_t i = 0; i < xn; i++) x[i] = to_bf16(rnd());
    for (size_t i = 0; i < wn; i++) w[i] = to_bf16(rnd());
    for (size_t i = 0; i < cn; i++) c0[i] = 0x7FC0; /* bf16 NaN */
    CHECK(hSetDevice(d) == 0, "hipSetDevice(%d)", d);
    void *s = NULL, *px = NULL, *pw = NULL, *pc = NULL;
    CHECK(hStreamCreate(&s) == 0, "stream");
    CHECK(hMalloc(&px, xn * 2) == 0 && hMalloc(&pw, wn * 2) == 0 && hMalloc(&pc, cn * 2) == 0, "alloc");
    CHECK(hMemcpy(px, x, xn * 2, H2D) == 0 && hMemcpy(pw, w, wn * 2, H2D) == 0 && hMemcpy(pc, c0, cn * 2, H2D) == 0,
          "upload");
    for (int call = 0; call < 2; call++) {
        const float alpha = call ? -0.75f : 1.25f, beta = call ? 0.5f : 0.0f;
        gemm_problem_t ps[NE];
        const void *as[NE], *bs[NE];
        void *cs[NE];
        for (int g = 0; g < NE; g++) {
            gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_TRANS, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16,
                                GEMM_DTYPE_BF16, em[g], en[g], ek[g], ek[g] + 8, ek[g] + 16, en[g] + 8, alpha, beta,
                                GEMM_MATH_DEFAULT};
            ps[g] = p;
            as[g] = (uint16_t *)px + oa[g];
            bs[g] = (uint16_t *)pw + ob[g];
            cs[g] = (uint16_t *)pc + oc[g];
        }
        unsigned long long before = launches(d);
        gemm_status_t gst[NE];
        gemm_status_t st = gemm_grouped_device(ctx, (size_t)d, s, NE, ps, as, bs, cs, gst);
        CHECK(st == GEMM_STATUS_SUCCESS, "experts on %d: %s", d, gemm_status_string(st));
        char kernel[128] = "";
        CHECK(gemm_last_kernel(kernel, sizeof kernel) == GEMM_STATUS_SUCCESS, "gemm_last_kernel");
        CHECK(strstr(kernel, d ? "gfx950" : "gfx942") && strstr(kernel, "_decr") && strstr(kernel, "_grouped"),
              "experts on %d ran %s, not the grouped decode-rows kernel", d, kernel);
        CHECK(hStreamSynchronize(s) == 0 && hMemcpy(out, pc, cn * 2, D2H) == 0, "download");
        CHECK(launches(d) - before == 1, "experts on %d: %llu launches", d, launches(d) - before);
        for (int g = 0; g < NE; g++) {
            CHECK(gst[g] == GEMM_STATUS_SUCCESS, "expert %d: %s", g, gemm_status_string(gst[g]));
            const size_t m = em[g], n = en[g], k = ek[g], lda = k + 8, ldb = k + 16, ldc = n + 8;
            const uint16_t *xa = x + oa[g], *wb = w + ob[g], *cb = c0 + oc[g], *ca = out + oc[g];
            if (m == 0) {
                CHECK(memcmp(ca, cb, EMPTY_ROWS * ldc * 2) == 0, "the empty expert %d wrote C on %d", g, d);
                continue;
            }
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < ldc; j++) {
                    if (j >= n) {
                        CHECK(ca[i * ldc + j] == cb[i * ldc + j], "expert %d on %d: padding C[%zu][%zu] changed", g,
                              d, i, j);
                        continue;
                    }
                    double mag;
                    double want = dot_bf16(xa + i * lda, 1, wb + j * ldb, 1, k, &mag);
                    /* beta = 0: C is not read (it holds NaN). */
                    double cin = beta == 0.0f ? 0.0 : beta * from_bf16(cb[i * ldc + j]);
                    want = alpha * want + cin;
                    double got = from_bf16(ca[i * ldc + j]);
                    /* f32 sums, then one rounding to bf16 (half an ulp: 2^-9 relative). */
                    CHECK(fabs(got - want) <= 1e-5 * (fabs(alpha) * mag + fabs(cin)) + fabs(want) / 256 + 1e-6,
                          "expert %d (%zux%zux%zu) on %d, call %d (%s): C[%zu][%zu] = %g, want %g", g, m, n, k, d,
                          call, kernel, i, j, got, want);
                }
        }
        memcpy(c0, out, cn * 2);
    }
    CHECK(hFree(px) == 0 && hFree(pw) == 0 && hFree(pc) == 0 && hStreamDestroy(s) == 0, "free");
    free(x);
    free(w);
    free(c0);
    free(out);
}

int main(void) {
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
    /* POSIX dlsym returns object pointers; converting them to function pointers is what every
     * dlopen user does (POSIX requires it to work). */
#define LOAD(var, type, name) *(void **)(&var) = sym(lib, name)
    LOAD(hMalloc, hipMalloc_t, "hipMalloc");
    LOAD(hFree, hipFree_t, "hipFree");
    LOAD(hHostMalloc, hipHostMalloc_t, "hipHostMalloc");
    LOAD(hHostFree, hipHostFree_t, "hipHostFree");
    LOAD(hMemcpyAsync, hipMemcpyAsync_t, "hipMemcpyAsync");
    LOAD(hMemcpy, hipMemcpy_t, "hipMemcpy");
    LOAD(hSetDevice, hipSetDevice_t, "hipSetDevice");
    LOAD(hStreamCreate, hipStreamCreate_t, "hipStreamCreate");
    LOAD(hStreamDestroy, hipStreamDestroy_t, "hipStreamDestroy");
    LOAD(hStreamSynchronize, hipStreamSynchronize_t, "hipStreamSynchronize");
    LOAD(launches_of, counter_t, "gemm_emu_hip_counter");
#undef LOAD

    for (size_t i = 0; i < sizeof ha / 2; i++) ha[i] = to_bf16(rnd());
    for (size_t i = 0; i < sizeof hb / 2; i++) hb[i] = to_bf16(rnd());
    for (size_t i = 0; i < sizeof hc0 / 4; i++) hc0[i] = rnd();

    gemm_context_t *ctx = NULL;
    CHECK(gemm_context_create(NULL, &ctx) == GEMM_STATUS_SUCCESS && ctx, "default context");
    if (!ctx) return 1;
    size_t count = 0;
    gemm_device_count(ctx, &count);
    CHECK(count == 2, "two emulated GPUs: %zu", count);

    /* A buffer and a stream of each GPU, handed to the other one's calls. */
    void *bufs[2] = {NULL, NULL}, *streams[2] = {NULL, NULL};
    for (int d = 0; d < 2; d++) {
        CHECK(hSetDevice(d) == 0 && hMalloc(&bufs[d], 4096) == 0 && hStreamCreate(&streams[d]) == 0, "setup %d", d);
    }
    for (int d = 0; d < 2; d++) on_device(ctx, d, bufs[1 - d], streams[1 - d]);
    /* Padding past K holds values too: the kernels must not read them into the sums. */
    for (size_t i = 0; i < sizeof dx / 2; i++) dx[i] = to_bf16(rnd());
    for (size_t i = 0; i < sizeof dw / 2; i++) dw[i] = to_bf16(rnd());
    for (size_t i = 0; i < sizeof dc0 / 4; i++) dc0[i] = rnd();
    for (size_t i = 0; i < sizeof rx / 2; i++) rx[i] = to_bf16(rnd());
    for (size_t i = 0; i < sizeof rw / 2; i++) rw[i] = to_bf16(rnd());
    for (size_t i = 0; i < sizeof rc0 / 4; i++) rc0[i] = NAN;
    for (int d = 0; d < 2; d++) {
        decode(ctx, d, DM, DN, DK, DLD, dx, dw, dc0, dout, 0.5f, "_dec");
        decode(ctx, d, RM, RN, RK, RLD, rx, rw, rc0, rout, 0.0f, "_decr");
    }
    for (int d = 0; d < 2; d++) moe(ctx, d);
    /* A host-memory context device is not a GPU. */
    gemm_context_t *host = NULL;
    CHECK(gemm_context_create("host", &host) == GEMM_STATUS_SUCCESS, "host context");
    gemm_problem_t p = bf16_problem(4, 4, 4, 4, 1.0f, 0.0f);
    CHECK(gemm_run_device(host, 0, NULL, &p, bufs[0], bufs[0], bufs[0]) == GEMM_STATUS_NOT_A_GPU, "host is no GPU");
    gemm_context_destroy(host);
    for (int d = 0; d < 2; d++) {
        hSetDevice(d);
        CHECK(hFree(bufs[d]) == 0 && hStreamDestroy(streams[d]) == 0, "teardown %d", d);
    }
    CHECK(gemm_context_destroy(ctx) == GEMM_STATUS_SUCCESS, "destroy");
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("device-memory C ABI on emulated HIP devices: all checks passed\n");
    return 0;
}
