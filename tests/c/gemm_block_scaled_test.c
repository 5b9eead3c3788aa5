/* Block-scaled GEMMs through the C ABI (issue 26): gemm_run_block_scaled on host memory against
 * a C-side reference, for MX (fp4 E2M1 activations quantised here from random floats with the
 * OCP MX conversion, fp8 E4M3 weights with several block scales; K = 64, two 32-blocks) and
 * DeepSeek-V3 block fp8 (FNUZ e4m3 x e5m2, 1 x 128 activation and 128 x 128 weight scales, K = 160:
 * a full group and a partial one), padded leading dimensions, beta = 0 over NaN Y and beta != 0.
 * The reference sums in double; the library's host path sums each 32/128-element group in f32,
 * so the check allows (block_k + 2) * 2^-24 of the terms' magnitudes.
 *
 * Then the refusals, each with its status and Y untouched (memcmp): NULL context, problem,
 * scale struct, scale pointer, operand; a scale struct of the wrong size; a bad block shape;
 * K not a multiple of 32 for MX; a scale dtype that does not match the format; a scale leading
 * dimension below ceil(K / block_k); misaligned rows; MX with gfx942's FNUZ fp8; the Linear
 * layout required; fp4 refused by the plain gemm_run. And on the emulated GPUs (device memory):
 * MX on gfx942 is GEMM_STATUS_UNSUPPORTED_ARCH, a valid call on gfx950 that no kernel runs
 * (K-tiled scales in tiles of 2 groups: the fp4 x fp8 kernels read 4) GEMM_STATUS_NO_KERNEL,
 * nothing launched, Y untouched.
 *
 * Run by tests/tests/c_block_scaled_abi.rs with GEMM_HIP_LIBRARY pointing at libgemm_emu_hip.so
 * (gfx942 and gfx950). Exit 0 = pass. */
#define _POSIX_C_SOURCE 200809L
#define TEST_SEED 0x2545f491u
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

/* ---- formats ---------------------------------------------------------------------------- */

static const float E2M1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

static float e2m1_value(uint8_t code) { return (code & 8 ? -1.0f : 1.0f) * E2M1[code & 7]; }

/* Nearest E2M1 magnitude code, ties to the even code, saturating at 6 (OCP MX conversion). */
static uint8_t e2m1_encode(float x) {
    uint8_t sign = x < 0 ? 8 : 0;
    float a = fabsf(x);
    if (a >= 6.0f) return sign | 7;
    uint8_t lo = 0;
    while (lo < 7 && E2M1[lo + 1] <= a) lo++;
    float below = a - E2M1[lo], above = E2M1[lo + 1] - a;
    uint8_t c = below < above ? lo : below > above ? lo + 1 : (lo % 2 ? lo + 1 : lo);
    return sign | c;
}

/* An fp8 code's value: `mant` mantissa bits, exponent `bias`; FNUZ has no -0/Inf (0x80 NaN),
 * OCP e4m3 only NaN at S.1111.111. The inputs below are all normal finite numbers. */
static float fp8_value(uint8_t code, int mant, int bias) {
    int e = (code & 0x7f) >> mant, m = code & ((1 << mant) - 1);
    float v = e == 0 ? ldexpf((float)m, 1 - bias - mant) : ldexpf((float)((1 << mant) + m), e - bias - mant);
    return code & 0x80 ? -v : v;
}

/* q/4 (q in -8..8) as an fp8 code, exact (see gemm_fp8_test.c). */
static uint8_t fp8_quarter(int q, int mant, int bias) {
    if (q == 0) return 0;
    uint8_t sign = q < 0 ? 0x80 : 0;
    int a = q < 0 ? -q : q;
    int e = 0;
    while ((2 << e) <= a) e++;
    int frac = ((a << mant) >> e) - (1 << mant);
    return (uint8_t)(sign | ((e - 2 + bias) << mant) | frac);
}

static int is_bits_equal(const void *x, const void *y, size_t n) { return memcmp(x, y, n) == 0; }

/* ---- MX on the host ---------------------------------------------------------------------- */

enum { M = 3, N = 5, K = 64, LDA = 64, LDB = 80, LDC = N + 2, LDSA = 2, LDSB = 3 };
/* X: fp4, 64 elements = 32 bytes per row (16-aligned). W: OCP e4m3, ld 80 = 80 bytes. */
static uint8_t xa[M * LDA / 2], wb[N * LDB], sxa[M * LDSA], swb[N * LDSB];
static float xs[M][K], ws[N][K]; /* the dequantised values, for the reference */

static void quantise_x(void) {
    for (int i = 0; i < M; i++) {
        float v[K];
        for (int l = 0; l < K; l++) v[l] = rnd() * ldexpf(1.0f, (i + l / 32) % 5 - 2);
        for (int g = 0; g < K / 32; g++) {
            float amax = 0.0f;
            for (int l = 32 * g; l < 32 * g + 32; l++) amax = fmaxf(amax, fabsf(v[l]));
            int e = (int)floorf(log2f(amax)) - 2; /* emax(E2M1) = 2 */
            sxa[i * LDSA + g] = (uint8_t)(e + 127);
            for (int l = 32 * g; l < 32 * g + 32; l++) {
                uint8_t c = e2m1_encode(ldexpf(v[l], -e));
                uint8_t *byte = &xa[i * LDA / 2 + l / 2];
                *byte = l % 2 ? (uint8_t)((*byte & 0x0f) | (c << 4)) : (uint8_t)((*byte & 0xf0) | c);
                xs[i][l] = ldexpf(e2m1_value(c), e);
            }
        }
    }
}

static void make_w(void) {
    memset(wb, 0x7e, sizeof wb); /* padding: the largest e4m3 value, would show if read */
    memset(swb, 0xff, sizeof swb); /* padding: the NaN scale */
    for (int j = 0; j < N; j++) {
        for (int g = 0; g < K / 32; g++) swb[j * LDSB + g] = (uint8_t)(127 + (j + 2 * g) % 4 - 1);
        for (int l = 0; l < K; l++) {
            uint8_t c = fp8_quarter((int)(rnd() * 8.5f), 3, 7);
            wb[j * LDB + l] = c;
            ws[j][l] = ldexpf(fp8_value(c, 3, 7), swb[j * LDSB + l / 32] - 127);
        }
    }
}

/* Y = alpha X W^T + beta Y0 in double, and the terms' magnitudes. */
static void reference(float alpha, float beta, const float *y0, double *want, double *mag) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0.0, abs = 0.0;
            for (int l = 0; l < K; l++) {
                acc += (double)xs[i][l] * ws[j][l];
                abs += fabs((double)xs[i][l] * ws[j][l]);
            }
            want[i * N + j] = alpha * acc + (beta != 0.0f ? beta * (double)y0[i * LDC + j] : 0.0);
            mag[i * N + j] = fabs((double)alpha) * abs + (beta != 0.0f ? fabs(beta * (double)y0[i * LDC + j]) : 0.0);
        }
}

static void init_scales(gemm_block_scale_t *sa, gemm_block_scale_t *sb) {
    CHECK(gemm_block_scale_init(sa) == GEMM_STATUS_SUCCESS && gemm_block_scale_init(sb) == GEMM_STATUS_SUCCESS,
          "init");
    CHECK(sa->size == sizeof *sa && sa->dtype == GEMM_SCALE_E8M0 && sa->block_rows == 1 && sa->block_k == 32,
          "init's defaults");
    sa->scales = sxa;
    sa->ld = LDSA;
    sb->scales = swb;
    sb->ld = LDSB;
}

static gemm_problem_t mx_problem(float alpha, float beta) {
    gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_TRANS, GEMM_DTYPE_FP4_E2M1, GEMM_DTYPE_FP8_E4M3,
                        GEMM_DTYPE_F32, M, N, K, LDA, LDB, LDC, alpha, beta, GEMM_MATH_DEFAULT};
    return p;
}

static void host_mx(gemm_context_t *ctx) {
    quantise_x();
    make_w();
    gemm_block_scale_t sa, sb;
    init_scales(&sa, &sb);
    float y[M * LDC], y0[M * LDC];
    double want[M * N], mag[M * N];
    for (int run = 0; run < 2; run++) {
        float alpha = run ? -0.75f : 1.0f, beta = run ? 0.5f : 0.0f;
        for (int x = 0; x < M * LDC; x++) y0[x] = run ? (float)(x % 7) - 3.0f : NAN;
        memcpy(y, y0, sizeof y);
        gemm_problem_t p = mx_problem(alpha, beta);
        CHECK(gemm_run_block_scaled(ctx, &p, xa, &sa, wb, &sb, y) == GEMM_STATUS_SUCCESS, "MX run %d", run);
        reference(alpha, beta, y0, want, mag);
        int nonzero = 0;
        for (int i = 0; i < M; i++) {
            for (int j = 0; j < N; j++) {
                double err = fabs((double)y[i * LDC + j] - want[i * N + j]);
                CHECK(err <= 34.0 * ldexp(1.0, -24) * mag[i * N + j] + 1e-30, "MX run %d Y[%d,%d] = %g, want %g", run,
                      i, j, (double)y[i * LDC + j], want[i * N + j]);
                nonzero += y[i * LDC + j] != 0.0f;
            }
            for (int j = N; j < LDC; j++)
                CHECK(is_bits_equal(&y[i * LDC + j], &y0[i * LDC + j], 4), "MX run %d: padding Y[%d,%d] written", run, i,
                      j);
        }
        CHECK(nonzero > M * N / 2, "MX run %d: a trivial result", run);
    }
}

/* ---- block fp8 on the host --------------------------------------------------------------- */

enum { BM = 2, BN = 3, BK = 160, BLDA = 160, BLDB = 176, BLDC = 4, BG = 2 };

static void host_block_fp8(gemm_context_t *ctx) {
    static uint8_t a[BM * BLDA], b[BN * BLDB];
    float sa_v[BM * BG], sb_v[1 * BG] = {0.5f, 3.0f}; /* W: one 128-row block, two groups */
    float av[BM][BK], bv[BN][BK];
    memset(b, 0x7f, sizeof b);
    for (int i = 0; i < BM; i++)
        for (int g = 0; g < BG; g++) sa_v[i * BG + g] = 0.25f * (float)(1 + i + 3 * g);
    for (int i = 0; i < BM; i++)
        for (int l = 0; l < BK; l++) {
            a[i * BLDA + l] = fp8_quarter((int)(rnd() * 8.5f), 3, 8); /* FNUZ e4m3 */
            av[i][l] = fp8_value(a[i * BLDA + l], 3, 8) * sa_v[i * BG + l / 128];
        }
    for (int j = 0; j < BN; j++)
        for (int l = 0; l < BK; l++) {
            b[j * BLDB + l] = fp8_quarter((int)(rnd() * 8.5f), 2, 16); /* FNUZ e5m2 */
            bv[j][l] = fp8_value(b[j * BLDB + l], 2, 16) * sb_v[l / 128];
        }
    gemm_block_scale_t sa, sb;
    CHECK(gemm_block_scale_init(&sa) == GEMM_STATUS_SUCCESS && gemm_block_scale_init(&sb) == GEMM_STATUS_SUCCESS,
          "init");
    sa.dtype = sb.dtype = GEMM_SCALE_F32;
    sa.block_k = sb.block_k = 128;
    sb.block_rows = 128;
    sa.scales = sa_v;
    sa.ld = BG;
    sb.scales = sb_v;
    sb.ld = BG;
    gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_TRANS, GEMM_DTYPE_FP8_E4M3FNUZ, GEMM_DTYPE_FP8_E5M2FNUZ,
                        GEMM_DTYPE_F32, BM, BN, BK, BLDA, BLDB, BLDC, 2.0f, 0.0f, GEMM_MATH_DEFAULT};
    float y[BM * BLDC];
    for (int x = 0; x < BM * BLDC; x++) y[x] = NAN;
    CHECK(gemm_run_block_scaled(ctx, &p, a, &sa, b, &sb, y) == GEMM_STATUS_SUCCESS, "block fp8");
    for (int i = 0; i < BM; i++) {
        for (int j = 0; j < BN; j++) {
            double acc = 0.0, mag = 0.0;
            for (int l = 0; l < BK; l++) {
                acc += (double)av[i][l] * bv[j][l];
                mag += fabs((double)av[i][l] * bv[j][l]);
            }
            double err = fabs((double)y[i * BLDC + j] - 2.0 * acc);
            CHECK(err <= 130.0 * ldexp(1.0, -24) * 2.0 * mag + 1e-30, "block fp8 Y[%d,%d] = %g, want %g", i, j,
                  (double)y[i * BLDC + j], 2.0 * acc);
        }
        CHECK(isnan(y[i * BLDC + BN]), "block fp8: padding Y[%d,%d] written", i, BN);
    }
}

/* ---- refusals on the host ---------------------------------------------------------------- */

static void host_refusals(gemm_context_t *ctx) {
    gemm_block_scale_t sa, sb;
    init_scales(&sa, &sb);
    float y0[M * LDC], y[M * LDC];
    for (int x = 0; x < M * LDC; x++) y0[x] = (float)x + 0.5f;
    memcpy(y, y0, sizeof y);
    const gemm_problem_t p = mx_problem(1.0f, 1.0f);
#define REFUSED(call, status, what)                                                                             \
    do {                                                                                                        \
        gemm_status_t got_ = (call);                                                                            \
        CHECK(got_ == (status), "%s: status %d (%s), want %d", what, (int)got_, gemm_status_string(got_), status); \
        CHECK(is_bits_equal(y, y0, sizeof y), "%s: Y was written", what);                                      \
    } while (0)
    REFUSED(gemm_run_block_scaled(NULL, &p, xa, &sa, wb, &sb, y), GEMM_STATUS_NULL_POINTER, "NULL ctx");
    REFUSED(gemm_run_block_scaled(ctx, NULL, xa, &sa, wb, &sb, y), GEMM_STATUS_NULL_POINTER, "NULL problem");
    REFUSED(gemm_run_block_scaled(ctx, &p, NULL, &sa, wb, &sb, y), GEMM_STATUS_NULL_POINTER, "NULL a");
    REFUSED(gemm_run_block_scaled(ctx, &p, xa, NULL, wb, &sb, y), GEMM_STATUS_NULL_POINTER, "NULL scale_a");
    REFUSED(gemm_run_block_scaled(ctx, &p, xa, &sa, wb, &sb, NULL), GEMM_STATUS_NULL_POINTER, "NULL c");
    gemm_block_scale_t t = sb;
    t.scales = NULL;
    REFUSED(gemm_run_block_scaled(ctx, &p, xa, &sa, wb, &t, y), GEMM_STATUS_NULL_POINTER, "NULL scale_b->scales");
    t = sb;
    t.size = sizeof t - 8;
    REFUSED(gemm_run_block_scaled(ctx, &p, xa, &sa, wb, &t, y), GEMM_STATUS_INVALID_VALUE, "wrong struct size");
    t = sb;
    t.block_k = 64;
    REFUSED(gemm_run_block_scaled(ctx, &p, xa, &sa, wb, &t, y), GEMM_STATUS_BLOCK_SHAPE, "1 x 64 block");
    t = sb;
    t.block_rows = 128;
    REFUSED(gemm_run_block_scaled(ctx, &p, xa, &sa, wb, &t, y), GEMM_STATUS_BLOCK_SHAPE, "128 x 32 block");
    t = sb;
    t.dtype = GEMM_SCALE_F32;
    REFUSED(gemm_run_block_scaled(ctx, &p, xa, &sa, wb, &t, y), GEMM_STATUS_SCALE_DTYPE, "f32 scales for MX");
    t = sb;
    t.dtype = 7;
    REFUSED(gemm_run_block_scaled(ctx, &p, xa, &sa, wb, &t, y), GEMM_STATUS_INVALID_VALUE, "scale dtype 7");
    t = sb;
    t.ld = 1;
    REFUSED(gemm_run_block_scaled(ctx, &p, xa, &sa, wb, &t, y), GEMM_STATUS_INVALID_LEADING_DIM, "scale ld 1 < 2");
    gemm_problem_t q = p;
    q.k = 48;
    REFUSED(gemm_run_block_scaled(ctx, &q, xa, &sa, wb, &sb, y), GEMM_STATUS_K_NOT_BLOCK_MULTIPLE, "MX with K = 48");
    q = p;
    q.ldb = 72;
    REFUSED(gemm_run_block_scaled(ctx, &q, xa, &sa, wb, &sb, y), GEMM_STATUS_MISALIGNED, "fp8 rows of 72 bytes");
    q = p;
    q.b_type = GEMM_DTYPE_FP8_E4M3FNUZ;
    REFUSED(gemm_run_block_scaled(ctx, &q, xa, &sa, wb, &sb, y), GEMM_STATUS_UNSUPPORTED_DTYPE,
            "MX with gfx942's FNUZ fp8");
    q = p;
    q.trans_b = GEMM_NO_TRANS;
    REFUSED(gemm_run_block_scaled(ctx, &q, xa, &sa, wb, &sb, y), GEMM_STATUS_INVALID_VALUE, "not the Linear layout");
    q = p;
    q.c_type = GEMM_DTYPE_FP8_E4M3;
    REFUSED(gemm_run_block_scaled(ctx, &q, xa, &sa, wb, &sb, y), GEMM_STATUS_UNSUPPORTED_DTYPE, "fp8 Y");
    /* A plain GEMM takes no fp4. */
    gemm_problem_t plain = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_FP4_E2M1, GEMM_DTYPE_FP4_E2M1,
                            GEMM_DTYPE_F32, 2, 2, 2, 2, 2, 2, 1.0f, 0.0f, GEMM_MATH_DEFAULT};
    REFUSED(gemm_run(ctx, &plain, xa, wb, y), GEMM_STATUS_UNSUPPORTED_DTYPE, "plain fp4 GEMM");
    /* And the same good call succeeds (so the refusals above were about what they changed). */
    CHECK(gemm_run_block_scaled(ctx, &p, xa, &sa, wb, &sb, y) == GEMM_STATUS_SUCCESS, "good call");
    CHECK(!is_bits_equal(y, y0, sizeof y), "good call wrote Y");
#undef REFUSED
}

/* ---- device memory on the emulated GPUs --------------------------------------------------- */

static void *sym(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "missing %s in the HIP runtime\n", name);
        exit(2);
    }
    return p;
}

static void device_calls(void *lib) {
    hipMalloc_t hMalloc;
    hipFree_t hFree;
    hipMemcpy_t hMemcpy;
    hipSetDevice_t hSetDevice;
    hipStreamCreate_t hStreamCreate;
    hipStreamDestroy_t hStreamDestroy;
    hipStreamSynchronize_t hStreamSynchronize;
    counter_t launches_of;
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
    CHECK(gemm_context_create(NULL, &ctx) == GEMM_STATUS_SUCCESS && ctx, "default context (the emulated GPUs)");
    if (!ctx) return;
    float y0[M * LDC], y[M * LDC];
    for (int x = 0; x < M * LDC; x++) y0[x] = (float)x - 4.0f;
    const gemm_problem_t p = mx_problem(1.0f, 0.5f);
    for (int d = 0; d < 2; d++) {
        CHECK(hSetDevice(d) == 0, "device %d", d);
        void *dx = NULL, *dw = NULL, *dsx = NULL, *dsw = NULL, *dy = NULL, *s = NULL;
        CHECK(hMalloc(&dx, sizeof xa) == 0 && hMalloc(&dw, sizeof wb) == 0 && hMalloc(&dsx, sizeof sxa) == 0 &&
                  hMalloc(&dsw, sizeof swb) == 0 && hMalloc(&dy, sizeof y0) == 0 && hStreamCreate(&s) == 0,
              "allocations on %d", d);
        hMemcpy(dx, xa, sizeof xa, H2D);
        hMemcpy(dw, wb, sizeof wb, H2D);
        hMemcpy(dsx, sxa, sizeof sxa, H2D);
        hMemcpy(dsw, swb, sizeof swb, H2D);
        hMemcpy(dy, y0, sizeof y0, H2D);
        gemm_block_scale_t sa, sb;
        init_scales(&sa, &sb);
        sa.scales = dsx;
        sb.scales = dsw;
        /* K-tiled in tiles of 2 groups (the K = 64 problem's two): scale (r, g) at r * 2 + g,
           inside the row-major buffers; `ld` the operand's rows. */
        sa.layout = sb.layout = GEMM_SCALES_K_TILED;
        sa.tile = sb.tile = 2;
        sa.ld = M;
        sb.ld = N;
        unsigned long long before = launches_of(d, "launches");
        gemm_status_t got = gemm_run_device_block_scaled(ctx, (size_t)d, s, &p, dx, &sa, dw, &sb, dy);
        gemm_status_t want = d == 0 ? GEMM_STATUS_UNSUPPORTED_ARCH : GEMM_STATUS_NO_KERNEL;
        CHECK(got == want, "device %d: status %d (%s), want %d", d, (int)got, gemm_status_string(got), (int)want);
        if (d == 0) CHECK(strstr(gemm_last_error_message(), "no scaled MFMA") != NULL, "the reason is given");
        if (d == 1) CHECK(strstr(gemm_last_error_message(), "tiles of 4") != NULL, "the reason is given");
        gemm_problem_t q = p;
        q.k = 48;
        CHECK(gemm_run_device_block_scaled(ctx, (size_t)d, s, &q, dx, &sa, dw, &sb, dy) ==
                  GEMM_STATUS_K_NOT_BLOCK_MULTIPLE,
              "device %d: K = 48", d);
        CHECK(gemm_run_device_block_scaled(ctx, (size_t)d, s, &p, dx, NULL, dw, &sb, dy) == GEMM_STATUS_NULL_POINTER,
              "device %d: NULL scale_a", d);
        if (d == 1) /* on gfx942 the arch is refused first */
            CHECK(gemm_run_device_block_scaled(ctx, (size_t)d, s, &p, (char *)dx + 1, &sa, dw, &sb, dy) ==
                      GEMM_STATUS_INVALID_SIZE,
                  "device %d: X one byte in (too short for its span)", d);
        CHECK(hStreamSynchronize(s) == 0, "sync");
        CHECK(launches_of(d, "launches") == before, "device %d: nothing launched", d);
        hMemcpy(y, dy, sizeof y, D2H);
        CHECK(is_bits_equal(y, y0, sizeof y), "device %d: Y untouched", d);
        hFree(dx);
        hFree(dw);
        hFree(dsx);
        hFree(dsw);
        hFree(dy);
        hStreamDestroy(s);
    }
    CHECK(gemm_context_destroy(ctx) == GEMM_STATUS_SUCCESS, "destroy");
}

/* The GPU kernels through the C ABI on the emulated GPUs: block-scaled fp8 on both (FNUZ e4m3 on
 * gfx942, OCP e4m3 on gfx950; X scaled per row and group, W per 128 x 128 block) and MXFP4 on
 * gfx950, constant data so every Y is exact, one launch each. */
static void device_runs(void *lib) {
    hipMalloc_t hMalloc;
    hipFree_t hFree;
    hipMemcpy_t hMemcpy;
    hipSetDevice_t hSetDevice;
    hipStreamCreate_t hStreamCreate;
    hipStreamDestroy_t hStreamDestroy;
    hipStreamSynchronize_t hStreamSynchronize;
    counter_t launches_of;
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
    CHECK(gemm_context_create(NULL, &ctx) == GEMM_STATUS_SUCCESS && ctx, "default context (the emulated GPUs)");
    if (!ctx) return;
    enum { RM = 3, RN = 5, RK = 256, RG = 2 };
    static uint8_t x[RM * RK], w[RN * RK];
    float sx[RM * RG], sw[RG] = {0.5f, 3.0f}, y[RM * RN];
    for (int i = 0; i < RM; i++) {
        sx[i * RG] = (float)(i + 1);
        sx[i * RG + 1] = 2.0f * (float)(i + 1);
    }
    /* 0x38: 0.5 in e4m3fnuz (bias 8), 1.0 in OCP e4m3 (bias 7). */
    memset(x, 0x38, sizeof x);
    memset(w, 0x38, sizeof w);
    for (int d = 0; d < 2; d++) {
        CHECK(hSetDevice(d) == 0, "device %d", d);
        void *dx = NULL, *dw = NULL, *dsx = NULL, *dsw = NULL, *dy = NULL, *s = NULL;
        CHECK(hMalloc(&dx, sizeof x) == 0 && hMalloc(&dw, sizeof w) == 0 && hMalloc(&dsx, sizeof sx) == 0 &&
                  hMalloc(&dsw, sizeof sw) == 0 && hMalloc(&dy, sizeof y) == 0 && hStreamCreate(&s) == 0,
              "allocations on %d", d);
        hMemcpy(dx, x, sizeof x, H2D);
        hMemcpy(dw, w, sizeof w, H2D);
        hMemcpy(dsx, sx, sizeof sx, H2D);
        hMemcpy(dsw, sw, sizeof sw, H2D);
        gemm_block_scale_t sa, sb;
        CHECK(gemm_block_scale_init(&sa) == GEMM_STATUS_SUCCESS && gemm_block_scale_init(&sb) == GEMM_STATUS_SUCCESS,
              "init");
        sa.dtype = sb.dtype = GEMM_SCALE_F32;
        sa.block_k = sb.block_k = 128;
        sb.block_rows = 128;
        sa.scales = dsx;
        sa.ld = RG;
        sb.scales = dsw;
        sb.ld = RG;
        gemm_dtype_t e4m3 = d == 0 ? GEMM_DTYPE_FP8_E4M3FNUZ : GEMM_DTYPE_FP8_E4M3;
        gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_TRANS, e4m3, e4m3, GEMM_DTYPE_F32, RM, RN, RK, RK,
                            RK, RN, 1.0f, 0.0f, GEMM_MATH_DEFAULT};
        unsigned long long before = launches_of(d, "launches");
        gemm_status_t got = gemm_run_device_block_scaled(ctx, (size_t)d, s, &p, dx, &sa, dw, &sb, dy);
        CHECK(got == GEMM_STATUS_SUCCESS, "device %d: block fp8 status %d (%s: %s)", d, (int)got,
              gemm_status_string(got), gemm_last_error_message());
        CHECK(hStreamSynchronize(s) == 0, "sync");
        CHECK(launches_of(d, "launches") == before + 1, "device %d: one kernel", d);
        hMemcpy(y, dy, sizeof y, D2H);
        /* 128 products per group of v * v (v = 0.5 or 1), groups scaled (i+1) * 0.5 and 2 (i+1) * 3. */
        double v = d == 0 ? 0.25 : 1.0;
        for (int i = 0; i < RM; i++)
            for (int j = 0; j < RN; j++)
                CHECK(y[i * RN + j] == (float)(128.0 * v * 6.5 * (i + 1)), "device %d: block fp8 Y[%d,%d] = %g", d, i,
                      j, (double)y[i * RN + j]);
        if (d == 1) {
            /* MXFP4 x MXFP4: 0x22 holds two fp4 1.0s; E8M0 127 is 1; K = 64 in 32 bytes per row. */
            static uint8_t x4[RM * 32], w4[RN * 32], s4[RN * 4];
            memset(x4, 0x22, sizeof x4);
            memset(w4, 0x22, sizeof w4);
            memset(s4, 127, sizeof s4);
            void *ds4x = NULL, *ds4w = NULL;
            CHECK(hMalloc(&ds4x, RM * 4) == 0 && hMalloc(&ds4w, sizeof s4) == 0, "MX scale allocations");
            hMemcpy(dx, x4, sizeof x4, H2D);
            hMemcpy(dw, w4, sizeof w4, H2D);
            hMemcpy(ds4x, s4, RM * 4, H2D);
            hMemcpy(ds4w, s4, sizeof s4, H2D);
            gemm_block_scale_t ma, mb;
            CHECK(gemm_block_scale_init(&ma) == GEMM_STATUS_SUCCESS && gemm_block_scale_init(&mb) == GEMM_STATUS_SUCCESS,
                  "init");
            ma.scales = ds4x;
            mb.scales = ds4w;
            ma.ld = mb.ld = 4;
            gemm_problem_t q = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_TRANS, GEMM_DTYPE_FP4_E2M1, GEMM_DTYPE_FP4_E2M1,
                                GEMM_DTYPE_F32, RM, RN, 64, 64, 64, RN, 1.0f, 0.0f, GEMM_MATH_DEFAULT};
            got = gemm_run_device_block_scaled(ctx, 1, s, &q, dx, &ma, dw, &mb, dy);
            CHECK(got == GEMM_STATUS_SUCCESS, "MXFP4 status %d (%s: %s)", (int)got, gemm_status_string(got),
                  gemm_last_error_message());
            CHECK(hStreamSynchronize(s) == 0, "sync");
            CHECK(launches_of(1, "launches") == before + 2, "MXFP4: one kernel");
            hMemcpy(y, dy, sizeof y, D2H);
            for (int xx = 0; xx < RM * RN; xx++) CHECK(y[xx] == 64.0f, "MXFP4 Y[%d] = %g", xx, (double)y[xx]);
            hFree(ds4x);
            hFree(ds4w);
        }
        hFree(dx);
        hFree(dw);
        hFree(dsx);
        hFree(dsw);
        hFree(dy);
        hStreamDestroy(s);
    }
    CHECK(gemm_context_destroy(ctx) == GEMM_STATUS_SUCCESS, "destroy");
}

int main(void) {
    (void)to_bf16; /* check.h's bf16 helpers: not needed here */
    (void)from_bf16;
    gemm_context_t *host = NULL;
    CHECK(gemm_context_create("host", &host) == GEMM_STATUS_SUCCESS && host, "host context");
    if (!host) return 1;
    host_mx(host);
    host_block_fp8(host);
    host_refusals(host);
    CHECK(gemm_context_destroy(host) == GEMM_STATUS_SUCCESS, "destroy");
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
    device_calls(lib);
    device_runs(lib);
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("block-scaled C ABI, host and emulated GPUs: all checks passed\n");
    return 0;
}
