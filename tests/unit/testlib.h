/*
 * libmcp's unit-test harness: a header-only runner with typed asserts and
 * a failing-allocator mode.
 *
 * A test file defines `static void test_x(void)` functions and lists them:
 *
 *     TEST_MAIN(
 *         TEST(test_parse_numbers),
 *         TEST(test_parse_nomem))
 *
 * Each test runs in order; a failed assert ends that test and the run goes
 * on. The program prints `ok NAME` or `FAIL NAME` per test and ends with
 * `FILE: N passed, N failed`; its exit status is non-zero when any failed.
 * The counting allocator is always installed, so every test also fails
 * when it leaks libmcp memory.
 *
 * Failing-allocator loop:
 *
 *     T_NOMEM_LOOP(st, {
 *         st = mcp_json_parse(&doc, text, len, NULL, NULL);
 *     }, { mcp_json_doc_free(doc); });
 *
 * runs the body with the 1st, 2nd, 3rd ... allocation failing until the
 * body succeeds; every failing run must return MCP_ERR_NOMEM and leave no
 * allocation behind; the cleanup block runs after the successful run.
 */
#ifndef MCP_TESTLIB_H
#define MCP_TESTLIB_H

#include "mcp/base.h"

#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- counting, failing allocator ---------------------------------------- */

/* Atomic: libmcp's worker threads allocate too. */
static _Atomic long t_live;    /* allocations not yet freed */
static _Atomic long t_count;   /* allocations since t_fail_reset() */
static _Atomic long t_fail_at; /* fail the n-th allocation (1-based); 0 = never */
static _Atomic long t_failed;  /* allocations refused so far */

typedef struct t_hdr {
    size_t size;   /* user size */
    size_t magic;  /* guards against foreign frees */
} t_hdr;

#define T_MAGIC ((size_t)0x6d6370616c6c6f63ull)

static int t_should_fail(void)
{
    long n = ++t_count;
    long at = t_fail_at;
    if (at && n >= at) {
        t_failed++;
        return 1;
    }
    return 0;
}

static void *t_malloc(size_t size, void *ud)
{
    (void)ud;
    if (t_should_fail())
        return NULL;
    t_hdr *h = (t_hdr *)malloc(sizeof(t_hdr) + size);
    if (!h)
        return NULL;
    h->size = size;
    h->magic = T_MAGIC;
    t_live++;
    return h + 1;
}

static void t_free(void *p, void *ud)
{
    (void)ud;
    if (!p)
        return;
    t_hdr *h = (t_hdr *)p - 1;
    if (h->magic != T_MAGIC) {
        fprintf(stderr, "testlib: free of a pointer libmcp did not allocate\n");
        abort();
    }
    h->magic = 0;
    t_live--;
    free(h);
}

static void *t_realloc(void *p, size_t size, void *ud)
{
    if (!p)
        return t_malloc(size, ud);
    if (t_should_fail())
        return NULL;
    t_hdr *h = (t_hdr *)p - 1;
    if (h->magic != T_MAGIC) {
        fprintf(stderr, "testlib: realloc of a pointer libmcp did not allocate\n");
        abort();
    }
    t_hdr *n = (t_hdr *)realloc(h, sizeof(t_hdr) + size);
    if (!n)
        return NULL;
    n->size = size;
    return n + 1;
}

/* Starts counting allocations from zero; fail the n-th from now (0 = never). */
static void t_fail_reset(long n)
{
    t_count = 0;
    t_failed = 0;
    t_fail_at = n;
}

/* ---- asserts ------------------------------------------------------------ */

static jmp_buf t_jmp;
static int t_cur_failed;
static const char *t_file_name = "tests";

#define T_FAIL_(...)                                                         \
    do {                                                                     \
        fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                    \
        fprintf(stderr, __VA_ARGS__);                                        \
        fprintf(stderr, "\n");                                               \
        t_cur_failed = 1;                                                    \
        longjmp(t_jmp, 1);                                                   \
    } while (0)

#define T_TRUE(c)                                                            \
    do {                                                                     \
        if (!(c))                                                            \
            T_FAIL_("expected true: %s", #c);                                \
    } while (0)

#define T_FALSE(c)                                                           \
    do {                                                                     \
        if (c)                                                               \
            T_FAIL_("expected false: %s", #c);                               \
    } while (0)

#define T_EQ_INT(a, b)                                                       \
    do {                                                                     \
        long long t_a_ = (long long)(a), t_b_ = (long long)(b);              \
        if (t_a_ != t_b_)                                                    \
            T_FAIL_("%s == %s: %lld != %lld", #a, #b, t_a_, t_b_);           \
    } while (0)

#define T_EQ_SIZE(a, b)                                                      \
    do {                                                                     \
        size_t t_a_ = (size_t)(a), t_b_ = (size_t)(b);                       \
        if (t_a_ != t_b_)                                                    \
            T_FAIL_("%s == %s: %zu != %zu", #a, #b, t_a_, t_b_);             \
    } while (0)

#define T_EQ_DBL(a, b)                                                       \
    do {                                                                     \
        double t_a_ = (double)(a), t_b_ = (double)(b);                       \
        if (!(t_a_ == t_b_))                                                 \
            T_FAIL_("%s == %s: %.17g != %.17g", #a, #b, t_a_, t_b_);         \
    } while (0)

#define T_EQ_STR(a, b)                                                       \
    do {                                                                     \
        const char *t_a_ = (a), *t_b_ = (b);                                 \
        if (!t_a_ || !t_b_ || strcmp(t_a_, t_b_) != 0)                       \
            T_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b,                    \
                    t_a_ ? t_a_ : "(null)", t_b_ ? t_b_ : "(null)");         \
    } while (0)

/* Compares n bytes (which may contain NUL). */
#define T_EQ_MEM(a, b, n)                                                    \
    do {                                                                     \
        const void *t_a_ = (a), *t_b_ = (b);                                 \
        if (!t_a_ || !t_b_ || memcmp(t_a_, t_b_, (n)) != 0)                  \
            T_FAIL_("%s == %s: %zu bytes differ", #a, #b, (size_t)(n));      \
    } while (0)

#define T_STATUS(expr, want)                                                 \
    do {                                                                     \
        mcp_status t_s_ = (expr), t_w_ = (want);                             \
        if (t_s_ != t_w_)                                                    \
            T_FAIL_("%s: got %s, want %s", #expr, mcp_status_name(t_s_),     \
                    mcp_status_name(t_w_));                                  \
    } while (0)

#define T_OK(expr) T_STATUS(expr, MCP_OK)

#define T_NULL(p) T_TRUE((p) == NULL)
#define T_NOT_NULL(p) T_TRUE((p) != NULL)

/*
 * Runs `body` (which sets `st`) with allocation 1, 2, 3 ... failing until it
 * succeeds; each failing run must yield MCP_ERR_NOMEM and leak nothing.
 * `cleanup` runs once, after the successful run.
 */
#define T_NOMEM_LOOP(st, body, cleanup)                                      \
    do {                                                                     \
        long t_base_ = t_live;                                               \
        for (long t_n_ = 1;; t_n_++) {                                       \
            t_fail_reset(t_n_);                                              \
            body;                                                            \
            long t_refused_ = t_failed;                                      \
            t_fail_reset(0);                                                 \
            if (t_refused_ == 0) {                                           \
                T_STATUS(st, MCP_OK);                                        \
                break;                                                       \
            }                                                                \
            if (st != MCP_ERR_NOMEM)                                         \
                T_FAIL_("allocation %ld failed: got %s, want MCP_ERR_NOMEM", \
                        t_n_, mcp_status_name(st));                          \
            if (t_live != t_base_)                                           \
                T_FAIL_("allocation %ld failed: %ld allocation(s) leaked",   \
                        t_n_, t_live - t_base_);                             \
            if (t_n_ > 1000000)                                              \
                T_FAIL_("failing-allocator loop did not converge");          \
        }                                                                    \
        cleanup;                                                             \
    } while (0)

/* ---- runner ------------------------------------------------------------- */

typedef struct t_case {
    const char *name; /* function name */
    void (*fn)(void); /* the test */
} t_case;

#define TEST(f) {#f, f}

static int t_run(const char *file, const t_case *cases, size_t n)
{
    static const mcp_allocator a = {t_malloc, t_realloc, t_free, NULL};
    /* Static: they must survive the longjmp out of a failed test. */
    static int passed, failed;
    const char *slash = strrchr(file, '/');
    t_file_name = slash ? slash + 1 : file;
    setvbuf(stdout, NULL, _IOLBF, 0);
    mcp_set_allocator(&a);
    for (size_t i = 0; i < n; i++) {
        long live0 = t_live;
        t_cur_failed = 0;
        t_fail_reset(0);
        if (setjmp(t_jmp) == 0)
            cases[i].fn();
        t_fail_reset(0);
        if (!t_cur_failed && t_live != live0) {
            fprintf(stderr, "  %ld allocation(s) leaked\n", t_live - live0);
            t_cur_failed = 1;
        }
        printf("%s %s\n", t_cur_failed ? "FAIL" : "ok", cases[i].name);
        if (t_cur_failed)
            failed++;
        else
            passed++;
    }
    fflush(stderr);
    printf("%.*s: %d passed, %d failed\n",
           (int)(strcspn(t_file_name, ".")), t_file_name, passed, failed);
    return failed ? 1 : 0;
}

#define TEST_MAIN(...)                                                       \
    int main(void)                                                           \
    {                                                                        \
        static const t_case t_cases_[] = {__VA_ARGS__};                      \
        return t_run(__FILE__, t_cases_, sizeof t_cases_ / sizeof t_cases_[0]); \
    }

#endif /* MCP_TESTLIB_H */
