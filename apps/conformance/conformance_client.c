/*
 * mcp-client-conformance: the client the official MCP conformance suite
 * drives (`conformance client --command mcp-client-conformance ...`).
 *
 * The suite appends the server URL as the last argument and names the
 * scenario in MCP_CONFORMANCE_SCENARIO, the wire revision in
 * MCP_CONFORMANCE_PROTOCOL_VERSION (2025-11-25: a session with
 * initialize; 2026-07-28: stateless requests) and, for some scenarios,
 * extra input in MCP_CONFORMANCE_CONTEXT (JSON). Everything the scenarios
 * check happens inside libmcp's client (headers, _meta, retries, input
 * rounds, resumption, authorization); this program only plays each
 * scenario's part.
 *
 * Authorization scenarios (auth/...): the client gets OAuth options: the
 * suite's Client ID Metadata Document URL, the pre-registered id and
 * secret when the context carries them (client credentials for the
 * client-credentials scenarios), a loopback redirect URI that is never
 * visited, and libmcp's unattended authorize callback (the suite's
 * authorization server redirects at once). Then it lists the tools and
 * calls the first one, which the step-up scenarios guard with more scopes.
 *
 * Exit status: 0 when the scenario ran, 1 on an error or an unknown
 * scenario (the scenarios where the client must refuse end with 1).
 * The suite kills slow clients at 30 s; this one stops itself at 25 s.
 */
#include <mcp/mcp.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *g_scenario = "";

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "mcp-client-conformance: out of time (25 s)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(1);
}

static void log_line(mcp_log_level level, const char *message, void *ud)
{
    (void)ud;
    fprintf(stderr, "[%s] %s: %s\n", g_scenario, mcp_log_level_name(level), message);
}

/* Writes a default value for every property of the requested schema that has one. */
static void defaults(const mcp_json *schema, mcp_jw *w)
{
    const mcp_json *props = mcp_json_get(schema, "properties");
    for (size_t i = 0; i < mcp_json_len(props); i++) {
        const mcp_json *d = mcp_json_get(mcp_json_value_at(props, i), "default");
        if (!d)
            continue;
        size_t kl;
        const char *k = mcp_json_key_at(props, i, &kl);
        mcp_jw_keyn(w, k, kl);
        mcp_jw_value(w, d);
    }
}

/*
 * Input the servers ask for: elicitation is accepted with the schema's
 * defaults (SEP-1034) plus, for a boolean "confirmed", true; roots and
 * sampling get a fixed answer.
 */
static mcp_status on_input(mcp_client *c, const char *method, const mcp_json *params, mcp_jw *w, char *msg,
                           size_t cap, void *ud)
{
    (void)c;
    (void)msg;
    (void)cap;
    (void)ud;
    if (!strcmp(method, "elicitation/create")) {
        const mcp_json *schema = mcp_json_get(params, "requestedSchema");
        mcp_jw_key(w, "action");
        mcp_jw_string(w, "accept");
        mcp_jw_key(w, "content");
        mcp_jw_object_begin(w);
        defaults(schema, w);
        const mcp_json *confirmed = mcp_json_get(mcp_json_get(schema, "properties"), "confirmed");
        if (confirmed && !mcp_json_get(confirmed, "default")) {
            mcp_jw_key(w, "confirmed");
            mcp_jw_bool(w, 1);
        }
        mcp_jw_object_end(w);
        return MCP_OK;
    }
    if (!strcmp(method, "roots/list")) {
        mcp_jw_key(w, "roots");
        mcp_jw_array_begin(w);
        mcp_jw_array_end(w);
        return MCP_OK;
    }
    if (!strcmp(method, "sampling/createMessage")) {
        mcp_jw_key(w, "role");
        mcp_jw_string(w, "assistant");
        mcp_jw_key(w, "content");
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "type");
        mcp_jw_string(w, "text");
        mcp_jw_key(w, "text");
        mcp_jw_string(w, "ok");
        mcp_jw_object_end(w);
        mcp_jw_key(w, "model");
        mcp_jw_string(w, "conformance");
        return MCP_OK;
    }
    return MCP_ERR_UNSUPPORTED;
}

static int fail(const char *what, mcp_status st, const mcp_error *err)
{
    fprintf(stderr, "[%s] %s: %s: %s\n", g_scenario, what, mcp_status_name(st), err ? err->message : "");
    return 1;
}

/* Serialises a JSON value (for building arguments). */
static char *to_text(const mcp_json *v)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_value(&w, v);
    if (mcp_jw_finish(&w) != MCP_OK) {
        mcp_buf_cleanup(&b);
        return NULL;
    }
    return mcp_buf_take(&b, NULL);
}

static const mcp_json *find_by_name(const mcp_json *list, const char *name)
{
    for (size_t i = 0; i < mcp_json_len(list); i++)
        if (mcp_json_str_eq(mcp_json_get(mcp_json_at(list, i), "name"), name))
            return mcp_json_at(list, i);
    return NULL;
}

static int call_tool(mcp_client *c, const char *name, const char *args)
{
    mcp_response *r;
    mcp_error err;
    mcp_status st = mcp_client_call_tool(c, name, args, NULL, &r, &err);
    mcp_response_free(r);
    if (st != MCP_OK && st != MCP_ERR_PROTOCOL)
        return fail(name, st, &err);
    return 0;
}

/* Arguments for a tool from its inputSchema: a plausible value per property. */
static char *sample_args(const mcp_json *tool)
{
    const mcp_json *props = mcp_json_get(mcp_json_get(tool, "inputSchema"), "properties");
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    for (size_t i = 0; i < mcp_json_len(props); i++) {
        size_t kl;
        const char *k = mcp_json_key_at(props, i, &kl);
        const mcp_json *type = mcp_json_get(mcp_json_value_at(props, i), "type");
        mcp_jw_keyn(&w, k, kl);
        if (mcp_json_str_eq(type, "integer") || mcp_json_str_eq(type, "number"))
            mcp_jw_int(&w, 1);
        else if (mcp_json_str_eq(type, "boolean"))
            mcp_jw_bool(&w, 1);
        else
            mcp_jw_string(&w, "us-west1");
    }
    mcp_jw_object_end(&w);
    if (mcp_jw_finish(&w) != MCP_OK) {
        mcp_buf_cleanup(&b);
        return NULL;
    }
    return mcp_buf_take(&b, NULL);
}

static int run(mcp_client *c)
{
    const char *s = g_scenario;
    mcp_response *tools = NULL;
    mcp_error err;
    mcp_status st = mcp_client_list_tools(c, &tools, &err);
    if (st != MCP_OK)
        return fail("tools/list", st, &err);
    const mcp_json *list = mcp_json_get(mcp_response_result(tools), "tools");
    int rc = 0;
    if (!strcmp(s, "initialize") || !strcmp(s, "json-schema-ref-no-deref")) {
        /* listing is the whole part */
    } else if (!strcmp(s, "tools_call")) {
        const char *name = mcp_json_str(mcp_json_get(mcp_json_at(list, 0), "name"), NULL);
        rc = name ? call_tool(c, name, "{\"a\":2,\"b\":3}") : fail("no tool to call", MCP_ERR_NOT_FOUND, NULL);
    } else if (!strcmp(s, "elicitation-sep1034-client-defaults")) {
        rc = call_tool(c, "test_client_elicitation_defaults", NULL);
    } else if (!strcmp(s, "sse-retry")) {
        rc = call_tool(c, "test_reconnection", NULL);
    } else if (!strcmp(s, "json-schema-2020-12-preservation")) {
        const mcp_json *focal = find_by_name(list, "json_schema_2020_12_tool");
        char *schema = focal ? to_text(mcp_json_get(focal, "inputSchema")) : NULL;
        if (!schema)
            return mcp_response_free(tools), fail("json_schema_2020_12_tool missing", MCP_ERR_NOT_FOUND, NULL);
        size_t n = strlen(schema) + 16;
        char *args = malloc(n);
        snprintf(args, n, "{\"schema\":%s}", schema);
        rc = call_tool(c, "json_schema_echo", args);
        free(args);
        mcp_free(schema);
    } else if (!strcmp(s, "request-metadata")) {
        /* The handshake already retried after -32022; one more request. */
        rc = 0;
    } else if (!strcmp(s, "sep-2322-client-request-state")) {
        rc = call_tool(c, "test_mrtr_echo_state", NULL) || call_tool(c, "test_mrtr_unrelated", NULL) ||
             call_tool(c, "test_mrtr_no_state", NULL) || call_tool(c, "test_mrtr_no_result_type", NULL);
    } else if (!strcmp(s, "http-standard-headers")) {
        for (size_t i = 0; i < mcp_json_len(list) && !rc; i++)
            rc = call_tool(c, mcp_json_str(mcp_json_get(mcp_json_at(list, i), "name"), NULL), NULL);
        mcp_response *r;
        if (!rc && mcp_client_list_resources(c, &r, &err) == MCP_OK) {
            const mcp_json *res = mcp_json_get(mcp_response_result(r), "resources");
            for (size_t i = 0; i < mcp_json_len(res); i++) {
                mcp_response *rr;
                if (mcp_client_read_resource(c, mcp_json_str(mcp_json_get(mcp_json_at(res, i), "uri"), NULL), &rr,
                                             &err) == MCP_OK)
                    mcp_response_free(rr);
            }
            mcp_response_free(r);
        }
        if (!rc && mcp_client_list_prompts(c, &r, &err) == MCP_OK) {
            const mcp_json *ps = mcp_json_get(mcp_response_result(r), "prompts");
            for (size_t i = 0; i < mcp_json_len(ps); i++) {
                mcp_response *rr;
                if (mcp_client_get_prompt(c, mcp_json_str(mcp_json_get(mcp_json_at(ps, i), "name"), NULL), NULL,
                                          &rr, &err) == MCP_OK)
                    mcp_response_free(rr);
            }
            mcp_response_free(r);
        }
    } else if (!strcmp(s, "http-custom-headers")) {
        const char *ctx = getenv("MCP_CONFORMANCE_CONTEXT");
        mcp_json_doc *d = NULL;
        if (!ctx || mcp_json_parse(&d, ctx, strlen(ctx), NULL, NULL) != MCP_OK)
            return mcp_response_free(tools), fail("MCP_CONFORMANCE_CONTEXT", MCP_ERR_PARSE, NULL);
        const mcp_json *calls = mcp_json_get(mcp_json_doc_root(d), "toolCalls");
        for (size_t i = 0; i < mcp_json_len(calls) && !rc; i++) {
            const mcp_json *tc = mcp_json_at(calls, i);
            char *args = to_text(mcp_json_get(tc, "arguments"));
            rc = call_tool(c, mcp_json_str(mcp_json_get(tc, "name"), NULL), args);
            mcp_free(args);
        }
        mcp_json_doc_free(d);
    } else if (!strncmp(s, "auth/", 5)) {
        const char *name = mcp_json_str(mcp_json_get(mcp_json_at(list, 0), "name"), NULL);
        rc = name ? call_tool(c, name, NULL) : fail("no tool to call", MCP_ERR_NOT_FOUND, NULL);
    } else if (!strcmp(s, "http-invalid-tool-headers")) {
        /* The client dropped the tools with unusable x-mcp-header; call the rest. */
        for (size_t i = 0; i < mcp_json_len(list) && !rc; i++) {
            char *args = sample_args(mcp_json_at(list, i));
            rc = call_tool(c, mcp_json_str(mcp_json_get(mcp_json_at(list, i), "name"), NULL), args);
            mcp_free(args);
        }
    } else {
        fprintf(stderr, "mcp-client-conformance: scenario '%s' is not supported\n", s);
        rc = 1;
    }
    mcp_response_free(tools);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: mcp-client-conformance [...] URL   (MCP_CONFORMANCE_SCENARIO names the scenario)\n");
        return 1;
    }
    signal(SIGALRM, on_alarm);
    alarm(25);
    const char *url = argv[argc - 1];
    g_scenario = getenv("MCP_CONFORMANCE_SCENARIO") ? getenv("MCP_CONFORMANCE_SCENARIO") : "";
    const char *version = getenv("MCP_CONFORMANCE_PROTOCOL_VERSION");
    mcp_client_opts o;
    memset(&o, 0, sizeof o);
    o.name = "libmcp-conformance-client";
    o.version = mcp_version();
    o.protocol_version = version && *version ? version : NULL;
    o.capabilities = "{\"elicitation\":{},\"sampling\":{},\"roots\":{\"listChanged\":true}}";
    o.on_input = on_input;
    o.log = log_line;
    o.timeout_ms = 20000;
    o.connect_timeout_ms = 20000;
    mcp_http_client_opts ho;
    memset(&ho, 0, sizeof ho);
    ho.url = url;
    mcp_oauth_opts oa;
    memset(&oa, 0, sizeof oa);
    mcp_json_doc *ctx = NULL;
    if (!strncmp(g_scenario, "auth/", 5)) {
        const char *text = getenv("MCP_CONFORMANCE_CONTEXT");
        if (text && mcp_json_parse(&ctx, text, strlen(text), NULL, NULL) != MCP_OK)
            ctx = NULL;
        const mcp_json *root = mcp_json_doc_root(ctx);
        oa.client_id = mcp_json_str(mcp_json_get(root, "client_id"), NULL);
        oa.client_secret = mcp_json_str(mcp_json_get(root, "client_secret"), NULL);
        if (strstr(g_scenario, "client-credentials") && oa.client_id && oa.client_secret)
            oa.grant = MCP_OAUTH_CLIENT_CREDENTIALS;
        oa.client_metadata_url = "https://conformance-test.local/client-metadata.json";
        oa.client_name = "libmcp-conformance-client";
        oa.redirect_uri = "http://localhost:3000/callback";
        oa.authorize = mcp_oauth_authorize_unattended;
        ho.oauth = &oa;
    }
    mcp_client *c;
    mcp_error err;
    mcp_status st = mcp_client_connect_http(&c, &o, &ho, &err);
    if (st != MCP_OK) {
        mcp_json_doc_free(ctx);
        return fail("connect", st, &err);
    }
    int rc = run(c);
    mcp_client_close(c);
    mcp_json_doc_free(ctx);
    return rc;
}
