/*
 * libcrypto, loaded on first use. Why it is loaded rather than linked:
 * crypto_api.h.
 */
#define MCP__CRYPTO_TABLE
#include "util/util.h"
#include "util/crypto_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* OpenSSL 3's ABI name. */
#define CRYPTO_SONAME "libcrypto.so.3"

static pthread_once_t g_load_once = PTHREAD_ONCE_INIT;
static mcp__crypto_api g_api;
static char g_why[256];

/*
 * Stand-ins for a library that could not be loaded: every call fails the
 * way the caller checks for. Digests and MACs cannot report failure where
 * the library uses them, so they write a value unlike any other (a
 * process-wide counter): two principals never get the same key, a
 * requestState never verifies (CRYPTO_memcmp always differs) and an
 * argument binding never matches. Nothing is ever granted for want of
 * libcrypto.
 */
static atomic_ullong g_unique;

static void unique_bytes(unsigned char *out, size_t n)
{
    unsigned long long u = atomic_fetch_add(&g_unique, 1) + 1;
    memset(out, 0xA5, n);
    memcpy(out, &u, n < sizeof u ? n : sizeof u);
}
static int no_memcmp(const void *a, const void *b, size_t n)
{
    (void)a, (void)b, (void)n;
    return 1;
}
static void no_cleanse(void *p, size_t n)
{
    /* The one stand-in that must still do its work. */
    volatile unsigned char *v = p;
    while (n--)
        *v++ = 0;
}
static int no_rand_bytes(unsigned char *buf, int num)
{
    (void)buf, (void)num;
    return 0;
}
static unsigned char *no_sha256(const unsigned char *d, size_t n, unsigned char *md)
{
    (void)d, (void)n;
    if (md)
        unique_bytes(md, SHA256_DIGEST_LENGTH);
    return NULL;
}
static unsigned char *no_hmac(const EVP_MD *md, const void *key, int key_len, const unsigned char *data,
                              size_t data_len, unsigned char *out, unsigned int *out_len)
{
    (void)md, (void)key, (void)key_len, (void)data, (void)data_len;
    if (out && out_len)
        unique_bytes(out, *out_len);
    return NULL;
}
static const EVP_MD *no_md(void)
{
    return NULL;
}
static int no_digest(const void *data, size_t count, unsigned char *md, unsigned int *size, const EVP_MD *type,
                     ENGINE *impl)
{
    (void)data, (void)count, (void)md, (void)size, (void)type, (void)impl;
    return 0;
}
static int no_digest_verify(EVP_MD_CTX *ctx, const unsigned char *sig, size_t siglen, const unsigned char *tbs,
                            size_t tbslen)
{
    (void)ctx, (void)sig, (void)siglen, (void)tbs, (void)tbslen;
    return 0;
}
static int no_digest_verify_init(EVP_MD_CTX *ctx, EVP_PKEY_CTX **pctx, const char *mdname, OSSL_LIB_CTX *libctx,
                                 const char *props, EVP_PKEY *pkey, const OSSL_PARAM params[])
{
    (void)ctx, (void)pctx, (void)mdname, (void)libctx, (void)props, (void)pkey, (void)params;
    return 0;
}
static EVP_MD_CTX *no_md_ctx_new(void)
{
    return NULL;
}
static void no_md_ctx_free(EVP_MD_CTX *ctx)
{
    (void)ctx;
}
static EVP_PKEY_CTX *no_pkey_ctx_from_name(OSSL_LIB_CTX *libctx, const char *name, const char *propq)
{
    (void)libctx, (void)name, (void)propq;
    return NULL;
}
static EVP_PKEY_CTX *no_pkey_ctx_from_pkey(OSSL_LIB_CTX *libctx, EVP_PKEY *pkey, const char *propq)
{
    (void)libctx, (void)pkey, (void)propq;
    return NULL;
}
static void no_pkey_ctx_free(EVP_PKEY_CTX *ctx)
{
    (void)ctx;
}
static int no_pkey_ctx_int(EVP_PKEY_CTX *ctx, int v)
{
    (void)ctx, (void)v;
    return 0;
}
static int no_pkey_ctx(EVP_PKEY_CTX *ctx)
{
    (void)ctx;
    return 0;
}
static int no_fromdata(EVP_PKEY_CTX *ctx, EVP_PKEY **ppkey, int selection, OSSL_PARAM params[])
{
    (void)ctx, (void)selection, (void)params;
    if (ppkey)
        *ppkey = NULL;
    return 0;
}
static EVP_PKEY *no_raw_public_key(OSSL_LIB_CTX *libctx, const char *keytype, const char *propq,
                                   const unsigned char *pub, size_t len)
{
    (void)libctx, (void)keytype, (void)propq, (void)pub, (void)len;
    return NULL;
}
static int no_pkey_size(const EVP_PKEY *pkey)
{
    (void)pkey;
    return 0;
}
static void no_pkey_free(EVP_PKEY *pkey)
{
    (void)pkey;
}
static BIGNUM *no_bin2bn(const unsigned char *s, int len, BIGNUM *ret)
{
    (void)s, (void)len, (void)ret;
    return NULL;
}
static void no_bn_free(BIGNUM *bn)
{
    (void)bn;
}
static void no_clear_error(void)
{
}
static OSSL_PARAM_BLD *no_bld_new(void)
{
    return NULL;
}
static int no_bld_push_bn(OSSL_PARAM_BLD *bld, const char *key, const BIGNUM *bn)
{
    (void)bld, (void)key, (void)bn;
    return 0;
}
static OSSL_PARAM *no_bld_to_param(OSSL_PARAM_BLD *bld)
{
    (void)bld;
    return NULL;
}
static void no_bld_free(OSSL_PARAM_BLD *bld)
{
    (void)bld;
}
static OSSL_PARAM no_param_utf8(const char *key, char *buf, size_t n)
{
    (void)key, (void)buf, (void)n;
    OSSL_PARAM p;
    memset(&p, 0, sizeof p);
    return p;
}
static OSSL_PARAM no_param_octets(const char *key, void *buf, size_t n)
{
    (void)key, (void)buf, (void)n;
    OSSL_PARAM p;
    memset(&p, 0, sizeof p);
    return p;
}
static OSSL_PARAM no_param_end(void)
{
    OSSL_PARAM p;
    memset(&p, 0, sizeof p);
    return p;
}
static void no_param_free(OSSL_PARAM *p)
{
    (void)p;
}

/* In the order of MCP__CRYPTO_FNS. */
static const mcp__crypto_api g_missing = {
    no_memcmp,
    no_cleanse,
    no_rand_bytes,
    no_sha256,
    no_hmac,
    no_md,
    no_digest,
    no_digest_verify,
    no_digest_verify_init,
    no_md_ctx_new,
    no_md_ctx_free,
    no_pkey_ctx_from_name,
    no_pkey_ctx_from_pkey,
    no_pkey_ctx_free,
    no_pkey_ctx_int,
    no_pkey_ctx_int,
    no_pkey_ctx,
    no_fromdata,
    no_raw_public_key,
    no_pkey_ctx,
    no_pkey_size,
    no_pkey_free,
    no_bin2bn,
    no_bn_free,
    no_clear_error,
    no_bld_new,
    no_bld_push_bn,
    no_bld_to_param,
    no_bld_free,
    no_param_utf8,
    no_param_octets,
    no_param_end,
    no_param_free,
};

/* dlopen()s libcrypto and looks up every function of the table; on any
 * failure the stand-ins answer, and g_why says what went wrong. */
static void load_once(void)
{
    /* A process that links libcrypto itself (an application using OpenSSL)
     * gets the copy already mapped. */
    void *h = dlopen(CRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);
    const char *missing = NULL;
    void *sym;
    if (h) {
#define MCP__CRYPTO_LOAD(n)                                                                                            \
    if (!missing) {                                                                                                    \
        if ((sym = dlsym(h, #n)))                                                                                      \
            memcpy(&g_api.n, &sym, sizeof sym);                                                                        \
        else                                                                                                           \
            missing = #n;                                                                                              \
    }
        MCP__CRYPTO_FNS(MCP__CRYPTO_LOAD)
#undef MCP__CRYPTO_LOAD
        if (!missing)
            return;
        snprintf(g_why, sizeof g_why, "libcrypto (%s) lacks %s: OpenSSL 3.0 or later is needed", CRYPTO_SONAME,
                 missing);
        dlclose(h);
    } else {
        const char *e = dlerror();
        snprintf(g_why, sizeof g_why, "libcrypto could not be loaded (install libssl3): %s", e ? e : CRYPTO_SONAME);
    }
    g_api = g_missing;
}

const mcp__crypto_api *mcp__crypto_api_get(void)
{
    pthread_once(&g_load_once, load_once);
    return &g_api;
}

const char *mcp__crypto_why(void)
{
    pthread_once(&g_load_once, load_once);
    return g_why;
}
