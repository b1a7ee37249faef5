/*
 * Parsers and bookkeeping of the HTTP server transport that see
 * peer-controlled input (src/transport/http_internal.h): the Last-Event-ID
 * parser, strict about junk, overflow and trailing bytes, and the per-key
 * quota counters.
 */
#include "testlib.h"

#include "transport/http_internal.h"

#include <mcp/mcp.h>

#include <stdint.h>
#include <stdio.h>

static void test_event_id_accepts(void)
{
    uint64_t a = 7, b = 7;
    T_TRUE(mcp__http_event_id("0_0", &a, &b));
    T_TRUE(a == 0 && b == 0);
    T_TRUE(mcp__http_event_id("12_345", &a, &b));
    T_TRUE(a == 12 && b == 345);
    T_TRUE(mcp__http_event_id("18446744073709551615_18446744073709551615", &a, &b));
    T_TRUE(a == UINT64_MAX && b == UINT64_MAX);
    /* whatever the server writes reads back */
    char id[48];
    snprintf(id, sizeof id, "%llu_%llu", 4294967296ull, 99ull);
    T_TRUE(mcp__http_event_id(id, &a, &b));
    T_TRUE(a == 4294967296ull && b == 99);
}

static void test_event_id_rejects(void)
{
    static const char *const bad[] = {
        "", "_", "1_", "_1", "1", "1__2", "1_2_3", "1_2 ", " 1_2", "1 _2", "+1_2", "-1_2", "1_-2", "1_+2",
        "01_2", "1_02", "00_0", "0x1_2", "1_2x", "1_2\n", "1.0_2", "1_2.0", "a_b",
        "18446744073709551616_0",  /* 2^64 */
        "0_18446744073709551616",  /* 2^64 */
        "99999999999999999999_1",  /* 20 digits, over */
        "0_184467440737095516150", /* 21 digits */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t a = 5, b = 5;
        if (mcp__http_event_id(bad[i], &a, &b))
            T_FAIL_("accepted %s", bad[i]);
        T_TRUE(a == 5 && b == 5); /* untouched */
    }
    uint64_t a, b;
    T_FALSE(mcp__http_event_id(NULL, &a, &b));
    char nul[] = "1_2\0" "3";
    T_TRUE(mcp__http_event_id(nul, &a, &b)); /* a C string ends at its NUL */
    T_TRUE(a == 1 && b == 2);
}

/* Takes and gives against a model: the table never passes a limit and
 * forgets a key whose count is back at zero. */
static void test_quota_counts(void)
{
    mcp__quota *q = NULL;
    T_OK(mcp__quota_new(&q));
    T_EQ_INT(mcp__quota_take(q, "a127.0.0.1", 2), 1);
    T_EQ_INT(mcp__quota_take(q, "a127.0.0.1", 2), 1);
    T_EQ_INT(mcp__quota_take(q, "a127.0.0.1", 2), 0);
    T_EQ_INT(mcp__quota_take(q, "s127.0.0.1", 2), 1); /* another kind, another key */
    T_EQ_INT((int)mcp__quota_count(q, "a127.0.0.1"), 2);
    T_EQ_SIZE(mcp__quota_entries(q), 2);
    mcp__quota_give(q, "a127.0.0.1");
    mcp__quota_give(q, "unknown"); /* nothing */
    T_EQ_INT(mcp__quota_take(q, "a127.0.0.1", 2), 1);
    mcp__quota_give(q, "a127.0.0.1");
    mcp__quota_give(q, "a127.0.0.1");
    mcp__quota_give(q, "a127.0.0.1"); /* once more than taken: nothing */
    mcp__quota_give(q, "s127.0.0.1");
    T_EQ_INT((int)mcp__quota_count(q, "a127.0.0.1"), 0);
    T_EQ_SIZE(mcp__quota_entries(q), 0);
    unsigned model[64] = {0};
    unsigned seed = 7;
    char key[16];
    for (int i = 0; i < 20000; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned k = (seed >> 8) % 64, give = (seed >> 20) & 1;
        snprintf(key, sizeof key, "a10.0.0.%u", k);
        if (give) {
            mcp__quota_give(q, key);
            model[k] -= model[k] > 0;
        } else {
            int took = mcp__quota_take(q, key, 3);
            T_EQ_INT(took, model[k] < 3);
            model[k] += (unsigned)took;
        }
        T_EQ_INT((int)mcp__quota_count(q, key), (int)model[k]);
    }
    mcp__quota_free(q);
    mcp__quota_free(NULL);
}

TEST_MAIN(TEST(test_event_id_accepts), TEST(test_event_id_rejects), TEST(test_quota_counts))
