/*
 * Internal interfaces of the authorization module: the JOSE parsers
 * (auth_jwt.c), the fetcher (auth_fetch.c), the token buckets
 * (auth_limit.c) and what the connection layer and the HTTP transport need
 * from the verifier (auth.c). Exposed to the unit tests and the fuzz
 * target tests/fuzz/fuzz_auth.c; not part of the public API.
 */
#ifndef MCP_AUTH_INTERNAL_H
#define MCP_AUTH_INTERNAL_H

#include "mcp/auth.h"

#include <stdatomic.h>

/* Signature algorithms, as bits so a key can allow several. */
#define MCP__ALG_RS256 0x1u
#define MCP__ALG_PS256 0x2u
#define MCP__ALG_ES256 0x4u
#define MCP__ALG_EDDSA 0x8u
#define MCP__ALG_ALL 0xFu

/* Hard bounds, whatever the options say. */
#define MCP__JWT_MAX_HEADER 2048u   /* base64url characters of a JOSE header */
#define MCP__JWT_MAX_SIG 1024u      /* signature bytes (RSA 8192) */
#define MCP__JWK_MAX_KID 256u       /* bytes of a key id */
#define MCP__SCOPES_MAX 64u         /* scopes held by one principal (after the hierarchy) */
#define MCP__SCOPES_MAX_LEN 4096u   /* bytes of a joined scope list */

/* Who a verified token speaks for (principal.c; created by auth.c). */
struct mcp_principal {
    atomic_int refs;            /* owners: mcp_auth_verify's caller, the cache, requests and calls */
    const char *sub;            /* `sub` (in claims), or NULL */
    const char *client_id;      /* `client_id`, else `azp` (in claims), or NULL */
    const char *iss;            /* `iss` (in claims), or NULL */
    char *scopes;               /* granted scopes, space-separated ("" for none) */
    char *held;                 /* granted plus implied scopes, space-separated */
    int64_t exp;                /* expiry, Unix seconds, or 0 */
    mcp_json_doc *claims;       /* the payload or introspection response */
};

/* Space-separated lists (principal.c). The next word of *p; 0 at the end. */
int mcp__next_word(const char **p, const char **w, size_t *n);
/* 1 when `list` holds the word w[0..n). */
int mcp__list_has(const char *list, const char *w, size_t n);
/* Copies a list with single spaces (NULL or blank gives NULL); refuses
 * control characters, quotes and backslashes. */
mcp_status mcp__words_dup(const char *in, char **out);

/* Maps an `alg` name to its MCP__ALG_* bit; 0 for anything else. */
unsigned mcp__alg_from_name(const char *name, size_t len);
/* The name of one MCP__ALG_* bit. */
const char *mcp__alg_name(unsigned alg);

/* One verification key from a JWKS. */
typedef struct mcp__jwk {
    char *kid;                  /* key id, or NULL */
    unsigned algs;              /* MCP__ALG_* this key may verify */
    void *pkey;                 /* EVP_PKEY (OpenSSL), owned */
} mcp__jwk;

/* An immutable set of keys; shared by reference while verifications use it. */
typedef struct mcp__keyset {
    atomic_int refs;            /* the verifier + verifications in progress */
    mcp__jwk *keys;             /* the usable keys */
    size_t n;                   /* how many */
    unsigned char digest[32];   /* SHA-256 of the document, to notice a change */
} mcp__keyset;

/*
 * Parses a JWKS document ({"keys":[...]}) into keys usable with `algs`.
 * Keys of unknown types or curves, keys for encryption, symmetric keys and
 * keys for other algorithms are skipped (RFC 7517 lets readers ignore
 * them); a key of a supported type that is malformed (bad base64url, wrong
 * coordinate size, RSA under 2048 bits, a point off the curve, private
 * members) is skipped too, and the first such reason is reported when no
 * key is left.
 * @return MCP_OK (at least one key); MCP_ERR_PARSE; MCP_ERR_LIMIT (over
 *         max_bytes); MCP_ERR_INVALID (not a JWKS, or no usable key);
 *         MCP_ERR_NOMEM.
 */
mcp_status mcp__jwks_parse(const char *text, size_t len, unsigned algs, size_t max_bytes, unsigned max_keys,
                           mcp__keyset **out, mcp_error *err);
void mcp__keyset_release(mcp__keyset *ks);

/* A parsed (not yet verified) JWS in compact form. */
typedef struct mcp__jwt {
    unsigned alg;               /* MCP__ALG_* */
    const char *kid;            /* the header's kid (in `header`), or NULL */
    mcp_json_doc *header;       /* the JOSE header */
    mcp_json_doc *claims;       /* the payload (a JSON object) */
    const char *signing_input;  /* "<header>.<payload>" inside the token */
    size_t signing_len;         /* its length */
    unsigned char sig[MCP__JWT_MAX_SIG]; /* the decoded signature */
    size_t sig_len;             /* its length */
    int at_jwt;                 /* the header's typ is at+jwt (RFC 9068) */
} mcp__jwt;

/*
 * Parses a compact JWS: three base64url parts; a header object with an
 * `alg` among `algs` ("none" and HS* are always refused), no `crit`, no
 * `enc`, a `typ` of JWT or at+jwt when present; a payload that is a JSON
 * object. Duplicate member names are refused in both.
 * @return MCP_OK, or MCP_ERR_AUTH with err->message naming the reason;
 *         MCP_ERR_NOMEM.
 */
mcp_status mcp__jwt_parse(const char *token, size_t len, unsigned algs, mcp__jwt *out, mcp_error *err);
void mcp__jwt_cleanup(mcp__jwt *j);
/* Checks the signature with one key: 1 when it verifies. */
int mcp__jwt_verify(const mcp__jwt *j, const mcp__jwk *k);
/* 1 when the token has the compact JWS shape (exactly two dots). */
int mcp__jwt_shaped(const char *token, size_t len);

/*
 * Splits an Authorization header value: returns MCP_AUTH_OK with the token
 * in *tok and *len, MCP_AUTH_NO_TOKEN (no header, or another scheme), or
 * MCP_AUTH_INVALID_REQUEST (Bearer without a token, or a token that is not
 * token68) with *why set to a fixed text.
 */
mcp_auth_error mcp__auth_parse_bearer(const char *header, const char **tok, size_t *len, const char **why);

/*
 * Validates a space-separated scope list (RFC 6749 scope tokens: printable
 * ASCII except space, '"' and '\') and copies it with single spaces into
 * *out; NULL or blank gives *out = NULL.
 * @return MCP_OK, MCP_ERR_INVALID_ARG, MCP_ERR_LIMIT (over MCP__SCOPES_MAX
 *         scopes or MCP__SCOPES_MAX_LEN bytes), MCP_ERR_NOMEM.
 */
mcp_status mcp__scopes_normalize(const char *in, char **out);

/*
 * 1 when checking this Authorization header (mcp_auth_check_header) could
 * wait on the network: an opaque token neither cached nor recently
 * refused (introspection), or a JWT whose keys must be fetched first.
 * The HTTP server checks those off its network threads.
 */
int mcp__auth_may_block(mcp_auth *a, const char *header);

/* Takes one more reference to a principal (libmcp shares one per request). */
mcp_principal *mcp__principal_ref(const mcp_principal *p);

/*
 * A key that tells requests of the same principal apart, for session
 * binding, rate limits and requestState: 64 hex digits of SHA-256 over the
 * kind (a subject, or a client without one) and the SHA-256 of the issuer
 * and of the subject or client id, so distinct principals never share a key
 * and nothing is cut. Empty for NULL, or when cap < MCP__PRINCIPAL_KEY_SIZE.
 */
#define MCP__PRINCIPAL_KEY_SIZE 65
void mcp__principal_key(const mcp_principal *p, char *out, size_t cap);

/*
 * Sets the resource URI when the options left it NULL (the HTTP server's
 * own URL); does nothing when one is set already.
 * @return MCP_OK, MCP_ERR_INVALID_ARG (not an absolute http(s) URI), MCP_ERR_NOMEM.
 */
mcp_status mcp__auth_default_resource(mcp_auth *a, const char *uri);
/* The path of the resource URI ("/mcp", or "" for a bare origin); "" before one is known. */
const char *mcp__auth_resource_path(const mcp_auth *a);

/*
 * HTTP for the verifier (libcurl): a GET of `url` (post == NULL) or a POST
 * of the form `post`, with HTTP Basic `user`/`pass` when given. Only
 * https, or http to a loopback host; no redirects; the body is capped at
 * `max_bytes`.
 * @return MCP_OK with *status and the body appended to `out`; MCP_ERR_IO;
 *         MCP_ERR_LIMIT; MCP_ERR_INVALID_ARG (a scheme or host not allowed);
 *         MCP_ERR_NOMEM.
 */
mcp_status mcp__auth_http(const char *url, const char *post, const char *user, const char *pass, const char *ca_file,
                          unsigned timeout_ms, size_t max_bytes, mcp_buf *out, long *status, mcp_error *err);
/* 1 when `url` may be fetched: https, or http to 127.0.0.1, [::1] or localhost. */
int mcp__auth_url_allowed(const char *url);
/* Appends the application/x-www-form-urlencoded form of `s` to `out`. */
mcp_status mcp__form_encode(mcp_buf *out, const char *s, size_t n);

/* ---- token buckets (auth_limit.c) --------------------------------------- */

typedef struct mcp__ratelimit mcp__ratelimit;

/* `rate` tokens per second, up to `burst` (at least 1), for up to `slots` keys. */
mcp_status mcp__ratelimit_new(mcp__ratelimit **out, double rate, double burst, unsigned slots);
void mcp__ratelimit_free(mcp__ratelimit *rl);
/* Takes a token for `key`: 0 when allowed, else the seconds to wait (>= 1). */
unsigned mcp__ratelimit_take(mcp__ratelimit *rl, const char *key, size_t len, uint64_t now_ms);

#endif /* MCP_AUTH_INTERNAL_H */
