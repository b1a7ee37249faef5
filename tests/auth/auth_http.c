/*
 * The Streamable HTTP server as an OAuth 2.1 resource server, end to end:
 * a real test authorization server on loopback (test_as.c) serves the
 * JWKS and introspection, libcurl plays the client. Every refusal is
 * checked for its status, its WWW-Authenticate challenge, and for never
 * reaching a handler; every acceptance for the principal reaching it.
 */
#include "mcp/mcp.h"
#include "test_as.h"
#include "testlib.h"

#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static tas *g_as;
static atomic_int g_runs; /* handler runs */

static tas *as(void)
{
    if (!g_as && tas_start(&g_as, 1) != 0)
        abort();
    return g_as;
}

/* ---- the MCP server under test ----------------------------------------------- */

static mcp_status whoami(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    g_runs++;
    const mcp_principal *p = mcp_call_principal(call);
    return mcp_call_textf(call, "sub=%s client=%s scopes=%s write=%d", mcp_call_subject(call) ? mcp_call_subject(call) : "-",
                          mcp_principal_client_id(p) ? mcp_principal_client_id(p) : "-", mcp_principal_scopes(p),
                          mcp_call_has_scope(call, "files:write"));
}

/* Waits until g_hold_release is set (at most 5 s): a request that stays in flight. */
static atomic_int g_hold_running, g_hold_release;

static mcp_status hold(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    g_hold_running++;
    for (int i = 0; i < 500 && !g_hold_release && !mcp_call_is_cancelled(call); i++)
        usleep(10000);
    g_hold_running--;
    return mcp_call_textf(call, "held");
}

static mcp_status write_file(mcp_call *call, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    g_runs++;
    return mcp_call_textf(call, "written by %s", mcp_call_subject(call));
}

static mcp_status read_doc(mcp_read *rd, const char *uri, const mcp_json *vars, void *ud)
{
    (void)vars;
    (void)ud;
    g_runs++;
    return mcp_read_text(rd, uri, "text/plain", "classified");
}

static mcp_status secret_prompt(mcp_prompt *p, const mcp_json *args, void *ud)
{
    (void)args;
    (void)ud;
    g_runs++;
    return mcp_prompt_text(p, MCP_ROLE_USER, "psst");
}

typedef struct env {
    mcp_server *srv;
    mcp_auth *auth;
    mcp_http_server *hs;
    char base[128];     /* http://127.0.0.1:PORT */
    char url[160];      /* base + /mcp */
    char resource[160]; /* the canonical resource URI (= url) */
} env;

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

/*
 * Starts a server with the test tools, authorization from `ao` (the test
 * server's issuer and JWKS URL filled in when unset) and HTTP options
 * `ho` (may be NULL). 0 on success.
 */
static int env_start(env *e, mcp_auth_opts *ao, mcp_http_opts *ho_in)
{
    memset(e, 0, sizeof *e);
    mcp_server_opts so;
    memset(&so, 0, sizeof so);
    so.workers = 2;
    so.log = quiet;
    if (mcp_server_new(&e->srv, &so, NULL))
        return -1;
    mcp_tool_def d;
    memset(&d, 0, sizeof d);
    d.name = "whoami";
    d.handler = whoami;
    mcp_server_add_tool(e->srv, &d, NULL);
    d.name = "hold";
    d.handler = hold;
    mcp_server_add_tool(e->srv, &d, NULL);
    d.name = "write_file";
    d.handler = write_file;
    d.scopes = "files:write";
    mcp_server_add_tool(e->srv, &d, NULL);
    mcp_resource_def rd;
    memset(&rd, 0, sizeof rd);
    rd.uri = "secret://doc";
    rd.name = "doc";
    rd.size = -1;
    rd.handler = read_doc;
    rd.scopes = "docs:read";
    mcp_server_add_resource(e->srv, &rd, NULL);
    mcp_prompt_def pd;
    memset(&pd, 0, sizeof pd);
    pd.name = "secret_prompt";
    pd.handler = secret_prompt;
    pd.scopes = "prompts:read";
    mcp_server_add_prompt(e->srv, &pd, NULL);
    mcp_auth_opts o = *ao;
    if (!o.issuers)
        o.issuers = tas_issuer(as());
    if (!o.jwks_url && !o.jwks_json && !o.jwks_file && !o.introspection_url)
        o.jwks_url = tas_jwks_url(as());
    if (!o.scopes_supported)
        o.scopes_supported = "mcp:tools";
    mcp_error err;
    if (mcp_auth_new(&e->auth, &o, &err)) {
        fprintf(stderr, "  mcp_auth_new: %s\n", err.message);
        return -1;
    }
    mcp_http_opts ho;
    if (ho_in)
        ho = *ho_in;
    else
        memset(&ho, 0, sizeof ho);
    ho.auth = e->auth;
    ho.threads = 2;
    if (mcp_http_server_start(&e->hs, e->srv, &ho, &err)) {
        fprintf(stderr, "  mcp_http_server_start: %s\n", err.message);
        return -1;
    }
    snprintf(e->base, sizeof e->base, "%s://127.0.0.1:%u", ho.tls_cert_file ? "https" : "http",
             mcp_http_server_port(e->hs));
    snprintf(e->url, sizeof e->url, "%s/mcp", e->base);
    snprintf(e->resource, sizeof e->resource, "%s", mcp_auth_resource(e->auth));
    return 0;
}

static void env_stop(env *e)
{
    mcp_http_server_stop(e->hs, 1000);
    mcp_server_free(e->srv);
    mcp_auth_free(e->auth);
}

/* ---- a small HTTP client ---------------------------------------------------------- */

typedef struct resp {
    long status;        /* 0 when the request failed */
    char body[16384];
    size_t blen;
    char www[1024];     /* WWW-Authenticate */
    char retry[32];     /* Retry-After */
    char sid[64];       /* Mcp-Session-Id */
} resp;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    resp *r = ud;
    size_t len = size * n;
    if (r->blen + len < sizeof r->body) {
        memcpy(r->body + r->blen, p, len);
        r->blen += len;
        r->body[r->blen] = '\0';
    }
    return len;
}

static void header_value(const char *line, size_t n, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    if (n > nl + 1 && strncasecmp(line, name, nl) == 0 && line[nl] == ':') {
        const char *v = line + nl + 1;
        while (*v == ' ')
            v++;
        size_t vl = n - (size_t)(v - line);
        while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
            vl--;
        snprintf(out, cap, "%.*s", (int)vl, v);
    }
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
    resp *r = ud;
    header_value(p, size * n, "WWW-Authenticate", r->www, sizeof r->www);
    header_value(p, size * n, "Retry-After", r->retry, sizeof r->retry);
    header_value(p, size * n, "Mcp-Session-Id", r->sid, sizeof r->sid);
    return size * n;
}

/* Sends a request; `headers` is NULL-terminated ("Name: value"). */
static void http(resp *r, const char *method, const char *url, const char *const *headers, const char *body,
                 const char *cainfo)
{
    memset(r, 0, sizeof *r);
    CURL *c = curl_easy_init();
    struct curl_slist *h = NULL;
    for (size_t i = 0; headers && headers[i]; i++)
        h = curl_slist_append(h, headers[i]);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    if (cainfo)
        curl_easy_setopt(c, CURLOPT_CAINFO, cainfo);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    if (curl_easy_perform(c) == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
}

/*
 * A 2026-07-28 request (`method` with params `params_json` minus _meta)
 * with the standard headers; `name` is the Mcp-Name value or NULL;
 * `token` the bearer token or NULL.
 */
static void mcp_post(resp *r, const env *e, const char *token, const char *method, const char *name,
                     const char *params_json)
{
    char body[2048], mh[128], nh[256], ah[9000];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":{%s%s\"_meta\":{"
             "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
             "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
             method, params_json ? params_json : "", params_json && *params_json ? "," : "");
    snprintf(mh, sizeof mh, "Mcp-Method: %s", method);
    snprintf(nh, sizeof nh, "Mcp-Name: %s", name ? name : "");
    snprintf(ah, sizeof ah, "Authorization: Bearer %s", token ? token : "");
    const char *h[] = {"Content-Type: application/json", "Accept: application/json, text/event-stream",
                       "MCP-Protocol-Version: 2026-07-28", mh, name ? nh : "X-No-Name: 1", token ? ah : "X-No-Auth: 1",
                       NULL};
    http(r, "POST", e->url, h, body, NULL);
}

static void call_tool(resp *r, const env *e, const char *token, const char *tool)
{
    char params[200];
    snprintf(params, sizeof params, "\"name\":\"%s\",\"arguments\":{}", tool);
    mcp_post(r, e, token, "tools/call", tool, params);
}

/* A token for `e`'s resource from the test server. */
static char *token_for(const env *e, tas_alg alg, const char *sub, const char *scope, long exp_in, unsigned flags)
{
    char *c = tas_claims(as(), e->resource, sub, scope, exp_in, 0, ",\"client_id\":\"test-client\"");
    char *t = tas_sign(as(), alg, c, flags);
    free(c);
    return t;
}

/* Does the challenge carry param="value"? */
static int has_param(const char *www, const char *param, const char *value)
{
    char want[512];
    snprintf(want, sizeof want, "%s=\"%s\"", param, value);
    return strstr(www, want) != NULL;
}

static void prm_url(const env *e, char *out, size_t cap)
{
    snprintf(out, cap, "%s/.well-known/oauth-protected-resource/mcp", e->base);
}

/* ---- tests -------------------------------------------------------------------------- */

static void test_prm_documents(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    ao.scopes_supported = "mcp:tools files:read";
    T_EQ_INT(env_start(&e, &ao, NULL), 0);
    const char *paths[] = {"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"};
    for (size_t i = 0; i < 2; i++) {
        char url[256];
        snprintf(url, sizeof url, "%s%s", e.base, paths[i]);
        resp r;
        http(&r, "GET", url, NULL, NULL, NULL);
        T_EQ_INT(r.status, 200);
        mcp_json_doc *d;
        T_OK(mcp_json_parse(&d, r.body, r.blen, NULL, NULL));
        const mcp_json *root = mcp_json_doc_root(d);
        T_TRUE(mcp_json_str_eq(mcp_json_get(root, "resource"), e.url));
        T_TRUE(mcp_json_str_eq(mcp_json_at(mcp_json_get(root, "authorization_servers"), 0), tas_issuer(as())));
        T_TRUE(mcp_json_str_eq(mcp_json_at(mcp_json_get(root, "scopes_supported"), 1), "files:read"));
        T_TRUE(mcp_json_str_eq(mcp_json_at(mcp_json_get(root, "bearer_methods_supported"), 0), "header"));
        mcp_json_doc_free(d);
    }
    char url[256];
    snprintf(url, sizeof url, "%s/.well-known/oauth-protected-resource", e.base);
    resp r;
    http(&r, "POST", url, NULL, "{}", NULL);
    T_EQ_INT(r.status, 405);
    snprintf(url, sizeof url, "%s/.well-known/oauth-protected-resource/other", e.base);
    http(&r, "GET", url, NULL, NULL, NULL);
    T_EQ_INT(r.status, 404);
    env_stop(&e);
}

static void test_no_token(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    T_EQ_INT(env_start(&e, &ao, NULL), 0);
    g_runs = 0;
    resp r;
    call_tool(&r, &e, NULL, "whoami");
    T_EQ_INT(r.status, 401);
    char prm[256];
    prm_url(&e, prm, sizeof prm);
    T_TRUE(strncmp(r.www, "Bearer ", 7) == 0);
    T_TRUE(has_param(r.www, "resource_metadata", prm));
    T_TRUE(has_param(r.www, "scope", "mcp:tools"));
    T_NULL(strstr(r.www, "error="));
    T_TRUE(strstr(r.body, "\"error\"") != NULL);
    /* GET and DELETE need a token too */
    const char *h[] = {"Accept: text/event-stream", "Mcp-Session-Id: x", NULL};
    http(&r, "GET", e.url, h, NULL, NULL);
    T_EQ_INT(r.status, 401);
    http(&r, "DELETE", e.url, h, NULL, NULL);
    T_EQ_INT(r.status, 401);
    /* another scheme is no bearer token at all */
    const char *basic[] = {"Authorization: Basic dXNlcjpwYXNz", "Content-Type: application/json", NULL};
    http(&r, "POST", e.url, basic, "{}", NULL);
    T_EQ_INT(r.status, 401);
    T_NULL(strstr(r.www, "error="));
    T_EQ_INT(g_runs, 0);
    env_stop(&e);
}

static void test_malformed_header(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    T_EQ_INT(env_start(&e, &ao, NULL), 0);
    g_runs = 0;
    char *good = token_for(&e, TAS_ES256, "alice", "mcp:tools", 300, 0);
    char two[9000];
    snprintf(two, sizeof two, "Authorization: Bearer %s", good);
    const char *cases[][3] = {
        {"Authorization: Bearer", NULL, NULL},
        {"Authorization: Bearer a b", NULL, NULL},
        {"Authorization: Bearer \"quoted\"", NULL, NULL},
        {two, two, NULL}, /* two Authorization headers */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *h[] = {"Content-Type: application/json", "Accept: application/json", cases[i][0], cases[i][1],
                           NULL};
        resp r;
        http(&r, "POST", e.url, h, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", NULL);
        T_EQ_INT(r.status, 400);
        T_TRUE(has_param(r.www, "error", "invalid_request"));
    }
    /* a token in the query string is refused, even with a good header */
    char url[256];
    snprintf(url, sizeof url, "%s?access_token=abc", e.url);
    const char *h[] = {"Content-Type: application/json", two, NULL};
    resp r;
    http(&r, "POST", url, h, "{}", NULL);
    T_EQ_INT(r.status, 400);
    T_EQ_INT(g_runs, 0);
    free(good);
    env_stop(&e);
}

static void test_invalid_tokens(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    T_EQ_INT(env_start(&e, &ao, NULL), 0);
    g_runs = 0;
    char *claims[] = {
        tas_claims(as(), e.resource, "u", "mcp:tools", -3600, 0, NULL),                  /* expired */
        tas_claims(as(), e.resource, "u", "mcp:tools", 3600, 3600, NULL),                /* not yet valid */
        tas_claims(as(), "https://other.example/mcp", "u", "mcp:tools", 300, 0, NULL),   /* another resource */
        tas_claims(as(), NULL, "u", "mcp:tools", 300, 0, NULL),                          /* no audience */
    };
    const char *why[] = {"expired", "not valid yet", "another resource", "no audience"};
    char prm[256];
    prm_url(&e, prm, sizeof prm);
    for (size_t i = 0; i < 4; i++) {
        char *t = tas_sign(as(), TAS_ES256, claims[i], 0);
        resp r;
        call_tool(&r, &e, t, "whoami");
        T_EQ_INT(r.status, 401);
        T_TRUE(has_param(r.www, "error", "invalid_token"));
        T_TRUE(has_param(r.www, "resource_metadata", prm));
        T_TRUE(strstr(r.body, why[i]) != NULL);
        T_NULL(strstr(r.body, t)); /* the token is never echoed */
        free(t);
        free(claims[i]);
    }
    /* wrong issuer */
    char c[512];
    snprintf(c, sizeof c, "{\"iss\":\"https://evil.example\",\"aud\":\"%s\",\"sub\":\"u\",\"exp\":%ld}", e.resource,
             (long)time(NULL) + 300);
    char *t = tas_sign(as(), TAS_EDDSA, c, 0);
    resp r;
    call_tool(&r, &e, t, "whoami");
    T_EQ_INT(r.status, 401);
    T_TRUE(strstr(r.body, "issuer") != NULL);
    free(t);
    /* bad signature, alg none, HS256 keyed with the RSA public key */
    t = token_for(&e, TAS_RS256, "u", "mcp:tools", 300, TAS_BAD_SIG);
    call_tool(&r, &e, t, "whoami");
    T_EQ_INT(r.status, 401);
    T_TRUE(strstr(r.body, "signature") != NULL);
    free(t);
    char *cl = tas_claims(as(), e.resource, "u", "mcp:tools", 300, 0, NULL);
    t = tas_token_none(cl);
    call_tool(&r, &e, t, "whoami");
    T_EQ_INT(r.status, 401);
    T_TRUE(strstr(r.body, "alg none") != NULL);
    free(t);
    t = tas_token_hs256_pubkey(as(), cl);
    call_tool(&r, &e, t, "whoami");
    T_EQ_INT(r.status, 401);
    T_TRUE(strstr(r.body, "HMAC") != NULL);
    T_TRUE(has_param(r.www, "error", "invalid_token"));
    free(t);
    free(cl);
    call_tool(&r, &e, "opaque-but-no-introspection", "whoami");
    T_EQ_INT(r.status, 401);
    T_EQ_INT(g_runs, 0);
    env_stop(&e);
}

static void test_each_alg(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    T_EQ_INT(env_start(&e, &ao, NULL), 0);
    g_runs = 0;
    for (int alg = 0; alg < TAS_NALGS; alg++) {
        char *t = token_for(&e, (tas_alg)alg, "alice", "mcp:tools", 300, 0);
        resp r;
        call_tool(&r, &e, t, "whoami");
        T_EQ_INT(r.status, 200);
        T_TRUE(strstr(r.body, "sub=alice client=test-client scopes=mcp:tools write=0") != NULL);
        free(t);
    }
    /* a token issued over HTTP by the test server's /issue endpoint */
    char *c = tas_claims(as(), e.resource, "bob", "mcp:tools", 300, 0, NULL);
    char *t = tas_http_issue(as(), "PS256", c);
    T_NOT_NULL(t);
    resp r;
    call_tool(&r, &e, t, "whoami");
    T_EQ_INT(r.status, 200);
    T_TRUE(strstr(r.body, "sub=bob") != NULL);
    free(t);
    free(c);
    T_EQ_INT(g_runs, TAS_NALGS + 1);
    env_stop(&e);
}

static void test_scope_gated(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    T_EQ_INT(env_start(&e, &ao, NULL), 0);
    g_runs = 0;
    char prm[256];
    prm_url(&e, prm, sizeof prm);
    char *reader = token_for(&e, TAS_ES256, "alice", "mcp:tools files:read", 300, 0);
    char *writer = token_for(&e, TAS_ES256, "alice", "mcp:tools files:write docs:read prompts:read", 300, 0);
    resp r;
    call_tool(&r, &e, reader, "write_file");
    T_EQ_INT(r.status, 403);
    T_TRUE(has_param(r.www, "error", "insufficient_scope"));
    T_TRUE(has_param(r.www, "scope", "files:write"));
    T_TRUE(has_param(r.www, "resource_metadata", prm));
    T_TRUE(strstr(r.body, "insufficient_scope") != NULL);
    mcp_post(&r, &e, reader, "resources/read", "secret://doc", "\"uri\":\"secret://doc\"");
    T_EQ_INT(r.status, 403);
    T_TRUE(has_param(r.www, "scope", "docs:read"));
    mcp_post(&r, &e, reader, "prompts/get", "secret_prompt", "\"name\":\"secret_prompt\"");
    T_EQ_INT(r.status, 403);
    T_TRUE(has_param(r.www, "scope", "prompts:read"));
    mcp_post(&r, &e, reader, "completion/complete", NULL,
             "\"ref\":{\"type\":\"ref/prompt\",\"name\":\"secret_prompt\"},\"argument\":{\"name\":\"a\",\"value\":\"\"}");
    T_EQ_INT(r.status, 403);
    T_EQ_INT(g_runs, 0);
    /* with the scopes: every one runs */
    call_tool(&r, &e, writer, "write_file");
    T_EQ_INT(r.status, 200);
    T_TRUE(strstr(r.body, "written by alice") != NULL);
    mcp_post(&r, &e, writer, "resources/read", "secret://doc", "\"uri\":\"secret://doc\"");
    T_EQ_INT(r.status, 200);
    T_TRUE(strstr(r.body, "classified") != NULL);
    mcp_post(&r, &e, writer, "prompts/get", "secret_prompt", "\"name\":\"secret_prompt\"");
    T_EQ_INT(r.status, 200);
    call_tool(&r, &e, writer, "whoami");
    T_TRUE(strstr(r.body, "write=1") != NULL);
    T_EQ_INT(g_runs, 4);
    /* unscoped methods only need a valid token */
    mcp_post(&r, &e, reader, "tools/list", NULL, NULL);
    T_EQ_INT(r.status, 200);
    free(reader);
    free(writer);
    env_stop(&e);
}

static void test_required_scopes(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    ao.required_scopes = "mcp:tools";
    ao.scopes_supported = "mcp:tools files:write";
    T_EQ_INT(env_start(&e, &ao, NULL), 0);
    g_runs = 0;
    char *t = token_for(&e, TAS_EDDSA, "alice", "files:write", 300, 0);
    resp r;
    call_tool(&r, &e, t, "whoami");
    T_EQ_INT(r.status, 403);
    T_TRUE(has_param(r.www, "scope", "mcp:tools"));
    free(t);
    t = token_for(&e, TAS_EDDSA, "alice", "mcp:tools", 300, 0);
    call_tool(&r, &e, t, "write_file");
    T_EQ_INT(r.status, 403);
    T_TRUE(has_param(r.www, "scope", "mcp:tools files:write")); /* all of them in one challenge */
    free(t);
    T_EQ_INT(g_runs, 0);
    env_stop(&e);
}

static void test_unknown_kid_refresh(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    ao.jwks_min_interval_s = 3; /* room for slow runs (valgrind) between the checks below */
    T_EQ_INT(env_start(&e, &ao, NULL), 0);
    g_runs = 0;
    unsigned f0 = tas_jwks_fetches(as());
    char *t = token_for(&e, TAS_ES256, "alice", "mcp:tools", 300, 0);
    resp r;
    call_tool(&r, &e, t, "whoami");
    T_EQ_INT(r.status, 200);
    T_EQ_INT(tas_jwks_fetches(as()), f0 + 1); /* the first use loads the keys */
    free(t);
    sleep(3);
    /* the issuer rotates in a new key: its first token makes the server fetch again */
    tas_rotate(as(), TAS_ES256);
    t = token_for(&e, TAS_ES256, "alice", "mcp:tools", 300, 0);
    call_tool(&r, &e, t, "whoami");
    T_EQ_INT(r.status, 200);
    T_EQ_INT(tas_jwks_fetches(as()), f0 + 2);
    free(t);
    /* made-up key ids: refused, and no fetch within the interval */
    for (int i = 0; i < 3; i++) {
        t = token_for(&e, TAS_ES256, "mallory", "mcp:tools", 300, TAS_RANDOM_KID);
        call_tool(&r, &e, t, "whoami");
        T_EQ_INT(r.status, 401);
        T_TRUE(has_param(r.www, "error", "invalid_token"));
        T_TRUE(strstr(r.body, "unknown key id") != NULL);
        free(t);
    }
    T_EQ_INT(tas_jwks_fetches(as()), f0 + 2);
    sleep(3);
    t = token_for(&e, TAS_ES256, "mallory", "mcp:tools", 300, TAS_RANDOM_KID);
    call_tool(&r, &e, t, "whoami");
    T_EQ_INT(r.status, 401);
    T_EQ_INT(tas_jwks_fetches(as()), f0 + 3); /* one more fetch once the interval passed */
    free(t);
    T_EQ_INT(g_runs, 2);
    env_stop(&e);
}

static void test_jwks_unavailable(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    ao.jwks_min_interval_s = 1;
    tas_jwks_fail(as(), 1);
    T_EQ_INT(env_start(&e, &ao, NULL), 0);
    g_runs = 0;
    char *t = token_for(&e, TAS_RS256, "alice", "mcp:tools", 300, 0);
    resp r;
    call_tool(&r, &e, t, "whoami");
    T_EQ_INT(r.status, 503);
    T_TRUE(r.retry[0] != '\0');
    tas_jwks_fail(as(), 0);
    usleep(1100 * 1000);
    call_tool(&r, &e, t, "whoami");
    T_EQ_INT(r.status, 200);
    free(t);
    T_EQ_INT(g_runs, 1);
    env_stop(&e);
}

/* A legacy POST with a token and an optional session. */
static void legacy_post(resp *r, const env *e, const char *token, const char *sid, const char *body)
{
    char ah[9000], sh[128];
    snprintf(ah, sizeof ah, "Authorization: Bearer %s", token);
    snprintf(sh, sizeof sh, "Mcp-Session-Id: %s", sid ? sid : "");
    const char *h[] = {"Content-Type: application/json", "Accept: application/json, text/event-stream", ah,
                       sid ? sh : "X-None: 1", sid ? "MCP-Protocol-Version: 2025-11-25" : "X-None2: 1", NULL};
    http(r, "POST", e->url, h, body, NULL);
}

static void test_legacy_session(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    T_EQ_INT(env_start(&e, &ao, NULL), 0);
    g_runs = 0;
    char *alice = token_for(&e, TAS_ES256, "alice", "mcp:tools", 300, 0);
    char *alice2 = token_for(&e, TAS_EDDSA, "alice", "mcp:tools files:write", 600, 0);
    char *bob = token_for(&e, TAS_ES256, "bob", "mcp:tools files:write", 300, 0);
    resp r;
    legacy_post(&r, &e, alice, NULL,
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
    T_EQ_INT(r.status, 200);
    char sid[64];
    snprintf(sid, sizeof sid, "%s", r.sid);
    T_TRUE(sid[0] != '\0');
    static const char call_write[] =
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"write_file\"}}";
    legacy_post(&r, &e, alice, sid, call_write);
    T_EQ_INT(r.status, 403); /* this POST's token lacks files:write */
    /* the token changes mid-session: each POST runs as its own token */
    legacy_post(&r, &e, alice2, sid, call_write);
    T_EQ_INT(r.status, 200);
    T_TRUE(strstr(r.body, "written by alice") != NULL);
    /* another principal cannot use alice's session */
    legacy_post(&r, &e, bob, sid, call_write);
    T_EQ_INT(r.status, 404);
    char ah[9000], sh[128];
    snprintf(ah, sizeof ah, "Authorization: Bearer %s", bob);
    snprintf(sh, sizeof sh, "Mcp-Session-Id: %s", sid);
    const char *h[] = {ah, sh, NULL};
    http(&r, "DELETE", e.url, h, NULL, NULL);
    T_EQ_INT(r.status, 404);
    snprintf(ah, sizeof ah, "Authorization: Bearer %s", alice);
    http(&r, "DELETE", e.url, h, NULL, NULL);
    T_EQ_INT(r.status, 200);
    T_EQ_INT(g_runs, 1);
    free(alice);
    free(alice2);
    free(bob);
    env_stop(&e);
}

/* Legacy sessions are counted per principal: the third of alice's gets 429
 * (all from one address, whose quota is larger); bob is not held back. */
static void test_session_quota_per_principal(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.max_sessions_per_principal = 2;
    T_EQ_INT(env_start(&e, &ao, &ho), 0);
    char *alice = token_for(&e, TAS_ES256, "alice", "mcp:tools", 300, 0);
    char *bob = token_for(&e, TAS_ES256, "bob", "mcp:tools", 300, 0);
    static const char init[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
        "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    resp r;
    for (int i = 0; i < 2; i++) {
        legacy_post(&r, &e, alice, NULL, init);
        T_EQ_INT(r.status, 200);
    }
    legacy_post(&r, &e, alice, NULL, init);
    T_EQ_INT(r.status, 429);
    T_TRUE(atoi(r.retry) >= 1);
    T_TRUE(strstr(r.body, "sessions per client principal") != NULL);
    legacy_post(&r, &e, bob, NULL, init);
    T_EQ_INT(r.status, 200);
    free(alice);
    free(bob);
    env_stop(&e);
}

/* ---- requests in flight per principal ---- */

typedef struct held_call {
    const env *e;
    const char *token;
    resp r;
} held_call;

static void *held_call_run(void *ud)
{
    held_call *h = ud;
    call_tool(&h->r, h->e, h->token, "hold");
    return NULL;
}

static void test_requests_per_principal(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.max_requests_per_principal = 2;
    T_EQ_INT(env_start(&e, &ao, &ho), 0);
    char *alice = token_for(&e, TAS_ES256, "alice", "mcp:tools", 300, 0);
    char *bob = token_for(&e, TAS_ES256, "bob", "mcp:tools", 300, 0);
    g_hold_release = 0;
    held_call h[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        h[i].e = &e;
        h[i].token = alice;
        pthread_create(&t[i], NULL, held_call_run, &h[i]);
    }
    for (int i = 0; i < 500 && g_hold_running < 2; i++)
        usleep(10000);
    T_EQ_INT(g_hold_running, 2);
    resp r;
    call_tool(&r, &e, alice, "whoami"); /* a third request of alice's while two wait */
    T_EQ_INT(r.status, 429);
    T_TRUE(atoi(r.retry) >= 1);
    T_TRUE(strstr(r.body, "requests in flight") && strstr(r.body, "per client principal"));
    call_tool(&r, &e, bob, "whoami"); /* bob is not held back */
    T_EQ_INT(r.status, 200);
    g_hold_release = 1;
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        T_EQ_INT(h[i].r.status, 200);
    }
    call_tool(&r, &e, alice, "whoami"); /* given back when they ended */
    T_EQ_INT(r.status, 200);
    free(alice);
    free(bob);
    env_stop(&e);
}

static void test_rate_limits(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.rate_per_subject = 0.1; /* a token every 10 s: none comes back during the test */
    ho.burst_per_subject = 2;
    T_EQ_INT(env_start(&e, &ao, &ho), 0);
    g_runs = 0;
    char *alice = token_for(&e, TAS_ES256, "alice", "mcp:tools", 300, 0);
    char *bob = token_for(&e, TAS_ES256, "bob", "mcp:tools", 300, 0);
    resp r;
    call_tool(&r, &e, alice, "whoami");
    T_EQ_INT(r.status, 200);
    call_tool(&r, &e, alice, "whoami");
    T_EQ_INT(r.status, 200);
    call_tool(&r, &e, alice, "whoami");
    T_EQ_INT(r.status, 429);
    T_TRUE(atoi(r.retry) >= 1);
    call_tool(&r, &e, bob, "whoami"); /* another subject has its own bucket */
    T_EQ_INT(r.status, 200);
    T_EQ_INT(g_runs, 3);
    free(alice);
    free(bob);
    env_stop(&e);

    memset(&ho, 0, sizeof ho);
    ho.rate_per_address = 0.1;
    ho.burst_per_address = 1;
    T_EQ_INT(env_start(&e, &ao, &ho), 0);
    char url[256];
    snprintf(url, sizeof url, "%s/.well-known/oauth-protected-resource", e.base);
    http(&r, "GET", url, NULL, NULL, NULL);
    T_EQ_INT(r.status, 200);
    http(&r, "GET", url, NULL, NULL, NULL);
    T_EQ_INT(r.status, 429);
    T_TRUE(atoi(r.retry) >= 1 && atoi(r.retry) <= 10);
    env_stop(&e);
}

static void test_introspection(void)
{
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    char url[160];
    snprintf(url, sizeof url, "%s/introspect", tas_issuer(as()));
    ao.introspection_url = url;
    ao.client_id = TAS_CLIENT_ID;
    ao.client_secret = TAS_CLIENT_SECRET;
    T_EQ_INT(env_start(&e, &ao, NULL), 0);
    g_runs = 0;
    char *c = tas_claims(as(), e.resource, "ivan", "mcp:tools files:write", 300, 0, ",\"client_id\":\"cli\"");
    tas_add_opaque(as(), "opaque-token-1", c);
    free(c);
    unsigned n0 = tas_introspections(as());
    resp r;
    call_tool(&r, &e, "opaque-token-1", "write_file");
    T_EQ_INT(r.status, 200);
    T_TRUE(strstr(r.body, "written by ivan") != NULL);
    call_tool(&r, &e, "opaque-token-1", "whoami");
    T_EQ_INT(r.status, 200);
    T_EQ_INT(tas_introspections(as()), n0 + 1); /* the answer was reused */
    call_tool(&r, &e, "opaque-unknown", "whoami");
    T_EQ_INT(r.status, 401);
    T_TRUE(strstr(r.body, "not active") != NULL);
    T_EQ_INT(g_runs, 2);
    env_stop(&e);
    /* wrong client credentials: the endpoint refuses us, the request gets 503 */
    ao.client_secret = "wrong";
    T_EQ_INT(env_start(&e, &ao, NULL), 0);
    call_tool(&r, &e, "opaque-token-1", "whoami");
    T_EQ_INT(r.status, 503);
    env_stop(&e);
}

/* ---- the verifier against a slow or hostile stream of tokens -------------------- */

#define RES_DIRECT "https://mcp.example.com/mcp"

/* A verifier on the test server's introspection endpoint (no HTTP server). */
static mcp_auth *introspecting_auth(void)
{
    static char url[160];
    snprintf(url, sizeof url, "%s/introspect", tas_issuer(as()));
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    ao.resource = RES_DIRECT;
    ao.issuers = tas_issuer(as());
    ao.introspection_url = url;
    ao.client_id = TAS_CLIENT_ID;
    ao.client_secret = TAS_CLIENT_SECRET;
    mcp_auth *a = NULL;
    mcp_error err;
    if (mcp_auth_new(&a, &ao, &err))
        fprintf(stderr, "  mcp_auth_new: %s\n", err.message);
    return a;
}

typedef struct vjob {
    mcp_auth *a;
    const char *tok;
    mcp_status st;
    mcp_auth_error why;
} vjob;

static void *verify_job(void *ud)
{
    vjob *j = ud;
    mcp_principal *p = NULL;
    j->st = mcp_auth_verify(j->a, j->tok, strlen(j->tok), &p, &j->why, NULL);
    mcp_principal_free(p);
    return NULL;
}

/* Verifies `tok` on 8 threads at once; returns how many were accepted. */
static int verify_burst(mcp_auth *a, const char *tok, mcp_auth_error *why)
{
    vjob j[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        j[i].a = a;
        j[i].tok = tok;
        pthread_create(&th[i], NULL, verify_job, &j[i]);
    }
    int ok = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        ok += j[i].st == MCP_OK;
        *why = j[i].why;
    }
    return ok;
}

static void test_introspection_negative_cache(void)
{
    mcp_auth *a = introspecting_auth();
    T_TRUE(a != NULL);
    unsigned n0 = tas_introspections(as());
    /* the same junk token 50 times: one call to the authorization server */
    for (int i = 0; i < 50; i++) {
        mcp_principal *p = NULL;
        mcp_auth_error why = MCP_AUTH_OK;
        T_STATUS(mcp_auth_verify(a, "junk-token-50", 13, &p, &why, NULL), MCP_ERR_AUTH);
        T_EQ_INT(why, MCP_AUTH_INVALID_TOKEN);
    }
    T_EQ_INT(tas_introspections(as()), n0 + 1);
    /* another junk token is another question */
    mcp_principal *p = NULL;
    T_STATUS(mcp_auth_verify(a, "junk-token-51", 13, &p, NULL, NULL), MCP_ERR_AUTH);
    T_EQ_INT(tas_introspections(as()), n0 + 2);
    mcp_auth_free(a);
}

static void test_introspection_single_flight(void)
{
    mcp_auth *a = introspecting_auth();
    T_TRUE(a != NULL);
    char *c = tas_claims(as(), RES_DIRECT, "sf", "mcp:tools", 300, 0, NULL);
    tas_add_opaque(as(), "opaque-single-flight", c);
    free(c);
    tas_delay(as(), 300); /* the threads all arrive while the first call is out */
    unsigned n0 = tas_introspections(as());
    mcp_auth_error why;
    T_EQ_INT(verify_burst(a, "opaque-single-flight", &why), 8);
    T_EQ_INT(tas_introspections(as()), n0 + 1);
    /* the same for a token the server does not know */
    T_EQ_INT(verify_burst(a, "opaque-never-issued", &why), 0);
    T_EQ_INT(why, MCP_AUTH_INVALID_TOKEN);
    T_EQ_INT(tas_introspections(as()), n0 + 2);
    tas_delay(as(), 0);
    mcp_auth_free(a);
}

static void *forced_refresh(void *ud)
{
    mcp_auth_refresh(ud, NULL);
    return NULL;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void test_unknown_kid_slow_jwks(void)
{
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    ao.resource = RES_DIRECT;
    ao.issuers = tas_issuer(as());
    ao.jwks_url = tas_jwks_url(as());
    mcp_auth *a = NULL;
    T_OK(mcp_auth_new(&a, &ao, NULL));
    char *c = tas_claims(as(), RES_DIRECT, "k", "mcp:tools", 300, 0, NULL);
    char *t = tas_sign(as(), TAS_ES256, c, 0);
    mcp_principal *p = NULL;
    T_OK(mcp_auth_verify(a, t, strlen(t), &p, NULL, NULL)); /* loads the keys */
    mcp_principal_free(p);
    free(t);
    unsigned f0 = tas_jwks_fetches(as());
    /* a slow fetch is under way ... */
    tas_delay(as(), 1500);
    pthread_t th;
    pthread_create(&th, NULL, forced_refresh, a);
    while (tas_jwks_fetches(as()) == f0)
        usleep(1000);
    /* ... and a burst of made-up key ids is refused at once, without waiting for it */
    uint64_t t0 = now_ms();
    for (int i = 0; i < 20; i++) {
        t = tas_sign(as(), TAS_ES256, c, TAS_RANDOM_KID);
        mcp_auth_error why = MCP_AUTH_OK;
        T_STATUS(mcp_auth_verify(a, t, strlen(t), &p, &why, NULL), MCP_ERR_AUTH);
        T_EQ_INT(why, MCP_AUTH_INVALID_TOKEN);
        free(t);
    }
    uint64_t took = now_ms() - t0;
    if (took >= 700)
        fprintf(stderr, "  20 unknown kids took %llu ms\n", (unsigned long long)took);
    T_TRUE(took < 700);
    pthread_join(th, NULL);
    tas_delay(as(), 0);
    T_EQ_INT(tas_jwks_fetches(as()), f0 + 1); /* the forced one only */
    free(c);
    mcp_auth_free(a);
}

/* A self-signed certificate for 127.0.0.1 (EC P-256), written as PEM files. */
static void make_cert(const char *cert_path, const char *key_path)
{
    EVP_PKEY *k = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, k);
    X509_NAME *n = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"127.0.0.1", -1, -1, 0);
    X509_set_issuer_name(x, n);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, "IP:127.0.0.1");
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_basic_constraints, "critical,CA:TRUE");
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    X509_sign(x, k, EVP_sha256());
    FILE *f = fopen(cert_path, "w");
    PEM_write_X509(f, x);
    fclose(f);
    f = fopen(key_path, "w");
    PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL);
    fclose(f);
    X509_free(x);
    EVP_PKEY_free(k);
}

static void test_tls(void)
{
    char dir[] = "/tmp/mcp-auth-tls-XXXXXX";
    T_NOT_NULL(mkdtemp(dir));
    char cert[128], key[128];
    snprintf(cert, sizeof cert, "%s/cert.pem", dir);
    snprintf(key, sizeof key, "%s/key.pem", dir);
    make_cert(cert, key);
    env e;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.tls_cert_file = cert;
    ho.tls_key_file = key;
    T_EQ_INT(env_start(&e, &ao, &ho), 0);
    T_TRUE(strncmp(e.resource, "https://127.0.0.1:", 18) == 0);
    g_runs = 0;
    char *t = token_for(&e, TAS_ES256, "tess", "mcp:tools", 300, 0);
    char ah[9000];
    snprintf(ah, sizeof ah, "Authorization: Bearer %s", t);
    const char *h[] = {"Content-Type: application/json", "Accept: application/json", "MCP-Protocol-Version: 2026-07-28",
                       "Mcp-Method: tools/call", "Mcp-Name: whoami", ah, NULL};
    static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"whoami\","
                               "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                               "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
    resp r;
    http(&r, "POST", e.url, h, body, cert); /* the client verifies the certificate */
    T_EQ_INT(r.status, 200);
    T_TRUE(strstr(r.body, "sub=tess") != NULL);
    char prm[256];
    snprintf(prm, sizeof prm, "%s/.well-known/oauth-protected-resource/mcp", e.base);
    http(&r, "GET", prm, NULL, NULL, cert);
    T_EQ_INT(r.status, 200);
    T_TRUE(strstr(r.body, "\"resource\":\"https://127.0.0.1:") != NULL);
    /* without trusting the certificate, or in plain http, nothing gets through */
    http(&r, "POST", e.url, h, body, "/dev/null");
    T_EQ_INT(r.status, 0);
    char plain[200];
    snprintf(plain, sizeof plain, "http://%s/mcp", e.base + 8);
    http(&r, "POST", plain, h, body, NULL);
    T_TRUE(r.status != 200);
    T_EQ_INT(g_runs, 1);
    free(t);
    env_stop(&e);
    /* half a TLS configuration is refused */
    mcp_server *srv;
    T_OK(mcp_server_new(&srv, NULL, NULL));
    mcp_http_server *hs;
    ho.tls_key_file = NULL;
    T_STATUS(mcp_http_server_start(&hs, srv, &ho, NULL), MCP_ERR_INVALID_ARG);
    mcp_server_free(srv);
    unlink(cert);
    unlink(key);
    rmdir(dir);
}

TEST_MAIN(TEST(test_prm_documents), TEST(test_no_token), TEST(test_malformed_header), TEST(test_invalid_tokens),
          TEST(test_each_alg), TEST(test_scope_gated), TEST(test_required_scopes), TEST(test_unknown_kid_refresh),
          TEST(test_jwks_unavailable), TEST(test_legacy_session),
          TEST(test_session_quota_per_principal), TEST(test_requests_per_principal), TEST(test_rate_limits),
          TEST(test_introspection),
          TEST(test_introspection_negative_cache), TEST(test_introspection_single_flight),
          TEST(test_unknown_kid_slow_jwks), TEST(test_tls))
