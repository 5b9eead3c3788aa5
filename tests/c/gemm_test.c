/* A C program against the library's C ABI: runs GEMMs on 1 and 3 host devices and checks them
 * against a reference it computes itself; then feeds every entry bad input. Exit status 0 = pass. */
#define TEST_SEED 0x1234567u
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Element (r, c) of a stored matrix. */
static size_t at(gemm_layout_t layout, size_t r, size_t c, size_t ld) {
    return layout == GEMM_ROW_MAJOR ? r * ld + c : c * ld + r;
}
/* Elements a stored rows x cols matrix spans. */
static size_t span(gemm_layout_t layout, size_t rows, size_t cols, size_t ld) {
    if (rows == 0 || cols == 0) return 0;
    return layout == GEMM_ROW_MAJOR ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}

/* The stored shapes of A and B, leading dimensions padded by `pad` (at least 1), and the
 * elements each of A, B, C spans. */
typedef struct { size_t lda, ldb, ldc, na, nb, nc; } storage_t;
static storage_t storage(size_t m, size_t n, size_t k, gemm_layout_t layout, gemm_transpose_t ta, gemm_transpose_t tb,
                         size_t pad) {
    size_t ar = ta == GEMM_TRANS ? k : m, ac = ta == GEMM_TRANS ? m : k;
    size_t br = tb == GEMM_TRANS ? n : k, bc = tb == GEMM_TRANS ? k : n;
    storage_t s;
    s.lda = (layout == GEMM_ROW_MAJOR ? ac : ar) + pad;
    s.ldb = (layout == GEMM_ROW_MAJOR ? bc : br) + pad;
    s.ldc = (layout == GEMM_ROW_MAJOR ? n : m) + pad;
    if (s.lda == 0) s.lda = 1;
    if (s.ldb == 0) s.ldb = 1;
    if (s.ldc == 0) s.ldc = 1;
    s.na = span(layout, ar, ac, s.lda);
    s.nb = span(layout, br, bc, s.ldb);
    s.nc = span(layout, m, n, s.ldc);
    return s;
}

/* op(X)(i, j) of a stored matrix: transposed means element (j, i) of the storage. */
static double get(const float *x, gemm_layout_t layout, gemm_transpose_t t, size_t i, size_t j, size_t ld) {
    return t == GEMM_TRANS ? x[at(layout, j, i, ld)] : x[at(layout, i, j, ld)];
}

static void check_f32(gemm_context_t *ctx, size_t m, size_t n, size_t k, gemm_layout_t layout,
                      gemm_transpose_t ta, gemm_transpose_t tb, size_t pad, float alpha, float beta) {
    storage_t st = storage(m, n, k, layout, ta, tb, pad);
    size_t lda = st.lda, ldb = st.ldb, ldc = st.ldc, na = st.na, nb = st.nb, nc = st.nc;
    float *a = malloc((na + 1) * 4), *b = malloc((nb + 1) * 4), *c = malloc((nc + 1) * 4), *c0 = malloc((nc + 1) * 4);
    for (size_t i = 0; i < na; i++) a[i] = rnd();
    for (size_t i = 0; i < nb; i++) b[i] = rnd();
    for (size_t i = 0; i < nc; i++) c0[i] = c[i] = beta == 0.0f ? NAN : rnd();
    gemm_problem_t p = {layout, ta, tb, GEMM_DTYPE_F32, GEMM_DTYPE_F32, GEMM_DTYPE_F32, m, n, k, lda, ldb, ldc, alpha, beta, GEMM_MATH_DEFAULT};
    gemm_status_t s = gemm_run(ctx, &p, a, b, c);
    CHECK(s == GEMM_STATUS_SUCCESS, "gemm_run %zux%zux%zu layout %u ta %u tb %u: %s", m, n, k, layout, ta, tb,
          gemm_status_string(s));
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double want = 0.0, mag = 0.0;
            for (size_t l = 0; l < k; l++) {
                double t = get(a, layout, ta, i, l, lda) * get(b, layout, tb, l, j, ldb);
                want += t; mag += fabs(t);
            }
            want *= alpha; mag *= fabs(alpha);
            if (beta != 0.0f) { want += beta * (double)c0[at(layout, i, j, ldc)]; mag += fabs(beta * c0[at(layout, i, j, ldc)]); }
            double got = c[at(layout, i, j, ldc)];
            CHECK(fabs(got - want) <= 1e-6 * (k + 4) * mag + 1e-30, "C[%zu][%zu] = %g, want %g", i, j, got, want);
        }
    free(a); free(b); free(c); free(c0);
}

static void check_bf16(gemm_context_t *ctx) {
    enum { M = 33, N = 20, K = 47 };
    uint16_t a[M * K], b[K * N], c[M * N];
    for (int i = 0; i < M * K; i++) a[i] = to_bf16(rnd());
    for (int i = 0; i < K * N; i++) b[i] = to_bf16(rnd());
    gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16,
                        M, N, K, K, N, N, 1.0f, 0.0f, GEMM_MATH_DEFAULT};
    CHECK(gemm_run(ctx, &p, a, b, c) == GEMM_STATUS_SUCCESS, "bf16 gemm");
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double want = 0.0, mag = 0.0;
            for (int l = 0; l < K; l++) {
                double t = (double)from_bf16(a[i * K + l]) * from_bf16(b[l * N + j]);
                want += t; mag += fabs(t);
            }
            CHECK(fabs(from_bf16(c[i * N + j]) - want) <= 0.008 * fabs(want) + 1e-5 * mag, "bf16 C[%d][%d]", i, j);
        }
}

static void check_batches(gemm_context_t *ctx) {
    /* Strided: 6 items of 9x7x5 with gaps between the C matrices. */
    enum { BM = 9, BN = 7, BK = 5, COUNT = 6, SC = BM * BN + 3 };
    float a[COUNT * BM * BK], b[BK * BN], c[COUNT * SC], c0[COUNT * SC];
    for (size_t i = 0; i < sizeof a / 4; i++) a[i] = rnd();
    for (size_t i = 0; i < sizeof b / 4; i++) b[i] = rnd();
    for (size_t i = 0; i < sizeof c / 4; i++) c0[i] = c[i] = rnd();
    gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_F32, GEMM_DTYPE_F32, GEMM_DTYPE_F32,
                        BM, BN, BK, BK, BN, BN, 1.0f, 1.0f, GEMM_MATH_DEFAULT};
    gemm_status_t st[COUNT];
    gemm_status_t s = gemm_strided_batched(ctx, &p, a, BM * BK, b, 0, c, SC, COUNT, st);
    CHECK(s == GEMM_STATUS_SUCCESS, "strided batch: %s", gemm_status_string(s));
    for (int it = 0; it < COUNT; it++) {
        CHECK(st[it] == GEMM_STATUS_SUCCESS, "item %d", it);
        for (int i = 0; i < BM; i++)
            for (int j = 0; j < BN; j++) {
                double want = c0[it * SC + i * BN + j];
                for (int l = 0; l < BK; l++) want += (double)a[it * BM * BK + i * BK + l] * b[l * BN + j];
                CHECK(fabs(c[it * SC + i * BN + j] - want) < 1e-5, "strided item %d C[%d][%d]", it, i, j);
            }
        for (int g = BM * BN; g < SC; g++) CHECK(c[it * SC + g] == c0[it * SC + g], "gap after item %d changed", it);
    }

    /* Grouped: three sizes; the middle item has a bad leading dimension and must fail alone. */
    size_t dims[3][3] = {{4, 5, 6}, {8, 8, 8}, {17, 3, 9}};
    float *ga[3], *gb[3], *gc[3];
    gemm_problem_t gp[3];
    for (int i = 0; i < 3; i++) {
        size_t m = dims[i][0], n = dims[i][1], k = dims[i][2];
        ga[i] = malloc(m * k * 4); gb[i] = malloc(k * n * 4); gc[i] = malloc(m * n * 4);
        for (size_t x = 0; x < m * k; x++) ga[i][x] = rnd();
        for (size_t x = 0; x < k * n; x++) gb[i][x] = rnd();
        for (size_t x = 0; x < m * n; x++) gc[i][x] = -3.0f;
        gemm_problem_t q = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_F32, GEMM_DTYPE_F32, GEMM_DTYPE_F32,
                            m, n, k, k, n, n, 2.0f, 0.0f, GEMM_MATH_DEFAULT};
        gp[i] = q;
    }
    gp[1].ldb = 3; /* too small */
    gemm_status_t gst[3];
    s = gemm_grouped(ctx, 3, gp, (const void *const *)ga, (const void *const *)gb, (void *const *)gc, gst);
    CHECK(s == GEMM_STATUS_BATCH_PARTIAL_FAILURE, "grouped: %s", gemm_status_string(s));
    CHECK(gst[0] == GEMM_STATUS_SUCCESS && gst[2] == GEMM_STATUS_SUCCESS, "grouped good items");
    CHECK(gst[1] == GEMM_STATUS_INVALID_LEADING_DIM, "grouped bad item: %d", gst[1]);
    for (int x = 0; x < 64; x++) CHECK(gc[1][x] == -3.0f, "refused item's C changed");
    for (int i = 0; i < 3; i += 2) {
        size_t m = dims[i][0], n = dims[i][1], k = dims[i][2];
        for (size_t r = 0; r < m; r++)
            for (size_t col = 0; col < n; col++) {
                double want = 0;
                for (size_t l = 0; l < k; l++) want += (double)ga[i][r * k + l] * gb[i][l * n + col];
                CHECK(fabs(gc[i][r * n + col] - 2.0 * want) < 1e-5, "grouped item %d", i);
            }
    }
    for (int i = 0; i < 3; i++) { free(ga[i]); free(gb[i]); free(gc[i]); }
}

static void check_bad_input(gemm_context_t *ctx) {
    float a[64], b[64], c[64];
    for (int i = 0; i < 64; i++) { a[i] = b[i] = 1.0f; c[i] = 5.0f; }
    gemm_problem_t good = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_F32, GEMM_DTYPE_F32, GEMM_DTYPE_F32,
                           8, 8, 8, 8, 8, 8, 1.0f, 0.0f, GEMM_MATH_DEFAULT};
    gemm_problem_t p;
    CHECK(gemm_run(NULL, &good, a, b, c) == GEMM_STATUS_NULL_POINTER, "NULL ctx");
    CHECK(gemm_run(ctx, NULL, a, b, c) == GEMM_STATUS_NULL_POINTER, "NULL problem");
    CHECK(gemm_run(ctx, &good, NULL, b, c) == GEMM_STATUS_NULL_POINTER, "NULL a");
    CHECK(gemm_run(ctx, &good, a, b, NULL) == GEMM_STATUS_NULL_POINTER, "NULL c");
    CHECK(strlen(gemm_last_error_message()) > 0, "an error message is kept");
    p = good; p.lda = 7;
    CHECK(gemm_run(ctx, &p, a, b, c) == GEMM_STATUS_INVALID_LEADING_DIM, "lda too small");
    p = good; p.m = SIZE_MAX / 2; p.lda = SIZE_MAX / 2;
    CHECK(gemm_run(ctx, &p, a, b, c) == GEMM_STATUS_SIZE_OVERFLOW, "overflow");
    p = good; p.a_type = 99;
    CHECK(gemm_run(ctx, &p, a, b, c) == GEMM_STATUS_INVALID_VALUE, "bad dtype");
    p = good; p.layout = 7;
    CHECK(gemm_run(ctx, &p, a, b, c) == GEMM_STATUS_INVALID_VALUE, "bad layout");
    p = good; p.c_type = GEMM_DTYPE_BF16;
    CHECK(gemm_run(ctx, &p, a, b, c) == GEMM_STATUS_UNSUPPORTED_DTYPE, "f32 x f32 -> bf16");
    p = good; p.a_type = GEMM_DTYPE_FP8_E4M3; p.b_type = GEMM_DTYPE_FP8_E4M3FNUZ;
    CHECK(gemm_run(ctx, &p, a, b, c) == GEMM_STATUS_UNSUPPORTED_DTYPE, "mixed fp8 flavours");
    CHECK(gemm_run(ctx, &good, (char *)a + 1, b, c) == GEMM_STATUS_MISALIGNED, "misaligned a");
    for (int i = 0; i < 64; i++) CHECK(c[i] == 5.0f, "C changed by a refused call at %d", i);
    /* Empty problems need no buffers at all. */
    p = good; p.m = 0;
    CHECK(gemm_run(ctx, &p, NULL, b, NULL) == GEMM_STATUS_SUCCESS, "m = 0 with NULL a and c");
    gemm_status_t st[2];
    CHECK(gemm_strided_batched(ctx, &good, a, 0, b, 0, c, 8, 2, st) == GEMM_STATUS_OVERLAPPING_OUTPUTS, "overlap");
    size_t count = 0;
    CHECK(gemm_device_count(ctx, NULL) == GEMM_STATUS_NULL_POINTER, "NULL out");
    CHECK(gemm_device_count(ctx, &count) == GEMM_STATUS_SUCCESS && count >= 1, "device count");
    gemm_device_info_t info;
    CHECK(gemm_device_info(ctx, count, &info) == GEMM_STATUS_NO_SUCH_DEVICE, "device index out of range");
    gemm_context_t *bad = NULL;
    CHECK(gemm_context_create("gpu:9", &bad) == GEMM_STATUS_DEVICE_SELECTION && bad == NULL, "bad device list");
    CHECK(gemm_context_create(NULL, NULL) == GEMM_STATUS_NULL_POINTER, "NULL out handle");
    CHECK(gemm_context_destroy(NULL) == GEMM_STATUS_SUCCESS, "destroy NULL");
    for (int st_ = 0; st_ <= 14; st_++) CHECK(gemm_status_string(st_) != NULL, "status string %d", st_);
    CHECK(strcmp(gemm_status_string(-1), "unknown status") == 0, "unknown status");
}

/* Tensor parallelism: one GEMM split over every device of the context by each plan, f32 or bf16
 * inputs, f32 or bf16 output, with padded leading dimensions; the padding must keep its values. */
static const gemm_tp_plan_t plans[3] = {GEMM_TP_COLUMN, GEMM_TP_ROW_REDUCE_SCATTER, GEMM_TP_ROW_ALL_REDUCE};

static float load(const void *x, gemm_dtype_t t, size_t i) {
    return t == GEMM_DTYPE_BF16 ? from_bf16(((const uint16_t *)x)[i]) : ((const float *)x)[i];
}
static void store(void *x, gemm_dtype_t t, size_t i, float v) {
    if (t == GEMM_DTYPE_BF16) ((uint16_t *)x)[i] = to_bf16(v);
    else ((float *)x)[i] = v;
}

static void check_tp(gemm_context_t *ctx, gemm_tp_plan_t plan, size_t m, size_t n, size_t k, gemm_layout_t layout,
                     gemm_transpose_t ta, gemm_transpose_t tb, size_t pad, float alpha, float beta, gemm_dtype_t in,
                     gemm_dtype_t out) {
    storage_t st = storage(m, n, k, layout, ta, tb, pad);
    size_t lda = st.lda, ldb = st.ldb, ldc = st.ldc, na = st.na, nb = st.nb, nc = st.nc;
    void *a = malloc((na + 1) * 4), *b = malloc((nb + 1) * 4), *c = malloc((nc + 1) * 4), *c0 = malloc((nc + 1) * 4);
    for (size_t i = 0; i < na; i++) store(a, in, i, rnd());
    for (size_t i = 0; i < nb; i++) store(b, in, i, rnd());
    for (size_t i = 0; i < nc; i++) store(c, out, i, rnd());
    memcpy(c0, c, nc * (out == GEMM_DTYPE_BF16 ? 2 : 4));
    gemm_problem_t p = {layout, ta, tb, in, in, out, m, n, k, lda, ldb, ldc, alpha, beta, GEMM_MATH_DEFAULT};
    gemm_status_t s = gemm_tensor_parallel(ctx, plan, &p, a, b, c);
    CHECK(s == GEMM_STATUS_SUCCESS, "tp plan %u %zux%zux%zu layout %u ta %u tb %u in %u out %u: %s", plan, m, n, k,
          layout, ta, tb, in, out, gemm_status_string(s));
    /* Every stored element of C: inside m x n it is the GEMM, in the padding it is unchanged. */
    size_t rows = layout == GEMM_ROW_MAJOR ? m : n;
    for (size_t r = 0; r < rows; r++)
        for (size_t x = 0; x < ldc && r * ldc + x < nc; x++) {
            size_t idx = r * ldc + x;
            size_t i = layout == GEMM_ROW_MAJOR ? r : x, j = layout == GEMM_ROW_MAJOR ? x : r;
            float got = load(c, out, idx);
            if (i >= m || j >= n) {
                CHECK(got == load(c0, out, idx), "tp plan %u: padding at %zu changed", plan, idx);
                continue;
            }
            double want = 0.0, mag = 0.0;
            for (size_t l = 0; l < k; l++) {
                double ail = ta == GEMM_TRANS ? load(a, in, at(layout, l, i, lda)) : load(a, in, at(layout, i, l, lda));
                double blj = tb == GEMM_TRANS ? load(b, in, at(layout, j, l, ldb)) : load(b, in, at(layout, l, j, ldb));
                want += ail * blj;
                mag += fabs(ail * blj);
            }
            want *= alpha; mag *= fabs(alpha);
            if (beta != 0.0f) { want += beta * (double)load(c0, out, idx); mag += fabs(beta * load(c0, out, idx)); }
            /* f32 sums of exact products; a bf16 output is rounded once more. */
            double tol = 1e-6 * (k + 4) * mag + 1e-30 + (out == GEMM_DTYPE_BF16 ? 0.0079 * fabs(want) : 0.0);
            CHECK(fabs(got - want) <= tol, "tp plan %u in %u out %u layout %u ta %u tb %u %zux%zux%zu: C[%zu][%zu] = %g, want %g",
                  plan, in, out, layout, ta, tb, m, n, k, i, j, got, want);
        }
    free(a); free(b); free(c); free(c0);
}

static void check_tensor_parallel(gemm_context_t *ctx) {
    int resident = -1;
    CHECK(gemm_tensor_parallel_route(ctx, &resident) == GEMM_STATUS_SUCCESS && resident == 0,
          "host devices run tensor parallelism over host memory: %d", resident);
    /* n and k smaller than the device count leave some devices without work. */
    size_t shapes[4][3] = {{17, 31, 5}, {5, 2, 2}, {16, 9, 0}, {0, 4, 4}};
    for (int pl = 0; pl < 3; pl++)
        for (int s = 0; s < 4; s++)
            for (gemm_layout_t l = 0; l < 2; l++)
                for (gemm_transpose_t ta = 0; ta < 2; ta++)
                    for (gemm_transpose_t tb = 0; tb < 2; tb++) {
                        size_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                        check_tp(ctx, plans[pl], m, n, k, l, ta, tb, 0, 1.0f, 0.0f, GEMM_DTYPE_F32, GEMM_DTYPE_F32);
                        check_tp(ctx, plans[pl], m, n, k, l, ta, tb, 3, -0.5f, 2.0f, GEMM_DTYPE_F32, GEMM_DTYPE_F32);
                        check_tp(ctx, plans[pl], m, n, k, l, ta, tb, 2, 1.5f, -0.5f, GEMM_DTYPE_BF16, GEMM_DTYPE_F32);
                        check_tp(ctx, plans[pl], m, n, k, l, ta, tb, 1, 0.75f, 0.5f, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16);
                    }

    /* Bad input: typed statuses, a message, and C untouched. */
    float a[64], b[64], c[64];
    for (int i = 0; i < 64; i++) { a[i] = b[i] = 1.0f; c[i] = 5.0f; }
    gemm_problem_t good = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_F32, GEMM_DTYPE_F32, GEMM_DTYPE_F32,
                           8, 8, 8, 8, 8, 8, 1.0f, 0.0f, GEMM_MATH_DEFAULT};
    gemm_problem_t p;
    for (int pl = 0; pl < 3; pl++) {
        gemm_tp_plan_t plan = plans[pl];
        CHECK(gemm_tensor_parallel(NULL, plan, &good, a, b, c) == GEMM_STATUS_NULL_POINTER, "tp NULL ctx");
        CHECK(gemm_tensor_parallel(ctx, plan, NULL, a, b, c) == GEMM_STATUS_NULL_POINTER, "tp NULL problem");
        CHECK(gemm_tensor_parallel(ctx, plan, &good, NULL, b, c) == GEMM_STATUS_NULL_POINTER, "tp NULL a");
        CHECK(gemm_tensor_parallel(ctx, plan, &good, a, NULL, c) == GEMM_STATUS_NULL_POINTER, "tp NULL b");
        CHECK(gemm_tensor_parallel(ctx, plan, &good, a, b, NULL) == GEMM_STATUS_NULL_POINTER, "tp NULL c");
        CHECK(strstr(gemm_last_error_message(), "NULL") != NULL, "tp NULL message: %s", gemm_last_error_message());
        p = good; p.lda = 7;
        CHECK(gemm_tensor_parallel(ctx, plan, &p, a, b, c) == GEMM_STATUS_INVALID_LEADING_DIM, "tp lda too small");
        p = good; p.ldc = 4;
        CHECK(gemm_tensor_parallel(ctx, plan, &p, a, b, c) == GEMM_STATUS_INVALID_LEADING_DIM, "tp ldc too small");
        p = good; p.m = SIZE_MAX / 2; p.lda = SIZE_MAX / 2;
        CHECK(gemm_tensor_parallel(ctx, plan, &p, a, b, c) == GEMM_STATUS_SIZE_OVERFLOW, "tp overflow");
        p = good; p.trans_b = 2;
        CHECK(gemm_tensor_parallel(ctx, plan, &p, a, b, c) == GEMM_STATUS_INVALID_VALUE, "tp bad transpose");
        p = good; p.c_type = GEMM_DTYPE_BF16;
        CHECK(gemm_tensor_parallel(ctx, plan, &p, a, b, c) == GEMM_STATUS_UNSUPPORTED_DTYPE, "tp f32 x f32 -> bf16");
        CHECK(gemm_tensor_parallel(ctx, plan, &good, a, b, (char *)c + 2) == GEMM_STATUS_MISALIGNED, "tp misaligned c");
        p = good; p.beta = 1.0f;
        CHECK(gemm_tensor_parallel(ctx, plan, &p, a, (char *)b + 1, c) == GEMM_STATUS_MISALIGNED, "tp misaligned b");
    }
    gemm_tp_plan_t bad_plans[3] = {3, 77, UINT32_MAX};
    for (int i = 0; i < 3; i++) {
        CHECK(gemm_tensor_parallel(ctx, bad_plans[i], &good, a, b, c) == GEMM_STATUS_INVALID_VALUE, "tp plan %u",
              bad_plans[i]);
        CHECK(strstr(gemm_last_error_message(), "plan") != NULL, "tp bad plan message: %s", gemm_last_error_message());
    }
    for (int i = 0; i < 64; i++) CHECK(c[i] == 5.0f, "C changed by a refused tensor-parallel call at %d", i);
    /* Empty problems need no buffers; a success clears the message. */
    p = good; p.n = 0;
    CHECK(gemm_tensor_parallel(ctx, GEMM_TP_COLUMN, &p, a, NULL, NULL) == GEMM_STATUS_SUCCESS, "tp n = 0");
    CHECK(strlen(gemm_last_error_message()) == 0, "success clears the message");
    CHECK(gemm_tensor_parallel_route(NULL, &resident) == GEMM_STATUS_NULL_POINTER, "route NULL ctx");
    CHECK(gemm_tensor_parallel_route(ctx, NULL) == GEMM_STATUS_NULL_POINTER, "route NULL out");
}

int main(void) {
    const char *specs[2] = {"host", "host,host,host"};
    for (int d = 0; d < 2; d++) {
        gemm_context_t *ctx = NULL;
        CHECK(gemm_context_create(specs[d], &ctx) == GEMM_STATUS_SUCCESS && ctx != NULL, "create %s", specs[d]);
        size_t count = 0;
        gemm_device_count(ctx, &count);
        CHECK(count == (size_t)(d == 0 ? 1 : 3), "device count %zu", count);
        gemm_device_info_t info;
        CHECK(gemm_device_info(ctx, 0, &info) == GEMM_STATUS_SUCCESS && info.kind == GEMM_DEVICE_HOST, "device info");
        CHECK(strncmp(info.name, "host:", 5) == 0, "device name %s", info.name);
        size_t shapes[4][3] = {{1, 1, 1}, {17, 31, 5}, {16, 9, 0}, {0, 4, 4}};
        for (int s = 0; s < 4; s++)
            for (gemm_layout_t l = 0; l < 2; l++)
                for (gemm_transpose_t ta = 0; ta < 2; ta++)
                    for (gemm_transpose_t tb = 0; tb < 2; tb++) {
                        check_f32(ctx, shapes[s][0], shapes[s][1], shapes[s][2], l, ta, tb, 0, 1.0f, 0.0f);
                        check_f32(ctx, shapes[s][0], shapes[s][1], shapes[s][2], l, ta, tb, 3, -0.5f, 2.0f);
                    }
        check_bf16(ctx);
        check_batches(ctx);
        check_bad_input(ctx);
        check_tensor_parallel(ctx);
        CHECK(gemm_context_destroy(ctx) == GEMM_STATUS_SUCCESS, "destroy");
    }
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("C ABI: all checks passed\n");
    return 0;
}
