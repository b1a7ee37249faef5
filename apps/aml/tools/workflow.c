/*
 * The case workflow tools (see workflow.h). Each call: a connection and the write lock for
 * the whole call, the step (engine/workflow.c, one transaction with the
 * case's history row), the result (the case's workflow and history) or a
 * tool error naming the rule that refused it, and an audit row: outcome
 * "ok", "denied" for the four-eyes rule, "error" for the other refusals.
 */
#include "tools/workflow.h"
#include "engine/workflow.h"

#include <string.h>

enum { WF_ASSIGN, WF_CLOSE, WF_REVIEW };

static const char *scope_of(const char *tool)
{
    for (const aml_tool_scope *s = aml_tool_scopes(); s->tool; s++)
        if (!strcmp(s->tool, tool))
            return s->scope;
    return NULL;
}

static const char *str_arg(const mcp_json *args, const char *key)
{
    const char *v = mcp_json_str(mcp_json_get(args, key), NULL);
    return v ? v : "";
}

/* Runs the step; 0 done, 1 refused by a rule, -1 store error (message in err). */
static int run_step(aml_store *s, int step, const mcp_json *args, const char *case_id, const char *actor,
                    aml_err *err)
{
    switch (step) {
    case WF_ASSIGN: return aml_wf_assign(s, case_id, str_arg(args, "assignee"), actor, err);
    case WF_CLOSE:
        return aml_wf_request_close(s, case_id, str_arg(args, "disposition"), str_arg(args, "rationale"),
                                    str_arg(args, "sarId"), actor, err);
    default:
        return aml_wf_review(s, case_id, mcp_json_bool(mcp_json_get(args, "approve")), str_arg(args, "comment"),
                             actor, err);
    }
}

/* The result: the case's workflow, its history, and a line of text. */
static mcp_status answer(mcp_call *call, aml_store *s, const char *case_id, char *sha, size_t nsha)
{
    mcp_buf b;
    mcp_jw w;
    mcp_buf_init(&b, 0);
    mcp_jw_init(&w, &b);
    aml_workflow wf;
    aml_wf_load(s, case_id, &wf, NULL);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "caseId");
    mcp_jw_string(&w, case_id);
    aml_wf_member(s, &w, case_id, 1);
    mcp_jw_object_end(&w);
    mcp_status st = mcp_jw_finish(&w);
    if (st == MCP_OK) {
        aml_sha256_hex(b.data, b.len, sha);
        st = mcp_call_structured(call, b.data, b.len);
    }
    if (st == MCP_OK)
        st = mcp_call_textf(call, "Case %s is now %s%s%s%s%s. SAR due %s%s.", case_id, wf.state,
                            wf.assignee[0] ? ", assigned to " : "", wf.assignee,
                            wf.disposition[0] ? ", disposition " : "", wf.disposition,
                            wf.due_date[0] ? wf.due_date : "(no detection date)", wf.overdue ? " (OVERDUE)" : "");
    (void)nsha;
    mcp_buf_cleanup(&b);
    return st;
}

static mcp_status wf_call(mcp_call *call, const mcp_json *args, aml_app *app, int step)
{
    char req[65], resp[65] = "", detail[160] = "";
    aml_args_sha256(args, req);
    const char *subject = mcp_call_subject(call);
    const char *actor = aml_app_actor(app, subject);
    const char *case_id = str_arg(args, "caseId");
    /* A writing tool: the write lock for the whole call (read, check, write and audit as one). */
    aml_store *s = aml_app_acquire(app);
    aml_app_write_lock(app, s);
    aml_err err = {{0}};
    int rc = strlen(actor) > AML_WF_PRINCIPAL_MAX
                 ? (aml_errf(&err, "The principal name is over %d characters.", AML_WF_PRINCIPAL_MAX), 1)
                 : run_step(s, step, args, case_id, actor, &err);
    const char *outcome = "ok";
    mcp_status st = MCP_OK;
    if (rc == 0) {
        st = answer(call, s, case_id, resp, sizeof resp);
        snprintf(detail, sizeof detail, "%s", step == WF_ASSIGN ? "assigned" : step == WF_CLOSE ? "closure requested"
                                              : mcp_json_bool(mcp_json_get(args, "approve")) ? "closure approved"
                                                                                             : "closure rejected");
    } else {
        int four_eyes = strstr(err.msg, "Four-eyes rule") != NULL;
        outcome = four_eyes ? "denied" : "error";
        snprintf(detail, sizeof detail, "%s", four_eyes ? "four-eyes rule: requester may not review" : "refused");
        st = rc < 0 ? mcp_call_error(call, "The case store could not be updated: %s", err.msg)
                    : mcp_call_error(call, "%s", err.msg);
    }
    aml_workflow wf;
    int known = case_id[0] && strlen(case_id) <= AML_CASE_ID_MAX && aml_wf_load(s, case_id, &wf, NULL) == 0;
    char action[48];
    snprintf(action, sizeof action, "tool.%s", mcp_call_tool_name(call));
    char dt[AML_AUDIT_DETAIL_MAX];
    aml_audit_entry e = {actor, action, known ? case_id : NULL, req, resp[0] ? resp : NULL, outcome,
                         aml_audit_detail(detail, mcp_call_trace(call, NULL), dt, sizeof dt)};
    if (aml_audit_append(s, &e, &err))
        mcp_call_log(call, MCP_LOG_ERROR, "aml", "audit log write failed: %s", err.msg);
    aml_app_write_unlock(app);
    aml_app_release(app, s);
    return st;
}

static mcp_status assign_case(mcp_call *call, const mcp_json *args, void *ud)
{
    return wf_call(call, args, ud, WF_ASSIGN);
}

static mcp_status close_case(mcp_call *call, const mcp_json *args, void *ud)
{
    return wf_call(call, args, ud, WF_CLOSE);
}

static mcp_status review_closure(mcp_call *call, const mcp_json *args, void *ud)
{
    return wf_call(call, args, ud, WF_REVIEW);
}

#define CASE_ID_PROP "\"caseId\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":128}"

static const char assign_in[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"caseId\",\"assignee\"],\"properties\":{"
    CASE_ID_PROP ",\"assignee\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":128,"
    "\"description\":\"the principal who works the case\"}}}";

static const char close_in[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"caseId\",\"disposition\",\"rationale\"],"
    "\"properties\":{" CASE_ID_PROP ","
    "\"disposition\":{\"type\":\"string\",\"enum\":[\"false_positive\",\"confirmed_suspicious\",\"inconclusive\"]},"
    "\"rationale\":{\"type\":\"string\",\"minLength\":10,\"maxLength\":4000,\"description\":\"why\"},"
    "\"sarId\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":128,\"description\":\"the SAR filed (its "
    "sarDraftId); required for confirmed_suspicious\"}}}";

static const char review_in[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"caseId\",\"approve\"],\"properties\":{"
    CASE_ID_PROP ",\"approve\":{\"type\":\"boolean\"},"
    "\"comment\":{\"type\":\"string\",\"maxLength\":4000,\"description\":\"required when rejecting\"}}}";

static const char wf_out[] =
    "{\"type\":\"object\",\"required\":[\"caseId\",\"workflow\"],\"properties\":{\"caseId\":{\"type\":\"string\"},"
    "\"workflow\":{\"type\":\"object\",\"required\":[\"state\",\"overdue\",\"history\"],\"properties\":{"
    "\"state\":{\"enum\":[\"open\",\"in_review\",\"pending_approval\",\"closed\"]},"
    "\"overdue\":{\"type\":\"boolean\"},\"history\":{\"type\":\"array\"}}}}}";

mcp_status aml_workflow_tools_register(mcp_server *srv, aml_app *app, mcp_error *err)
{
    static const struct {
        const char *name, *title, *desc, *in;
        mcp_tool_fn fn;
    } defs[] = {
        {"assignCase", "Assign a case",
         "Assigns an open or in-review case to a principal (the case goes in_review). Recorded in the case's "
         "history and the audit log.",
         assign_in, assign_case},
        {"closeCase", "Request closure of a case",
         "Requests the closure of an open or in-review case with a disposition (false_positive, "
         "confirmed_suspicious with the sarId of the SAR filed, inconclusive) and a rationale; the case waits in "
         "pending_approval until a different principal reviews it (reviewClosure).",
         close_in, close_case},
        {"reviewClosure", "Approve or reject a closure",
         "Approves (the case closes) or rejects (it goes back to in_review; a comment is required) a closure "
         "request. Four-eyes rule: the principal who requested the closure cannot review it.",
         review_in, review_closure},
    };
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
        mcp_tool_def t;
        memset(&t, 0, sizeof t);
        t.name = defs[i].name;
        t.title = defs[i].title;
        t.description = defs[i].desc;
        t.input_schema = defs[i].in;
        t.output_schema = wf_out;
        t.read_only_hint = MCP_HINT_FALSE;
        t.destructive_hint = MCP_HINT_FALSE;
        t.idempotent_hint = MCP_HINT_FALSE;
        t.open_world_hint = MCP_HINT_FALSE;
        t.handler = defs[i].fn;
        t.user_data = app;
        t.scopes = scope_of(defs[i].name);
        mcp_status st = mcp_server_add_tool(srv, &t, err);
        if (st != MCP_OK)
            return st;
    }
    return aml_suppress_tool_register(srv, app, err);
}
