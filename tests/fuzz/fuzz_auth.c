/*
 * Fuzz target: what the resource server reads from a peer or an issuer.
 * The first byte picks the parser; the rest is its input:
 *   0  an Authorization header value  -> mcp_auth_check_header()
 *   1  a bearer token                 -> mcp_auth_verify()
 *   2  a JWKS document                -> mcp__jwks_parse()
 *   3  lines: base64url text, a scope list, a header -> the small parsers
 * The verifier holds a fixed JWKS whose private keys signed the seed tokens
 * in tests/fuzz/corpus/auth (made with tests/auth/test_as.c), so mutations
 * of valid tokens reach the signature checks and every claim check.
 */
#include "auth/auth_internal.h"
#include "util/util.h"
#include <mcp/mcp.h>

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char g_jwks[] =
    "{\"keys\":["
    "{\"kty\":\"RSA\",\"kid\":\"RS256-1\",\"use\":\"sig\",\"alg\":\"RS256\",\"n\":\"vH8N3EGBnWK0sVymx1h7Z"
    "y3irbWeCeigafvKdDFPceWznWlD13nZRCJYrf-i07Cexlro5u4my1btQf6pQFpI_r_Ca4HUE3c1KLsLAEb8-6C21Xrr1OY3-gip8"
    "gCRt2GGbkoJG5WIiwj7Tg1mj0OKOm-ZaGz6WW5b00mmX8ZBZEPyDUoNjVKrsI0vKeWvKbEvRrHGOy3aah9fjzILzzNTUW2-DD_Gz"
    "6FsaEkSbLWM14XcIK1Ztk2VGzXgApcwnuoX58dGRMZ6m3os6OXMvGI_cdmy73llADw-tda25iT6yjRJ2eAUEzuIIX3lroAp9T1Ng"
    "2NI-cedIAM_y88-S2Mwrw\",\"e\":\"AQAB\"}"
    ","
    "{\"kty\":\"RSA\",\"kid\":\"PS256-2\",\"use\":\"sig\",\"alg\":\"PS256\",\"n\":\"o4RBiuexceI1xFpwiC3-r"
    "Iu6jt4jbK15WSlYiV407HwQpWCitD8qFPv4A_hAJK9rQeq-u8CDw4LwHFbZpTqRxsMfRd8dB9fwY4ETgyBr7qChBT20c9y4u1UlD"
    "srY-fb1d-2VnLBlw1VoYBedF0yvNZMPVABUs_By9QDmp8f7pmOAb1ncvbdoCAA7w63YX69eOAQVZGH5RBzBeMWAI5QxDP4RevZVZ"
    "dmkKEt6UAId9P4n252ZbCXIoYtOxKWko4hGmBQkyM-VQcJvOhg8TOtjxspsvkQ4ZkbIZzK2EP7AoVEh2-n_3q7cPCdRkuF-n-kC3"
    "ucC3iBEOvbAdRGegDHwZQ\",\"e\":\"AQAB\"}"
    ","
    "{\"kty\":\"EC\",\"kid\":\"ES256-3\",\"crv\":\"P-256\",\"x\":\"E-ZJO3Y0jvX4z7Y1uaotuuXEpbHpXhTUPuURih"
    "kZ9i4\",\"y\":\"_dwKEZw_FOC7h9fLphANA-IPYpHKWL9NCrn2cJ1ixnw\"}"
    ","
    "{\"kty\":\"OKP\",\"kid\":\"EdDSA-4\",\"crv\":\"Ed25519\",\"x\":\"-oGzSShciKtwE2CH_IQpLTqV2ucIt-qN7rI"
    "92StcKjM\"}"
    "]}";

static mcp_auth *g_auth;

static mcp_auth *auth(void)
{
    if (!g_auth) {
        mcp_auth_opts o;
        memset(&o, 0, sizeof o);
        o.resource = "https://mcp.example.com/mcp";
        o.issuers = "https://as.test.invalid";
        o.jwks_json = g_jwks;
        o.token_cache = -1; /* every input verified from scratch */
        o.required_scopes = "mcp:tools";
        static const char *const hier[] = {"files:admin files:read files:write", NULL};
        o.scope_hierarchy = hier;
        if (mcp_auth_new(&g_auth, &o, NULL) != MCP_OK)
            abort();
    }
    return g_auth;
}

/* A NUL-terminated copy of the input (headers and lists are C strings). */
static char *cstr(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static void check_principal(const mcp_principal *p)
{
    /* Accessors of a principal from any input must be safe to call. */
    (void)mcp_principal_subject(p);
    (void)mcp_principal_client_id(p);
    (void)mcp_principal_issuer(p);
    if (!mcp_principal_scopes(p))
        abort();
    (void)mcp_principal_has_scope(p, "files:write");
    (void)mcp_principal_has_scopes(p, "mcp:tools files:read");
    (void)mcp_principal_expires(p);
    (void)mcp_principal_claims(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    unsigned mode = data[0] % 4;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    mcp_principal *pr = NULL;
    mcp_auth_error why;
    mcp_error err;
    switch (mode) {
    case 0: {
        char *h = cstr(p, n);
        if (mcp_auth_check_header(auth(), h, &pr, &why, &err) == MCP_OK) {
            check_principal(pr);
            mcp_principal_free(pr);
        } else if (why == MCP_AUTH_OK) {
            abort(); /* a refusal always says why */
        }
        free(h);
        break;
    }
    case 1: {
        /* An exact-size copy, not NUL-terminated: the verifier must honour `len`. */
        char *t = malloc(n ? n : 1);
        memcpy(t, p, n);
        if (mcp_auth_verify(auth(), t, n, &pr, &why, &err) == MCP_OK) {
            check_principal(pr);
            mcp_principal_free(pr);
        }
        free(t);
        break;
    }
    case 2: {
        char *t = malloc(n ? n : 1);
        memcpy(t, p, n);
        mcp__keyset *ks = NULL;
        if (mcp__jwks_parse(t, n, MCP__ALG_ALL, 1 << 20, 8, &ks, &err) == MCP_OK) {
            if (ks->n == 0 || ks->n > 8)
                abort();
            mcp__keyset_release(ks);
        }
        free(t);
        break;
    }
    default: {
        char *s = cstr(p, n);
        char *line2 = strchr(s, '\n');
        char *line3 = line2 ? strchr(line2 + 1, '\n') : NULL;
        if (line2)
            *line2++ = '\0';
        if (line3)
            *line3++ = '\0';
        unsigned char out[256];
        size_t ol;
        if (mcp__base64url_decode(s, strlen(s), out, sizeof out, &ol, MCP__BASE64_CANONICAL) && ol > sizeof out)
            abort();
        char *norm = NULL;
        if (line2 && mcp__scopes_normalize(line2, &norm) == MCP_OK && norm && strstr(norm, "  "))
            abort();
        mcp_free(norm);
        const char *tok, *w;
        size_t tl;
        if (line3 && mcp__auth_parse_bearer(line3, &tok, &tl, &w) == MCP_AUTH_OK && (tl == 0 || tok < line3))
            abort();
        free(s);
        break;
    }
    }
    return 0;
}
