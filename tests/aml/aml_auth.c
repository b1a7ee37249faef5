/*
 * mcp-server-aml as an OAuth resource server (issue 8's acceptance test):
 * the AML tools served over Streamable HTTP with a verifier that trusts the
 * test authorization server (tests/auth/test_as.c, a real HTTP server on
 * loopback serving its JWKS), called by libmcp's own HTTP client with
 * bearer tokens:
 *   - no token: refused with 401 and a challenge naming the metadata;
 *   - a token with aml.read lists typologies, but draftSar is refused with
 *     403 insufficient_scope naming aml.sar (step-up), before any handler;
 *   - a token with aml.sar drafts the SAR;
 *   - the audit log records each call under the token's subject.
 */
#include "commands/gen.h"
#include "test_as.h"
#include "tools/tools.h"

#include <mcp/mcp.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sqlite3.h>
#include <sys/socket.h>

static int g_passed, g_failed;

/* Not testlib: the shared server keeps caches (verified tokens, sessions)
 * across tests, so per-test allocation counts do not apply; LeakSanitizer
 * and valgrind still check the whole run. */
#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            g_passed++;                                                                                                \
        } else {                                                                                                       \
            g_failed++;                                                                                                \
            printf("FAIL %s:%d: %s\n", __func__, __LINE__, #cond);                                                    \
        }                                                                                                              \
    } while (0)

static tas *g_as;
static char g_url[256];

static void quiet(mcp_log_level level, const char *message, void *ud)
{
    (void)level;
    (void)message;
    (void)ud;
}

/* A token for this server with `scope`, signed by the test AS. */
static char *token(const char *sub, const char *scope)
{
    char *claims = tas_claims(g_as, g_url, sub, scope, 600, 0, NULL);
    char *t = tas_sign(g_as, TAS_ES256, claims, 0);
    free(claims);
    return t;
}

static mcp_status connect_with(mcp_client **c, const char *bearer, mcp_error *err)
{
    mcp_http_client_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.url = g_url;
    ho.bearer_token = bearer;
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.name = "aml-auth-test";
    o.log = quiet;
    return mcp_client_connect_http(c, &o, &ho, err);
}

/* The last audit entry with `action` as "actor|outcome|detail", or "". */
static void last_row(aml_store *s, const char *action, char *out, size_t cap)
{
    out[0] = '\0';
    aml_st *st;
    if ((st = aml_prepare(s, "SELECT actor || '|' || outcome || '|' || coalesce(detail, '') FROM audit_log "
                           "WHERE action = ?1 ORDER BY seq DESC LIMIT 1")) == NULL)
        return;
    aml_bind_text(st, 1, action);
    if (aml_step(st) == AML_ROW)
        snprintf(out, cap, "%s", aml_col_text(st, 0));
    aml_finalize(st);
}

/* The actor of the last audit entry with `action`, or "". */
static void last_actor(aml_store *s, const char *action, char *out, size_t cap)
{
    last_row(s, action, out, cap);
    char *bar = strchr(out, '|');
    if (bar)
        *bar = '\0';
}

/*
 * A 2026-07-28 tools/call of `tool` with `bearer`, over a bare socket, so
 * the test reads the status line and headers the server sent. Returns the
 * status; the headers go to `out`.
 */
static int raw_post(const char *bearer, const char *tool, char *out, size_t cap)
{
    unsigned port = 0;
    sscanf(g_url, "http://127.0.0.1:%u", &port);
    char body[512], req[4096];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\",\"arguments\":{},"
             "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
             "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
             tool);
    snprintf(req, sizeof req,
             "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\nAccept: application/json, "
             "text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: %s\r\n"
             "Authorization: Bearer %s\r\nConnection: close\r\nContent-Length: %zu\r\n\r\n%s",
             port, tool, bearer, strlen(body), body);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    size_t n = 0;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && write(fd, req, strlen(req)) == (ssize_t)strlen(req)) {
        ssize_t r;
        while (n + 1 < cap && (r = read(fd, out + n, cap - 1 - n)) > 0)
            n += (size_t)r;
    }
    close(fd);
    out[n] = '\0';
    int status = 0;
    sscanf(out, "HTTP/1.1 %d", &status);
    return status;
}

static aml_store *g_store;
static aml_app g_app;
static mcp_server *g_srv;
static mcp_http_server *g_hs;
static mcp_auth *g_auth;

static void test_no_token_is_401(void)
{
    mcp_client *c;
    mcp_error err;
    CHECK((connect_with(&c, NULL, &err)) == MCP_ERR_AUTH);
    CHECK(strstr(err.message, "resource_metadata=") != NULL);
}

static void test_read_scope_steps_up_for_sar(void)
{
    char *t = token("analyst-jane", "aml.read");
    mcp_client *c;
    mcp_error err;
    CHECK((connect_with(&c, t, &err)) == MCP_OK);
    mcp_response *r;
    CHECK((mcp_client_call_tool(c, "listTypologies", NULL, NULL, &r, &err)) == MCP_OK);
    CHECK(mcp_json_len(mcp_json_get(mcp_json_get(mcp_response_result(r), "structuredContent"), "typologies")) == AML_NTYP);
    mcp_response_free(r);
    char actor[128];
    last_actor(g_store, "tool.listTypologies", actor, sizeof actor);
    CHECK(strcmp(actor, "analyst-jane") == 0);
    /* draftSar needs aml.sar: 403 with the step-up challenge, no handler run. */
    CHECK((mcp_client_call_tool(c, "draftSar", "{\"caseId\":\"CASE-0002\"}", NULL, &r, &err)) == MCP_ERR_AUTH);
    CHECK((r) == NULL);
    CHECK(strstr(err.message, "insufficient_scope") != NULL);
    /* The challenge names the scope to step up to (read off the wire). */
    char hdr[2048];
    CHECK((raw_post(t, "draftSar", hdr, sizeof hdr)) == 403);
    CHECK(strstr(hdr, "error=\"insufficient_scope\"") != NULL);
    CHECK(strstr(hdr, "scope=\"aml.sar\"") != NULL);
    /* Refused before the tool ran, and audited all the same (libmcp's call report). */
    char row[512];
    last_row(g_store, "tool.draftSar", row, sizeof row);
    CHECK(strcmp(row, "analyst-jane|denied|insufficient scope: requires scope aml.sar") == 0);
    mcp_client_close(c);
    free(t);
}

static void test_sar_scope_drafts(void)
{
    char *t = token("bsa-officer-kim", "aml.read aml.sar");
    mcp_client *c;
    mcp_error err;
    CHECK((connect_with(&c, t, &err)) == MCP_OK);
    mcp_response *r;
    /* CASE-0002 of the demo bank is high risk: a SAR draft with its narrative. */
    CHECK((mcp_client_call_tool(c, "draftSar", "{\"caseId\":\"CASE-0002\"}", NULL, &r, &err)) == MCP_OK);
    const mcp_json *sc = mcp_json_get(mcp_response_result(r), "structuredContent");
    CHECK(!(mcp_response_is_tool_error(r)));
    CHECK((mcp_json_get(mcp_json_get(sc, "narrative"), "text")) != NULL);
    mcp_response_free(r);
    char actor[128];
    last_actor(g_store, "tool.draftSar", actor, sizeof actor);
    CHECK(strcmp(actor, "bsa-officer-kim") == 0);
    /* Arguments the input schema refuses: no handler ran, the refusal is audited. */
    CHECK((mcp_client_call_tool(c, "draftSar", "{}", NULL, &r, &err)) == MCP_OK);
    CHECK(mcp_response_is_tool_error(r));
    mcp_response_free(r);
    char row[512];
    last_row(g_store, "tool.draftSar", row, sizeof row);
    CHECK(strncmp(row, "bsa-officer-kim|error|rejected: invalid arguments: ", 51) == 0 && strstr(row, "caseId"));
    /* The audit chain is intact after the authorized calls. */
    int64_t bad = 0;
    FILE *devnull = fopen("/dev/null", "w");
    CHECK((aml_audit_verify(g_store, devnull, &bad, NULL)) == 0);
    fclose(devnull);
    mcp_client_close(c);
    free(t);
}

static void test_metadata(void)
{
    /* The protected-resource metadata names the test AS and the AML scopes. */
    const char *md = mcp_auth_metadata_url(g_auth);
    CHECK((md) != NULL);
    mcp_buf b;
    mcp_buf_init(&b, 0);
    CHECK((mcp_auth_metadata(g_auth, &b)) == MCP_OK);
    CHECK(strstr(b.data, tas_issuer(g_as)) != NULL);
    CHECK(strstr(b.data, "aml.sar") != NULL);
    mcp_buf_cleanup(&b);
}

int main(void)
{
    aml_err aerr = {{0}};
    if (tas_start(&g_as, 1) || aml_demo_store(&g_store, &aerr)) {
        printf("aml_auth: cannot start (%s)\naml_auth: 0 passed, 1 failed\n", aerr.msg);
        return 1;
    }
    g_app.store = g_store;
    g_app.actor = "unused";
    mcp_server_opts so;
    aml_server_opts(&so, &g_app);
    so.log = quiet;
    mcp_error err;
    mcp_auth_opts ao;
    memset(&ao, 0, sizeof ao);
    ao.issuers = tas_issuer(g_as);
    ao.jwks_url = tas_jwks_url(g_as);
    ao.scopes_supported = "aml.read aml.assess aml.sar";
    mcp_http_opts ho;
    memset(&ho, 0, sizeof ho);
    if (mcp_server_new(&g_srv, &so, &err) || aml_tools_register(g_srv, &g_app, &err) ||
        mcp_auth_new(&g_auth, &ao, &err)) {
        printf("aml_auth: %s\naml_auth: 0 passed, 1 failed\n", err.message);
        return 1;
    }
    ho.auth = g_auth;
    if (mcp_http_server_start(&g_hs, g_srv, &ho, &err)) {
        printf("aml_auth: %s\naml_auth: 0 passed, 1 failed\n", err.message);
        return 1;
    }
    snprintf(g_url, sizeof g_url, "http://127.0.0.1:%u/mcp", mcp_http_server_port(g_hs));
    test_no_token_is_401();
    test_read_scope_steps_up_for_sar();
    test_sar_scope_drafts();
    test_metadata();
    mcp_http_server_stop(g_hs, 1000);
    mcp_server_free(g_srv);
    mcp_auth_free(g_auth);
    aml_store_close(g_store);
    tas_stop(g_as);
    printf("aml_auth: %d passed, %d failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
