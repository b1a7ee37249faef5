/* Unit tests for status codes, error detail, allocator hooks, buffers,
 * version, and util's base64 and protocol-version helpers. */
#include "mcp/mcp.h"
#include "testlib.h"
#include "util/util.h"

static void test_status(void)
{
    T_EQ_STR(mcp_status_name(MCP_OK), "MCP_OK");
    T_EQ_STR(mcp_status_name(MCP_ERR_NOMEM), "MCP_ERR_NOMEM");
    T_EQ_STR(mcp_status_name(MCP_ERR_INVALID), "MCP_ERR_INVALID");
    T_EQ_STR(mcp_status_str(MCP_ERR_NOMEM), "out of memory");
    T_EQ_STR(mcp_status_str((mcp_status)-9999), "unknown status");
    T_EQ_STR(mcp_status_str((mcp_status)5), "unknown status");
    T_EQ_STR(mcp_status_name((mcp_status)-9999), "MCP_ERR_UNKNOWN");
    /* The numbers are ABI: pin them. */
    T_EQ_INT(MCP_ERR_NOMEM, -1);
    T_EQ_INT(MCP_ERR_PARSE, -3);
    T_EQ_INT(MCP_ERR_LIMIT, -4);
    T_EQ_INT(MCP_ERR_INVALID_MSG, -5);
    T_EQ_INT(MCP_ERR_INVALID, -20);
    /* Every status from 0 down to the last has a distinct name. */
    T_EQ_INT(MCP_ERR_INPUT_REQUIRED, -21);
    for (int i = 0; i >= MCP_ERR_INPUT_REQUIRED; i--)
        T_TRUE(strcmp(mcp_status_name((mcp_status)i), "MCP_ERR_UNKNOWN") != 0);
}

static void test_error_clear(void)
{
    mcp_error e;
    memset(&e, 0x7f, sizeof e);
    mcp_error_clear(&e);
    T_EQ_INT(e.status, MCP_OK);
    T_EQ_INT(e.rpc_code, 0);
    T_EQ_STR(e.message, "");
    mcp_error_clear(NULL);
}

static void test_version(void)
{
    T_EQ_STR(mcp_version(), MCP_VERSION_STRING);
    T_EQ_INT(mcp_version_number(), (MCP_VERSION_MAJOR << 16) | (MCP_VERSION_MINOR << 8) | MCP_VERSION_PATCH);
}

static void test_buf(void)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    T_NULL(b.data);
    T_OK(mcp_buf_append(&b, NULL, 0));
    T_NOT_NULL(b.data);
    T_EQ_STR(b.data, "");
    for (int i = 0; i < 1000; i++)
        T_OK(mcp_buf_append(&b, "abc", 3));
    T_EQ_SIZE(b.len, 3000);
    T_EQ_INT(b.data[3000], 0);
    T_STATUS(mcp_buf_append(&b, NULL, 1), MCP_ERR_INVALID_ARG);
    mcp_buf_reset(&b);
    T_EQ_SIZE(b.len, 0);
    T_EQ_STR(b.data, "");
    size_t n;
    T_OK(mcp_buf_append(&b, "xy", 2));
    char *p = mcp_buf_take(&b, &n);
    T_EQ_STR(p, "xy");
    T_EQ_SIZE(n, 2);
    T_NULL(b.data);
    mcp_free(p);
    mcp_buf_cleanup(&b);
    mcp_buf_cleanup(NULL);

    mcp_buf_init(&b, 4);
    T_OK(mcp_buf_append(&b, "1234", 4));
    T_STATUS(mcp_buf_append(&b, "5", 1), MCP_ERR_LIMIT);
    T_EQ_STR(b.data, "1234");
    T_STATUS(mcp_buf_reserve(&b, SIZE_MAX), MCP_ERR_LIMIT);
    mcp_buf_cleanup(&b);
}

static void test_buf_nomem(void)
{
    mcp_buf b;
    mcp_status st;
    T_NOMEM_LOOP(st,
                 {
                     mcp_buf_init(&b, 0);
                     st = MCP_OK;
                     for (int i = 0; i < 100 && !st; i++)
                         st = mcp_buf_append(&b, "0123456789", 10);
                     if (st)
                         mcp_buf_cleanup(&b);
                 },
                 {
                     T_EQ_SIZE(b.len, 1000);
                     mcp_buf_cleanup(&b);
                 });
}

static long g_custom_calls;
static void *c_malloc(size_t n, void *ud) { (void)ud; g_custom_calls++; return malloc(n); }
static void *c_realloc(void *p, size_t n, void *ud) { (void)ud; g_custom_calls++; return realloc(p, n); }
static void c_free(void *p, void *ud) { (void)ud; free(p); }

static void test_allocator_hooks(void)
{
    mcp_allocator bad = {c_malloc, NULL, c_free, NULL};
    T_STATUS(mcp_set_allocator(&bad), MCP_ERR_INVALID_ARG);
    mcp_allocator good = {c_malloc, c_realloc, c_free, NULL};
    T_OK(mcp_set_allocator(&good));
    g_custom_calls = 0;
    void *p = mcp_malloc(10);
    T_NOT_NULL(p);
    p = mcp_realloc(p, 20);
    T_NOT_NULL(p);
    mcp_free(p);
    mcp_free(NULL);
    T_EQ_INT(g_custom_calls, 2);
    T_NULL(mcp_malloc(0));
    T_OK(mcp_set_allocator(NULL)); /* back to malloc */
    p = mcp_malloc(1);
    mcp_free(p);
    T_EQ_INT(g_custom_calls, 2);
    /* Re-install the harness allocator for the remaining tests. */
    static const mcp_allocator t = {t_malloc, t_realloc, t_free, NULL};
    T_OK(mcp_set_allocator(&t));
}

/* Encodes `s` both ways and compares with the expected texts. */
static int b64_pair(const char *s, const char *std, const char *url)
{
    char out[64];
    size_t n = strlen(s), k = mcp__base64_encode(out, s, n);
    if (k != MCP__BASE64_LEN(n) || k != strlen(std) || memcmp(out, std, k) != 0)
        return 0;
    k = mcp__base64url_encode(out, s, n);
    return k == MCP__BASE64URL_LEN(n) && k == strlen(url) && memcmp(out, url, k) == 0;
}

static int b64_dec(int url, const char *text, unsigned flags, size_t cap, const char *want)
{
    unsigned char out[64];
    size_t n = 99;
    int ok = url ? mcp__base64url_decode(text, strlen(text), out, cap, &n, flags)
                 : mcp__base64_decode(text, strlen(text), out, cap, &n, flags);
    if (!want)
        return !ok;
    return ok && n == strlen(want) && memcmp(out, want, n) == 0;
}

static void test_base64(void)
{
    /* RFC 4648 section 10, and a byte that differs between the alphabets. */
    T_TRUE(b64_pair("", "", ""));
    T_TRUE(b64_pair("f", "Zg==", "Zg"));
    T_TRUE(b64_pair("fo", "Zm8=", "Zm8"));
    T_TRUE(b64_pair("foo", "Zm9v", "Zm9v"));
    T_TRUE(b64_pair("foob", "Zm9vYg==", "Zm9vYg"));
    T_TRUE(b64_pair("fooba", "Zm9vYmE=", "Zm9vYmE"));
    T_TRUE(b64_pair("foobar", "Zm9vYmFy", "Zm9vYmFy"));
    T_TRUE(b64_pair("\xfb\xff", "+/8=", "-_8"));
    /* Round trips of every length and remainder, both alphabets, canonical. */
    unsigned char in[40], back[40];
    char text[64];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = (unsigned char)(i * 37 + 11);
    for (size_t n = 0; n <= sizeof in; n++) {
        size_t k = mcp__base64_encode(text, in, n), m = 0;
        T_TRUE(mcp__base64_decode(text, k, back, sizeof back + 2, &m, MCP__BASE64_CANONICAL));
        T_TRUE(m == n && !memcmp(in, back, n));
        k = mcp__base64url_encode(text, in, n);
        T_TRUE(mcp__base64url_decode(text, k, back, sizeof back, &m, MCP__BASE64_CANONICAL));
        T_TRUE(m == n && !memcmp(in, back, n));
    }
    /* base64: padding required, '=' only at the end; spare bits ignored unless canonical. */
    T_TRUE(b64_dec(0, "Zm8=", 0, 16, "fo"));
    T_TRUE(b64_dec(0, "Zg==", 0, 16, "f"));
    T_TRUE(b64_dec(0, "+/8=", 0, 16, "\xfb\xff"));
    T_TRUE(b64_dec(0, "Zh==", 0, 16, "f"));
    T_TRUE(b64_dec(0, "Zh==", MCP__BASE64_CANONICAL, 16, NULL));
    T_TRUE(b64_dec(0, "Zm8", 0, 16, NULL));   /* unpadded */
    T_TRUE(b64_dec(0, "Zg=", 0, 16, NULL));   /* short padding */
    T_TRUE(b64_dec(0, "Z===", 0, 16, NULL));  /* three '=' */
    T_TRUE(b64_dec(0, "Zg=a", 0, 16, NULL));  /* '=' inside the last quad */
    T_TRUE(b64_dec(0, "Zg==Zm9v", 0, 16, NULL)); /* '=' before the end */
    T_TRUE(b64_dec(0, "-_8=", 0, 16, NULL));  /* the url alphabet */
    T_TRUE(b64_dec(0, "Zm 8", 0, 16, NULL));  /* whitespace */
    T_TRUE(b64_dec(0, "Zm9v", 0, 3, "foo"));  /* cap: n / 4 * 3 */
    T_TRUE(b64_dec(0, "Zm8=", 0, 2, NULL));   /* ... padding not discounted */
    /* base64url: no padding; lenient unless canonical. */
    T_TRUE(b64_dec(1, "-_8", 0, 16, "\xfb\xff"));
    T_TRUE(b64_dec(1, "Zh", 0, 16, "f"));
    T_TRUE(b64_dec(1, "Zh", MCP__BASE64_CANONICAL, 16, NULL));
    T_TRUE(b64_dec(1, "Zm9vY", 0, 16, "foo")); /* 1 mod 4: the lone character is dropped */
    T_TRUE(b64_dec(1, "Zm9vY", MCP__BASE64_CANONICAL, 16, NULL));
    T_TRUE(b64_dec(1, "Zg==", 0, 16, NULL));  /* padding */
    T_TRUE(b64_dec(1, "Zm8+", 0, 16, NULL));  /* the standard alphabet */
    T_TRUE(b64_dec(1, "Zm 8", 0, 16, NULL));  /* whitespace */
    T_TRUE(b64_dec(1, "Zm8", 0, 2, "fo"));    /* cap: the decoded length */
    T_TRUE(b64_dec(1, "Zm9vZm9v", 0, 5, NULL));
    unsigned char out[4];
    size_t n;
    T_FALSE(mcp__base64url_decode("Zm\0v", 4, out, sizeof out, &n, 0)); /* NUL */
    /* Appending to a buffer keeps it terminated. */
    mcp_buf b;
    mcp_buf_init(&b, 0);
    T_OK(mcp_buf_append(&b, "x:", 2));
    T_OK(mcp__base64_append(&b, "fo", 2));
    T_OK(mcp__base64url_append(&b, "fo", 2));
    T_EQ_STR(b.data, "x:Zm8=Zm8");
    mcp_buf_cleanup(&b);
}

static void test_protocol_versions(void)
{
    T_EQ_STR(mcp__version_newest(), MCP_PROTOCOL_LATEST);
    T_EQ_STR(mcp__version_newest_legacy(), MCP_PROTOCOL_LATEST_LEGACY);
    for (size_t i = 1; i < MCP__N_VERSIONS; i++)
        T_TRUE(strcmp(mcp__versions[i - 1], mcp__versions[i]) > 0); /* newest first */
    /* known returns the table's own string, so callers may keep it */
    const char *v = mcp__version_known("2025-06-18", 10);
    T_TRUE(v == mcp__versions[2]);
    T_TRUE(mcp__version_known(MCP_PROTOCOL_2026_07_28, 10) == mcp__versions[0]);
    T_NULL(mcp__version_known("2025-06-1", 9));
    T_NULL(mcp__version_known("2025-06-180", 11));
    T_NULL(mcp__version_known("2099-01-01", 10));
    T_NULL(mcp__version_known(NULL, 0));
    T_NULL(mcp__version_legacy(MCP_PROTOCOL_2026_07_28, 10));
    T_TRUE(mcp__version_legacy("2024-11-05", 10) == mcp__versions[MCP__N_VERSIONS - 1]);
    T_TRUE(mcp__version_at_least("2025-06-18", MCP_PROTOCOL_2025_03_26));
    T_TRUE(mcp__version_at_least("2025-06-18", MCP_PROTOCOL_2025_06_18));
    T_FALSE(mcp__version_at_least("2025-03-26", MCP_PROTOCOL_2025_06_18));
    T_FALSE(mcp__version_at_least(NULL, MCP_PROTOCOL_2024_11_05));
    /* modern: 2026-07-28 and any later date, known or not */
    T_TRUE(mcp__version_modern(MCP_PROTOCOL_2026_07_28));
    T_TRUE(mcp__version_modern("2099-01-01"));
    T_FALSE(mcp__version_modern(MCP_PROTOCOL_2025_11_25));
    T_FALSE(mcp__version_modern(NULL));
}

TEST_MAIN(TEST(test_status), TEST(test_error_clear), TEST(test_version), TEST(test_buf),
          TEST(test_buf_nomem), TEST(test_allocator_hooks), TEST(test_base64), TEST(test_protocol_versions))
