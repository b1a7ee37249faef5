/*
 * Unit tests of the client's OAuth pieces (src/client/oauth.c): WWW-Authenticate
 * parsing, the well-known URLs, canonical resource URIs, Protected
 * Resource and authorization server metadata checks, PKCE, scopes, form
 * encoding, the authorization response check (state, RFC 9207 iss) and
 * token answers; every parser also under the failing allocator.
 */
#include "client/oauth.h"
#include "testlib.h"

#include <mcp/mcp.h>

/* ---- WWW-Authenticate ------------------------------------------------------ */

static void parse(const char *text, mcp__challenge *ch)
{
    mcp_status st = mcp__oauth_parse_challenge(text, text ? strlen(text) : 0, ch);
    if (st != MCP_OK)
        T_FAIL_("parse_challenge: %s", mcp_status_name(st));
}

static void test_challenge_bearer(void)
{
    mcp__challenge ch;
    parse("Bearer resource_metadata=\"https://mcp.example.com/.well-known/oauth-protected-resource\", "
          "scope=\"files:read files:write\"",
          &ch);
    T_TRUE(ch.bearer);
    T_EQ_STR(ch.resource_metadata, "https://mcp.example.com/.well-known/oauth-protected-resource");
    T_EQ_STR(ch.scope, "files:read files:write");
    T_NULL(ch.error);
    mcp__challenge_cleanup(&ch);
}

static void test_challenge_several(void)
{
    mcp__challenge ch;
    /* Another scheme first, with its own parameters and commas inside quotes;
     * an escaped quote in the description; parameter names in any case. */
    parse("Basic realm=\"a, b\", charset=UTF-8, Bearer ERROR=\"insufficient_scope\", scope=\"files:write\", "
          "resource_metadata=\"https://m.example/.well-known/oauth-protected-resource\", "
          "error_description=\"needs \\\"write\\\"\"",
          &ch);
    T_TRUE(ch.bearer);
    T_EQ_STR(ch.error, "insufficient_scope");
    T_EQ_STR(ch.scope, "files:write");
    T_EQ_STR(ch.error_description, "needs \"write\"");
    T_EQ_STR(ch.resource_metadata, "https://m.example/.well-known/oauth-protected-resource");
    mcp__challenge_cleanup(&ch);

    /* A token68 scheme, then Bearer with token (unquoted) values. */
    parse("Negotiate YIIBhwYGKwYBBQUCoIIBezCCAXeg==, bearer scope=read, error=invalid_token", &ch);
    T_TRUE(ch.bearer);
    T_EQ_STR(ch.scope, "read");
    T_EQ_STR(ch.error, "invalid_token");
    mcp__challenge_cleanup(&ch);

    /* DPoP's parameters are not Bearer's. */
    parse("DPoP algs=\"ES256\", scope=\"dpop-only\", Bearer scope=\"x\"", &ch);
    T_TRUE(ch.bearer);
    T_EQ_STR(ch.scope, "x");
    mcp__challenge_cleanup(&ch);

    /* The first of a repeated parameter counts; unknown ones are skipped. */
    parse("Bearer realm=\"mcp\", scope=\"first\", scope=\"second\"", &ch);
    T_EQ_STR(ch.scope, "first");
    mcp__challenge_cleanup(&ch);
}

static void test_challenge_odd(void)
{
    mcp__challenge ch;
    parse(NULL, &ch);
    T_FALSE(ch.bearer);
    mcp__challenge_cleanup(&ch);
    parse("", &ch);
    T_FALSE(ch.bearer);
    mcp__challenge_cleanup(&ch);
    parse("Bearer", &ch);
    T_TRUE(ch.bearer);
    T_NULL(ch.scope);
    mcp__challenge_cleanup(&ch);
    parse("Basic realm=\"x\"", &ch);
    T_FALSE(ch.bearer);
    mcp__challenge_cleanup(&ch);
    /* Unterminated quote: what was read is kept. */
    parse("Bearer scope=\"a b", &ch);
    T_TRUE(ch.bearer);
    T_EQ_STR(ch.scope, "a b");
    mcp__challenge_cleanup(&ch);
    /* Junk bytes, stray commas, an empty quoted value. */
    parse(",,, \x01 Bearer ,, scope=\"\" ,, error=x=", &ch);
    T_TRUE(ch.bearer);
    T_EQ_STR(ch.scope, "");
    mcp__challenge_cleanup(&ch);
    /* Length is honoured (no NUL needed). */
    const char *t = "Bearer scope=\"abc\"XYZ";
    T_OK(mcp__oauth_parse_challenge(t, 18, &ch));
    T_EQ_STR(ch.scope, "abc");
    mcp__challenge_cleanup(&ch);
}

static void test_challenge_nomem(void)
{
    mcp__challenge ch;
    const char *t = "Basic realm=\"x\", Bearer error=\"insufficient_scope\", scope=\"a b\", "
                    "resource_metadata=\"https://m/x\", error_description=\"d\"";
    mcp_status st;
    T_NOMEM_LOOP(st, {
        st = mcp__oauth_parse_challenge(t, strlen(t), &ch);
        if (st)
            mcp__challenge_cleanup(&ch);
    }, {});
    T_EQ_STR(ch.error_description, "d");
    mcp__challenge_cleanup(&ch);
}

/* ---- URLs ------------------------------------------------------------------- */

static void expect_urls(mcp_status (*fn)(const char *, char **, size_t *), const char *in, size_t want_n,
                        const char *a, const char *b, const char *c)
{
    char *out[3] = {NULL, NULL, NULL};
    size_t n = 0;
    T_OK(fn(in, out, &n));
    const char *want[3] = {a, b, c};
    int ok = n == want_n;
    for (size_t i = 0; ok && i < n; i++)
        ok = strcmp(out[i], want[i]) == 0;
    if (!ok) {
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, "  got %s\n", out[i]);
    }
    for (size_t i = 0; i < n; i++)
        mcp_free(out[i]);
    if (!ok)
        T_FAIL_("well-known URLs for %s", in);
}

static mcp_status prm2(const char *u, char **o, size_t *n)
{
    return mcp__oauth_prm_urls(u, o, n);
}

static mcp_status as3(const char *u, char **o, size_t *n)
{
    return mcp__oauth_as_urls(u, o, n);
}

static void test_wellknown_urls(void)
{
    /* RFC 9728: path insertion first, then the root. */
    expect_urls(prm2, "https://example.com/public/mcp", 2,
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource", NULL);
    expect_urls(prm2, "http://localhost:3000/mcp/?x=1", 2,
                "http://localhost:3000/.well-known/oauth-protected-resource/mcp",
                "http://localhost:3000/.well-known/oauth-protected-resource", NULL);
    expect_urls(prm2, "https://example.com", 1, "https://example.com/.well-known/oauth-protected-resource", NULL,
                NULL);
    expect_urls(prm2, "https://example.com/", 1, "https://example.com/.well-known/oauth-protected-resource", NULL,
                NULL);
    /* The spec's order for issuers with and without a path. */
    expect_urls(as3, "https://auth.example.com/tenant1", 3,
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration");
    expect_urls(as3, "https://auth.example.com", 2, "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration", NULL);
    expect_urls(as3, "http://127.0.0.1:8080/a/b/", 3, "http://127.0.0.1:8080/.well-known/oauth-authorization-server/a/b",
                "http://127.0.0.1:8080/.well-known/openid-configuration/a/b",
                "http://127.0.0.1:8080/a/b/.well-known/openid-configuration");
    char *o[3];
    size_t n;
    T_STATUS(mcp__oauth_as_urls("not a url", o, &n), MCP_ERR_INVALID_ARG);
    T_STATUS(mcp__oauth_prm_urls("ftp://example.com/x", o, &n), MCP_ERR_INVALID_ARG);
    mcp_status st;
    T_NOMEM_LOOP(st, {
        st = mcp__oauth_as_urls("https://auth.example.com/tenant1", o, &n);
    }, {
        for (size_t i = 0; i < n; i++)
            mcp_free(o[i]);
    });
}

static void test_canonical_uri(void)
{
    char *s;
    T_EQ_STR(s = mcp__oauth_canonical_uri("HTTPS://MCP.Example.COM:443/mcp#frag"), "https://mcp.example.com/mcp");
    mcp_free(s);
    T_EQ_STR(s = mcp__oauth_canonical_uri("https://mcp.example.com/"), "https://mcp.example.com");
    mcp_free(s);
    T_EQ_STR(s = mcp__oauth_canonical_uri("http://h.example:8080/x/Y?q=1"), "http://h.example:8080/x/Y");
    mcp_free(s);
    T_EQ_STR(s = mcp__oauth_canonical_uri("https://mcp.example.com:8443"), "https://mcp.example.com:8443");
    mcp_free(s);
    T_NULL(mcp__oauth_canonical_uri("mcp.example.com"));
    T_NULL(mcp__oauth_canonical_uri("file:///etc/passwd"));
}

static void test_resource_covers(void)
{
    T_TRUE(mcp__oauth_resource_covers("http://localhost:3000/mcp", "http://localhost:3000/mcp"));
    T_TRUE(mcp__oauth_resource_covers("http://localhost:3000", "http://localhost:3000/mcp"));
    T_TRUE(mcp__oauth_resource_covers("http://localhost:3000/", "http://localhost:3000/mcp"));
    T_TRUE(mcp__oauth_resource_covers("https://h.example/a", "https://h.example/a/b"));
    T_TRUE(mcp__oauth_resource_covers("HTTPS://H.example:443/mcp", "https://h.example/mcp"));
    T_TRUE(mcp__oauth_resource_covers("https://h.example/mcp/", "https://h.example/mcp"));
    T_FALSE(mcp__oauth_resource_covers("https://h.example/mc", "https://h.example/mcp"));
    T_FALSE(mcp__oauth_resource_covers("https://h.example/mcp/x", "https://h.example/mcp"));
    T_FALSE(mcp__oauth_resource_covers("https://evil.example.com/mcp", "http://localhost:3000/mcp"));
    T_FALSE(mcp__oauth_resource_covers("http://localhost:3001/mcp", "http://localhost:3000/mcp"));
    T_FALSE(mcp__oauth_resource_covers("https://localhost:3000/mcp", "http://localhost:3000/mcp"));
    T_FALSE(mcp__oauth_resource_covers("https://h.example/mcp#x", "https://h.example/mcp"));
    T_FALSE(mcp__oauth_resource_covers("urn:x", "https://h.example/mcp"));
}

static void test_url_policy(void)
{
    T_TRUE(mcp__oauth_url_allowed("https://as.example.com/token", 0));
    T_TRUE(mcp__oauth_url_allowed("http://localhost:9000/token", 0));
    T_TRUE(mcp__oauth_url_allowed("http://127.0.0.1/token", 0));
    T_TRUE(mcp__oauth_url_allowed("http://[::1]:8080/token", 0));
    T_FALSE(mcp__oauth_url_allowed("http://as.example.com/token", 0));
    T_TRUE(mcp__oauth_url_allowed("http://as.example.com/token", 1));
    T_FALSE(mcp__oauth_url_allowed("ftp://as.example.com/token", 1));
    T_FALSE(mcp__oauth_url_allowed("https://as.example.com/token#frag", 0));
    T_FALSE(mcp__oauth_url_allowed("https://as.example.com/ token", 0));
    T_FALSE(mcp__oauth_url_allowed(NULL, 1));
    T_TRUE(mcp__oauth_is_loopback("localhost"));
    T_TRUE(mcp__oauth_is_loopback("LOCALHOST"));
    T_TRUE(mcp__oauth_is_loopback("app.localhost"));
    T_TRUE(mcp__oauth_is_loopback("127.0.0.1"));
    T_TRUE(mcp__oauth_is_loopback("127.8.9.10"));
    T_TRUE(mcp__oauth_is_loopback("[::1]"));
    T_FALSE(mcp__oauth_is_loopback("127.1"));
    T_FALSE(mcp__oauth_is_loopback("127.0.0.1.evil.example"));
    T_FALSE(mcp__oauth_is_loopback("localhost.evil.example"));
    T_FALSE(mcp__oauth_is_loopback("128.0.0.1"));
}

/* ---- metadata documents --------------------------------------------------------- */

#define SERVER "http://localhost:3000/mcp"

static mcp_status prm(const char *doc, mcp__prm *out, char *why)
{
    return mcp__oauth_parse_prm(doc, strlen(doc), SERVER, 0, out, why, 200);
}

static void test_prm(void)
{
    mcp__prm p;
    char why[200];
    T_OK(prm("{\"resource\":\"http://localhost:3000/mcp\",\"authorization_servers\":[\"ftp://x\",\"http://as.example\","
             "\"https://as.example/t1\",\"http://127.0.0.1:9/\"],\"scopes_supported\":[\"a\",\"b c\",7,\"d\"]}",
             &p, why));
    T_EQ_STR(p.resource, "http://localhost:3000/mcp");
    T_EQ_STR(p.servers[0], "https://as.example/t1"); /* ftp and off-loopback http left out */
    T_EQ_STR(p.servers[1], "http://127.0.0.1:9/");
    T_NULL(p.servers[2]);
    T_EQ_STR(p.scopes, "a d"); /* "b c" is not one scope, 7 not a string */
    mcp__prm_cleanup(&p);

    /* The root PRM of a server below the root names the origin. */
    T_OK(prm("{\"resource\":\"http://localhost:3000\",\"authorization_servers\":[\"https://as.example\"]}", &p, why));
    T_NULL(p.scopes);
    mcp__prm_cleanup(&p);

    T_STATUS(prm("{\"resource\":\"https://evil.example.com/mcp\",\"authorization_servers\":[\"https://as\"]}", &p,
                 why),
             MCP_ERR_AUTH);
    T_TRUE(strstr(why, "evil.example.com") != NULL);
    T_STATUS(prm("{\"authorization_servers\":[\"https://as\"]}", &p, why), MCP_ERR_INVALID_MSG);
    T_STATUS(prm("{\"resource\":\"http://localhost:3000/mcp\",\"authorization_servers\":[]}", &p, why),
             MCP_ERR_INVALID_MSG);
    T_STATUS(prm("{\"resource\":\"http://localhost:3000/mcp\",\"authorization_servers\":[\"http://as.example\"]}",
                 &p, why),
             MCP_ERR_INVALID_MSG);
    T_STATUS(prm("[1]", &p, why), MCP_ERR_INVALID_MSG);
    T_STATUS(prm("<html>", &p, why), MCP_ERR_INVALID_MSG);
    const char *good = "{\"resource\":\"http://localhost:3000/mcp\",\"authorization_servers\":[\"https://as.example\","
                       "\"https://as2.example\"],\"scopes_supported\":[\"a\",\"b\"]}";
    mcp_status st;
    T_NOMEM_LOOP(st, { st = prm(good, &p, why); }, { mcp__prm_cleanup(&p); });
}

#define ISSUER "https://as.example.com/tenant1"

static mcp_status asm_(const char *doc, mcp__asmeta *out, char *why)
{
    return mcp__oauth_parse_as(doc, strlen(doc), ISSUER, 0, out, why, 200);
}

static void test_as_metadata(void)
{
    mcp__asmeta m;
    char why[200];
    T_OK(asm_("{\"issuer\":\"https://as.example.com/tenant1\",\"authorization_endpoint\":\"https://as.example.com/a\","
              "\"token_endpoint\":\"https://as.example.com/t\",\"registration_endpoint\":\"https://as.example.com/r\","
              "\"code_challenge_methods_supported\":[\"plain\",\"S256\"],\"scopes_supported\":[\"x\",\"offline_access\"],"
              "\"token_endpoint_auth_methods_supported\":[\"client_secret_post\",\"none\",\"private_key_jwt\"],"
              "\"client_id_metadata_document_supported\":true,"
              "\"authorization_response_iss_parameter_supported\":true}",
              &m, why));
    T_EQ_STR(m.token_endpoint, "https://as.example.com/t");
    T_EQ_STR(m.registration_endpoint, "https://as.example.com/r");
    T_TRUE(m.pkce_s256 && m.cimd && m.iss_supported);
    T_EQ_INT(m.methods, MCP__AM_POST | MCP__AM_NONE);
    T_TRUE(mcp__oauth_scope_has(m.scopes, "offline_access"));
    mcp__asmeta_cleanup(&m);

    /* Defaults: basic when the methods are not listed; no PKCE when not listed. */
    T_OK(asm_("{\"issuer\":\"https://as.example.com/tenant1\",\"token_endpoint\":\"https://as.example.com/t\","
              "\"client_id_metadata_document_supported\":\"yes\"}",
              &m, why));
    T_EQ_INT(m.methods, MCP__AM_BASIC);
    T_FALSE(m.pkce_s256 || m.cimd || m.iss_supported);
    T_NULL(m.authorization_endpoint);
    mcp__asmeta_cleanup(&m);

    /* RFC 8414 section 3.3: identical issuer, no normalisation. */
    T_STATUS(asm_("{\"issuer\":\"https://as.example.com/tenant1/\",\"token_endpoint\":\"https://as.example.com/t\"}",
                  &m, why),
             MCP_ERR_AUTH);
    T_STATUS(asm_("{\"issuer\":\"https://attacker.example.com\",\"token_endpoint\":\"https://as.example.com/t\"}", &m,
                  why),
             MCP_ERR_AUTH);
    T_TRUE(strstr(why, "attacker.example.com") != NULL);
    T_STATUS(asm_("{\"token_endpoint\":\"https://as.example.com/t\"}", &m, why), MCP_ERR_AUTH);
    T_STATUS(asm_("{\"issuer\":\"https://as.example.com/tenant1\"}", &m, why), MCP_ERR_INVALID_MSG);
    T_STATUS(asm_("{\"issuer\":\"https://as.example.com/tenant1\",\"token_endpoint\":\"http://as.example.com/t\"}", &m,
                  why),
             MCP_ERR_INVALID_MSG);
    T_STATUS(asm_("{\"issuer\":\"https://as.example.com/tenant1\",\"token_endpoint\":\"https://as.example.com/t\","
                  "\"authorization_endpoint\":5}",
                  &m, why),
             MCP_ERR_INVALID_MSG);
    const char *good = "{\"issuer\":\"https://as.example.com/tenant1\",\"authorization_endpoint\":\"https://a/a\","
                       "\"token_endpoint\":\"https://a/t\",\"registration_endpoint\":\"https://a/r\","
                       "\"scopes_supported\":[\"x\"],\"code_challenge_methods_supported\":[\"S256\"]}";
    mcp_status st;
    T_NOMEM_LOOP(st, { st = asm_(good, &m, why); }, { mcp__asmeta_cleanup(&m); });
}

/* ---- PKCE, encodings, scopes ------------------------------------------------------ */

static void test_pkce(void)
{
    /* RFC 7636 appendix B. */
    char ch[44];
    T_OK(mcp__oauth_pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", ch));
    T_EQ_STR(ch, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

static void test_scopes(void)
{
    int nomem = 0;
    char *s = mcp__oauth_scope_union("a  b", "b c a d", &nomem);
    T_EQ_STR(s, "a b c d");
    mcp_free(s);
    s = mcp__oauth_scope_union(NULL, "x", &nomem);
    T_EQ_STR(s, "x");
    mcp_free(s);
    T_NULL(mcp__oauth_scope_union(NULL, "  ", &nomem));
    T_NULL(mcp__oauth_scope_union(NULL, NULL, &nomem));
    T_FALSE(nomem);
    T_TRUE(mcp__oauth_scope_has("mcp:basic offline_access", "offline_access"));
    T_FALSE(mcp__oauth_scope_has("mcp:basic offline_accessx", "offline_access"));
    T_FALSE(mcp__oauth_scope_has(NULL, "x"));
}

static void test_form(void)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    T_OK(mcp__oauth_form_append(&b, "redirect_uri", "http://localhost:3000/cb?a=1&b=2"));
    T_OK(mcp__oauth_form_append(&b, "scope", "a b~c-d._e"));
    T_OK(mcp__oauth_form_append(&b, "name", "\xc3\xa9+/"));
    T_EQ_STR(b.data, "redirect_uri=http%3A%2F%2Flocalhost%3A3000%2Fcb%3Fa%3D1%26b%3D2&scope=a%20b~c-d._e&name=%C3%A9%2B%2F");
    mcp_buf_cleanup(&b);
}

/* ---- the authorization response ---------------------------------------------------- */

#define RURI "http://localhost:3000/callback"
#define ISS "https://as.example"

static mcp_status redirect(const char *landed, int iss_required, char **code, char *why)
{
    return mcp__oauth_check_redirect(landed, RURI, "S-1", ISS, iss_required, code, why, 200);
}

static void test_redirect(void)
{
    char *code;
    char why[200];
    T_OK(redirect(RURI "?code=abc%2Fd&state=S-1&iss=https%3A%2F%2Fas.example", 1, &code, why));
    T_EQ_STR(code, "abc/d");
    mcp__oauth_wipe_free(code);
    /* Not advertised and absent: proceed. */
    T_OK(redirect(RURI "?state=S-1&code=c", 0, &code, why));
    T_EQ_STR(code, "c");
    mcp__oauth_wipe_free(code);
    /* Advertised and absent: reject. */
    T_STATUS(redirect(RURI "?state=S-1&code=c", 1, &code, why), MCP_ERR_AUTH);
    T_NULL(code);
    /* Present and wrong, advertised or not: reject, without acting on the error. */
    T_STATUS(redirect(RURI "?state=S-1&code=c&iss=https%3A%2F%2Fevil.example", 0, &code, why), MCP_ERR_AUTH);
    T_STATUS(redirect(RURI "?error=access_denied&state=S-1&iss=https%3A%2F%2Fevil.example", 1, &code, why),
             MCP_ERR_AUTH);
    T_TRUE(strstr(why, "access_denied") == NULL && strstr(why, "evil.example") != NULL);
    /* A normalisation-equivalent iss is still a mismatch. */
    T_STATUS(redirect(RURI "?state=S-1&code=c&iss=https%3A%2F%2Fas.example%2F", 1, &code, why), MCP_ERR_AUTH);
    T_STATUS(redirect(RURI "?state=S-1&code=c&iss=HTTPS%3A%2F%2Fas.example", 1, &code, why), MCP_ERR_AUTH);
    /* An error with the right iss is reported. */
    T_STATUS(redirect(RURI "?error=access_denied&error_description=no+thanks&state=S-1&iss=https://as.example", 1,
                      &code, why),
             MCP_ERR_AUTH);
    T_TRUE(strstr(why, "access_denied: no thanks") != NULL);
    /* State. */
    T_STATUS(redirect(RURI "?code=c&state=S-2", 0, &code, why), MCP_ERR_AUTH);
    T_STATUS(redirect(RURI "?code=c", 0, &code, why), MCP_ERR_AUTH);
    T_STATUS(redirect(RURI "?code=c&state=S-1%00x", 0, &code, why), MCP_ERR_AUTH);
    /* Another place, a repeated parameter, no code. */
    T_STATUS(redirect("http://localhost:3001/callback?code=c&state=S-1", 0, &code, why), MCP_ERR_AUTH);
    T_STATUS(redirect("http://localhost:3000/callbackX?code=c&state=S-1", 0, &code, why), MCP_ERR_AUTH);
    T_STATUS(redirect(RURI "?code=c&state=S-1&code=d", 0, &code, why), MCP_ERR_AUTH);
    T_STATUS(redirect(RURI "?state=S-1", 0, &code, why), MCP_ERR_AUTH);
    T_STATUS(redirect(RURI "?state=S-1&code=", 0, &code, why), MCP_ERR_AUTH);
    T_STATUS(redirect(RURI, 0, &code, why), MCP_ERR_AUTH);
    T_STATUS(redirect(NULL, 0, &code, why), MCP_ERR_AUTH);
    /* A fragment after the query is not part of it. */
    T_OK(redirect(RURI "?state=S-1&code=c#code=evil", 0, &code, why));
    T_EQ_STR(code, "c");
    mcp__oauth_wipe_free(code);
    mcp_status st;
    T_NOMEM_LOOP(st, {
        code = NULL;
        st = redirect(RURI "?code=abc&state=S-1&iss=https%3A%2F%2Fas.example&x=y&error_description=d", 1, &code, why);
    }, { mcp__oauth_wipe_free(code); });
}

/* ---- token answers ------------------------------------------------------------------ */

static mcp_status tokens(long status, const char *doc, mcp__tokens *t, char *why)
{
    return mcp__oauth_parse_tokens(status, doc, strlen(doc), t, why, 200);
}

static void test_tokens(void)
{
    mcp__tokens t;
    char why[200];
    T_OK(tokens(200, "{\"access_token\":\"at-1\",\"token_type\":\"bearer\",\"expires_in\":3600,"
                     "\"refresh_token\":\"rt-1\",\"scope\":\"a b\"}",
                &t, why));
    T_EQ_STR(t.access, "at-1");
    T_EQ_STR(t.refresh, "rt-1");
    T_EQ_STR(t.scope, "a b");
    T_EQ_INT(t.expires_in, 3600);
    mcp__tokens_cleanup(&t);
    T_OK(tokens(200, "{\"access_token\":\"at-2\"}", &t, why));
    T_NULL(t.refresh);
    T_EQ_INT(t.expires_in, -1);
    mcp__tokens_cleanup(&t);
    T_STATUS(tokens(200, "{\"access_token\":\"at\",\"token_type\":\"DPoP\"}", &t, why), MCP_ERR_UNSUPPORTED);
    T_STATUS(tokens(200, "{\"token_type\":\"Bearer\"}", &t, why), MCP_ERR_INVALID_MSG);
    T_STATUS(tokens(200, "{\"access_token\":\"a b\"}", &t, why), MCP_ERR_INVALID_MSG);
    T_STATUS(tokens(200, "{\"access_token\":\"a\",\"refresh_token\":5}", &t, why), MCP_ERR_INVALID_MSG);
    T_STATUS(tokens(200, "not json", &t, why), MCP_ERR_INVALID_MSG);
    T_STATUS(tokens(400, "{\"error\":\"invalid_grant\",\"error_description\":\"code used\"}", &t, why), MCP_ERR_AUTH);
    T_TRUE(strstr(why, "HTTP 400") && strstr(why, "invalid_grant (code used)"));
    T_STATUS(tokens(500, "<html>", &t, why), MCP_ERR_AUTH);
    mcp_status st;
    T_NOMEM_LOOP(st, {
        st = tokens(200, "{\"access_token\":\"at\",\"refresh_token\":\"rt\",\"scope\":\"s\"}", &t, why);
    }, { mcp__tokens_cleanup(&t); });
}

/* ---- options ---------------------------------------------------------------------------- */

static mcp_status never(mcp_client *c, const char *u, const char *r, char *o, size_t cap, void *ud)
{
    (void)c, (void)u, (void)r, (void)o, (void)cap, (void)ud;
    return MCP_ERR_AUTH;
}

static mcp_status new_oauth(const mcp_oauth_opts *o)
{
    mcp__oauth *s = NULL;
    mcp_error e;
    mcp_status st = mcp__oauth_new(&s, o, "https://mcp.example/mcp", "app", &e);
    mcp__oauth_free(s);
    return st;
}

static void test_options(void)
{
    mcp_oauth_opts o;
    memset(&o, 0, sizeof o);
    T_STATUS(new_oauth(&o), MCP_ERR_INVALID_ARG); /* the code grant needs a redirect URI and authorize */
    o.authorize = never;
    o.redirect_uri = "http://localhost:8976/callback";
    T_OK(new_oauth(&o));
    o.redirect_uri = "com.example.app:/oauth2redirect";
    T_OK(new_oauth(&o));
    o.redirect_uri = "http://app.example/callback"; /* neither https nor loopback */
    T_STATUS(new_oauth(&o), MCP_ERR_INVALID_ARG);
    o.redirect_uri = "https://app.example/callback#x";
    T_STATUS(new_oauth(&o), MCP_ERR_INVALID_ARG);
    o.redirect_uri = "https://app.example/callback";
    o.client_metadata_url = "http://app.example/client.json";
    T_STATUS(new_oauth(&o), MCP_ERR_INVALID_ARG);
    o.client_metadata_url = "https://app.example";
    T_STATUS(new_oauth(&o), MCP_ERR_INVALID_ARG);
    o.client_metadata_url = "https://app.example/client.json";
    T_OK(new_oauth(&o));
    o.client_secret = "s";
    T_STATUS(new_oauth(&o), MCP_ERR_INVALID_ARG); /* a secret without an id */
    o.client_id = "id\n";
    T_STATUS(new_oauth(&o), MCP_ERR_INVALID_ARG);
    o.client_id = "id";
    o.scope = "";
    T_STATUS(new_oauth(&o), MCP_ERR_INVALID_ARG);
    o.scope = "a b";
    T_OK(new_oauth(&o));
    o.client_name = "Caf\xc3\xa9 desktop";
    T_OK(new_oauth(&o));
    o.client_name = "two\nlines";
    T_STATUS(new_oauth(&o), MCP_ERR_INVALID_ARG);
    o.client_name = NULL;
    mcp_oauth_opts cc;
    memset(&cc, 0, sizeof cc);
    cc.grant = MCP_OAUTH_CLIENT_CREDENTIALS;
    cc.client_id = "machine";
    T_STATUS(new_oauth(&cc), MCP_ERR_INVALID_ARG);
    cc.client_secret = "s3cret";
    T_OK(new_oauth(&cc));
    cc.grant = (mcp_oauth_grant)7;
    T_STATUS(new_oauth(&cc), MCP_ERR_INVALID_ARG);
    mcp_status st;
    T_NOMEM_LOOP(st, { st = new_oauth(&o); }, {});
}

TEST_MAIN(TEST(test_challenge_bearer), TEST(test_challenge_several), TEST(test_challenge_odd),
          TEST(test_challenge_nomem), TEST(test_wellknown_urls), TEST(test_canonical_uri), TEST(test_resource_covers),
          TEST(test_url_policy), TEST(test_prm), TEST(test_as_metadata), TEST(test_pkce), TEST(test_scopes),
          TEST(test_form), TEST(test_redirect), TEST(test_tokens), TEST(test_options))
