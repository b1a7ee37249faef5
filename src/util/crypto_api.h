/*
 * OpenSSL's libcrypto, loaded on first use (crypto.c). libmcp does not
 * link it: merely mapping libcrypto costs a process about 1.5 MB of
 * resident memory (its symbol tables, and the relocated data the dynamic
 * linker writes at load), whether or not a function of it ever runs, and
 * most servers never use it: it verifies tokens and signs requestState
 * (auth/, server/ask.c), hashes principals and PKCE verifiers, and is the
 * fallback random source when getrandom() fails. The first call of one of
 * the functions below dlopen()s libcrypto.so.3; if that fails, every call
 * fails cleanly (see crypto.c for what each stand-in answers).
 *
 * Include this header instead of the <openssl/...> headers it includes: it
 * routes the OpenSSL names the library uses through the loaded table.
 */
#ifndef MCP_UTIL_CRYPTO_API_H
#define MCP_UTIL_CRYPTO_API_H

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>

#define MCP__CRYPTO_FNS(X)                                                                                             \
    X(CRYPTO_memcmp)                                                                                                   \
    X(OPENSSL_cleanse)                                                                                                 \
    X(RAND_bytes)                                                                                                      \
    X(SHA256)                                                                                                          \
    X(HMAC)                                                                                                            \
    X(EVP_sha256)                                                                                                      \
    X(EVP_Digest)                                                                                                      \
    X(EVP_DigestVerify)                                                                                                \
    X(EVP_DigestVerifyInit_ex)                                                                                         \
    X(EVP_MD_CTX_new)                                                                                                  \
    X(EVP_MD_CTX_free)                                                                                                 \
    X(EVP_PKEY_CTX_new_from_name)                                                                                      \
    X(EVP_PKEY_CTX_new_from_pkey)                                                                                      \
    X(EVP_PKEY_CTX_free)                                                                                               \
    X(EVP_PKEY_CTX_set_rsa_padding)                                                                                    \
    X(EVP_PKEY_CTX_set_rsa_pss_saltlen)                                                                                \
    X(EVP_PKEY_fromdata_init)                                                                                          \
    X(EVP_PKEY_fromdata)                                                                                               \
    X(EVP_PKEY_new_raw_public_key_ex)                                                                                  \
    X(EVP_PKEY_public_check)                                                                                           \
    X(EVP_PKEY_get_size)                                                                                               \
    X(EVP_PKEY_free)                                                                                                   \
    X(BN_bin2bn)                                                                                                       \
    X(BN_free)                                                                                                         \
    X(ERR_clear_error)                                                                                                 \
    X(OSSL_PARAM_BLD_new)                                                                                              \
    X(OSSL_PARAM_BLD_push_BN)                                                                                          \
    X(OSSL_PARAM_BLD_to_param)                                                                                         \
    X(OSSL_PARAM_BLD_free)                                                                                             \
    X(OSSL_PARAM_construct_utf8_string)                                                                                \
    X(OSSL_PARAM_construct_octet_string)                                                                               \
    X(OSSL_PARAM_construct_end)                                                                                        \
    X(OSSL_PARAM_free)

typedef struct mcp__crypto_api {
#define MCP__CRYPTO_FIELD(n) __typeof__(&n) n;
    MCP__CRYPTO_FNS(MCP__CRYPTO_FIELD)
#undef MCP__CRYPTO_FIELD
} mcp__crypto_api;

/* The loaded library's functions, or stand-ins that fail when it could not
 * be loaded; loads it on the first call (thread-safe). Never NULL. */
const mcp__crypto_api *mcp__crypto_api_get(void);

/* Why libcrypto could not be loaded (after a failed first use), else "". */
const char *mcp__crypto_why(void);

/* crypto.c, which fills the table, defines MCP__CRYPTO_TABLE: the names
 * stay OpenSSL's own there. */
#ifndef MCP__CRYPTO_TABLE
#define CRYPTO_memcmp (mcp__crypto_api_get()->CRYPTO_memcmp)
#define OPENSSL_cleanse (mcp__crypto_api_get()->OPENSSL_cleanse)
#define RAND_bytes (mcp__crypto_api_get()->RAND_bytes)
#define SHA256 (mcp__crypto_api_get()->SHA256)
#define HMAC (mcp__crypto_api_get()->HMAC)
#define EVP_sha256 (mcp__crypto_api_get()->EVP_sha256)
#define EVP_Digest (mcp__crypto_api_get()->EVP_Digest)
#define EVP_DigestVerify (mcp__crypto_api_get()->EVP_DigestVerify)
#define EVP_DigestVerifyInit_ex (mcp__crypto_api_get()->EVP_DigestVerifyInit_ex)
#define EVP_MD_CTX_new (mcp__crypto_api_get()->EVP_MD_CTX_new)
#define EVP_MD_CTX_free (mcp__crypto_api_get()->EVP_MD_CTX_free)
#define EVP_PKEY_CTX_new_from_name (mcp__crypto_api_get()->EVP_PKEY_CTX_new_from_name)
#define EVP_PKEY_CTX_new_from_pkey (mcp__crypto_api_get()->EVP_PKEY_CTX_new_from_pkey)
#define EVP_PKEY_CTX_free (mcp__crypto_api_get()->EVP_PKEY_CTX_free)
#define EVP_PKEY_CTX_set_rsa_padding (mcp__crypto_api_get()->EVP_PKEY_CTX_set_rsa_padding)
#define EVP_PKEY_CTX_set_rsa_pss_saltlen (mcp__crypto_api_get()->EVP_PKEY_CTX_set_rsa_pss_saltlen)
#define EVP_PKEY_fromdata_init (mcp__crypto_api_get()->EVP_PKEY_fromdata_init)
#define EVP_PKEY_fromdata (mcp__crypto_api_get()->EVP_PKEY_fromdata)
#define EVP_PKEY_new_raw_public_key_ex (mcp__crypto_api_get()->EVP_PKEY_new_raw_public_key_ex)
#define EVP_PKEY_public_check (mcp__crypto_api_get()->EVP_PKEY_public_check)
#define EVP_PKEY_get_size (mcp__crypto_api_get()->EVP_PKEY_get_size)
#define EVP_PKEY_free (mcp__crypto_api_get()->EVP_PKEY_free)
#define BN_bin2bn (mcp__crypto_api_get()->BN_bin2bn)
#define BN_free (mcp__crypto_api_get()->BN_free)
#define ERR_clear_error (mcp__crypto_api_get()->ERR_clear_error)
#define OSSL_PARAM_BLD_new (mcp__crypto_api_get()->OSSL_PARAM_BLD_new)
#define OSSL_PARAM_BLD_push_BN (mcp__crypto_api_get()->OSSL_PARAM_BLD_push_BN)
#define OSSL_PARAM_BLD_to_param (mcp__crypto_api_get()->OSSL_PARAM_BLD_to_param)
#define OSSL_PARAM_BLD_free (mcp__crypto_api_get()->OSSL_PARAM_BLD_free)
#define OSSL_PARAM_construct_utf8_string (mcp__crypto_api_get()->OSSL_PARAM_construct_utf8_string)
#define OSSL_PARAM_construct_octet_string (mcp__crypto_api_get()->OSSL_PARAM_construct_octet_string)
#define OSSL_PARAM_construct_end (mcp__crypto_api_get()->OSSL_PARAM_construct_end)
#define OSSL_PARAM_free (mcp__crypto_api_get()->OSSL_PARAM_free)
#endif

#endif
