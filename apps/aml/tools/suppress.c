/*
 * suppressAlert (engine/suppress.h; docs/aml.md, "Suppressing an alert"):
 * scope aml.review; the suppression, who made it, why and until when go to
 * the suppressions table, the case's history and the audit log.
 */
#include "engine/suppress.h"
#include "tools/workflow.h"

#include <string.h>

static const char *arg(const mcp_json *args, const char *key)
{
    return mcp_json_str(mcp_json_get(args, key), NULL);
}

static mcp_status suppress_alert(mcp_call *call, const mcp_json *args, void *ud)
{
    aml_app *app = ud;
    char req[65], resp[65] = "", detail[160] = "refused";
    aml_args_sha256(args, req);
    const char *subject = mcp_call_subject(call);
    const char *actor = aml_app_actor(app, subject);
    aml_suppression in = {arg(args, "caseId"), arg(args, "accountId"), arg(args, "counterpartyId"),
                          arg(args, "typology"), arg(args, "until"), arg(args, "reason")};
    /* A writing tool: the write lock for the whole call (read, check, write and audit as one). */
    aml_store *s = aml_app_acquire(app);
    aml_app_write_lock(app, s);
    aml_err err = {{0}};
    int64_t id = 0;
    int rc = aml_suppress_add(s, &in, actor, &id, &err);
    mcp_status st;
    if (rc == 0) {
        mcp_buf b;
        mcp_jw w;
        mcp_buf_init(&b, 0);
        mcp_jw_init(&w, &b);
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, "suppressionId");
        mcp_jw_int(&w, id);
        mcp_jw_key(&w, "caseId");
        mcp_jw_string(&w, in.case_id);
        mcp_jw_key(&w, "accountId");
        mcp_jw_string(&w, in.account_id);
        mcp_jw_key(&w, "counterpartyId");
        in.counterparty_id ? mcp_jw_string(&w, in.counterparty_id) : mcp_jw_null(&w);
        mcp_jw_key(&w, "typology");
        in.typology ? mcp_jw_string(&w, in.typology) : mcp_jw_null(&w);
        mcp_jw_key(&w, "until");
        mcp_jw_string(&w, in.until);
        mcp_jw_key(&w, "createdBy");
        mcp_jw_string(&w, actor);
        mcp_jw_object_end(&w);
        st = mcp_jw_finish(&w);
        if (st == MCP_OK) {
            aml_sha256_hex(b.data, b.len, resp);
            st = mcp_call_structured(call, b.data, b.len);
        }
        if (st == MCP_OK)
            st = mcp_call_textf(call,
                                "Suppression %lld: the scan will not alert on %s%s%s%s%s until %s (inclusive). "
                                "Recorded in case %s and the audit log.",
                                (long long)id, in.account_id, in.typology ? " for " : "", in.typology ? in.typology : "",
                                in.counterparty_id ? " with " : "", in.counterparty_id ? in.counterparty_id : "",
                                in.until, in.case_id);
        mcp_buf_cleanup(&b);
        snprintf(detail, sizeof detail, "suppression %lld until %s: %.80s", (long long)id, in.until, in.reason);
    } else {
        st = rc < 0 ? mcp_call_error(call, "The case store could not be updated: %s", err.msg)
                    : mcp_call_error(call, "%s", err.msg);
    }
    aml_case c;
    int known = in.case_id && strlen(in.case_id) <= AML_CASE_ID_MAX && aml_case_load(s, in.case_id, &c, NULL) == 0;
    if (known)
        aml_case_free(&c);
    char dt[AML_AUDIT_DETAIL_MAX];
    aml_audit_entry e = {actor, "tool.suppressAlert", known ? in.case_id : NULL, req, resp[0] ? resp : NULL,
                         rc == 0 ? "ok" : "error", aml_audit_detail(detail, mcp_call_trace(call, NULL), dt, sizeof dt)};
    if (aml_audit_append(s, &e, &err))
        mcp_call_log(call, MCP_LOG_ERROR, "aml", "audit log write failed: %s", err.msg);
    aml_app_write_unlock(app);
    aml_app_release(app, s);
    return st;
}

#define SHORT_ID "{\"type\":\"string\",\"minLength\":1,\"maxLength\":128}"

static const char suppress_in[] =
    "{\"type\":\"object\",\"additionalProperties\":false,"
    "\"required\":[\"caseId\",\"accountId\",\"until\",\"reason\"],\"properties\":{"
    "\"caseId\":" SHORT_ID ",\"accountId\":" SHORT_ID ",\"counterpartyId\":" SHORT_ID ","
    "\"typology\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":64,\"description\":\"typology id or code\"},"
    "\"until\":{\"type\":\"string\",\"pattern\":\"^[0-9]{4}-[0-9]{2}-[0-9]{2}$\",\"description\":\"last day, "
    "inclusive, at most 366 days ahead\"},"
    "\"reason\":{\"type\":\"string\",\"minLength\":10,\"maxLength\":2000}}}";

static const char suppress_out[] =
    "{\"type\":\"object\",\"required\":[\"suppressionId\",\"caseId\",\"accountId\",\"until\",\"createdBy\"],"
    "\"properties\":{\"suppressionId\":{\"type\":\"integer\"},\"caseId\":{\"type\":\"string\"},"
    "\"accountId\":{\"type\":\"string\"},\"until\":{\"type\":\"string\"},\"createdBy\":{\"type\":\"string\"}}}";

mcp_status aml_suppress_tool_register(mcp_server *srv, aml_app *app, mcp_error *err)
{
    mcp_tool_def t;
    memset(&t, 0, sizeof t);
    t.name = "suppressAlert";
    t.title = "Suppress a reviewed alert";
    t.description = "Records that an alert of a case was reviewed and is not suspicious, for a period: a pattern "
                    "(accountId and typology) or a counterparty pair (accountId and counterpartyId, optionally one "
                    "typology). Until 'until' (inclusive) the monitoring scan does not alert on it. Who, why and "
                    "until when go to the case's history and the audit log.";
    t.input_schema = suppress_in;
    t.output_schema = suppress_out;
    t.read_only_hint = MCP_HINT_FALSE;
    t.destructive_hint = MCP_HINT_FALSE;
    t.idempotent_hint = MCP_HINT_FALSE;
    t.open_world_hint = MCP_HINT_FALSE;
    t.handler = suppress_alert;
    t.user_data = app;
    for (const aml_tool_scope *s = aml_tool_scopes(); s->tool; s++)
        if (!strcmp(s->tool, "suppressAlert"))
            t.scopes = s->scope;
    return mcp_server_add_tool(srv, &t, err);
}
