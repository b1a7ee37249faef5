/*
 * The MCP face of mcp-server-aml: tool definitions (schemas, annotations,
 * scopes), handlers, the audit of every call, and serving.
 */
#ifndef AML_TOOLS_H
#define AML_TOOLS_H

#include "engine/cases.h"
#include "store/pool.h"

/* The OAuth scope each tool, resource ("resource:URI") and prompt
 * ("prompt:NAME") needs; registered with them and enforced when the server
 * runs with authorization (docs/aml.md). */
typedef struct aml_tool_scope {
    const char *tool;  /* tool name, "resource:URI" or "prompt:NAME" */
    const char *scope; /* aml.read | aml.assess | aml.sar */
} aml_tool_scope;

/** The scope table (NULL-terminated). */
const aml_tool_scope *aml_tool_scopes(void);

/* What importTransactions reports (jobs_tools.c). */
typedef struct aml_import_counts {
    uint64_t rows, transactions, accounts, customers;
} aml_import_counts;

/*
 * The import importTransactions runs: the files `paths` in format `format`
 * (native, amlworld, amlsim) in one transaction on `s`; on_progress(ud,
 * bytes read, bytes in all) now and then, whose nonzero return cancels it
 * (nothing kept). 0, or -1 with err. The commands layer provides it
 * (commands/ingest.h aml_import_files), so tools need not include it.
 */
typedef int (*aml_import_fn)(aml_store *s, const char *format, const char *const *paths, size_t npaths,
                             int (*on_progress)(void *ud, uint64_t done, uint64_t total), void *ud,
                             aml_import_counts *out, aml_err *err);

/* The most bytes one importTransactions call reads (all its files together): 4 GiB. */
#define AML_IMPORT_MAX_BYTES (4ull << 30)
/* The most files of a folder one importTransactions call takes. */
#define AML_IMPORT_MAX_FILES 64

/* What the tools share. */
typedef struct aml_app {
    aml_store *store;   /* the case store when pool is NULL (its lock serialises tool calls) */
    const char *actor;  /* who calls, for the audit log (see docs/aml.md on caller identity) */
    aml_pool *pool;     /* connections lent to tool calls (store/pool.h), or NULL */
    /* importTransactions (registered only when both are set): the folder (an absolute path with no
     * symbolic links, as realpath(3) gives it) its paths are resolved under, and the import. */
    const char *import_dir;
    aml_import_fn import;
} aml_app;

/*
 * A tool call's connection (tools/conn.c): borrowed from the pool, or
 * `store` under its lock when there is no pool; given back with
 * aml_app_release. Writing sections hold aml_app_write_lock (a no-op
 * without a pool: the call already has the store to itself).
 */
aml_store *aml_app_acquire(aml_app *app);
void aml_app_release(aml_app *app, aml_store *s);
void aml_app_write_lock(aml_app *app, aml_store *s);
void aml_app_write_unlock(aml_app *app);

/*
 * Who the audit log names for a call: `subject` (the token's subject over
 * authorized HTTP; NULL or "" for none), else app->actor (--actor), else
 * "unknown". Borrowed from its arguments. Thread-safe.
 */
const char *aml_app_actor(const aml_app *app, const char *subject);

/*
 * The audit log's request hash: SHA-256 (64 hex digits and a NUL, into out)
 * of `args` written as compact JSON, of "{}" when args is NULL.
 * Thread-safe.
 */
void aml_args_sha256(const mcp_json *args, char out[65]);

/*
 * 1 when s's connection was lost since the call began (its resets differ
 * from `resets`, taken then by aml_store_resets): what the call read may be
 * partial, since a failed read can look like no rows. Then `msg` (of `n`
 * bytes) holds the tool error to send, naming the cause and saying that
 * nothing partial was returned (`stored`: "or stored"). 0 otherwise.
 * Thread-safe for the connection's own call.
 */
int aml_call_lost(aml_store *s, int64_t resets, int stored, char *msg, size_t n);

/** Registers listCases, listTypologies, assessTypology, assessCase, draftSar on `srv`. */
mcp_status aml_tools_register(mcp_server *srv, aml_app *app, mcp_error *err);

/* The MCP App (io.modelcontextprotocol/ui) view of cases and money trails, and the _meta that links a
 * tool to it (given only to clients declaring the extension). */
#define AML_CASE_VIEW_URI "ui://aml/case-view"
#define AML_CASE_VIEW_META "{\"ui\":{\"resourceUri\":\"" AML_CASE_VIEW_URI "\"}}"

/** Registers traceFunds, caseGraph, aml://cases/{caseId}/graph.{format} and the view ui://aml/case-view (graph_tools.c). */
mcp_status aml_graph_tools_register(mcp_server *srv, aml_app *app, mcp_error *err);

/** Registers screenEntity, screenCase and dismissScreeningHit (screen_tools.c). */
mcp_status aml_screen_tools_register(mcp_server *srv, aml_app *app, mcp_error *err);

/** Registers runScan, and importTransactions when app->import_dir and app->import are set (jobs_tools.c). */
mcp_status aml_jobs_tools_register(mcp_server *srv, aml_app *app, mcp_error *err);

/* Server options for the AML server over `app`: its name and instructions,
 * and the audit of tool calls refused before any handler ran. */
void aml_server_opts(mcp_server_opts *so, aml_app *app);

/* How to serve. */
/*
 * The audit detail of a call with its W3C trace context appended
 * (" traceparent=00-<trace-id>-<parent-id>-<flags>", from _meta or the HTTP
 * headers, see mcp_call_trace), so the hash chain covers it and an
 * investigator can follow a trace to its audit row. Returns `detail` as it
 * is without a traceparent, else `buf`.
 */
#define AML_AUDIT_DETAIL_MAX 480
const char *aml_audit_detail(const char *detail, const char *traceparent, char *buf, size_t cap);

/** Adds the app's own metrics (scan and import progress) to the server's scrapes (metrics.c). */
mcp_status aml_metrics_register(mcp_server *srv);

/* Over stdio, how long calls in flight at end of input may still run before they are cancelled. */
#define AML_STDIO_GRACE_MS 60000u

typedef struct aml_serve_opts {
    const char *http;        /* [HOST:]PORT, or NULL for stdio */
    const char *metrics;     /* [HOST:]PORT of the Prometheus metrics listener, or NULL for none */
    const char *transcript;  /* JSON-lines transcript of every frame, or NULL */
    const mcp_auth_opts *auth; /* OAuth resource-server settings (HTTP only), or NULL */
    const char *trust_proxy; /* comma-separated addresses of trusted reverse proxies, or NULL */
    size_t max_queue_bytes;  /* mcp_http_opts byte budgets; 0 = the library's defaults */
    size_t max_replay_bytes;
    size_t max_buffer_bytes;
} aml_serve_opts;

/**
 * Serves the app until the client goes away: the one place that knows
 * about transports. @return a process exit status.
 */
int aml_serve(aml_app *app, const aml_serve_opts *o);

#endif /* AML_TOOLS_H */
