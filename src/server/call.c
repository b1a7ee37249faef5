/*
 * tools/call: the pipeline (look up, validate arguments, run the handler on
 * the worker pool, check the result, encode, send), the result-building
 * API for handlers, progress and logging from handlers, cancellation and
 * time limits.
 *
 * Exactly one party answers a call: whoever flips `finished` from 0 to 1
 * (the handler's completion, the timer, a client cancel or the connection
 * closing). The thread that ran (or withdrew) the job frees the call.
 */
#include "util/abi.h"
#include "util/util.h"
#include "server/server_internal.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define META_VALIDATION "validationErrors"
/* Bytes reserved up front: for the envelope around a result's content, and
 * for the content itself (a typical text block fits, so it rarely grows). */
#define ANSWER_ROOM 256u
#define CONTENT_ROOM 256u
/* A tool whose handler last ran this long or longer (µs) may be slow: the
 * answers a worker holds back are written before it runs (conn.c). */
#define QUICK_US 100u



/* What a requestState of this tool is bound to. */
static void bound_name(char *out, size_t n, const char *tool)
{
    snprintf(out, n, "tools/call:%s", tool);
}

/* ------------------------------------------------------------------------ */
/* Answering                                                                 */

/*
 * The request's trace context: from its _meta when that has a well-formed
 * traceparent, else from the HTTP request's headers (mcp__trace_http_get;
 * only on the thread that dispatches it). *parent and *state are NULL
 * unless well-formed; a tracestate goes with its own traceparent only.
 */
static void trace_of(const mcp_json *meta, const char **parent, const char **state)
{
    size_t n = 0, sn = 0;
    const char *p = mcp_json_str(mcp_json_get(meta, "traceparent"), &n);
    const char *s = mcp_json_str(mcp_json_get(meta, "tracestate"), &sn);
    *parent = p && mcp__traceparent_valid(p, n) ? p : NULL;
    *state = *parent && s && mcp__tracestate_valid(s, sn) ? s : NULL;
    if (!*parent)
        mcp__trace_http_get(parent, state);
}

/* 1 when how a call ends is wanted: by on_call_end or by the metrics. */
static int reporting(const mcp_server *srv)
{
    return srv->opts.on_call_end || mcp__metrics_on(srv);
}

/* Tells the metrics and mcp_server_opts.on_call_end how a call ended. */
static void report(mcp_server *srv, int outcome, const mcp_rpc_id *id, const char *tool, const mcp_json *args,
                   const mcp_principal *principal, const char *version, int code, const char *why,
                   uint64_t start_ns, const char *traceparent, const char *tracestate)
{
    mcp_call_report r;
    memset(&r, 0, sizeof r);
    r.traceparent = traceparent;
    r.tracestate = tracestate;
    r.outcome = outcome < 0 ? MCP_CALL_CANCELLED : (mcp_call_outcome)outcome;
    r.id = id;
    r.tool = tool ? tool : "";
    r.arguments = args;
    r.principal = principal;
    r.protocol_version = version;
    r.rpc_code = code;
    r.message = r.outcome == MCP_CALL_OK || r.outcome == MCP_CALL_CANCELLED || !why || !why[0] ? NULL : why;
    uint64_t end_ns = mcp__mono_ns();
    r.duration_us = end_ns > start_ns && start_ns ? (end_ns - start_ns) / 1000u : 0;
    if (mcp__metrics_on(srv))
        mcp__metrics_call(srv, r.tool, (int)r.outcome, r.duration_us);
    if (srv->opts.on_call_end)
        srv->opts.on_call_end(&r, srv->opts.on_call_end_user_data);
}

/*
 * Claims the right to answer, as `outcome` (an mcp_call_outcome) with
 * error `code` (0 for a result) and `why`: the winner reports it before
 * the answer goes out (an audit record exists before the client sees the
 * answer). 1 when this caller won.
 */
static int claim(mcp_call *call, int outcome, int code, const char *why)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&call->finished, &expected, 1))
        return 0;
    mcp_conn *c = call->conn;
    int tell = reporting(c->srv);
    pthread_mutex_lock(&c->mu);
    mcp__conn_unlink_call_locked(c, call); /* by pointer: the id may be in use again */
    call->reported = tell;
    pthread_mutex_unlock(&c->mu);
    if (tell)
        report(c->srv, outcome, &call->msg.id, call->tool->e.key, call->args, call->principal, call->version, code,
               why, call->start_ns, call->traceparent, call->tracestate);
    return 1;
}

static void answer_error(mcp_call *call, int outcome, int code, const char *message,
                         const mcp_schema_result *violations, const char *why)
{
    if (!claim(call, outcome, code, why ? why : message))
        return;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_error(&w, &call->msg.id, code, message);
    if (violations) {
        mcp_jw_key(&w, "data");
        mcp_jw_object_begin(&w);
        mcp_jw_key(&w, META_VALIDATION);
        mcp_schema_result_write(&w, violations);
        mcp_jw_object_end(&w);
    }
    mcp_rpc_end_error(&w);
    if (mcp_jw_finish(&w) == MCP_OK)
        mcp__conn_send_to(call->conn, &b, &call->msg.id, 1);
    mcp_buf_cleanup(&b);
}

/* Answers with a result whose content is one text block and isError: true. */
static void answer_tool_error(mcp_call *call, int outcome, const char *text, const mcp_schema_result *violations)
{
    if (!claim(call, outcome, 0, text))
        return;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_result(&w, &call->msg.id);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "content");
    mcp_jw_array_begin(&w);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "type");
    mcp_jw_string(&w, "text");
    mcp_jw_key(&w, "text");
    mcp_jw_string(&w, text);
    mcp_jw_object_end(&w);
    mcp_jw_array_end(&w);
    mcp_jw_key(&w, "isError");
    mcp_jw_bool(&w, 1);
    if (call->modern) {
        /* resultType and _meta(serverInfo), with the violations beside it. */
        mcp_jw_key(&w, "resultType");
        mcp_jw_string(&w, "complete");
    }
    if (violations || call->modern) {
        mcp_jw_key(&w, "_meta");
        mcp_jw_object_begin(&w);
        if (violations) {
            mcp_jw_key(&w, META_VALIDATION);
            mcp_schema_result_write(&w, violations);
        }
        if (call->modern) {
            mcp_jw_key(&w, "io.modelcontextprotocol/serverInfo");
            mcp_jw_object_begin(&w);
            mcp_jw_key(&w, "name");
            mcp_jw_string(&w, call->conn->srv->name);
            mcp_jw_key(&w, "version");
            mcp_jw_string(&w, call->conn->srv->version);
            mcp_jw_object_end(&w);
        }
        mcp_jw_object_end(&w);
    }
    mcp_jw_object_end(&w);
    mcp_rpc_end(&w);
    if (mcp_jw_finish(&w) == MCP_OK)
        mcp__conn_send_to(call->conn, &b, &call->msg.id, 1);
    mcp_buf_cleanup(&b);
}

/* Adds a text block holding the structured content's JSON text. */
static mcp_status add_structured_text(mcp_call *call)
{
    mcp_buf t;
    mcp_buf_init(&t, 0);
    mcp_jw w;
    mcp_jw_init(&w, &t);
    mcp_jw_value(&w, mcp_json_doc_root(call->structured));
    mcp_status st = mcp_jw_finish(&w);
    if (!st)
        st = mcp_call_text(call, t.data, NULL);
    mcp_buf_cleanup(&t);
    return st;
}

/* Encodes and sends the handler's result. */
static void answer_result(mcp_call *call)
{
    int structured_ok = mcp__version_at_least(call->version, MCP_PROTOCOL_2025_06_18);
    /* Clients that cannot see structuredContent, and results with no other
     * content, get its JSON as text (the spec's backwards-compatibility rule). */
    if (call->structured && (!structured_ok || call->nblocks == 0) && add_structured_text(call) != MCP_OK) {
        answer_error(call, MCP_CALL_FAILED, MCP_RPC_INTERNAL_ERROR, "Internal error: could not encode the tool result",
                     NULL, NULL);
        return;
    }
    mcp_jw_array_end(&call->cw);
    if (mcp_jw_finish(&call->cw) != MCP_OK) {
        answer_error(call, MCP_CALL_FAILED, MCP_RPC_INTERNAL_ERROR, "Internal error: could not encode the tool result",
                     NULL, NULL);
        return;
    }
    if (!claim(call, call->is_error ? MCP_CALL_TOOL_ERROR : MCP_CALL_OK, 0,
               call->is_error ? (call->err_text[0] ? call->err_text : "the tool reported an error") : NULL))
        return;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    /* One allocation for the whole answer: the content and room for the
     * envelope around it (a failure here resurfaces in the writer). */
    mcp_buf_reserve(&b, call->content.len + ANSWER_ROOM);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_result(&w, &call->msg.id);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "content");
    mcp_jw_raw(&w, call->content.data, call->content.len);
    if (call->structured && structured_ok) {
        mcp_jw_key(&w, "structuredContent");
        mcp_jw_value(&w, mcp_json_doc_root(call->structured));
    }
    if (call->is_error) {
        mcp_jw_key(&w, "isError");
        mcp_jw_bool(&w, 1);
    }
    if (call->modern)
        mcp__write_modern_result_fields(&w, call->conn->srv);
    mcp_jw_object_end(&w);
    mcp_rpc_end(&w);
    if (mcp_jw_finish(&w) == MCP_OK)
        mcp__conn_send_to(call->conn, &b, &call->msg.id, 1);
    else
        mcp__server_diag(call->conn->srv, MCP_LOG_ERROR, "tool %s: result could not be encoded", call->tool->e.key);
    mcp_buf_cleanup(&b);
}

/* Text listing every violation, one per line, for the model to act on. */
static void violations_text(const char *tool, const mcp_schema_result *r, mcp_buf *out)
{
    char head[200];
    snprintf(head, sizeof head, "Invalid arguments for tool %s:", tool);
    mcp_buf_append(out, head, strlen(head));
    for (size_t i = 0; i < r->count; i++) {
        mcp_buf_append(out, "\n- ", 3);
        mcp_buf_append(out, r->errors[i].message, strlen(r->errors[i].message));
    }
    if (r->truncated)
        mcp_buf_append(out, "\n- (more violations not shown)", 30);
}

/* ------------------------------------------------------------------------ */
/* Running                                                                   */

static void execute(mcp_call *call)
{
    mcp__tool *t = call->tool;
    mcp_server *srv = call->conn->srv;
    const mcp_json *args = call->args ? call->args : mcp__empty_object();

    /* 1. Arguments against the input schema. */
    mcp_schema_result *res = NULL;
    mcp_error verr;
    mcp_status st = mcp_schema_validate(t->input_schema, args, 0, &res, &verr);
    if (st == MCP_ERR_INVALID || st == MCP_ERR_LIMIT) {
        int protocol = srv->opts.invalid_args_protocol_error ||
                       !mcp__version_at_least(call->version, MCP_PROTOCOL_2025_11_25);
        if (protocol) {
            char msg[200];
            snprintf(msg, sizeof msg, "invalid params for %s", t->e.key);
            mcp_buf text;
            mcp_buf_init(&text, 0);
            if (res)
                violations_text(t->e.key, res, &text);
            answer_error(call, MCP_CALL_INVALID_ARGUMENTS, MCP_RPC_INVALID_PARAMS, msg, res,
                         text.data ? text.data : verr.message);
            mcp_buf_cleanup(&text);
        } else if (res) {
            mcp_buf text;
            mcp_buf_init(&text, 0);
            violations_text(t->e.key, res, &text);
            answer_tool_error(call, MCP_CALL_INVALID_ARGUMENTS, text.data ? text.data : "Invalid arguments", res);
            mcp_buf_cleanup(&text);
        } else {
            char msg[400];
            snprintf(msg, sizeof msg, "Invalid arguments for tool %s: %s", t->e.key, verr.message);
            answer_tool_error(call, MCP_CALL_INVALID_ARGUMENTS, msg, NULL);
        }
        mcp_schema_result_free(res);
        return;
    }
    if (st) {
        answer_error(call, MCP_CALL_FAILED, MCP_RPC_INTERNAL_ERROR, "Internal error: could not validate the arguments",
                     NULL, NULL);
        return;
    }

    /* 2. The handler. */
    st = t->handler(call, args, t->user_data);
    if (atomic_load(&call->finished))
        return; /* cancelled or timed out meanwhile: the result is discarded */
    if (mcp__ask_handles(&call->ask, st)) {
        /* Input needed (2026-07-28 round), a missing capability, or a bad answer. */
        char bound[200];
        bound_name(bound, sizeof bound, t->e.key);
        if (claim(call, MCP_CALL_INPUT_REQUIRED, 0, "the tool asked the client for input"))
            mcp__ask_finish(call->conn, &call->msg.id, &call->ask, st, bound, call->args);
        return;
    }
    if (st) {
        mcp__server_diag(srv, MCP_LOG_ERROR, "tool %s failed: %s", t->e.key, mcp_status_str(st));
        char msg[200];
        snprintf(msg, sizeof msg, "Internal error: tool %s failed (%s)", t->e.key, mcp_status_str(st));
        answer_error(call, MCP_CALL_FAILED, MCP_RPC_INTERNAL_ERROR, msg, NULL, NULL);
        return;
    }
    if (call->nblocks == 0 && !call->structured && !call->is_error) {
        mcp__server_diag(srv, MCP_LOG_ERROR, "tool %s returned no content", t->e.key);
        char msg[200];
        snprintf(msg, sizeof msg, "Internal error: tool %s returned no content", t->e.key);
        answer_error(call, MCP_CALL_FAILED, MCP_RPC_INTERNAL_ERROR, msg, NULL, NULL);
        return;
    }

    /* 3. Structured content against the output schema (not for tool errors). */
    if (t->output_schema && !call->is_error) {
        const char *why = NULL;
        mcp_error oerr;
        mcp_error_clear(&oerr);
        if (!call->structured) {
            why = "no structuredContent";
        } else {
            mcp_status os = mcp_schema_validate(t->output_schema, mcp_json_doc_root(call->structured),
                                                MCP_SCHEMA_FIRST_ERROR, NULL, &oerr);
            if (os == MCP_ERR_INVALID)
                why = oerr.message;
            else if (os)
                why = mcp_status_str(os);
        }
        if (why) {
            mcp__server_diag(srv, MCP_LOG_ERROR, "tool %s: result does not match its outputSchema: %s", t->e.key, why);
            char msg[200];
            snprintf(msg, sizeof msg, "Internal error: tool %s produced a result that does not match its outputSchema",
                     t->e.key);
            answer_error(call, MCP_CALL_FAILED, MCP_RPC_INTERNAL_ERROR, msg, NULL, why);
            return;
        }
    }
    answer_result(call);
}

static void call_free(mcp_call *call);
static void call_free_keep_conn(mcp_call *call);

/* Runs a call on a worker (or inline); frees it afterwards. */
static void run_job(mcp__job *job)
{
    mcp_call *call = (mcp_call *)job;
    mcp_conn *c = call->conn;
    mcp__tool *t = call->tool;
    /* Answers this worker has not written yet (conn.c) wait no longer,
     * unless this call is known to be quick and others are queued after it. */
    unsigned last_us = atomic_load_explicit(&t->last_run_us, memory_order_relaxed);
    if (last_us == 0 || last_us >= QUICK_US || !mcp__pool_worker_more())
        mcp__conn_flush_owed();
    uint64_t run0 = mcp__mono_ns();
    pthread_mutex_lock(&c->mu);
    call->state = MCP__CALL_RUNNING;
    c->running++;
    pthread_mutex_unlock(&c->mu);
    if (!atomic_load(&call->finished)) {
        if (call->timeout_ms) {
            call->deadline_ns = run0 + (uint64_t)call->timeout_ms * 1000000ull;
            mcp__server_timer_add(c->srv, call);
        }
        execute(call);
        uint64_t took = (mcp__mono_ns() - run0) / 1000u + 1u; /* 0 = never ran */
        atomic_store_explicit(&t->last_run_us, took > UINT_MAX ? UINT_MAX : (unsigned)took, memory_order_relaxed);
    }
    if (call->timeout_ms)
        mcp__server_timer_remove(c->srv, call);
    pthread_mutex_lock(&c->mu);
    call->state = MCP__CALL_DONE;
    mcp__conn_unlink_call_locked(c, call); /* normally already done by whoever answered */
    pthread_mutex_unlock(&c->mu);
    call_free_keep_conn(call);
    mcp__conn_work_done(c); /* last: the call is freed, the worker lets go */
}

void mcp__call_timeout(mcp_call *call)
{
    /* Runs on the timer thread without timer_mu, the call marked
     * timer_firing so that it is not freed meanwhile (see server.c). */
    atomic_store(&call->cancelled, 1);
    char text[200];
    snprintf(text, sizeof text, "Tool %s timed out after %u ms", call->tool->e.key, call->timeout_ms);
    call->timed_out = 1;
    answer_tool_error(call, MCP_CALL_TIMED_OUT, text, NULL);
}

void mcp__call_release(mcp_call *call)
{
    mcp_conn *c = call->conn;
    /* Only a call with a time limit can be on the timer list. */
    if (call->timeout_ms)
        mcp__server_timer_remove(c->srv, call);
    /* Normally already out of the table (whoever answered took it out). */
    pthread_mutex_lock(&c->mu);
    mcp__conn_unlink_call_locked(c, call);
    pthread_mutex_unlock(&c->mu);
    call_free(call);
}

/* Frees a call, but not its reference on the connection; reports it first. */
static void call_free_keep_conn(mcp_call *call)
{
    mcp_server *srv = call->conn->srv;
    mcp__metrics_gauge(srv, MCP__GAUGE_IN_FLIGHT, -1);
    if (reporting(srv)) {
        /* Not answered by anyone (cancelled, connection closed): no answer went out. */
        pthread_mutex_lock(&call->conn->mu);
        int reported = call->reported;
        pthread_mutex_unlock(&call->conn->mu);
        if (!reported)
            report(srv, MCP_CALL_CANCELLED, &call->msg.id, call->tool->e.key, call->args, call->principal,
                   call->version, 0, NULL, call->start_ns, call->traceparent, call->tracestate);
    }
    mcp_buf_cleanup(&call->content);
    mcp_free(call->trace_copy);
    mcp_json_doc_free(call->structured);
    mcp__ask_cleanup(&call->ask);
    mcp_rpc_msg_cleanup(&call->msg);
    mcp__tool_release(call->tool);
    mcp_principal_free(call->principal);
    mcp_free(call);
}

/* Frees a call that is off the timer list and out of the in-flight table. */
static void call_free(mcp_call *call)
{
    mcp_conn *c = call->conn;
    call_free_keep_conn(call);
    mcp__conn_release(c);
}

/*
 * Reports a tools/call refused before it became a call (no handler ran),
 * with the name and arguments as asked; nothing without on_call_end.
 */
static void report_refused(mcp_server *srv, const mcp_rpc_msg *m, const mcp_principal *p, const char *version,
                           uint64_t start_ns, int outcome, int code, const char *why)
{
    if (!reporting(srv))
        return;
    size_t nlen = 0;
    const char *n = mcp_json_str(mcp_json_get(m->params, "name"), &nlen);
    const mcp_json *args = mcp_json_get(m->params, "arguments");
    char asked[201];
    snprintf(asked, sizeof asked, "%.*s", n ? (int)(nlen > 200 ? 200 : nlen) : 0, n ? n : "");
    const char *tp, *ts;
    trace_of(mcp_json_get(m->params, "_meta"), &tp, &ts);
    report(srv, outcome, &m->id, asked, mcp_json_typeof(args) == MCP_JSON_OBJECT ? args : NULL, p, version, code, why,
           start_ns, tp, ts);
}

/* report_refused() for request r of a connection, which began at t0. */
static void refused(const mcp__req *r, uint64_t t0, int outcome, int code, const char *why)
{
    report_refused(r->c->srv, r->msg, r->principal, r->version, t0, outcome, code, why);
}

void mcp__call_report_forbidden(mcp_server *srv, const mcp_rpc_msg *m, const mcp_principal *p, const char *needs)
{
    if (!reporting(srv) || m->kind != MCP_RPC_REQUEST || !m->method || strcmp(m->method, "tools/call") != 0)
        return;
    char why[160];
    snprintf(why, sizeof why, "requires scope %.120s", needs ? needs : "");
    report_refused(srv, m, p, "", mcp__mono_ns(), MCP_CALL_FORBIDDEN, 0, why);
}

/* Answers -32602 "Unknown tool: <name>" (the name cut at 200 bytes). */
static void refuse_unknown_tool(mcp__req *r, uint64_t t0, const char *n, size_t nlen)
{
    mcp_buf m;
    mcp_buf_init(&m, 0);
    mcp_buf_append(&m, "Unknown tool: ", 14);
    mcp_buf_append(&m, n, nlen > 200 ? 200 : nlen);
    /* The name came from the peer: a cut may split UTF-8, so check it. */
    mcp_buf q;
    mcp_buf_init(&q, 0);
    int ok = mcp_json_quote(&q, m.data, m.len) == MCP_OK;
    mcp_buf_cleanup(&q);
    mcp__conn_send_error(r->c, &r->msg->id, MCP_RPC_INVALID_PARAMS, ok ? m.data : "Unknown tool");
    mcp_buf_cleanup(&m);
    refused(r, t0, MCP_CALL_UNKNOWN_TOOL, MCP_RPC_INVALID_PARAMS, "unknown tool");
}

/*
 * Step 1 of a tools/call: its params are well-formed and name a tool the
 * principal may call. Returns the tool (a reference), or NULL when the
 * request was answered.
 */
static mcp__tool *callable_tool(mcp__req *r, uint64_t t0)
{
    const mcp_json *p = r->msg->params;
    const mcp_json *args = mcp_json_get(p, "arguments");
    size_t nlen;
    const char *n = mcp_json_str(mcp_json_get(p, "name"), &nlen);
    if (!n) {
        mcp__conn_send_error(r->c, &r->msg->id, MCP_RPC_INVALID_PARAMS,
                             "Invalid params: tools/call needs a string \"name\"");
        refused(r, t0, MCP_CALL_MALFORMED, MCP_RPC_INVALID_PARAMS, "tools/call needs a string \"name\"");
        return NULL;
    }
    if (args && mcp_json_typeof(args) != MCP_JSON_OBJECT) {
        mcp__conn_send_error(r->c, &r->msg->id, MCP_RPC_INVALID_PARAMS,
                             "Invalid params: \"arguments\" must be an object");
        refused(r, t0, MCP_CALL_MALFORMED, MCP_RPC_INVALID_PARAMS, "\"arguments\" must be an object");
        return NULL;
    }
    mcp__tool *t = mcp__server_find_tool(r->c->srv, n, nlen);
    if (!t) {
        refuse_unknown_tool(r, t0, n, nlen);
        return NULL;
    }
    if (!mcp__entry_allows(&t->e, r->principal)) {
        mcp__reply_forbidden(r, t->e.scopes);
        char why[160];
        snprintf(why, sizeof why, "requires scope %.120s", t->e.scopes ? t->e.scopes : "");
        refused(r, t0, MCP_CALL_FORBIDDEN, MCP_RPC_INVALID_REQUEST, why);
        mcp__tool_release(t);
        return NULL;
    }
    return t;
}

/*
 * The call's trace context (trace_of): pointers into its own message, or a
 * copy of the HTTP headers' (which live as long as the HTTP request only).
 * Without memory for the copy the call goes on without it.
 */
static void call_trace(mcp_call *call)
{
    const char *p, *s;
    trace_of(call->meta, &p, &s);
    call->traceparent = call->tracestate = NULL;
    if (!p || p == mcp_json_str(mcp_json_get(call->meta, "traceparent"), NULL)) {
        call->traceparent = p;
        call->tracestate = s;
        return;
    }
    size_t pn = strlen(p), sn = s ? strlen(s) : 0;
    call->trace_copy = mcp_malloc(pn + sn + 2);
    if (!call->trace_copy)
        return;
    memcpy(call->trace_copy, p, pn + 1);
    call->traceparent = call->trace_copy;
    if (s) {
        memcpy(call->trace_copy + pn + 1, s, sn + 1);
        call->tracestate = call->trace_copy + pn + 1;
    }
}

/*
 * Step 2: the call object, with what the request says about it (arguments,
 * _meta, progress token, time limit, answers to earlier questions). Takes
 * over the reference to `t`. NULL when the request was answered.
 */
static mcp_call *call_new(mcp__req *r, mcp__tool *t, uint64_t t0)
{
    mcp_server *srv = r->c->srv;
    const mcp_json *p = r->msg->params;
    mcp_call *call = mcp__calloc(1, sizeof *call);
    if (!call) {
        mcp__tool_release(t);
        mcp__conn_send_error(r->c, &r->msg->id, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
        refused(r, t0, MCP_CALL_FAILED, MCP_RPC_INTERNAL_ERROR, "out of memory");
        return NULL;
    }
    call->start_ns = t0;
    call->job.run = run_job;
    call->job.flow = r->c->flow;
    call->tool = t;
    call->conn = r->c;
    call->version = r->version;
    call->modern = r->modern;
    call->log_threshold = r->log_threshold;
    call->args = mcp_json_get(p, "arguments");
    call->meta = mcp_json_get(p, "_meta");
    call->progress_token = mcp_json_get(call->meta, "progressToken");
    call_trace(call);
    if (call->progress_token && mcp_json_typeof(call->progress_token) != MCP_JSON_STRING &&
        mcp_json_typeof(call->progress_token) != MCP_JSON_INT)
        call->progress_token = NULL;
    call->timeout_ms = t->timeout_ms ? t->timeout_ms : srv->opts.call_timeout_ms;
    call->ask.modern = r->modern;
    call->ask.caps = r->caps;
    char bound[200];
    bound[0] = '\0';
    if (r->modern) /* only 2026-07-28 requests carry inputResponses and a requestState to bind */
        bound_name(bound, sizeof bound, t->e.key);
    if (mcp__ask_begin(r, &call->ask, bound, call->args)) {
        mcp__ask_cleanup(&call->ask);
        mcp__tool_release(t);
        mcp_free(call);
        refused(r, t0, MCP_CALL_MALFORMED, MCP_RPC_INVALID_PARAMS, "unusable inputResponses or requestState");
        return NULL;
    }
    mcp_buf_init(&call->content, srv->opts.max_message);
    mcp_buf_reserve(&call->content, CONTENT_ROOM); /* a failure resurfaces in the writer */
    mcp_jw_init(&call->cw, &call->content);
    mcp_jw_array_begin(&call->cw);
    return call;
}

/*
 * Step 3: the call enters the connection's in-flight table and takes the
 * message. A closing connection, a full table or a duplicate id refuses
 * it: 0, the request answered and the call freed.
 */
static int call_register(mcp__req *r, mcp_call *call, uint64_t t0)
{
    mcp_conn *c = r->c;
    mcp_rpc_msg *msg = r->msg;
    pthread_mutex_lock(&c->mu);
    const char *refuse = NULL;
    int refuse_code = 0;
    if (c->closing) {
        refuse = "";
    } else if (c->in_flight >= c->srv->opts.max_in_flight) {
        refuse = "Server busy: too many requests in flight on this connection; retry later";
        refuse_code = MCP_RPC_INTERNAL_ERROR;
    } else if (mcp__conn_find_call_locked(c, &msg->id)) {
        refuse = "Invalid Request: a request with this id is already in progress";
        refuse_code = MCP_RPC_INVALID_REQUEST;
    }
    if (!refuse) {
        /* The call takes the message and its document. */
        call->msg = *msg;
        memset(msg, 0, sizeof *msg);
        call->principal = mcp__principal_ref(r->principal);
        mcp__conn_insert_call_locked(c, call);
        atomic_fetch_add(&c->refs, 1);
        mcp__metrics_gauge(c->srv, MCP__GAUGE_IN_FLIGHT, 1);
    }
    pthread_mutex_unlock(&c->mu);
    if (!refuse)
        return 1;
    if (refuse_code)
        mcp__conn_send_error(c, &msg->id, refuse_code, refuse);
    mcp_buf_cleanup(&call->content);
    mcp__ask_cleanup(&call->ask);
    mcp__tool_release(call->tool);
    mcp_free(call);
    if (refuse_code == MCP_RPC_INTERNAL_ERROR)
        refused(r, t0, MCP_CALL_BUSY, refuse_code, refuse);
    else if (refuse_code)
        refused(r, t0, MCP_CALL_MALFORMED, refuse_code, refuse);
    else
        refused(r, t0, MCP_CALL_CANCELLED, 0, NULL); /* the connection is closing */
    return 0;
}

/* Back-pressure: the tool queue is full, so the call is answered now
 * (retryable -32603) rather than left waiting for a worker. */
static void answer_queue_full(mcp_call *call)
{
    mcp_server *srv = call->conn->srv;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_error(&w, &call->msg.id, MCP_RPC_INTERNAL_ERROR, "Server busy: the tool queue is full; retry later");
    mcp_jw_key(&w, "data");
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "retryable");
    mcp_jw_bool(&w, 1);
    mcp_jw_key(&w, "queued");
    mcp_jw_int(&w, mcp__pool_queued(srv->pool));
    mcp_jw_object_end(&w);
    mcp_rpc_end_error(&w);
    if (claim(call, MCP_CALL_BUSY, MCP_RPC_INTERNAL_ERROR, "the tool queue is full") && mcp_jw_finish(&w) == MCP_OK)
        mcp__conn_send_to(call->conn, &b, &call->msg.id, 1);
    mcp_buf_cleanup(&b);
    mcp__call_release(call);
}

void mcp__call_start(mcp__req *r)
{
    mcp_server *srv = r->c->srv;
    uint64_t t0 = reporting(srv) ? mcp__mono_ns() : 0;
    mcp__tool *t = callable_tool(r, t0);
    if (!t)
        return;
    int task = mcp__task_divert(r, t); /* the tasks extension (task.c) */
    if (task) {
        mcp__tool_release(t);
        if (task == 2)
            refused(r, t0, MCP_CALL_INPUT_REQUIRED, MCP_RPC_MISSING_CAPABILITY, "requires the tasks extension");
        else if (task == 3)
            refused(r, t0, MCP_CALL_BUSY, MCP_RPC_INTERNAL_ERROR, "the task could not be created");
        else if (task == 4)
            refused(r, t0, MCP_CALL_MALFORMED, MCP_RPC_METHOD_NOT_FOUND, "its task support refuses the call's form");
        else if (task == 5)
            refused(r, t0, MCP_CALL_MALFORMED, MCP_RPC_INVALID_PARAMS, "\"task\" must be an object");
        return;
    }
    mcp_call *call = call_new(r, t, t0);
    if (!call || !call_register(r, call, t0))
        return;
    /* Step 4: run it here (MCP_TOOL_NONBLOCKING) or on a worker. */
    if (t->flags & MCP_TOOL_NONBLOCKING)
        run_job(&call->job);
    else if (mcp__pool_submit(srv->pool, &call->job) != MCP_OK)
        answer_queue_full(call);
}

/* ------------------------------------------------------------------------ */
/* Result-building API                                                       */

/* Snapshot of the content writer, to undo a block that failed half-way. */
typedef struct undo {
    size_t len; /* content length before the block */
    mcp_jw w;   /* writer state before the block */
} undo;

static void undo_save(mcp_call *call, undo *u)
{
    u->len = call->content.len;
    u->w = call->cw;
}

static mcp_status undo_finish(mcp_call *call, const undo *u)
{
    mcp_status st = mcp_jw_status(&call->cw);
    if (st) {
        call->content.len = u->len;
        if (call->content.data)
            call->content.data[u->len] = '\0';
        call->cw = u->w;
        return st;
    }
    call->nblocks++;
    return MCP_OK;
}

static void write_annotations(mcp_jw *w, const mcp_annotations *ann)
{
    if (!ann)
        return;
    if (!ann->audience && ann->priority < 0 && !ann->last_modified)
        return;
    mcp_jw_key(w, "annotations");
    mcp_jw_object_begin(w);
    if (ann->audience) {
        mcp_jw_key(w, "audience");
        mcp_jw_array_begin(w);
        if (ann->audience & MCP_AUDIENCE_USER)
            mcp_jw_string(w, "user");
        if (ann->audience & MCP_AUDIENCE_ASSISTANT)
            mcp_jw_string(w, "assistant");
        mcp_jw_array_end(w);
    }
    if (ann->priority >= 0) {
        mcp_jw_key(w, "priority");
        mcp_jw_double(w, ann->priority);
    }
    if (ann->last_modified) {
        mcp_jw_key(w, "lastModified");
        mcp_jw_string(w, ann->last_modified);
    }
    mcp_jw_object_end(w);
}

static int bad_annotations(const mcp_annotations *ann)
{
    return ann && ((ann->audience & ~(MCP_AUDIENCE_USER | MCP_AUDIENCE_ASSISTANT)) || ann->priority > 1.0 ||
                   isnan(ann->priority));
}

/* The caller's annotations (`size` bytes, its header's sizeof) copied into
 * `copy`, and *ann pointed at the copy; NULL stays NULL. */
static mcp_status annotations_in(const mcp_annotations **ann, size_t size, mcp_annotations *copy)
{
    mcp_status st = MCP__OPTS_IN(mcp_annotations, copy, *ann, size, NULL);
    if (st == MCP_OK && *ann)
        *ann = copy;
    return st;
}

mcp_status mcp_call_text_sized(mcp_call *call, const char *text, const mcp_annotations *ann, size_t ann_size)
{
    mcp_annotations ann_copy;
    mcp_status ost = annotations_in(&ann, ann_size, &ann_copy);
    if (ost)
        return ost;
    if (!call || !text || bad_annotations(ann))
        return MCP_ERR_INVALID_ARG;
    undo u;
    undo_save(call, &u);
    mcp_jw *w = &call->cw;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "type");
    mcp_jw_string(w, "text");
    mcp_jw_key(w, "text");
    mcp_jw_string(w, text);
    write_annotations(w, ann);
    mcp_jw_object_end(w);
    return undo_finish(call, &u);
}

mcp_status mcp_call_textf(mcp_call *call, const char *fmt, ...)
{
    if (!call || !fmt)
        return MCP_ERR_INVALID_ARG;
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return MCP_ERR_INVALID_ARG;
    if ((size_t)n < sizeof small)
        return mcp_call_text(call, small, NULL);
    char *big = mcp_malloc((size_t)n + 1);
    if (!big)
        return MCP_ERR_NOMEM;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    mcp_status st = mcp_call_text(call, big, NULL);
    mcp_free(big);
    return st;
}

static mcp_status binary_block(mcp_call *call, const char *type, const void *bytes, size_t n, const char *mime,
                               const mcp_annotations *ann)
{
    if (!call || (!bytes && n) || !mime || bad_annotations(ann))
        return MCP_ERR_INVALID_ARG;
    undo u;
    undo_save(call, &u);
    mcp_jw *w = &call->cw;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "type");
    mcp_jw_string(w, type);
    mcp_jw_key(w, "data");
    mcp_jw_base64(w, bytes, n);
    mcp_jw_key(w, "mimeType");
    mcp_jw_string(w, mime);
    write_annotations(w, ann);
    mcp_jw_object_end(w);
    return undo_finish(call, &u);
}

mcp_status mcp_call_image_sized(mcp_call *call, const void *bytes, size_t n, const char *mime_type,
                                const mcp_annotations *ann, size_t ann_size)
{
    mcp_annotations ann_copy;
    mcp_status ost = annotations_in(&ann, ann_size, &ann_copy);
    if (ost)
        return ost;
    return binary_block(call, "image", bytes, n, mime_type, ann);
}

mcp_status mcp_call_audio_sized(mcp_call *call, const void *bytes, size_t n, const char *mime_type,
                                const mcp_annotations *ann, size_t ann_size)
{
    mcp_annotations ann_copy;
    mcp_status ost = annotations_in(&ann, ann_size, &ann_copy);
    if (ost)
        return ost;
    return binary_block(call, "audio", bytes, n, mime_type, ann);
}

mcp_status mcp_call_resource_link_sized(mcp_call *call, const char *uri, const char *name, const char *description,
                                        const char *mime_type, const mcp_annotations *ann, size_t ann_size)
{
    mcp_annotations ann_copy;
    mcp_status ost = annotations_in(&ann, ann_size, &ann_copy);
    if (ost)
        return ost;
    if (!call || !uri || !name || bad_annotations(ann))
        return MCP_ERR_INVALID_ARG;
    undo u;
    undo_save(call, &u);
    mcp_jw *w = &call->cw;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "type");
    mcp_jw_string(w, "resource_link");
    mcp_jw_key(w, "uri");
    mcp_jw_string(w, uri);
    mcp_jw_key(w, "name");
    mcp_jw_string(w, name);
    if (description) {
        mcp_jw_key(w, "description");
        mcp_jw_string(w, description);
    }
    if (mime_type) {
        mcp_jw_key(w, "mimeType");
        mcp_jw_string(w, mime_type);
    }
    write_annotations(w, ann);
    mcp_jw_object_end(w);
    return undo_finish(call, &u);
}

static mcp_status embedded(mcp_call *call, const char *uri, const char *mime, const char *text, const void *bytes,
                           size_t n, const mcp_annotations *ann)
{
    if (!call || !uri || (!text && !bytes && n) || bad_annotations(ann))
        return MCP_ERR_INVALID_ARG;
    undo u;
    undo_save(call, &u);
    mcp_jw *w = &call->cw;
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "type");
    mcp_jw_string(w, "resource");
    mcp_jw_key(w, "resource");
    mcp__write_resource_contents(w, uri, mime, text, bytes, n);
    write_annotations(w, ann);
    mcp_jw_object_end(w);
    return undo_finish(call, &u);
}

mcp_status mcp_call_resource_text_sized(mcp_call *call, const char *uri, const char *mime_type, const char *text,
                                        const mcp_annotations *ann, size_t ann_size)
{
    mcp_annotations ann_copy;
    mcp_status ost = annotations_in(&ann, ann_size, &ann_copy);
    if (ost)
        return ost;
    if (!text)
        return MCP_ERR_INVALID_ARG;
    return embedded(call, uri, mime_type, text, NULL, 0, ann);
}

mcp_status mcp_call_resource_blob_sized(mcp_call *call, const char *uri, const char *mime_type, const void *bytes,
                                        size_t n, const mcp_annotations *ann, size_t ann_size)
{
    mcp_annotations ann_copy;
    mcp_status ost = annotations_in(&ann, ann_size, &ann_copy);
    if (ost)
        return ost;
    return embedded(call, uri, mime_type, NULL, bytes ? bytes : "", n, ann);
}

mcp_status mcp_call_structured(mcp_call *call, const char *json, size_t len)
{
    if (!call || (!json && len))
        return MCP_ERR_INVALID_ARG;
    mcp_json_doc *doc;
    mcp_status st = mcp_json_parse(&doc, json, len, &call->conn->srv->popts, NULL);
    if (st)
        return st;
    mcp_json_doc_free(call->structured);
    call->structured = doc;
    return MCP_OK;
}

mcp_status mcp_call_error(mcp_call *call, const char *fmt, ...)
{
    if (!call || !fmt)
        return MCP_ERR_INVALID_ARG;
    char small[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return MCP_ERR_INVALID_ARG;
    call->is_error = 1;
    if (call->conn->srv->opts.on_call_end && !call->err_text[0])
        snprintf(call->err_text, sizeof call->err_text, "%.199s", small);
    /* Long messages are cut rather than lost; the model still sees the start. */
    if ((size_t)n >= sizeof small)
        memcpy(small + sizeof small - 4, "...", 4);
    mcp_status st = mcp_call_text(call, small, NULL);
    if (st == MCP_ERR_INVALID_ARG) /* e.g. the cut split a UTF-8 sequence */
        st = mcp_call_text(call, "The tool failed (its message was not valid UTF-8).", NULL);
    return st;
}

mcp_status mcp_call_close_stream(mcp_call *call)
{
    if (!call)
        return MCP_ERR_INVALID_ARG;
    if (!atomic_load(&call->finished))
        mcp__conn_close_stream(call->conn, &call->msg.id);
    return MCP_OK;
}

int mcp_call_is_cancelled(const mcp_call *call)
{
    return call && atomic_load(&((mcp_call *)call)->cancelled);
}

/*
 * Sends a notification about the call. When its stream is gone for good
 * (MCP_ERR_CLOSED: the client left, or stopped reading and the transport
 * closed the stream at its byte limit), the answer can never arrive, so
 * the call is cancelled now rather than when the transport gets round to
 * closing the connection: a handler that keeps producing would hold its
 * worker for nothing (or, blocked on a client that does not read, forever).
 */
static mcp_status notify(mcp_call *call, mcp_jw *w, mcp_buf *b)
{
    mcp_status st = mcp_jw_finish(w);
    if (!st && !atomic_load(&call->finished))
        st = mcp__conn_send_to(call->conn, b, &call->msg.id, 0);
    mcp_buf_cleanup(b);
    if (st == MCP_ERR_CLOSED) {
        atomic_store(&call->cancelled, 1);
        st = MCP_ERR_CANCELLED;
    }
    return st;
}

mcp_status mcp_call_progress(mcp_call *call, double progress, double total, const char *message)
{
    if (!call || isnan(progress) || !isfinite(progress) || isnan(total) || (total >= 0 && !isfinite(total)))
        return MCP_ERR_INVALID_ARG;
    if (atomic_load(&call->cancelled) || atomic_load(&call->finished))
        return MCP_ERR_CANCELLED;
    if (!call->progress_token)
        return MCP_OK;
    if (call->progress_sent && !(progress > call->last_progress))
        return MCP_ERR_INVALID_ARG;
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_notification(&w, "notifications/progress");
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "progressToken");
    mcp_jw_value(&w, call->progress_token);
    mcp_jw_key(&w, "progress");
    mcp_jw_double(&w, progress);
    if (total >= 0) {
        mcp_jw_key(&w, "total");
        mcp_jw_double(&w, total);
    }
    if (message && mcp__version_at_least(call->version, MCP_PROTOCOL_2025_03_26)) {
        mcp_jw_key(&w, "message");
        mcp_jw_string(&w, message);
    }
    mcp_jw_object_end(&w);
    mcp_rpc_end(&w);
    mcp_status st = notify(call, &w, &b);
    if (st == MCP_OK) {
        call->last_progress = progress;
        call->progress_sent = 1;
    }
    return st;
}

mcp_status mcp_call_log(mcp_call *call, mcp_log_level level, const char *logger, const char *fmt, ...)
{
    if (!call || !fmt || (int)level < MCP_LOG_DEBUG || level > MCP_LOG_EMERGENCY)
        return MCP_ERR_INVALID_ARG;
    int threshold = call->modern ? call->log_threshold : atomic_load(&call->conn->log_level);
    if (call->modern && threshold < 0)
        return MCP_OK; /* 2026-07-28: no logLevel in the request, no log messages */
    if ((int)level < threshold || atomic_load(&call->finished))
        return MCP_OK;
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_notification(&w, "notifications/message");
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "level");
    mcp_jw_string(&w, mcp_log_level_name(level));
    if (logger) {
        mcp_jw_key(&w, "logger");
        mcp_jw_string(&w, logger);
    }
    mcp_jw_key(&w, "data");
    mcp_jw_string(&w, text);
    mcp_jw_object_end(&w);
    mcp_rpc_end(&w);
    return notify(call, &w, &b);
}

const char *mcp_call_tool_name(const mcp_call *call)
{
    return call ? call->tool->e.key : NULL;
}

const char *mcp_call_protocol_version(const mcp_call *call)
{
    return call ? call->version : NULL;
}

const char *mcp_call_trace(const mcp_call *call, const char **tracestate)
{
    if (tracestate)
        *tracestate = call ? call->tracestate : NULL;
    return call ? call->traceparent : NULL;
}

const mcp_json *mcp_call_meta(const mcp_call *call)
{
    return call ? call->meta : NULL;
}

const mcp_principal *mcp_call_principal(const mcp_call *call)
{
    return call ? call->principal : NULL;
}

const char *mcp_call_subject(const mcp_call *call)
{
    return call ? mcp_principal_subject(call->principal) : NULL;
}

int mcp_call_has_scope(const mcp_call *call, const char *scope)
{
    return call ? mcp_principal_has_scope(call->principal, scope) : 0;
}
