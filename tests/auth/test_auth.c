/*
 * Unit tests of the authorization module: strict base64url, Authorization
 * header parsing, scope lists, JWK sets, compact JWS parsing, every claim
 * check, principals, metadata and challenges, options, the token buckets,
 * failing allocations, and the principal's way through a connection
 * (scopes enforced before a handler runs, the subject reaching it).
 * Tokens come from the test authorization server's signer (no HTTP here).
 */
#include "auth/auth_internal.h"
#include "mcp/mcp.h"
#include "server/server_internal.h"
#include "util/util.h"
#include "test_as.h"
#include "testlib.h"

#include <pthread.h>
#include <time.h>

#define RESOURCE "https://mcp.example.com/mcp"

static tas *g_as;

static tas *as(void)
{
    if (!g_as && tas_start(&g_as, 0) != 0)
        abort();
    return g_as;
}

/* A verifier over the test server's keys, with `algs` (NULL = default). */
static mcp_auth *make_auth(const char *algs, int cache)
{
    char *jwks = tas_jwks(as());
    mcp_auth_opts o;
    memset(&o, 0, sizeof o);
    o.resource = RESOURCE;
    o.issuers = tas_issuer(as());
    o.jwks_json = jwks;
    o.algorithms = algs;
    o.token_cache = cache;
    o.scopes_supported = "mcp:tools files:read";
    mcp_auth *a = NULL;
    mcp_error err;
    mcp_status st = mcp_auth_new(&a, &o, &err);
    if (st)
        fprintf(stderr, "  mcp_auth_new: %s\n", err.message);
    free(jwks);
    return a;
}

/* Verifies `tok` and checks the classification; returns the principal or NULL. */
static mcp_principal *verify(mcp_auth *a, const char *tok, mcp_auth_error want, const char *msg_part)
{
    mcp_principal *p = NULL;
    mcp_auth_error why = MCP_AUTH_OK;
    mcp_error err;
    memset(&err, 0, sizeof err);
    mcp_status st = mcp_auth_verify(a, tok, strlen(tok), &p, &why, &err);
    if (want == MCP_AUTH_OK && st != MCP_OK)
        fprintf(stderr, "  refused: %s\n", err.message);
    if (want != MCP_AUTH_OK && msg_part && !strstr(err.message, msg_part))
        fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", err.message, msg_part);
    if ((want == MCP_AUTH_OK) != (st == MCP_OK) || why != want ||
        (want != MCP_AUTH_OK && msg_part && !strstr(err.message, msg_part))) {
        mcp_principal_free(p);
        return (mcp_principal *)1; /* marks a mismatch */
    }
    return p;
}

#define T_VERIFY_OK(a, tok, out)                                                                                  \
    do {                                                                                                          \
        out = verify(a, tok, MCP_AUTH_OK, NULL);                                                                  \
        T_TRUE(out != NULL && out != (mcp_principal *)1);                                                         \
    } while (0)

#define T_VERIFY_FAIL(a, tok, kind, part) T_TRUE(verify(a, tok, kind, part) == NULL)

/* ---- base64url, as JOSE decodes it (MCP__BASE64_CANONICAL) ---------------- */

static void test_b64url(void)
{
    unsigned char out[16];
    size_t n;
    const unsigned strict = MCP__BASE64_CANONICAL;
    T_TRUE(mcp__base64url_decode("", 0, out, sizeof out, &n, strict) && n == 0);
    T_TRUE(mcp__base64url_decode("Zm9v", 4, out, sizeof out, &n, strict) && n == 3 && !memcmp(out, "foo", 3));
    T_TRUE(mcp__base64url_decode("Zm8", 3, out, sizeof out, &n, strict) && n == 2 && !memcmp(out, "fo", 2));
    T_TRUE(mcp__base64url_decode("Zg", 2, out, sizeof out, &n, strict) && n == 1 && out[0] == 'f');
    T_TRUE(mcp__base64url_decode("-_8", 3, out, sizeof out, &n, strict) && n == 2 && out[0] == 0xfb &&
           out[1] == 0xff);
    T_FALSE(mcp__base64url_decode("Zg==", 4, out, sizeof out, &n, strict)); /* padding */
    T_FALSE(mcp__base64url_decode("Z", 1, out, sizeof out, &n, strict));    /* 1 mod 4 */
    T_FALSE(mcp__base64url_decode("Zh", 2, out, sizeof out, &n, strict));   /* non-zero trailing bits */
    T_FALSE(mcp__base64url_decode("Zm8+", 4, out, sizeof out, &n, strict)); /* standard alphabet */
    T_FALSE(mcp__base64url_decode("Zm 8", 4, out, sizeof out, &n, strict)); /* whitespace */
    T_FALSE(mcp__base64url_decode("Zm9vZm9v", 8, out, 5, &n, strict));      /* capacity */
}

/* ---- Authorization header ------------------------------------------------- */

static void test_bearer_parse(void)
{
    const char *tok, *why;
    size_t n;
    T_EQ_INT(mcp__auth_parse_bearer(NULL, &tok, &n, &why), MCP_AUTH_NO_TOKEN);
    T_EQ_INT(mcp__auth_parse_bearer("Basic dXNlcjpwYXNz", &tok, &n, &why), MCP_AUTH_NO_TOKEN);
    T_EQ_INT(mcp__auth_parse_bearer("Bearerabc", &tok, &n, &why), MCP_AUTH_NO_TOKEN);
    T_EQ_INT(mcp__auth_parse_bearer("Bearer", &tok, &n, &why), MCP_AUTH_INVALID_REQUEST);
    T_EQ_INT(mcp__auth_parse_bearer("Bearer   ", &tok, &n, &why), MCP_AUTH_INVALID_REQUEST);
    T_EQ_INT(mcp__auth_parse_bearer("Bearer a b", &tok, &n, &why), MCP_AUTH_INVALID_REQUEST);
    T_EQ_INT(mcp__auth_parse_bearer("Bearer a,b", &tok, &n, &why), MCP_AUTH_INVALID_REQUEST);
    T_EQ_INT(mcp__auth_parse_bearer("Bearer a=b", &tok, &n, &why), MCP_AUTH_INVALID_REQUEST);
    T_EQ_INT(mcp__auth_parse_bearer("bearer abc.def-_~+/==", &tok, &n, &why), MCP_AUTH_OK);
    T_EQ_SIZE(n, 14);
    T_EQ_INT(mcp__auth_parse_bearer("BEARER  x.y.z  ", &tok, &n, &why), MCP_AUTH_OK);
    T_TRUE(n == 5 && !memcmp(tok, "x.y.z", 5));
}

/* ---- scope lists ------------------------------------------------------------ */

static void test_scopes_normalize(void)
{
    char *s;
    T_OK(mcp__scopes_normalize(NULL, &s));
    T_NULL(s);
    T_OK(mcp__scopes_normalize("   ", &s));
    T_NULL(s);
    T_OK(mcp__scopes_normalize("  files:read   files:write ", &s));
    T_EQ_STR(s, "files:read files:write");
    mcp_free(s);
    T_STATUS(mcp__scopes_normalize("a\"b", &s), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp__scopes_normalize("a\\b", &s), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp__scopes_normalize("a\tb", &s), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp__scopes_normalize("caf\xc3\xa9", &s), MCP_ERR_INVALID_ARG);
    char many[1024] = "";
    for (int i = 0; i < 70; i++)
        strcat(many, "s ");
    T_STATUS(mcp__scopes_normalize(many, &s), MCP_ERR_LIMIT);
}

/* ---- JWK sets --------------------------------------------------------------- */

static void test_jwks_parse_all_types(void)
{
    char *jwks = tas_jwks(as());
    mcp__keyset *ks = NULL;
    T_OK(mcp__jwks_parse(jwks, strlen(jwks), MCP__ALG_ALL, 1 << 20, 32, &ks, NULL));
    free(jwks);
    T_EQ_SIZE(ks->n, 4);
    T_EQ_INT(ks->keys[0].algs, MCP__ALG_RS256); /* "alg":"RS256" narrows the RSA key */
    T_EQ_INT(ks->keys[1].algs, MCP__ALG_PS256);
    T_EQ_INT(ks->keys[2].algs, MCP__ALG_ES256);
    T_EQ_INT(ks->keys[3].algs, MCP__ALG_EDDSA);
    T_EQ_STR(ks->keys[2].kid, tas_kid(as(), TAS_ES256));
    mcp__keyset_release(ks);
    /* Only what the allowed algorithms can use. */
    jwks = tas_jwks(as());
    T_OK(mcp__jwks_parse(jwks, strlen(jwks), MCP__ALG_ES256, 1 << 20, 32, &ks, NULL));
    T_EQ_SIZE(ks->n, 1);
    mcp__keyset_release(ks);
    /* max_keys */
    T_OK(mcp__jwks_parse(jwks, strlen(jwks), MCP__ALG_ALL, 1 << 20, 2, &ks, NULL));
    T_EQ_SIZE(ks->n, 2);
    mcp__keyset_release(ks);
    /* the size cap */
    mcp_error err;
    T_STATUS(mcp__jwks_parse(jwks, strlen(jwks), MCP__ALG_ALL, 100, 32, &ks, &err), MCP_ERR_LIMIT);
    free(jwks);
}

static mcp_status parse1(const char *key_json, mcp_error *err)
{
    char doc[4096];
    snprintf(doc, sizeof doc, "{\"keys\":[%s]}", key_json);
    mcp__keyset *ks = NULL;
    mcp_status st = mcp__jwks_parse(doc, strlen(doc), MCP__ALG_ALL, 1 << 20, 32, &ks, err);
    mcp__keyset_release(ks);
    return st;
}

/* x and y of a real P-256 point (the generator G). */
#define GX "axfR8uEsQkf4vOblY6RA8ncDfYEt6zOg9KE5RdiYwpY"
#define GY "T-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfU"

static void test_jwk_rejections(void)
{
    mcp_error err;
    T_OK(parse1("{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"" GX "\",\"y\":\"" GY "\"}", &err));
    /* off the curve: y changed */
    T_STATUS(parse1("{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"" GX "\",\"y\":\"T-NC4v4af5uO5-tKfA-eFivOM1drMV7Oy7ZAaDe_UfQ\"}",
                    &err),
             MCP_ERR_INVALID);
    T_TRUE(strstr(err.message, "curve") != NULL);
    /* short coordinate */
    T_STATUS(parse1("{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"AAAA\",\"y\":\"" GY "\"}", &err), MCP_ERR_INVALID);
    /* padding in a coordinate */
    T_STATUS(parse1("{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"" GX "=\",\"y\":\"" GY "\"}", &err), MCP_ERR_INVALID);
    /* private material */
    T_STATUS(parse1("{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"" GX "\",\"y\":\"" GY "\",\"d\":\"AAAA\"}", &err),
             MCP_ERR_INVALID);
    T_TRUE(strstr(err.message, "private") != NULL);
    /* skipped silently: other curves, symmetric keys, encryption keys, other algorithms */
    T_STATUS(parse1("{\"kty\":\"EC\",\"crv\":\"P-384\",\"x\":\"AA\",\"y\":\"AA\"}", &err), MCP_ERR_INVALID);
    T_STATUS(parse1("{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"}", &err), MCP_ERR_INVALID);
    T_STATUS(parse1("{\"kty\":\"EC\",\"use\":\"enc\",\"crv\":\"P-256\",\"x\":\"" GX "\",\"y\":\"" GY "\"}", &err),
             MCP_ERR_INVALID);
    T_STATUS(parse1("{\"kty\":\"EC\",\"alg\":\"ES384\",\"crv\":\"P-256\",\"x\":\"" GX "\",\"y\":\"" GY "\"}", &err),
             MCP_ERR_INVALID);
    T_STATUS(parse1("{\"kty\":\"EC\",\"key_ops\":[\"encrypt\"],\"crv\":\"P-256\",\"x\":\"" GX "\",\"y\":\"" GY "\"}",
                    &err),
             MCP_ERR_INVALID);
    T_STATUS(parse1("{\"kty\":\"OKP\",\"crv\":\"X25519\",\"x\":\"AAAA\"}", &err), MCP_ERR_INVALID);
    T_STATUS(parse1("{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"AAAA\"}", &err), MCP_ERR_INVALID);
    /* RSA: under 2048 bits, leading zero */
    T_STATUS(parse1("{\"kty\":\"RSA\",\"n\":\"AQAB\",\"e\":\"AQAB\"}", &err), MCP_ERR_INVALID);
    T_TRUE(strstr(err.message, "2048") != NULL);
    T_STATUS(parse1("{\"kty\":\"RSA\",\"e\":\"AQAB\"}", &err), MCP_ERR_INVALID);
    /* not a JWKS */
    T_STATUS(mcp__jwks_parse("[]", 2, MCP__ALG_ALL, 1000, 4, NULL, &err), MCP_ERR_INVALID);
    T_STATUS(mcp__jwks_parse("{\"keys\":", 8, MCP__ALG_ALL, 1000, 4, NULL, &err), MCP_ERR_PARSE);
    T_STATUS(mcp__jwks_parse("{\"keys\":[],\"keys\":[]}", 22, MCP__ALG_ALL, 1000, 4, NULL, &err), MCP_ERR_PARSE);
    /* a kid that is not a string */
    T_STATUS(parse1("{\"kty\":\"EC\",\"kid\":7,\"crv\":\"P-256\",\"x\":\"" GX "\",\"y\":\"" GY "\"}", &err),
             MCP_ERR_INVALID);
}

/* ---- compact JWS -------------------------------------------------------------- */

static char *b64(const char *s)
{
    return tas_b64url(s, strlen(s));
}

/* header.payload.sig from JSON texts and a raw signature string. */
static char *raw_token(const char *header, const char *payload, const char *sig)
{
    char *h = b64(header), *p = b64(payload), *s = b64(sig);
    char *t = malloc(strlen(h) + strlen(p) + strlen(s) + 3);
    sprintf(t, "%s.%s.%s", h, p, s);
    free(h);
    free(p);
    free(s);
    return t;
}

static mcp_status parse_tok(const char *t, const char *want_msg)
{
    mcp__jwt *j = malloc(sizeof *j);
    mcp_error err;
    memset(&err, 0, sizeof err);
    mcp_status st = mcp__jwt_parse(t, strlen(t), MCP__ALG_ALL, j, &err);
    if (!st)
        mcp__jwt_cleanup(j);
    free(j);
    if (want_msg && !strstr(err.message, want_msg)) {
        fprintf(stderr, "  \"%s\" lacks \"%s\"\n", err.message, want_msg);
        return MCP_ERR_INTERNAL;
    }
    return st;
}

static void test_jwt_parse(void)
{
    char *t = raw_token("{\"alg\":\"ES256\",\"kid\":\"k\"}", "{\"sub\":\"a\"}", "sig");
    T_OK(parse_tok(t, NULL));
    free(t);
    T_STATUS(parse_tok("a.b", "three"), MCP_ERR_AUTH);
    T_STATUS(parse_tok("a.b.c.d.e", "three"), MCP_ERR_AUTH);
    T_STATUS(parse_tok(".b.c", "empty"), MCP_ERR_AUTH);
    t = raw_token("{\"alg\":\"none\"}", "{}", "");
    T_STATUS(parse_tok(t, "alg none"), MCP_ERR_AUTH);
    free(t);
    t = raw_token("{\"alg\":\"NONE\"}", "{}", "x");
    T_STATUS(parse_tok(t, "alg none"), MCP_ERR_AUTH);
    free(t);
    t = raw_token("{\"alg\":\"HS256\"}", "{}", "x");
    T_STATUS(parse_tok(t, "HMAC"), MCP_ERR_AUTH);
    free(t);
    t = raw_token("{\"alg\":\"RS384\"}", "{}", "x");
    T_STATUS(parse_tok(t, "unsupported"), MCP_ERR_AUTH);
    free(t);
    t = raw_token("{\"alg\":\"ES256\",\"crit\":[\"b64\"],\"b64\":false}", "{}", "x");
    T_STATUS(parse_tok(t, "crit"), MCP_ERR_AUTH);
    free(t);
    t = raw_token("{\"alg\":\"ES256\",\"enc\":\"A128GCM\"}", "{}", "x");
    T_STATUS(parse_tok(t, "JWE"), MCP_ERR_AUTH);
    free(t);
    t = raw_token("{\"alg\":\"ES256\",\"typ\":\"JOSE+JSON\"}", "{}", "x");
    T_STATUS(parse_tok(t, "typ"), MCP_ERR_AUTH);
    free(t);
    t = raw_token("{\"alg\":\"ES256\",\"typ\":\"AT+JWT\"}", "{}", "x");
    T_OK(parse_tok(t, NULL));
    free(t);
    t = raw_token("{\"alg\":\"ES256\",\"alg\":\"none\"}", "{}", "x");
    T_STATUS(parse_tok(t, "header"), MCP_ERR_AUTH); /* duplicate names */
    free(t);
    t = raw_token("{\"alg\":\"ES256\"}", "{\"sub\":\"a\",\"sub\":\"b\"}", "x");
    T_STATUS(parse_tok(t, "payload"), MCP_ERR_AUTH);
    free(t);
    t = raw_token("{\"alg\":\"ES256\"}", "[1]", "x");
    T_STATUS(parse_tok(t, "payload"), MCP_ERR_AUTH);
    free(t);
    t = raw_token("{\"alg\":\"ES256\"}", "{}", "");
    T_STATUS(parse_tok(t, "not signed"), MCP_ERR_AUTH);
    free(t);
    t = raw_token("{\"alg\":\"ES256\",\"kid\":5}", "{}", "x");
    T_STATUS(parse_tok(t, "kid"), MCP_ERR_AUTH);
    free(t);
    T_STATUS(parse_tok("eyJhbGciOiJFUzI1NiJ9.e30=.eA", "payload"), MCP_ERR_AUTH); /* padding */
    T_TRUE(mcp__jwt_shaped("a.b.c", 5));
    T_FALSE(mcp__jwt_shaped("abc", 3));
}

/* ---- verification ------------------------------------------------------------- */

static void test_verify_each_alg(void)
{
    mcp_auth *a = make_auth(NULL, -1);
    T_NOT_NULL(a);
    for (int alg = 0; alg < TAS_NALGS; alg++) {
        char *c = tas_claims(as(), RESOURCE, "alice", "mcp:tools files:read", 300, 0, ",\"client_id\":\"app1\"");
        char *t = tas_sign(as(), (tas_alg)alg, c, 0);
        mcp_principal *p;
        T_VERIFY_OK(a, t, p);
        T_EQ_STR(mcp_principal_subject(p), "alice");
        T_EQ_STR(mcp_principal_client_id(p), "app1");
        T_EQ_STR(mcp_principal_issuer(p), tas_issuer(as()));
        T_EQ_STR(mcp_principal_scopes(p), "mcp:tools files:read");
        T_TRUE(mcp_principal_has_scope(p, "files:read"));
        T_FALSE(mcp_principal_has_scope(p, "files:write"));
        T_FALSE(mcp_principal_has_scope(p, "files"));
        T_TRUE(mcp_principal_has_scopes(p, "files:read mcp:tools"));
        T_FALSE(mcp_principal_has_scopes(p, "files:read files:write"));
        T_TRUE(mcp_principal_expires(p) > (int64_t)time(NULL));
        T_EQ_STR(mcp_json_str(mcp_json_get(mcp_principal_claims(p), "sub"), NULL), "alice");
        mcp_principal_free(p);
        /* without a kid: the key is found by algorithm */
        t = (free(t), tas_sign(as(), (tas_alg)alg, c, TAS_NO_KID));
        T_VERIFY_OK(a, t, p);
        mcp_principal_free(p);
        t = (free(t), tas_sign(as(), (tas_alg)alg, c, TAS_BAD_SIG));
        T_VERIFY_FAIL(a, t, MCP_AUTH_INVALID_TOKEN, "signature");
        t = (free(t), tas_sign(as(), (tas_alg)alg, c, TAS_RANDOM_KID));
        T_VERIFY_FAIL(a, t, MCP_AUTH_INVALID_TOKEN, "unknown key id");
        free(t);
        free(c);
    }
    mcp_auth_free(a);
}

static void test_verify_claims(void)
{
    mcp_auth *a = make_auth(NULL, -1);
    T_NOT_NULL(a);
    struct {
        const char *aud;
        long exp_in, nbf_in;
        const char *extra;
        const char *msg;
    } bad[] = {
        {RESOURCE, -3600, 0, NULL, "expired"},
        {RESOURCE, 3600, 3600, NULL, "not valid yet"},
        {"https://other.example.com/mcp", 300, 0, NULL, "another resource"},
        {"[\"https://a.example\",\"https://b.example\"]", 300, 0, NULL, "another resource"},
        {NULL, 300, 0, NULL, "no audience"},
        {"[1,2]", 300, 0, NULL, "another resource"},
        {RESOURCE, 300, 0, ",\"sub\":5", NULL},
        {RESOURCE, 300, 0, ",\"scp\":[\"a\",1]", "scp"},
        {RESOURCE, 300, 0, ",\"nbf\":\"soon\"", "nbf"},
        {RESOURCE, 300, 0, ",\"exp\":\"later\"", "payload"}, /* a second exp: duplicate names are refused */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *sub = bad[i].extra && strstr(bad[i].extra, "\"sub\"") ? NULL : "u";
        char *c = tas_claims(as(), bad[i].aud, sub, NULL, bad[i].exp_in, bad[i].nbf_in, bad[i].extra);
        char *t = tas_sign(as(), TAS_ES256, c, 0);
        T_VERIFY_FAIL(a, t, MCP_AUTH_INVALID_TOKEN, bad[i].msg);
        free(t);
        free(c);
    }
    /* wrong issuer, no issuer, no exp */
    const char *raw[] = {"{\"iss\":\"https://evil.example\",\"aud\":\"" RESOURCE "\",\"exp\":9999999999}",
                         "{\"aud\":\"" RESOURCE "\",\"exp\":9999999999}"};
    for (size_t i = 0; i < 2; i++) {
        char *t = tas_sign(as(), TAS_EDDSA, raw[i], 0);
        T_VERIFY_FAIL(a, t, MCP_AUTH_INVALID_TOKEN, "iss");
        free(t);
    }
    char noexp[300];
    snprintf(noexp, sizeof noexp, "{\"iss\":\"%s\",\"aud\":\"%s\"}", tas_issuer(as()), RESOURCE);
    char *t = tas_sign(as(), TAS_EDDSA, noexp, 0);
    T_VERIFY_FAIL(a, t, MCP_AUTH_INVALID_TOKEN, "exp");
    free(t);
    snprintf(noexp, sizeof noexp, "{\"iss\":\"%s\",\"aud\":\"%s\",\"exp\":9999999999,\"iat\":9999999999}",
             tas_issuer(as()), RESOURCE);
    t = tas_sign(as(), TAS_EDDSA, noexp, 0);
    T_VERIFY_FAIL(a, t, MCP_AUTH_INVALID_TOKEN, "future");
    free(t);
    /* aud as an array naming us; host case and a trailing slash do not matter */
    const char *good_aud[] = {"[\"https://x.example\",\"" RESOURCE "\"]", "HTTPS://MCP.EXAMPLE.COM/mcp"};
    for (size_t i = 0; i < 2; i++) {
        char *c = tas_claims(as(), good_aud[i], "u", NULL, 300, 0, NULL);
        t = tas_sign(as(), TAS_RS256, c, 0);
        mcp_principal *p;
        T_VERIFY_OK(a, t, p);
        mcp_principal_free(p);
        free(t);
        free(c);
    }
    char *c = tas_claims(as(), RESOURCE "/", "u", NULL, 300, 0, NULL); /* path differs: not us */
    t = tas_sign(as(), TAS_RS256, c, 0);
    T_VERIFY_FAIL(a, t, MCP_AUTH_INVALID_TOKEN, "another resource");
    free(t);
    free(c);
    /* leeway: 30 s late passes with the default 60 */
    c = tas_claims(as(), RESOURCE, "u", NULL, -30, 0, NULL);
    t = tas_sign(as(), TAS_PS256, c, 0);
    mcp_principal *p;
    T_VERIFY_OK(a, t, p);
    mcp_principal_free(p);
    /* scp array and azp */
    free(c);
    free(t);
    c = tas_claims(as(), RESOURCE, NULL, NULL, 300, 0, ",\"scp\":[\"a\",\"b\"],\"azp\":\"cli\"");
    t = tas_sign(as(), TAS_PS256, c, 0);
    T_VERIFY_OK(a, t, p);
    T_EQ_STR(mcp_principal_scopes(p), "a b");
    T_NULL(mcp_principal_subject(p));
    T_EQ_STR(mcp_principal_client_id(p), "cli");
    mcp_principal_free(p);
    free(t);
    free(c);
    mcp_auth_free(a);
}

static void test_verify_no_leeway(void)
{
    char *jwks = tas_jwks(as());
    mcp_auth_opts o;
    memset(&o, 0, sizeof o);
    o.resource = RESOURCE;
    o.issuers = tas_issuer(as());
    o.jwks_json = jwks;
    o.leeway_s = -1;
    mcp_auth *a;
    T_OK(mcp_auth_new(&a, &o, NULL));
    free(jwks);
    char *c = tas_claims(as(), RESOURCE, "u", NULL, -5, 0, NULL);
    char *t = tas_sign(as(), TAS_ES256, c, 0);
    T_VERIFY_FAIL(a, t, MCP_AUTH_INVALID_TOKEN, "expired");
    free(t);
    free(c);
    mcp_auth_free(a);
}

static void test_forgeries(void)
{
    mcp_auth *a = make_auth(NULL, -1);
    char *c = tas_claims(as(), RESOURCE, "mallory", "mcp:tools", 300, 0, NULL);
    char *t = tas_token_none(c);
    T_VERIFY_FAIL(a, t, MCP_AUTH_INVALID_TOKEN, "alg none");
    free(t);
    t = tas_token_hs256_pubkey(as(), c);
    T_VERIFY_FAIL(a, t, MCP_AUTH_INVALID_TOKEN, "HMAC");
    free(t);
    /* an RS256 signature presented as PS256 with the RS256 key's kid */
    char header[200];
    snprintf(header, sizeof header, "{\"alg\":\"PS256\",\"kid\":\"%s\"}", tas_kid(as(), TAS_RS256));
    t = tas_sign_header(as(), TAS_PS256, header, c, 0);
    T_VERIFY_FAIL(a, t, MCP_AUTH_INVALID_TOKEN, "does not allow");
    free(t);
    /* an algorithm the verifier was told not to accept */
    mcp_auth *only_es = make_auth("ES256", -1);
    t = tas_sign(as(), TAS_RS256, c, 0);
    T_VERIFY_FAIL(only_es, t, MCP_AUTH_INVALID_TOKEN, "not allowed");
    free(t);
    /* garbage and size */
    T_VERIFY_FAIL(a, "not-a-jwt", MCP_AUTH_INVALID_TOKEN, "not a JWT");
    T_VERIFY_FAIL(a, "a b", MCP_AUTH_INVALID_TOKEN, "token68");
    T_VERIFY_FAIL(a, "", MCP_AUTH_INVALID_TOKEN, "empty");
    char *big = malloc(9000);
    memset(big, 'a', 8999);
    big[8999] = '\0';
    T_VERIFY_FAIL(a, big, MCP_AUTH_INVALID_TOKEN, "longer");
    free(big);
    free(c);
    mcp_auth_free(only_es);
    mcp_auth_free(a);
}

static void test_check_header_and_required_scopes(void)
{
    char *jwks = tas_jwks(as());
    mcp_auth_opts o;
    memset(&o, 0, sizeof o);
    o.resource = RESOURCE;
    o.issuers = tas_issuer(as());
    o.jwks_json = jwks;
    o.required_scopes = "mcp";
    mcp_auth *a;
    T_OK(mcp_auth_new(&a, &o, NULL));
    free(jwks);
    mcp_principal *p = NULL;
    mcp_auth_error why;
    mcp_error err;
    T_STATUS(mcp_auth_check_header(a, NULL, &p, &why, &err), MCP_ERR_AUTH);
    T_EQ_INT(why, MCP_AUTH_NO_TOKEN);
    T_STATUS(mcp_auth_check_header(a, "Bearer", &p, &why, &err), MCP_ERR_AUTH);
    T_EQ_INT(why, MCP_AUTH_INVALID_REQUEST);
    char *c = tas_claims(as(), RESOURCE, "u", "other", 300, 0, NULL);
    char *t = tas_sign(as(), TAS_ES256, c, 0);
    char h[2048];
    snprintf(h, sizeof h, "Bearer %s", t);
    T_STATUS(mcp_auth_check_header(a, h, &p, &why, &err), MCP_ERR_AUTH);
    T_EQ_INT(why, MCP_AUTH_INSUFFICIENT_SCOPE);
    free(c);
    free(t);
    c = tas_claims(as(), RESOURCE, "u", "other mcp", 300, 0, NULL);
    t = tas_sign(as(), TAS_ES256, c, 0);
    snprintf(h, sizeof h, "bearer %s", t);
    T_OK(mcp_auth_check_header(a, h, &p, &why, &err));
    T_EQ_INT(why, MCP_AUTH_OK);
    mcp_principal_free(p);
    free(c);
    free(t);
    mcp_auth_free(a);
}

static void test_scope_hierarchy(void)
{
    char *jwks = tas_jwks(as());
    static const char *const hier[] = {"admin files:admin", "files:admin files:read files:write", NULL};
    mcp_auth_opts o;
    memset(&o, 0, sizeof o);
    o.resource = RESOURCE;
    o.issuers = tas_issuer(as());
    o.jwks_json = jwks;
    o.scope_hierarchy = hier;
    mcp_auth *a;
    T_OK(mcp_auth_new(&a, &o, NULL));
    free(jwks);
    char *c = tas_claims(as(), RESOURCE, "root", "admin", 300, 0, NULL);
    char *t = tas_sign(as(), TAS_ES256, c, 0);
    mcp_principal *p;
    T_VERIFY_OK(a, t, p);
    T_EQ_STR(mcp_principal_scopes(p), "admin"); /* as granted */
    T_TRUE(mcp_principal_has_scope(p, "files:write")); /* implied, transitively */
    T_TRUE(mcp_principal_has_scopes(p, "files:admin files:read"));
    T_FALSE(mcp_principal_has_scope(p, "billing"));
    mcp_principal_free(p);
    free(t);
    free(c);
    mcp_auth_free(a);
    static const char *const bad[] = {"lonely", NULL};
    jwks = tas_jwks(as());
    o.jwks_json = jwks;
    o.scope_hierarchy = bad;
    T_STATUS(mcp_auth_new(&a, &o, NULL), MCP_ERR_INVALID_ARG);
    free(jwks);
}

static void test_token_cache(void)
{
    mcp_auth *a = make_auth(NULL, 16);
    char *c = tas_claims(as(), RESOURCE, "u", "x", 300, 0, NULL);
    char *t = tas_sign(as(), TAS_EDDSA, c, 0);
    mcp_principal *p1, *p2;
    T_VERIFY_OK(a, t, p1);
    T_VERIFY_OK(a, t, p2);
    T_TRUE(p1 == p2); /* the same principal, from the cache */
    mcp_principal_free(p1);
    mcp_principal_free(p2);
    /* a refused token is never cached */
    char *bad = tas_sign(as(), TAS_EDDSA, c, TAS_BAD_SIG);
    T_VERIFY_FAIL(a, bad, MCP_AUTH_INVALID_TOKEN, "signature");
    T_VERIFY_FAIL(a, bad, MCP_AUTH_INVALID_TOKEN, "signature");
    free(bad);
    free(t);
    free(c);
    mcp_auth_free(a);
}

static void test_verify_nomem(void)
{
    mcp_auth *a = make_auth(NULL, -1);
    char *c = tas_claims(as(), RESOURCE, "u", "a b c", 300, 0, ",\"client_id\":\"x\"");
    char *t = tas_sign(as(), TAS_ES256, c, 0);
    mcp_principal *p = NULL;
    mcp_status st;
    T_NOMEM_LOOP(st, { st = mcp_auth_verify(a, t, strlen(t), &p, NULL, NULL); }, { mcp_principal_free(p); });
    free(t);
    free(c);
    mcp_auth_free(a);
}

/* ---- options, metadata, challenges ---------------------------------------------- */

static void test_new_refusals(void)
{
    mcp_auth_opts o;
    memset(&o, 0, sizeof o);
    mcp_auth *a = NULL;
    mcp_error err;
    T_STATUS(mcp_auth_new(&a, &o, &err), MCP_ERR_INVALID_ARG); /* no key source */
    o.jwks_json = "{\"keys\":[]}";
    T_STATUS(mcp_auth_new(&a, &o, &err), MCP_ERR_INVALID_ARG); /* no issuers */
    o.issuers = "https://as.example";
    T_STATUS(mcp_auth_new(&a, &o, &err), MCP_ERR_INVALID); /* no usable key */
    char *jwks = tas_jwks(as());
    o.jwks_json = jwks;
    const char *bad_algs[] = {"none", "HS256", "RS256 HS512", "RS384", " "};
    for (size_t i = 0; i < sizeof bad_algs / sizeof bad_algs[0]; i++) {
        o.algorithms = bad_algs[i];
        T_STATUS(mcp_auth_new(&a, &o, &err), MCP_ERR_INVALID_ARG);
    }
    o.algorithms = NULL;
    const char *bad_res[] = {"mcp.example.com", "https://mcp.example.com#frag", "ftp://x", "https://", "https:// x"};
    for (size_t i = 0; i < sizeof bad_res / sizeof bad_res[0]; i++) {
        o.resource = bad_res[i];
        T_STATUS(mcp_auth_new(&a, &o, &err), MCP_ERR_INVALID_ARG);
    }
    o.resource = RESOURCE;
    o.scopes_supported = "ok \"quoted\"";
    T_STATUS(mcp_auth_new(&a, &o, &err), MCP_ERR_INVALID_ARG);
    o.scopes_supported = NULL;
    o.jwks_json = NULL;
    o.jwks_url = "http://as.example/jwks"; /* plain http to a remote host */
    T_STATUS(mcp_auth_new(&a, &o, &err), MCP_ERR_INVALID_ARG);
    o.jwks_url = NULL;
    o.introspection_url = "https://as.example/introspect"; /* no client credentials */
    T_STATUS(mcp_auth_new(&a, &o, &err), MCP_ERR_INVALID_ARG);
    o.introspection_url = NULL;
    o.jwks_file = "/nonexistent/jwks.json";
    T_STATUS(mcp_auth_new(&a, &o, &err), MCP_ERR_IO);
    T_NULL(a);
    free(jwks);
    mcp_auth_free(NULL);
    mcp_principal_free(NULL);
}

static void test_metadata_and_challenge(void)
{
    mcp_auth *a = make_auth(NULL, 0);
    T_EQ_STR(mcp_auth_metadata_url(a), "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
    T_EQ_STR(mcp_auth_resource(a), RESOURCE);
    mcp_buf b;
    mcp_buf_init(&b, 0);
    T_OK(mcp_auth_metadata(a, &b));
    char want[512];
    snprintf(want, sizeof want,
             "{\"resource\":\"" RESOURCE "\",\"authorization_servers\":[\"%s\"],"
             "\"scopes_supported\":[\"mcp:tools\",\"files:read\"],\"bearer_methods_supported\":[\"header\"]}",
             tas_issuer(as()));
    T_EQ_STR(b.data, want);
    mcp_buf_reset(&b);
    T_OK(mcp_auth_challenge(a, MCP_AUTH_NO_TOKEN, "mcp:tools", NULL, &b));
    T_EQ_STR(b.data, "Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource/mcp\", "
                     "scope=\"mcp:tools\"");
    mcp_buf_reset(&b);
    T_OK(mcp_auth_challenge(a, MCP_AUTH_INSUFFICIENT_SCOPE, "files:write", "need write", &b));
    T_EQ_STR(b.data, "Bearer error=\"insufficient_scope\", resource_metadata=\"https://mcp.example.com/.well-known/"
                     "oauth-protected-resource/mcp\", scope=\"files:write\", error_description=\"need write\"");
    mcp_buf_reset(&b);
    T_STATUS(mcp_auth_challenge(a, MCP_AUTH_INVALID_TOKEN, NULL, "a \"quote\"", &b), MCP_ERR_INVALID_ARG);
    mcp_buf_cleanup(&b);
    mcp_auth_free(a);
    T_EQ_STR(mcp_auth_error_code(MCP_AUTH_INVALID_TOKEN), "invalid_token");
    T_NULL(mcp_auth_error_code(MCP_AUTH_NO_TOKEN));

    /* the well-known URL for a bare origin and for one with a slash */
    const char *res[][2] = {{"https://h.example", "https://h.example/.well-known/oauth-protected-resource"},
                            {"https://h.example/", "https://h.example/.well-known/oauth-protected-resource"},
                            {"http://127.0.0.1:8080/a/mcp", "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/mcp"}};
    for (size_t i = 0; i < 3; i++) {
        char *jwks = tas_jwks(as());
        mcp_auth_opts o;
        memset(&o, 0, sizeof o);
        o.resource = res[i][0];
        o.issuers = "x";
        o.jwks_json = jwks;
        T_OK(mcp_auth_new(&a, &o, NULL));
        T_EQ_STR(mcp_auth_metadata_url(a), res[i][1]);
        mcp_auth_free(a);
        free(jwks);
    }
}

static void test_default_resource(void)
{
    char *jwks = tas_jwks(as());
    mcp_auth_opts o;
    memset(&o, 0, sizeof o);
    o.issuers = "x";
    o.jwks_json = jwks;
    mcp_auth *a;
    T_OK(mcp_auth_new(&a, &o, NULL));
    free(jwks);
    T_NULL(mcp_auth_resource(a));
    mcp_buf b;
    mcp_buf_init(&b, 0);
    T_STATUS(mcp_auth_metadata(a, &b), MCP_ERR_STATE);
    T_OK(mcp__auth_default_resource(a, "http://127.0.0.1:1234/mcp"));
    T_OK(mcp__auth_default_resource(a, "http://ignored.example/"));
    T_EQ_STR(mcp_auth_resource(a), "http://127.0.0.1:1234/mcp");
    T_EQ_STR(mcp__auth_resource_path(a), "/mcp");
    mcp_buf_cleanup(&b);
    mcp_auth_free(a);
}

static void test_parse_arg(void)
{
    mcp_auth_opts o;
    memset(&o, 0, sizeof o);
    int used;
    T_OK(mcp_auth_parse_arg(&o, "--auth-issuer", "https://as", &used));
    T_EQ_INT(used, 2);
    T_EQ_STR(o.issuers, "https://as");
    T_OK(mcp_auth_parse_arg(&o, "--auth-jwks=https://as/jwks", NULL, &used));
    T_EQ_INT(used, 1);
    T_EQ_STR(o.jwks_url, "https://as/jwks");
    T_OK(mcp_auth_parse_arg(&o, "--auth-jwks", "/etc/jwks.json", &used));
    T_EQ_STR(o.jwks_file, "/etc/jwks.json");
    T_OK(mcp_auth_parse_arg(&o, "--resource-url", "https://mcp", &used));
    T_EQ_STR(o.resource, "https://mcp");
    T_OK(mcp_auth_parse_arg(&o, "--auth-audience", "api://x", &used));
    T_EQ_STR(o.audience, "api://x");
    T_OK(mcp_auth_parse_arg(&o, "--auth-scopes", "a b", &used));
    T_EQ_STR(o.scopes_supported, "a b");
    setenv("MCP_AUTH_CLIENT_ID", "me", 1);
    setenv("MCP_AUTH_CLIENT_SECRET", "s3cret", 1);
    T_OK(mcp_auth_parse_arg(&o, "--auth-introspect", "https://as/introspect", &used));
    T_EQ_STR(o.client_id, "me");
    T_EQ_STR(o.client_secret, "s3cret");
    T_STATUS(mcp_auth_parse_arg(&o, "--auth-issuer", NULL, &used), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp_auth_parse_arg(&o, "--http", "80", &used), MCP_ERR_NOT_FOUND);
    T_EQ_INT(used, 0);
    T_STATUS(mcp_auth_parse_arg(&o, "--auth-issuerx", "y", &used), MCP_ERR_NOT_FOUND);
}

/* ---- token buckets ---------------------------------------------------------------- */

static void test_ratelimit(void)
{
    mcp__ratelimit *rl;
    T_OK(mcp__ratelimit_new(&rl, 2.0, 3, 16));
    uint64_t t = 1000;
    T_EQ_INT(mcp__ratelimit_take(rl, "a", 1, t), 0);
    T_EQ_INT(mcp__ratelimit_take(rl, "a", 1, t), 0);
    T_EQ_INT(mcp__ratelimit_take(rl, "a", 1, t), 0);
    T_EQ_INT(mcp__ratelimit_take(rl, "a", 1, t), 1); /* empty: one token in 0.5 s, rounded up */
    T_EQ_INT(mcp__ratelimit_take(rl, "b", 1, t), 0); /* another key has its own bucket */
    T_EQ_INT(mcp__ratelimit_take(rl, "a", 1, t + 500), 0);
    T_EQ_INT(mcp__ratelimit_take(rl, "a", 1, t + 500), 1);
    /* many keys: bounded memory, still answers */
    char k[16];
    for (int i = 0; i < 10000; i++) {
        snprintf(k, sizeof k, "k%d", i);
        mcp__ratelimit_take(rl, k, strlen(k), t + 1000);
    }
    mcp__ratelimit_free(rl);
    T_STATUS(mcp__ratelimit_new(&rl, 0, 1, 16), MCP_ERR_INVALID_ARG);
}

/* ---- the principal through a connection ------------------------------------------------ */

static _Atomic int g_runs;
static char g_seen_sub[64];
static int g_seen_write;

static mcp_status whoami(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    g_runs++;
    const char *s = mcp_call_subject(call);
    snprintf(g_seen_sub, sizeof g_seen_sub, "%s", s ? s : "(none)");
    g_seen_write = mcp_call_has_scope(call, "files:write");
    return mcp_call_text(call, mcp_principal_scopes(mcp_call_principal(call)), NULL);
}

static mcp_status read_secret(mcp_read *rd, const char *uri, const mcp_json *vars, void *ud)
{
    (void)vars;
    (void)ud;
    g_runs++;
    return mcp_read_text(rd, uri, "text/plain", mcp_principal_subject(mcp_read_principal(rd)));
}

static mcp_status prompt_fn(mcp_prompt *p, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    g_runs++;
    const char *sub = mcp_principal_subject(mcp_prompt_principal(p));
    return mcp_prompt_text(p, MCP_ROLE_USER, sub ? sub : "(none)");
}

typedef struct sink {
    pthread_mutex_t mu;
    char last[2048];
} sink;

static mcp_status capture(const char *frame, size_t len, void *ud)
{
    sink *s = ud;
    pthread_mutex_lock(&s->mu);
    snprintf(s->last, sizeof s->last, "%.*s", (int)len, frame);
    pthread_mutex_unlock(&s->mu);
    return MCP_OK;
}

static void test_conn_principal(void)
{
    g_runs = 0;
    mcp_server_opts so;
    memset(&so, 0, sizeof so);
    so.workers = 1;
    mcp_server *srv;
    T_OK(mcp_server_new(&srv, &so, NULL));
    mcp_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = "whoami";
    d.handler = whoami;
    d.flags = MCP_TOOL_NONBLOCKING;
    d.scopes = "  files:read ";
    T_OK(mcp_server_add_tool(srv, &d, NULL));
    d.name = "bad";
    d.scopes = "a\"b";
    T_STATUS(mcp_server_add_tool(srv, &d, NULL), MCP_ERR_INVALID_ARG);
    mcp_resource_def rd;
    memset(&rd, 0, sizeof rd);
    rd.uri = "secret://x";
    rd.name = "x";
    rd.size = -1;
    rd.handler = read_secret;
    rd.scopes = "secrets";
    rd.flags = MCP_RESOURCE_NONBLOCKING; /* answered inline: the checks below read g_runs at once */
    T_OK(mcp_server_add_resource(srv, &rd, NULL));
    mcp_prompt_def pd;
    memset(&pd, 0, sizeof pd);
    pd.name = "p";
    pd.handler = prompt_fn;
    pd.scopes = "prompts";
    pd.flags = MCP_PROMPT_NONBLOCKING;
    T_OK(mcp_server_add_prompt(srv, &pd, NULL));

    mcp_auth *a = make_auth(NULL, -1);
    char *c = tas_claims(as(), RESOURCE, "carol", "files:read files:write", 300, 0, NULL);
    char *t = tas_sign(as(), TAS_ES256, c, 0);
    mcp_principal *carol;
    T_VERIFY_OK(a, t, carol);
    free(t);
    free(c);
    c = tas_claims(as(), RESOURCE, "dave", "other", 300, 0, NULL);
    t = tas_sign(as(), TAS_ES256, c, 0);
    mcp_principal *dave;
    T_VERIFY_OK(a, t, dave);
    free(t);
    free(c);

    sink s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.mu, NULL);
    mcp_conn *conn;
    T_OK(mcp_conn_new(&conn, srv, capture, &s));
    static const char meta[] = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                               "\"io.modelcontextprotocol/clientCapabilities\":{}}";
    char frame[512];
    snprintf(frame, sizeof frame,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"whoami\",%s}}", meta);
    /* dave lacks files:read: refused before the handler */
    T_OK(mcp_conn_recv_auth(conn, frame, strlen(frame), dave));
    T_EQ_INT(g_runs, 0);
    T_TRUE(strstr(s.last, "-32600") && strstr(s.last, "insufficient scope") && strstr(s.last, "files:read"));
    /* carol has it: the handler sees her */
    T_OK(mcp_conn_recv_auth(conn, frame, strlen(frame), carol));
    T_EQ_INT(g_runs, 1);
    T_EQ_STR(g_seen_sub, "carol");
    T_EQ_INT(g_seen_write, 1);
    T_TRUE(strstr(s.last, "files:read files:write") != NULL);
    /* no principal (no authorization): not enforced, no subject */
    T_OK(mcp_conn_recv(conn, frame, strlen(frame)));
    T_EQ_INT(g_runs, 2);
    T_EQ_STR(g_seen_sub, "(none)");
    T_EQ_INT(g_seen_write, 0);
    /* resources and prompts */
    snprintf(frame, sizeof frame,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":\"secret://x\",%s}}",
             meta);
    T_OK(mcp_conn_recv_auth(conn, frame, strlen(frame), carol));
    T_EQ_INT(g_runs, 2);
    T_TRUE(strstr(s.last, "insufficient scope") && strstr(s.last, "secrets"));
    snprintf(frame, sizeof frame,
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\",\"params\":{\"name\":\"p\",%s}}", meta);
    T_OK(mcp_conn_recv_auth(conn, frame, strlen(frame), carol));
    T_EQ_INT(g_runs, 2);
    T_TRUE(strstr(s.last, "insufficient scope") && strstr(s.last, "prompts"));
    T_OK(mcp_conn_recv(conn, frame, strlen(frame)));
    T_EQ_INT(g_runs, 3);
    /* what the HTTP transport asks before dispatch */
    mcp_rpc_msg m;
    snprintf(frame, sizeof frame, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"whoami\"}}");
    T_OK(mcp_rpc_decode(&m, frame, strlen(frame), NULL, NULL));
    mcp_buf need;
    mcp_buf_init(&need, 0);
    T_OK(mcp__server_request_scopes(srv, &m, &need));
    T_EQ_STR(need.data, "files:read");
    mcp_rpc_msg_cleanup(&m);
    mcp_buf_cleanup(&need);
    mcp_conn_free(conn);
    pthread_mutex_destroy(&s.mu);
    mcp_principal_free(carol);
    mcp_principal_free(dave);
    mcp_auth_free(a);
    mcp_server_free(srv);
}

/* Principal keys: distinct principals never share one (a subject that
 * reads like the client-credentials form, fields that shift between iss and
 * sub, subjects longer than any buffer), and one principal always gives the
 * same key. */
static void principal_key_of(const char *iss, const char *sub, const char *client_id, char *out, size_t cap)
{
    struct mcp_principal p;
    memset(&p, 0, sizeof p);
    p.iss = iss;
    p.sub = sub;
    p.client_id = client_id;
    mcp__principal_key(&p, out, cap);
}

static void test_principal_key(void)
{
    char a[400], b[400];
    principal_key_of("https://as", "client X", NULL, a, sizeof a);
    principal_key_of("https://as", NULL, "X", b, sizeof b);
    T_TRUE(a[0] && b[0]);
    T_TRUE(strcmp(a, b) != 0); /* sub "client X" is not the client X */
    principal_key_of("a b", "c", NULL, a, sizeof a);
    principal_key_of("a", "b c", NULL, b, sizeof b);
    T_TRUE(strcmp(a, b) != 0); /* the boundary between iss and sub counts */
    principal_key_of(NULL, "u", NULL, a, sizeof a);
    principal_key_of("", "u", NULL, b, sizeof b);
    T_TRUE(strcmp(a, b) == 0); /* no iss is an empty one */
    principal_key_of("https://as", "u", "c1", a, sizeof a);
    principal_key_of("https://as", "u", "c2", b, sizeof b);
    T_TRUE(strcmp(a, b) == 0); /* a subject is the same person whichever client acts */
    /* subjects that differ only after 400 bytes */
    char s1[1001], s2[1001];
    memset(s1, 'x', 1000);
    s1[1000] = '\0';
    memcpy(s2, s1, sizeof s1);
    s2[999] = 'y';
    principal_key_of("https://as", s1, NULL, a, sizeof a);
    principal_key_of("https://as", s2, NULL, b, sizeof b);
    T_TRUE(a[0] && strcmp(a, b) != 0);
    principal_key_of("https://as", s1, NULL, b, sizeof b);
    T_EQ_STR(a, b);
    /* no principal: the empty key, unlike any principal's */
    mcp__principal_key(NULL, a, sizeof a);
    T_EQ_STR(a, "");
    principal_key_of(NULL, NULL, NULL, a, sizeof a);
    T_TRUE(a[0] != '\0');
}

/* requestState is bound to the principal it was minted for: another
 * subject (or a request without one) replaying it is refused. */
static mcp_status ask_name(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    const mcp_json *answer = NULL;
    mcp_status st = mcp_call_elicit(call, "name", "Name?",
                                    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}", &answer);
    if (st)
        return st;
    return mcp_call_textf(call, "hello %s", mcp_json_str(mcp_json_get(mcp_json_get(answer, "content"), "name"), NULL));
}

/* The requestState of an input_required answer in `frame` into out ("" if none). */
static void state_of(const char *frame, char *out, size_t cap)
{
    out[0] = '\0';
    mcp_json_doc *d = NULL;
    if (mcp_json_parse(&d, frame, strlen(frame), NULL, NULL))
        return;
    const char *st = mcp_json_str(mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "result"), "requestState"), NULL);
    snprintf(out, cap, "%s", st ? st : "");
    mcp_json_doc_free(d);
}

static void test_request_state_principal(void)
{
    mcp_server_opts so;
    memset(&so, 0, sizeof so);
    so.workers = 1;
    mcp_server *srv;
    T_OK(mcp_server_new(&srv, &so, NULL));
    mcp_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = "ask";
    d.handler = ask_name;
    d.flags = MCP_TOOL_NONBLOCKING;
    T_OK(mcp_server_add_tool(srv, &d, NULL));
    mcp_auth *a = make_auth(NULL, -1);
    char *c = tas_claims(as(), RESOURCE, "carol", "x", 300, 0, NULL);
    char *t = tas_sign(as(), TAS_ES256, c, 0);
    mcp_principal *carol;
    T_VERIFY_OK(a, t, carol);
    free(t);
    free(c);
    c = tas_claims(as(), RESOURCE, "dave", "x", 300, 0, NULL);
    t = tas_sign(as(), TAS_ES256, c, 0);
    mcp_principal *dave;
    T_VERIFY_OK(a, t, dave);
    free(t);
    free(c);

    sink s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.mu, NULL);
    mcp_conn *conn;
    T_OK(mcp_conn_new(&conn, srv, capture, &s));
    static const char meta[] = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                               "\"io.modelcontextprotocol/clientCapabilities\":{\"elicitation\":{}}}";
    char frame[1800], st_carol[1200], st_none[1200];
    snprintf(frame, sizeof frame,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"ask\",%s}}", meta);
    T_OK(mcp_conn_recv_auth(conn, frame, strlen(frame), carol));
    T_TRUE(strstr(s.last, "input_required") != NULL);
    state_of(s.last, st_carol, sizeof st_carol);
    T_TRUE(st_carol[0] != '\0');
    T_OK(mcp_conn_recv(conn, frame, strlen(frame)));
    state_of(s.last, st_none, sizeof st_none);
    T_TRUE(st_none[0] != '\0');

    static const char answer[] = "\"inputResponses\":{\"name\":{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}}";
#define RETRY(state)                                                                                           \
    snprintf(frame, sizeof frame,                                                                              \
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"ask\",%s,"         \
             "\"requestState\":\"%s\",%s}}",                                                                   \
             answer, (state), meta)
    /* carol's state presented by dave, or without a principal: refused */
    RETRY(st_carol);
    T_OK(mcp_conn_recv_auth(conn, frame, strlen(frame), dave));
    T_TRUE(strstr(s.last, "-32602") && strstr(s.last, "requestState integrity check failed"));
    T_OK(mcp_conn_recv(conn, frame, strlen(frame)));
    T_TRUE(strstr(s.last, "-32602") && strstr(s.last, "requestState integrity check failed"));
    /* a state minted without a principal, presented by carol: refused */
    RETRY(st_none);
    T_OK(mcp_conn_recv_auth(conn, frame, strlen(frame), carol));
    T_TRUE(strstr(s.last, "-32602") && strstr(s.last, "requestState integrity check failed"));
    /* each by its own: accepted */
    T_OK(mcp_conn_recv(conn, frame, strlen(frame)));
    T_TRUE(strstr(s.last, "hello Ada") != NULL);
    RETRY(st_carol);
    T_OK(mcp_conn_recv_auth(conn, frame, strlen(frame), carol));
    T_TRUE(strstr(s.last, "hello Ada") != NULL);
#undef RETRY
    T_TRUE(strcmp(st_none, st_carol) != 0); /* a nonce each, even within one millisecond */
    mcp_conn_free(conn);
    pthread_mutex_destroy(&s.mu);
    mcp_principal_free(carol);
    mcp_principal_free(dave);
    mcp_auth_free(a);
    mcp_server_free(srv);
}

/* With require_at_jwt, only a JWT typed at+jwt (RFC 9068) is an access token. */
static void test_require_at_jwt(void)
{
    char *jwks = tas_jwks(as());
    mcp_auth_opts o;
    memset(&o, 0, sizeof o);
    o.resource = RESOURCE;
    o.issuers = tas_issuer(as());
    o.jwks_json = jwks;
    o.token_cache = -1;
    o.require_at_jwt = 1;
    mcp_auth *a = NULL;
    T_OK(mcp_auth_new(&a, &o, NULL));
    free(jwks);
    char *c = tas_claims(as(), RESOURCE, "alice", "mcp:tools", 300, 0, NULL);
    char header[200];
    const char *typs[] = {"JWT", NULL, "at+jwt", "application/at+jwt"};
    for (int i = 0; i < 4; i++) {
        if (typs[i])
            snprintf(header, sizeof header, "{\"alg\":\"ES256\",\"kid\":\"%s\",\"typ\":\"%s\"}",
                     tas_kid(as(), TAS_ES256), typs[i]);
        else
            snprintf(header, sizeof header, "{\"alg\":\"ES256\",\"kid\":\"%s\"}", tas_kid(as(), TAS_ES256));
        char *t = tas_sign_header(as(), TAS_ES256, header, c, 0);
        if (i < 2) {
            T_VERIFY_FAIL(a, t, MCP_AUTH_INVALID_TOKEN, "at+jwt");
        } else {
            mcp_principal *p;
            T_VERIFY_OK(a, t, p);
            mcp_principal_free(p);
        }
        free(t);
    }
    free(c);
    mcp_auth_free(a);
}

TEST_MAIN(TEST(test_b64url), TEST(test_bearer_parse), TEST(test_scopes_normalize), TEST(test_jwks_parse_all_types),
          TEST(test_jwk_rejections), TEST(test_jwt_parse), TEST(test_verify_each_alg), TEST(test_verify_claims),
          TEST(test_verify_no_leeway), TEST(test_forgeries), TEST(test_check_header_and_required_scopes),
          TEST(test_scope_hierarchy), TEST(test_token_cache), TEST(test_verify_nomem), TEST(test_new_refusals),
          TEST(test_metadata_and_challenge), TEST(test_default_resource), TEST(test_parse_arg), TEST(test_ratelimit),
          TEST(test_conn_principal), TEST(test_principal_key),
          TEST(test_request_state_principal), TEST(test_require_at_jwt))
