/* The tensor-parallel C ABI as a pipeline of one process per GPU calls it: this program forks
 * two ranks, each with one emulated GPU of the HIP runtime named by GEMM_HIP_LIBRARY whose RCCL
 * talks over TCP (`nccl=tcp` in GEMM_EMU_HIP, set by tests/tests/c_abi.rs). Rank 0 makes the
 * unique id with gemm_tp_unique_id and writes it to a file (written then renamed), rank 1 reads
 * it: the only thing the ranks share besides the communicator. Both create a group and run, on
 * odd shapes and on the caller's own stream and hipMalloc'd memory:
 *   - gemm_tp_row_device, all-reduce and reduce-scatter (K split 26 + 25, f32 partials),
 *   - gemm_tp_column_device (N split 15 + 14, W stored transposed), the shard and the gathered Y,
 *   - gemm_tp_mlp_device with ReLU fused into the up projection (ffn width 32 split 16 + 16),
 * each checked against a host reference of the whole layer computed here in double. Then the
 * refusals: NULL pointers, a rank out of range, bad ids, a bad options size, bad enum values,
 * host memory as device memory: each its GEMM_STATUS_*, no output handle or device memory
 * written, no kernel launched; and an aborted group answers GEMM_STATUS_TP_ABORTED.
 *
 * The parent waits for both ranks under a deadline and kills them past it, so a hang fails
 * instead of blocking CI; each rank also arms alarm(). Exit status 0 = pass. */
#define _POSIX_C_SOURCE 200809L
#define TEST_SEED 0x9e3779b9u
#include "check.h"

#include <dlfcn.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int (*hipMalloc_t)(void **, size_t);
typedef int (*hipFree_t)(void *);
typedef int (*hipMemcpy_t)(void *, const void *, size_t, int);
typedef int (*hipStreamCreate_t)(void **);
typedef int (*hipStreamDestroy_t)(void *);
typedef int (*hipStreamSynchronize_t)(void *);
typedef unsigned long long (*counter_t)(int, const char *);
enum { H2D = 1, D2H = 2 };

static hipMalloc_t hMalloc;
static hipFree_t hFree;
static hipMemcpy_t hMemcpy;
static hipStreamCreate_t hStreamCreate;
static hipStreamDestroy_t hStreamDestroy;
static hipStreamSynchronize_t hStreamSynchronize;
static counter_t counter;

static void *sym(void *lib, const char *name) {
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "missing %s in the HIP runtime\n", name);
        exit(2);
    }
    return p;
}

static unsigned long long launches(void) { return counter(0, "launches"); }

enum { NRANKS = 2 };
/* Row plan: Y (M x NR) = X (M x KR) W (KR x NR), K split over the ranks. */
enum { M = 37, NR = 23, KR = 51 };
/* Column plan: Y (M x NC) = X (M x KC) W (KC x NC), N split; W stored transposed (NC x KC). */
enum { NC = 29, KC = 40 };
static const size_t k_first[NRANKS + 1] = {0, 26, 51};  /* rank r has K rows k_first[r]..k_first[r+1] */
static const size_t n_first[NRANKS + 1] = {0, 15, 29};  /* rank r has N columns n_first[r]..n_first[r+1] */

/* MLP plan: H = relu(X W_up) (X is the column plan's M x KC), Y (M x KC) = H W_down, the ffn
 * width FF split 16 + 16 (a multiple of 8 per rank: the fused kernels' alignment). */
enum { FF = 32, FR = FF / NRANKS };
static uint16_t xr[M * KR], wr[KR * NR], xc[M * KC], wct[NC * KC], wup[KC * FF], wdn[FF * KC];

static gemm_problem_t problem(size_t m, size_t n, size_t k, size_t lda, size_t ldb, size_t ldc, gemm_transpose_t tb) {
    gemm_problem_t p = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, tb, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16, GEMM_DTYPE_F32, m, n, k,
                        lda, ldb, ldc, 1.0f, 0.0f, GEMM_MATH_DEFAULT};
    return p;
}

/* Entry (i, j) of the whole row-plan layer, in double, and the sum of the magnitudes. */
static double row_ref(size_t i, size_t j, double *mag) {
    double s = 0;
    *mag = 0;
    for (size_t l = 0; l < KR; l++) {
        double t = (double)from_bf16(xr[i * KR + l]) * from_bf16(wr[l * NR + j]);
        s += t;
        *mag += fabs(t);
    }
    return s;
}

static double col_ref(size_t i, size_t j, double *mag) {
    double s = 0;
    *mag = 0;
    for (size_t l = 0; l < KC; l++) {
        double t = (double)from_bf16(xc[i * KC + l]) * from_bf16(wct[j * KC + l]);
        s += t;
        *mag += fabs(t);
    }
    return s;
}

static int close_to(float got, double want, double mag) { return fabs(got - want) <= 1e-5 * mag + 1e-6; }

static void *device_copy(const void *host, size_t bytes) {
    void *d = NULL;
    CHECK(hMalloc(&d, bytes) == 0, "hipMalloc %zu", bytes);
    if (host) CHECK(hMemcpy(d, host, bytes, H2D) == 0, "upload");
    return d;
}

static void fill(float *v, size_t n, float x) {
    for (size_t i = 0; i < n; i++) v[i] = x;
}

/* Rank 0 publishes the id, the other rank waits for the file (at most 30 s). */
static int exchange_id(gemm_context_t *ctx, const char *dir, int rank, uint8_t id[GEMM_TP_UNIQUE_ID_BYTES]) {
    char path[512], tmp[520];
    snprintf(path, sizeof path, "%s/unique_id", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (rank == 0) {
        gemm_status_t st = gemm_tp_unique_id(ctx, 0, id);
        CHECK(st == GEMM_STATUS_SUCCESS, "gemm_tp_unique_id: %s", gemm_status_string(st));
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(id, 1, GEMM_TP_UNIQUE_ID_BYTES, f) != GEMM_TP_UNIQUE_ID_BYTES || fclose(f) != 0) {
            fprintf(stderr, "cannot write %s\n", tmp);
            return 0;
        }
        return rename(tmp, path) == 0;
    }
    for (int tries = 0; tries < 6000; tries++) {
        FILE *f = fopen(path, "rb");
        if (f) {
            size_t got = fread(id, 1, GEMM_TP_UNIQUE_ID_BYTES, f);
            fclose(f);
            if (got == GEMM_TP_UNIQUE_ID_BYTES) return 1;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "rank %d: no unique id in %s\n", rank, path);
    return 0;
}

/* The refusals of group creation, before the real group exists: each status, `out` untouched. */
static void creation_refusals(gemm_context_t *ctx, const uint8_t id[GEMM_TP_UNIQUE_ID_BYTES]) {
    gemm_tp_group_t *sentinel = (gemm_tp_group_t *)(uintptr_t)0x5a5a;
    gemm_tp_group_t *out = sentinel;
    gemm_tp_options_t opts;
    CHECK(gemm_tp_options_init(&opts) == GEMM_STATUS_SUCCESS, "gemm_tp_options_init");
    CHECK(opts.size == sizeof opts && opts.chunks >= 1 && opts.timeout_ms > 0, "defaults");
    CHECK(gemm_tp_options_init(NULL) == GEMM_STATUS_NULL_POINTER, "options_init(NULL)");
    uint8_t zeros[GEMM_TP_UNIQUE_ID_BYTES] = {0}, damaged[GEMM_TP_UNIQUE_ID_BYTES];
    memcpy(damaged, id, sizeof damaged);
    damaged[20] ^= 0x40;
    gemm_tp_options_t bad_size = opts;
    bad_size.size = sizeof opts - 8;
    struct {
        const char *what;
        gemm_status_t got, want;
    } cases[16];
    int nc = 0;
#define CASE(label, call, expected) cases[nc++] = (__typeof__(cases[0])){label, call, expected}
    CASE("NULL ctx", gemm_tp_group_create(NULL, 0, id, NRANKS, 0, &out), GEMM_STATUS_NULL_POINTER);
    CASE("NULL id", gemm_tp_group_create(ctx, 0, NULL, NRANKS, 0, &out), GEMM_STATUS_NULL_POINTER);
    CASE("NULL out", gemm_tp_group_create(ctx, 0, id, NRANKS, 0, NULL), GEMM_STATUS_NULL_POINTER);
    CASE("rank 2 of 2", gemm_tp_group_create(ctx, 0, id, NRANKS, 2, &out), GEMM_STATUS_TP_RANK_OUT_OF_RANGE);
    CASE("rank 0 of 0", gemm_tp_group_create(ctx, 0, id, 0, 0, &out), GEMM_STATUS_TP_RANK_OUT_OF_RANGE);
    CASE("zero id", gemm_tp_group_create(ctx, 0, zeros, 1, 0, &out), GEMM_STATUS_TP_BAD_UNIQUE_ID);
    CASE("damaged id", gemm_tp_group_create(ctx, 0, damaged, 1, 0, &out), GEMM_STATUS_TP_BAD_UNIQUE_ID);
    CASE("options of another size", gemm_tp_group_create_with(ctx, 0, id, NRANKS, 0, &bad_size, &out),
         GEMM_STATUS_INVALID_VALUE);
    CASE("no device 3", gemm_tp_group_create(ctx, 3, id, NRANKS, 0, &out), GEMM_STATUS_NO_SUCH_DEVICE);
    CASE("from_comm: NULL comm", gemm_tp_group_from_comm(ctx, 0, NULL, NULL, &out), GEMM_STATUS_NULL_POINTER);
    CASE("from_comm: NULL ctx", gemm_tp_group_from_comm(NULL, 0, NULL, NULL, &out), GEMM_STATUS_NULL_POINTER);
    uint8_t idbuf[GEMM_TP_UNIQUE_ID_BYTES];
    memset(idbuf, 0xAB, sizeof idbuf);
    CASE("unique_id: NULL ctx", gemm_tp_unique_id(NULL, 0, idbuf), GEMM_STATUS_NULL_POINTER);
    CASE("unique_id: NULL out", gemm_tp_unique_id(ctx, 0, NULL), GEMM_STATUS_NULL_POINTER);
    CASE("unique_id: no device 3", gemm_tp_unique_id(ctx, 3, idbuf), GEMM_STATUS_NO_SUCH_DEVICE);
#undef CASE
    for (int i = 0; i < nc; i++)
        CHECK(cases[i].got == cases[i].want, "%s: got %d (%s), want %d", cases[i].what, cases[i].got,
              gemm_status_string(cases[i].got), cases[i].want);
    CHECK(out == sentinel, "a refused create wrote its output handle");
    for (size_t i = 0; i < sizeof idbuf; i++) CHECK(idbuf[i] == 0xAB, "a refused unique_id wrote byte %zu", i);
    CHECK(strlen(gemm_last_error_message()) > 0, "a refusal leaves a message");
    for (int st = GEMM_STATUS_TP_BAD_UNIQUE_ID; st <= GEMM_STATUS_TP_COMM_ERROR; st++)
        CHECK(strcmp(gemm_status_string(st), gemm_status_string(-1)) != 0, "status %d has no string", st);
}

/* The row plan, all-reduce then reduce-scatter: this rank's K slice of X and W. */
static void row_plan(gemm_tp_group_t *g, void *s, int rank) {
    const size_t k0 = k_first[rank], kr = k_first[rank + 1] - k0;
    static uint16_t xs[M * KR], ws[KR * NR];
    for (size_t i = 0; i < M; i++)
        for (size_t l = 0; l < kr; l++) xs[i * kr + l] = xr[i * KR + k0 + l];
    memcpy(ws, wr + k0 * NR, kr * NR * 2);
    void *dx = device_copy(xs, M * kr * 2), *dw = device_copy(ws, kr * NR * 2);
    static float y[M * NR], y0[M * NR];
    fill(y0, M * NR, -3.5f);
    void *dy = device_copy(y0, sizeof y0);
    gemm_problem_t p = problem(M, NR, kr, kr, NR, NR, GEMM_NO_TRANS);

    gemm_status_t st = gemm_tp_row_device(g, s, &p, dx, dw, dy, GEMM_TP_ALL_REDUCE);
    CHECK(st == GEMM_STATUS_SUCCESS, "rank %d: gemm_tp_row_device all-reduce: %s", rank, gemm_status_string(st));
    CHECK(hMemcpy(y, dy, sizeof y, D2H) == 0, "read Y");
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < NR; j++) {
            double mag, want = row_ref(i, j, &mag);
            CHECK(close_to(y[i * NR + j], want, mag), "rank %d all-reduce Y[%zu][%zu] = %g, want %g", rank, i, j,
                  y[i * NR + j], want);
        }

    size_t first = 99, count = 99;
    CHECK(gemm_tp_scatter_rows(g, M, (size_t)rank, &first, &count) == GEMM_STATUS_SUCCESS, "scatter_rows");
    size_t total = 0, next = 0;
    for (size_t r = 0; r < NRANKS; r++) {
        size_t f = 0, c = 0;
        CHECK(gemm_tp_scatter_rows(g, M, r, &f, &c) == GEMM_STATUS_SUCCESS, "scatter_rows %zu", r);
        CHECK(f == next, "rank %zu's rows start at %zu, not %zu", r, f, next);
        next = f + c;
        total += c;
    }
    CHECK(total == M, "the scattered rows cover %zu of %d", total, M);
    CHECK(hMemcpy(dy, y0, sizeof y0, H2D) == 0, "reset Y");
    st = gemm_tp_row_device(g, s, &p, dx, dw, dy, GEMM_TP_REDUCE_SCATTER);
    CHECK(st == GEMM_STATUS_SUCCESS, "rank %d: gemm_tp_row_device reduce-scatter: %s", rank, gemm_status_string(st));
    CHECK(hMemcpy(y, dy, sizeof y, D2H) == 0, "read Y");
    for (size_t i = 0; i < count && first + i < M; i++)
        for (size_t j = 0; j < NR; j++) {
            double mag, want = row_ref(first + i, j, &mag);
            CHECK(close_to(y[i * NR + j], want, mag), "rank %d reduce-scatter Y[%zu][%zu] = %g, want %g", rank,
                  first + i, j, y[i * NR + j], want);
        }
    for (size_t i = count * NR; i < M * NR; i++) CHECK(y[i] == -3.5f, "reduce-scatter wrote Y[%zu] past its rows", i);

    /* Refusals of the row call: the status, nothing launched, Y untouched. */
    CHECK(hMemcpy(dy, y0, sizeof y0, H2D) == 0, "reset Y");
    CHECK(hStreamSynchronize(s) == 0, "sync");
    unsigned long long before = launches();
    float host_buf[4] = {0};
    struct {
        const char *what;
        gemm_status_t got, want;
    } cases[8];
    int nc = 0;
#define CASE(label, call, expected) cases[nc++] = (__typeof__(cases[0])){label, call, expected}
    CASE("NULL group", gemm_tp_row_device(NULL, s, &p, dx, dw, dy, GEMM_TP_ALL_REDUCE), GEMM_STATUS_NULL_POINTER);
    CASE("NULL problem", gemm_tp_row_device(g, s, NULL, dx, dw, dy, GEMM_TP_ALL_REDUCE), GEMM_STATUS_NULL_POINTER);
    CASE("NULL x", gemm_tp_row_device(g, s, &p, NULL, dw, dy, GEMM_TP_ALL_REDUCE), GEMM_STATUS_NULL_POINTER);
    CASE("NULL y", gemm_tp_row_device(g, s, &p, dx, dw, NULL, GEMM_TP_ALL_REDUCE), GEMM_STATUS_NULL_POINTER);
    CASE("reduce 7", gemm_tp_row_device(g, s, &p, dx, dw, dy, 7), GEMM_STATUS_INVALID_VALUE);
    CASE("host memory as w", gemm_tp_row_device(g, s, &p, dx, host_buf, dy, GEMM_TP_ALL_REDUCE),
         GEMM_STATUS_NOT_DEVICE_MEMORY);
    CASE("scatter_rows: NULL first", gemm_tp_scatter_rows(g, M, 0, NULL, &count), GEMM_STATUS_NULL_POINTER);
    CASE("rank: NULL group", gemm_tp_group_rank(NULL, &first, &count), GEMM_STATUS_NULL_POINTER);
#undef CASE
    for (int i = 0; i < nc; i++)
        CHECK(cases[i].got == cases[i].want, "rank %d, %s: got %d (%s), want %d", rank, cases[i].what, cases[i].got,
              gemm_status_string(cases[i].got), cases[i].want);
    CHECK(hStreamSynchronize(s) == 0, "sync");
    CHECK(launches() == before, "refused calls launched %llu kernel(s)", launches() - before);
    CHECK(hMemcpy(y, dy, sizeof y, D2H) == 0, "read Y");
    for (size_t i = 0; i < M * NR; i++) CHECK(y[i] == -3.5f, "a refused call wrote Y[%zu]", i);
    CHECK(hFree(dx) == 0 && hFree(dw) == 0 && hFree(dy) == 0, "free");
}

/* The column plan: this rank's columns of W (stored transposed: its rows of W^T). */
static void column_plan(gemm_tp_group_t *g, void *s, int rank) {
    const size_t n0 = n_first[rank], nr = n_first[rank + 1] - n0;
    void *dx = device_copy(xc, sizeof xc), *dw = device_copy(wct + n0 * KC, nr * KC * 2);
    static float shard[M * NC], all[M * NC], y0[M * NC];
    fill(y0, M * NC, 7.25f);
    void *dshard = device_copy(y0, M * nr * 4), *dall = device_copy(y0, sizeof y0);
    gemm_problem_t p = problem(M, nr, KC, KC, KC, nr, GEMM_TRANS);
    gemm_status_t st = gemm_tp_column_device(g, s, &p, dx, dw, dshard, dall);
    CHECK(st == GEMM_STATUS_SUCCESS, "rank %d: gemm_tp_column_device: %s", rank, gemm_status_string(st));
    CHECK(hMemcpy(shard, dshard, M * nr * 4, D2H) == 0 && hMemcpy(all, dall, sizeof all, D2H) == 0, "read Y");
    for (size_t i = 0; i < M; i++) {
        for (size_t j = 0; j < nr; j++) {
            double mag, want = col_ref(i, n0 + j, &mag);
            CHECK(close_to(shard[i * nr + j], want, mag), "rank %d shard Y[%zu][%zu] = %g, want %g", rank, i, n0 + j,
                  shard[i * nr + j], want);
        }
        for (size_t j = 0; j < NC; j++) {
            double mag, want = col_ref(i, j, &mag);
            CHECK(close_to(all[i * NC + j], want, mag), "rank %d gathered Y[%zu][%zu] = %g, want %g", rank, i, j,
                  all[i * NC + j], want);
        }
    }
    /* The shard alone (no gather). */
    CHECK(hMemcpy(dshard, y0, M * nr * 4, H2D) == 0, "reset");
    st = gemm_tp_column_device(g, s, &p, dx, dw, dshard, NULL);
    CHECK(st == GEMM_STATUS_SUCCESS, "rank %d: gemm_tp_column_device, no gather: %s", rank, gemm_status_string(st));
    CHECK(hMemcpy(shard, dshard, M * nr * 4, D2H) == 0, "read Y");
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < nr; j++) {
            double mag, want = col_ref(i, n0 + j, &mag);
            CHECK(close_to(shard[i * nr + j], want, mag), "rank %d shard (no gather) Y[%zu][%zu]", rank, i, n0 + j);
        }

    /* Refusals: statuses, Y untouched. */
    CHECK(hMemcpy(dshard, y0, M * nr * 4, H2D) == 0 && hMemcpy(dall, y0, sizeof y0, H2D) == 0, "reset");
    CHECK(hStreamSynchronize(s) == 0, "sync");
    unsigned long long before = launches();
    gemm_problem_t q = p;
    q.ldc = nr - 1;
    CHECK(gemm_tp_column_device(NULL, s, &p, dx, dw, dshard, dall) == GEMM_STATUS_NULL_POINTER, "NULL group");
    CHECK(gemm_tp_column_device(g, s, &p, dx, NULL, dshard, dall) == GEMM_STATUS_NULL_POINTER, "NULL w");
    CHECK(gemm_tp_column_device(g, s, &p, dx, dw, NULL, dall) == GEMM_STATUS_NULL_POINTER, "NULL y_shard");
    CHECK(gemm_tp_column_device(g, s, &q, dx, dw, dshard, dall) == GEMM_STATUS_INVALID_LEADING_DIM, "ldc < n");
    CHECK(hStreamSynchronize(s) == 0, "sync");
    CHECK(launches() == before, "refused calls launched %llu kernel(s)", launches() - before);
    CHECK(hMemcpy(shard, dshard, M * nr * 4, D2H) == 0 && hMemcpy(all, dall, sizeof all, D2H) == 0, "read Y");
    for (size_t i = 0; i < M * nr; i++) CHECK(shard[i] == 7.25f, "a refused call wrote Y_shard[%zu]", i);
    for (size_t i = 0; i < M * NC; i++) CHECK(all[i] == 7.25f, "a refused call wrote Y[%zu]", i);
    CHECK(hFree(dx) == 0 && hFree(dw) == 0 && hFree(dshard) == 0 && hFree(dall) == 0, "free");
}

/* The MLP plan with ReLU fused into the up projection, against a host reference (H rounded to
 * bf16 as the group's workspace holds it; a one-ulp difference in H is within the tolerance, a
 * missing ReLU is not); then a bad activation value is refused and writes nothing. */
static void mlp_plan(gemm_tp_group_t *g, void *s, int rank) {
    const size_t f0 = (size_t)rank * FR;
    static uint16_t up_shard[KC * FR], h[M * FF];
    static float y[M * KC], y0[M * KC];
    for (size_t l = 0; l < KC; l++)
        for (size_t j = 0; j < FR; j++) up_shard[l * FR + j] = wup[l * FF + f0 + j];
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < FF; j++) {
            float acc = 0;
            for (size_t l = 0; l < KC; l++) acc += from_bf16(xc[i * KC + l]) * from_bf16(wup[l * FF + j]);
            h[i * FF + j] = to_bf16(acc > 0 ? acc : 0);
        }
    fill(y0, M * KC, 2.5f);
    void *dx = device_copy(xc, sizeof xc), *du = device_copy(up_shard, sizeof up_shard);
    void *dd = device_copy(wdn + f0 * KC, FR * KC * 2), *dy = device_copy(y0, sizeof y0);
    gemm_problem_t up = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16,
                         GEMM_DTYPE_BF16, M, FR, KC, KC, FR, FR, 1.0f, 0.0f, GEMM_MATH_DEFAULT};
    gemm_problem_t down = {GEMM_ROW_MAJOR, GEMM_NO_TRANS, GEMM_NO_TRANS, GEMM_DTYPE_BF16, GEMM_DTYPE_BF16,
                           GEMM_DTYPE_F32, M, KC, FR, FR, KC, KC, 1.0f, 0.0f, GEMM_MATH_DEFAULT};
    gemm_status_t st = gemm_tp_mlp_device(g, s, &up, &down, dx, du, dd, dy, GEMM_ACTIVATION_RELU);
    CHECK(st == GEMM_STATUS_SUCCESS, "rank %d: gemm_tp_mlp_device: %s", rank, gemm_status_string(st));
    CHECK(hMemcpy(y, dy, sizeof y, D2H) == 0, "read Y");
    for (size_t i = 0; i < M; i++)
        for (size_t c = 0; c < KC; c++) {
            double want = 0, mag = 0;
            for (size_t j = 0; j < FF; j++) {
                double t = (double)from_bf16(h[i * FF + j]) * from_bf16(wdn[j * KC + c]);
                want += t;
                mag += fabs(t);
            }
            CHECK(fabs(y[i * KC + c] - want) <= 1e-2 * mag + 1e-5, "rank %d MLP Y[%zu][%zu] = %g, want %g", rank, i,
                  c, y[i * KC + c], want);
        }
    CHECK(hMemcpy(dy, y0, sizeof y0, H2D) == 0, "reset Y");
    CHECK(gemm_tp_mlp_device(g, s, &up, &down, dx, du, dd, dy, 9) == GEMM_STATUS_INVALID_VALUE, "activation 9");
    CHECK(gemm_tp_mlp_device(g, s, &up, NULL, dx, du, dd, dy, GEMM_ACTIVATION_RELU) == GEMM_STATUS_NULL_POINTER,
          "NULL down");
    CHECK(hMemcpy(y, dy, sizeof y, D2H) == 0, "read Y");
    for (size_t i = 0; i < M * KC; i++) CHECK(y[i] == 2.5f, "a refused MLP call wrote Y[%zu]", i);
    CHECK(hFree(dx) == 0 && hFree(du) == 0 && hFree(dd) == 0 && hFree(dy) == 0, "free");
}

/* Both ranks reach this point before either goes on (a file each, at most 30 s): an abort
 * must not cut a peer's collective that is still receiving. */
static void barrier(const char *dir, int rank, const char *name) {
    char mine[512], theirs[512];
    snprintf(mine, sizeof mine, "%s/%s-%d", dir, name, rank);
    snprintf(theirs, sizeof theirs, "%s/%s-%d", dir, name, 1 - rank);
    FILE *f = fopen(mine, "wb");
    CHECK(f && fclose(f) == 0, "rank %d: cannot write %s", rank, mine);
    for (int tries = 0; tries < 6000; tries++) {
        FILE *t = fopen(theirs, "rb");
        if (t) {
            fclose(t);
            return;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    CHECK(0, "rank %d: rank %d never reached %s", rank, 1 - rank, name);
}

/* An aborted group refuses every later call with GEMM_STATUS_TP_ABORTED and writes nothing. */
static void aborted(gemm_tp_group_t *g, void *s, int rank) {
    CHECK(gemm_tp_group_status(g) == GEMM_STATUS_SUCCESS, "rank %d: status before the abort: %s", rank,
          gemm_last_error_message());
    CHECK(gemm_tp_group_abort(g) == GEMM_STATUS_SUCCESS, "rank %d: abort", rank);
    CHECK(gemm_tp_group_status(g) == GEMM_STATUS_TP_ABORTED, "rank %d: status after the abort", rank);
    const size_t kr = k_first[rank + 1] - k_first[rank];
    static float y[M * NR], y0[M * NR];
    fill(y0, M * NR, 1.5f);
    void *dx = device_copy(NULL, M * KR * 2), *dw = device_copy(NULL, KR * NR * 2), *dy = device_copy(y0, sizeof y0);
    gemm_problem_t p = problem(M, NR, kr, kr, NR, NR, GEMM_NO_TRANS);
    gemm_status_t st = gemm_tp_row_device(g, s, &p, dx, dw, dy, GEMM_TP_ALL_REDUCE);
    CHECK(st == GEMM_STATUS_TP_ABORTED, "rank %d: a call after the abort: %s", rank, gemm_status_string(st));
    CHECK(hMemcpy(y, dy, sizeof y, D2H) == 0, "read Y");
    for (size_t i = 0; i < M * NR; i++) CHECK(y[i] == 1.5f, "a call of an aborted group wrote Y[%zu]", i);
    CHECK(hFree(dx) == 0 && hFree(dw) == 0 && hFree(dy) == 0, "free");
}

static int run_rank(int rank, const char *dir) {
    alarm(90); /* a hang in this rank kills it (the parent's deadline is the other guard) */
    const char *path = getenv("GEMM_HIP_LIBRARY");
    void *lib = path ? dlopen(path, RTLD_NOW | RTLD_GLOBAL) : NULL;
    if (!lib) {
        fprintf(stderr, "rank %d: cannot open GEMM_HIP_LIBRARY (%s)\n", rank, path ? dlerror() : "not set");
        return 2;
    }
#define LOAD(var, name) *(void **)(&var) = sym(lib, name)
    LOAD(hMalloc, "hipMalloc");
    LOAD(hFree, "hipFree");
    LOAD(hMemcpy, "hipMemcpy");
    LOAD(hStreamCreate, "hipStreamCreate");
    LOAD(hStreamDestroy, "hipStreamDestroy");
    LOAD(hStreamSynchronize, "hipStreamSynchronize");
    LOAD(counter, "gemm_emu_hip_counter");
#undef LOAD
    /* Both ranks draw the same data: the whole layer, each takes its slice. */
    for (size_t i = 0; i < M * KR; i++) xr[i] = to_bf16(rnd());
    for (size_t i = 0; i < KR * NR; i++) wr[i] = to_bf16(rnd());
    for (size_t i = 0; i < M * KC; i++) xc[i] = to_bf16(rnd());
    for (size_t i = 0; i < NC * KC; i++) wct[i] = to_bf16(rnd());
    for (size_t i = 0; i < KC * FF; i++) wup[i] = to_bf16(rnd());
    for (size_t i = 0; i < FF * KC; i++) wdn[i] = to_bf16(rnd());

    gemm_context_t *ctx = NULL;
    CHECK(gemm_context_create(NULL, &ctx) == GEMM_STATUS_SUCCESS && ctx, "rank %d: default context", rank);
    if (!ctx) return 1;
    uint8_t id[GEMM_TP_UNIQUE_ID_BYTES];
    if (!exchange_id(ctx, dir, rank, id)) return 1;
    creation_refusals(ctx, id);

    gemm_tp_options_t opts;
    gemm_tp_options_init(&opts);
    opts.timeout_ms = 30000;
    opts.chunks = 3;
    opts.overlap = 1;
    gemm_tp_group_t *g = NULL;
    gemm_status_t st = gemm_tp_group_create_with(ctx, 0, id, NRANKS, (size_t)rank, &opts, &g);
    CHECK(st == GEMM_STATUS_SUCCESS && g, "rank %d: gemm_tp_group_create_with: %s", rank, gemm_status_string(st));
    if (!g) return 1;
    size_t r = 99, n = 99;
    CHECK(gemm_tp_group_rank(g, &r, &n) == GEMM_STATUS_SUCCESS && r == (size_t)rank && n == NRANKS,
          "rank %d: gemm_tp_group_rank says %zu of %zu", rank, r, n);
    CHECK(gemm_tp_group_rank(g, NULL, NULL) == GEMM_STATUS_SUCCESS, "rank with NULL outputs");

    void *s = NULL;
    CHECK(hStreamCreate(&s) == 0, "hipStreamCreate");
    row_plan(g, s, rank);
    column_plan(g, s, rank);
    mlp_plan(g, s, rank);
    barrier(dir, rank, "before-abort");
    aborted(g, s, rank);
    CHECK(gemm_tp_group_destroy(g) == GEMM_STATUS_SUCCESS, "destroy");
    CHECK(gemm_tp_group_destroy(NULL) == GEMM_STATUS_SUCCESS, "destroy(NULL)");
    CHECK(hStreamDestroy(s) == 0, "hipStreamDestroy");
    CHECK(gemm_context_destroy(ctx) == GEMM_STATUS_SUCCESS, "context destroy");
    if (failures) {
        fprintf(stderr, "rank %d: %d check(s) failed\n", rank, failures);
        return 1;
    }
    return 0;
}

int main(void) {
    char dir[] = "/tmp/gemm-tp-c-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    fflush(NULL);
    pid_t pids[NRANKS];
    for (int r = 0; r < NRANKS; r++) {
        pids[r] = fork();
        if (pids[r] < 0) {
            perror("fork");
            return 2;
        }
        if (pids[r] == 0) _exit(run_rank(r, dir));
    }
    /* Wait for both ranks, at most 120 s; kill what is left past it. */
    int ok[NRANKS] = {0}, done[NRANKS] = {0}, left = NRANKS;
    for (int tick = 0; left > 0 && tick < 120 * 100; tick++) {
        for (int r = 0; r < NRANKS; r++) {
            int status = 0;
            if (!done[r] && waitpid(pids[r], &status, WNOHANG) == pids[r]) {
                done[r] = 1;
                left--;
                ok[r] = WIFEXITED(status) && WEXITSTATUS(status) == 0;
                if (!ok[r]) fprintf(stderr, "rank %d failed (wait status %d)\n", r, status);
            }
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        if (left > 0) nanosleep(&ts, NULL);
    }
    for (int r = 0; r < NRANKS; r++)
        if (!done[r]) {
            fprintf(stderr, "rank %d still running after 120 s: killed\n", r);
            kill(pids[r], SIGKILL);
            waitpid(pids[r], NULL, 0);
        }
    const char *files[] = {"unique_id", "before-abort-0", "before-abort-1"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        remove(path);
    }
    rmdir(dir);
    for (int r = 0; r < NRANKS; r++)
        if (!ok[r]) return 1;
    printf("tensor-parallel C ABI, 2 processes over the emulated RCCL's TCP transport: all checks passed\n");
    return 0;
}
