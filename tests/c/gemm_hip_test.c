/* A C program against the library's C ABI on HIP devices. Run by tests/c_abi.rs with
 * GEMM_HIP_LIBRARY pointing at the emulated HIP runtime (libgemm_emu_hip.so, two emulated GPUs:
 * gfx942 and gfx950) and no GEMM_DEVICES, so the default context is every HIP device: the GEMMs go
 * C -> gemm_ffi -> HipBackend's streaming pipeline -> hipModuleLaunchKernel -> the catalogue
 * kernels in the emulator. Checks results against its own reference. Exit status 0 = pass. */
#define TEST_SEED 0x9e3779b9u
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Row-major C (m x n, ldc) = alpha * A (m x k) * B (k x n) + beta * C0, all bf16 in, f32 out;
 * checks every entry of `c` and that the padding columns kept their values. */
static void check_item(const char *what, const uint16_t *a, const uint16_t *b, const float *c0, const float *c,
                       size_t m, size_t n, size_t k, size_t ldc, float alpha, float beta) {
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < ldc; j++) {
            if (j >= n) {
                CHECK(c[i * ldc + j] == c0[i * ldc + j], "%s: padding C[%zu][%zu] changed", what, i, j);
                continue;
            }
            double want = 0, mag = 0;
            for (size_t l = 0; l < k; l++) {
                double t = (double)from_bf16(a[i * k + l]) * from_bf16(b[l * n + j]);
                want += t;
                mag += fabs(t);
            }
            want = alpha * want + beta * c0[i * ldc + j];
            /* f32 accumulation of exact bf16 products: a few ulps of the magnitude sum. */
            CHECK(fabs(c[i * ldc + j] - want) <= 1e-5 * (mag + fabs(c0[i * ldc + j])) + 1e-6, "%s: C[%zu][%zu] = %g, want %g",
                  what, i, j, c[i * ldc + j], want);
        }
    }
}

int main(void) {
    gemm_context_t *ctx = NULL;
    CHECK(gemm_context_create(NULL, &ctx) == GEMM_STATUS_SUCCESS && ctx != NULL, "default context");
    if (!ctx) return 1;
    size_t count = 0;
    gemm_device_count(ctx, &count);
    CHECK(count == 2, "the default context is every HIP device: %zu", count);
    for (size_t d = 0; d < count; d++) {
        gemm_device_info_t info;
        CHECK(gemm_device_info(ctx, d, &info) == GEMM_STATUS_SUCCESS, "device info %zu", d);
        CHECK(info.kind == GEMM_DEVICE_HIP, "device %zu kind %u", d, info.kind);
        char want[32];
        snprintf(want, sizeof want, "hip:%zu", d);
        CHECK(strcmp(info.name, want) == 0, "device name %s", info.name);
        CHECK(strstr(info.description, d == 0 ? "gfx942" : "gfx950") != NULL, "description %s", info.description);
        CHECK(info.compute_units == (d == 0 ? 304u : 256u) && info.memory_bytes > 0, "CUs %u", info.compute_units);
    }

    /* One GEMM: 70 x 45 x 33, bf16 x bf16 -> f32, C padded to ldc = 48, beta != 0. */
    {
        enum { M = 70, N = 45, K = 33, LDC = 48 };
        static uint16_t a[M * K], b[K * N];
        static float c[M * LDC], c0[M * LDC];
        for (int i = 0; i < M * K; i++) a[i] = to_bf16(rnd());
        for (int i = 0; i < K * N; i++) b[i] = to_bf16(rnd());
        for (int i = 0; i < M * LDC; i++) c0[i] = c[i] = rnd();
        gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16,
                            GEMM_DTYPE_F32, M, N, K, K, N, LDC, 1.5f, -0.5f, GEMM_MATH_DEFAULT};
        gemm_status_t s = gemm_run(ctx, &p, a, b, c);
        CHECK(s == GEMM_STATUS_SUCCESS, "gemm_run: %s", gemm_status_string(s));
        check_item("gemm_run", a, b, c0, c, M, N, K, LDC, 1.5f, -0.5f);
    }

    /* A strided batch of 10 items, 40 x 24 x 16, B shared, gaps between the C matrices, beta = 0
     * (the gaps and the padding must keep their values: nothing outside the m x n entries is
     * written). Spread over both GPUs. */
    {
        enum { M = 40, N = 24, K = 16, LDC = 26, COUNT = 10, SC = M * LDC + 5 };
        static uint16_t a[COUNT * M * K], b[K * N];
        static float c[COUNT * SC], c0[COUNT * SC];
        for (int i = 0; i < COUNT * M * K; i++) a[i] = to_bf16(rnd());
        for (int i = 0; i < K * N; i++) b[i] = to_bf16(rnd());
        for (int i = 0; i < COUNT * SC; i++) c0[i] = c[i] = rnd();
        gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16,
                            GEMM_DTYPE_F32, M, N, K, K, N, LDC, 1.0f, 0.0f, GEMM_MATH_DEFAULT};
        gemm_status_t st[COUNT];
        gemm_status_t s = gemm_strided_batched(ctx, &p, a, M * K, b, 0, c, SC, COUNT, st);
        CHECK(s == GEMM_STATUS_SUCCESS, "strided batch: %s", gemm_status_string(s));
        for (int it = 0; it < COUNT; it++) {
            CHECK(st[it] == GEMM_STATUS_SUCCESS, "item %d: %s", it, gemm_status_string(st[it]));
            char what[32];
            snprintf(what, sizeof what, "strided item %d", it);
            check_item(what, a + it * M * K, b, c0 + it * SC, c + it * SC, M, N, K, LDC, 1.0f, 0.0f);
            for (int g = M * LDC; g < SC; g++) CHECK(c[it * SC + g] == c0[it * SC + g], "gap after item %d", it);
        }
    }

    /* Tensor parallelism over both GPUs: every device is a HIP device and the test's RCCL is the
     * emulated runtime's, so the device-resident path runs (shards on the GPUs, RCCL collectives).
     * 70 x 45 x 33 bf16 -> f32 with C padded and beta != 0, then bf16 -> bf16 with A padded. */
    {
        int resident = -1;
        CHECK(gemm_tensor_parallel_route(ctx, &resident) == GEMM_STATUS_SUCCESS && resident == 1,
              "two HIP GPUs with RCCL run tensor parallelism device-resident: %d", resident);
        const gemm_tp_plan_t plans[3] = {GEMM_TP_COLUMN, GEMM_TP_ROW_REDUCE_SCATTER, GEMM_TP_ROW_ALL_REDUCE};
        const char *names[3] = {"tp column", "tp row reduce-scatter", "tp row all-reduce"};
        enum { M = 70, N = 45, K = 33, LDA = 36, LDC = 48 };
        static uint16_t a[M * K], b[K * N], ap[M * LDA], c16[M * N], c16_0[M * N];
        static float c[M * LDC], c0[M * LDC];
        for (int i = 0; i < M * K; i++) a[i] = to_bf16(rnd());
        for (int i = 0; i < K * N; i++) b[i] = to_bf16(rnd());
        for (int i = 0; i < M * LDA; i++) ap[i] = (i % LDA) < K ? a[(i / LDA) * K + i % LDA] : to_bf16(1e30f);
        for (int pl = 0; pl < 3; pl++) {
            for (int i = 0; i < M * LDC; i++) c0[i] = c[i] = rnd();
            gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16,
                                GEMM_DTYPE_F32, M, N, K, K, N, LDC, 1.5f, -0.5f, GEMM_MATH_DEFAULT};
            gemm_status_t s = gemm_tensor_parallel(ctx, plans[pl], &p, a, b, c);
            CHECK(s == GEMM_STATUS_SUCCESS, "%s bf16 -> f32: %s", names[pl], gemm_status_string(s));
            check_item(names[pl], a, b, c0, c, M, N, K, LDC, 1.5f, -0.5f);

            for (int i = 0; i < M * N; i++) c16_0[i] = c16[i] = to_bf16(rnd());
            gemm_problem_t q = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16,
                                GEMM_DTYPE_BF16, M, N, K, LDA, N, N, 1.0f, 2.0f, GEMM_MATH_DEFAULT};
            s = gemm_tensor_parallel(ctx, plans[pl], &q, ap, b, c16);
            CHECK(s == GEMM_STATUS_SUCCESS, "%s bf16 -> bf16: %s", names[pl], gemm_status_string(s));
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double want = 0, mag = 0;
                    for (int l = 0; l < K; l++) {
                        double t = (double)from_bf16(a[i * K + l]) * from_bf16(b[l * N + j]);
                        want += t;
                        mag += fabs(t);
                    }
                    want += 2.0 * from_bf16(c16_0[i * N + j]);
                    mag += fabs(2.0 * from_bf16(c16_0[i * N + j]));
                    /* f32 sums rounded once to bf16. */
                    double got = from_bf16(c16[i * N + j]);
                    CHECK(fabs(got - want) <= 0.0079 * fabs(want) + 1e-5 * mag + 1e-6,
                          "%s bf16 -> bf16: C[%d][%d] = %g, want %g", names[pl], i, j, got, want);
                }
        }
        /* Bad input on the device path: statuses, and C untouched. */
        memcpy(c0, c, sizeof c);
        gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16,
                            GEMM_DTYPE_F32, M, N, K, K, N, LDC, 1.0f, 1.0f, GEMM_MATH_DEFAULT};
        CHECK(gemm_tensor_parallel(ctx, 3, &p, a, b, c) == GEMM_STATUS_INVALID_VALUE, "tp bad plan");
        CHECK(gemm_tensor_parallel(ctx, GEMM_TP_COLUMN, &p, NULL, b, c) == GEMM_STATUS_NULL_POINTER, "tp NULL a");
        p.ldc = N - 1;
        CHECK(gemm_tensor_parallel(ctx, GEMM_TP_ROW_ALL_REDUCE, &p, a, b, c) == GEMM_STATUS_INVALID_LEADING_DIM,
              "tp ldc too small");
        for (int i = 0; i < M * LDC; i++) CHECK(c[i] == c0[i], "refused tensor-parallel call changed C at %d", i);
    }

    /* f32 inputs run on the GPUs' f32 kernels: within f32 tolerance of the reference, by a full
     * f32 kernel unless the problem allows xf32 (GEMM_MATH_ALLOW_XF32), which gfx942 then runs
     * with its xf32 kernels within the xf32 bound (10-bit mantissas: 2^-10 relative per product);
     * gfx950 has no xf32 MFMA and stays at f32. Plain GEMM and both tensor-parallel plans. */
    {
        enum { M = 37, N = 29, K = 45 };
        float a[M * K], b[K * N], c[M * N], c0[M * N];
        for (int i = 0; i < M * K; i++) a[i] = rnd();
        for (int i = 0; i < K * N; i++) b[i] = rnd();
        for (int i = 0; i < M * N; i++) c0[i] = rnd();
        gemm_tp_plan_t plans[2] = {GEMM_TP_COLUMN, GEMM_TP_ROW_REDUCE_SCATTER};
        for (int math = 0; math < 2; math++)
            for (int call = 0; call < 3; call++) {
                memcpy(c, c0, sizeof c);
                gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_F32, GEMM_DTYPE_F32,
                                    GEMM_DTYPE_F32, M, N, K, K, N, N, 1.5f, -0.5f, (gemm_math_t)math};
                gemm_status_t s = call == 0 ? gemm_run(ctx, &p, a, b, c)
                                            : gemm_tensor_parallel(ctx, plans[call - 1], &p, a, b, c);
                CHECK(s == GEMM_STATUS_SUCCESS, "f32 call %d math %d: %s", call, math, gemm_status_string(s));
                if (call == 0) {
                    char kernel[256];
                    CHECK(gemm_last_kernel(kernel, sizeof kernel) == GEMM_STATUS_SUCCESS, "last kernel");
                    CHECK(strstr(kernel, "_f32_f32_") != NULL, "f32 ran on kernel '%s'", kernel);
                    /* xf32 kernels are named by their MFMA: 32x32x4 / 16x16x8 (f32: 32x32x2 / 16x16x4). */
                    int xf32 = strstr(kernel, "mfma32x32x4") != NULL || strstr(kernel, "mfma16x16x8") != NULL;
                    int gfx942 = strstr(kernel, "gfx942") != NULL;
                    CHECK(xf32 == (math == 1 && gfx942), "math %d ran kernel %s", math, kernel);
                }
                double tol = math ? 2e-3 : 1e-5;
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < N; j++) {
                        double want = 0, mag = 0;
                        for (int l = 0; l < K; l++) {
                            double t = (double)a[i * K + l] * b[l * N + j];
                            want += t;
                            mag += fabs(t);
                        }
                        want = 1.5 * want - 0.5 * c0[i * N + j];
                        CHECK(fabs(c[i * N + j] - want) <= tol * (1.5 * mag + 0.5 * fabs(c0[i * N + j])) + 1e-6,
                              "f32 call %d math %d: C[%d][%d] = %g, want %g", call, math, i, j, c[i * N + j], want);
                    }
            }
        /* An unknown math mode is refused, C untouched. */
        memcpy(c, c0, sizeof c);
        gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_F32, GEMM_DTYPE_F32,
                            GEMM_DTYPE_F32, M, N, K, K, N, N, 1.0f, 0.0f, 7};
        CHECK(gemm_run(ctx, &p, a, b, c) == GEMM_STATUS_INVALID_VALUE, "math 7");
        CHECK(strstr(gemm_last_error_message(), "math") != NULL, "math message: %s", gemm_last_error_message());
        for (int i = 0; i < M * N; i++) CHECK(c[i] == c0[i], "refused GEMM changed C");
    }

    CHECK(gemm_context_destroy(ctx) == GEMM_STATUS_SUCCESS, "destroy");
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("C ABI on emulated HIP devices: all checks passed\n");
    return 0;
}
