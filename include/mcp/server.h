/*
 * libmcp server: a registry of tools, a sans-I/O connection engine that
 * speaks both protocol eras, and the API tool handlers use to build their
 * results.
 *
 * Shape of a server program:
 *
 *     mcp_server *srv;
 *     mcp_server_opts o = {0};
 *     o.name = "hello"; o.version = "1.0.0";
 *     mcp_server_new(&srv, &o, NULL);
 *     mcp_tool_def t = {0};
 *     t.name = "greet";
 *     t.input_schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
 *                      "\"required\":[\"name\"]}";
 *     t.handler = greet;
 *     mcp_server_add_tool(srv, &t, NULL);
 *     mcp_stdio_serve(srv, NULL);      (transport.h)
 *     mcp_server_free(srv);
 *
 * Protocol eras (see docs/protocol.md):
 *   legacy  2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25: `initialize`
 *           negotiates a version for the connection;
 *   modern  2026-07-28: every request carries `_meta`
 *           `io.modelcontextprotocol/protocolVersion` and `clientCapabilities`.
 * One connection may carry both; the era is decided per message.
 *
 * Authorization (docs/auth.md): over HTTP with an mcp_auth, every request
 * carries the principal its bearer token speaks for. Tools, resources and
 * prompts registered with `scopes` are refused (HTTP 403, before the
 * handler runs) to a principal that lacks one; handlers read the principal
 * with mcp_call_subject(), mcp_call_has_scope() and mcp_call_principal().
 * Without authorization (stdio, HTTP without `auth`) there is no
 * principal and `scopes` are not enforced.
 *
 * Errors follow the contract in docs/errors.md: protocol failures are
 * JSON-RPC errors raised by the library; a handler reports a tool failure
 * with mcp_call_error() (a result with isError: true) and returns a non-OK
 * status only when it could not do its job at all (-32603).
 */
#ifndef MCP_SERVER_H
#define MCP_SERVER_H

#include "auth.h"
#include "json.h"
#include "rpc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcp_server mcp_server; /* registry, options, worker pool */
typedef struct mcp_conn mcp_conn;     /* one client connection (sans I/O) */
typedef struct mcp_call mcp_call;     /* one tools/call being handled */

/* Protocol versions libmcp speaks, newest first. */
#define MCP_PROTOCOL_2026_07_28 "2026-07-28"
#define MCP_PROTOCOL_2025_11_25 "2025-11-25"
#define MCP_PROTOCOL_2025_06_18 "2025-06-18"
#define MCP_PROTOCOL_2025_03_26 "2025-03-26"
#define MCP_PROTOCOL_2024_11_05 "2024-11-05"
#define MCP_PROTOCOL_LATEST MCP_PROTOCOL_2026_07_28
#define MCP_PROTOCOL_LATEST_LEGACY MCP_PROTOCOL_2025_11_25

/* Log levels (syslog severities, as MCP orders them). */
typedef enum mcp_log_level {
    MCP_LOG_DEBUG = 0,
    MCP_LOG_INFO,
    MCP_LOG_NOTICE,
    MCP_LOG_WARNING,
    MCP_LOG_ERROR,
    MCP_LOG_CRITICAL,
    MCP_LOG_ALERT,
    MCP_LOG_EMERGENCY
} mcp_log_level;

/** Name of a level as MCP spells it ("debug" ... "emergency"); "debug" for unknown. */
MCP_API const char *mcp_log_level_name(mcp_log_level level);

/**
 * Receives the server's own diagnostics (not protocol traffic): a rejected
 * frame, a handler contract failure, an outputSchema mismatch. Called from
 * any thread; must not call back into the server.
 */
typedef void (*mcp_server_log_fn)(mcp_log_level level, const char *message, void *user_data);

/* How one tools/call ended (mcp_call_report.outcome). */
typedef enum mcp_call_outcome {
    MCP_CALL_OK = 0,            /* a result the handler built, not isError */
    MCP_CALL_TOOL_ERROR,        /* a result with isError the handler built (mcp_call_error) */
    MCP_CALL_INVALID_ARGUMENTS, /* refused by the tool's inputSchema (isError or -32602); no handler ran */
    MCP_CALL_UNKNOWN_TOOL,      /* no such tool, or disabled (-32602); no handler ran */
    MCP_CALL_MALFORMED,         /* bad params (no name, arguments not an object, a bad inputResponses
                                   or requestState, an id already in progress); no handler ran */
    MCP_CALL_FORBIDDEN,         /* the caller lacks a scope the tool requires; no handler ran */
    MCP_CALL_BUSY,              /* too many calls in flight or a full queue (-32603, retryable); no handler ran */
    MCP_CALL_INPUT_REQUIRED,    /* the handler asked the client (a 2026-07-28 input_required round
                                   ended, or a capability was missing) */
    MCP_CALL_TIMED_OUT,         /* the time limit answered (isError); the handler's result is dropped */
    MCP_CALL_CANCELLED,         /* cancelled by the client or the connection closed: no answer */
    MCP_CALL_FAILED             /* -32603: the handler failed, returned no content or content failing
                                   its outputSchema, or the result could not be encoded */
} mcp_call_outcome;

/* What a tools/call came to; the pointers are valid during the report only.
 * The library hands it out: it may grow at its end in later releases, so
 * read only the fields you know and never copy it by value (base.h,
 * "Option structs and the ABI"). */
typedef struct mcp_call_report {
    mcp_call_outcome outcome;
    const mcp_rpc_id *id;            /* the request's id */
    const char *tool;                /* the name asked for (at most 200 bytes), "" when absent */
    const mcp_json *arguments;       /* params.arguments as received, or NULL */
    const mcp_principal *principal;  /* the caller's token, NULL without authorization */
    const char *protocol_version;    /* of the request; "" for a scope refused by the HTTP layer */
    int rpc_code;                    /* the JSON-RPC error code answered, 0 for a result or no answer */
    const char *message;             /* why, for every outcome but OK and CANCELLED (the error
                                        message, the violations, the timeout), else NULL */
    uint64_t duration_us;            /* from the start of its processing to the report */
    const char *traceparent;         /* the request's W3C trace context (_meta.traceparent,
                                        well-formed), or NULL */
    const char *tracestate;          /* its _meta.tracestate (well-formed, beside a
                                        traceparent), or NULL */
} mcp_call_report;

/**
 * Told how every tools/call ended, once per request, including those no
 * handler ever saw (unknown tool, invalid arguments, missing scope, busy):
 * for audit logs and metrics. Called just before the answer is sent (so a
 * record exists before the client sees it; for a cancelled call, when it
 * is dropped), from the thread that answers (an I/O thread, an HTTP
 * network thread, a worker, the timer thread), with none of the library's
 * locks held: it may call back into the server (register or remove tools,
 * announce list changes, hand a connection a frame with mcp_conn_recv),
 * but must not close or free the connection the call belongs to. It must
 * be thread-safe, and quick: whatever it waits for, that thread waits too.
 */
typedef void (*mcp_call_report_fn)(const mcp_call_report *report, void *user_data);

/* Server options; zero-initialise and set what you need. May grow at its
 * end (base.h, "Option structs and the ABI"). */
typedef struct mcp_server_opts {
    const char *name;          /* serverInfo.name (copied); NULL = "libmcp-server" */
    const char *version;       /* serverInfo.version (copied); NULL = the libmcp version */
    const char *title;         /* serverInfo.title (copied), or NULL */
    const char *instructions;  /* instructions for the model (copied), or NULL */
    unsigned workers;          /* tool worker threads; 0 = number of cores */
    unsigned queue_max;        /* tool calls waiting for a worker; 0 = 1024 */
    unsigned max_in_flight;    /* calls in flight per connection; 0 = 4096 */
    unsigned page_size;        /* items per tools/list page; 0 = 100 */
    unsigned call_timeout_ms;  /* default time limit per tool call; 0 = none */
    unsigned list_ttl_ms;      /* 2026-07-28 ttlMs on list results; 0 = 0 (always stale) */
    size_t max_message;        /* largest frame accepted; 0 = 4 MiB */
    unsigned max_depth;        /* JSON nesting limit per frame; 0 = 256 */
    int invalid_args_protocol_error; /* nonzero: schema violations are always -32602 */
    const char *transcript_path; /* append every frame in and out as a JSON line, or NULL */
    mcp_server_log_fn log;     /* diagnostics sink; NULL = lines on stderr (info and above) */
    void *log_user_data;       /* passed to `log` */
    mcp_call_report_fn on_call_end; /* how each tools/call ended (audit, metrics), or NULL */
    void *on_call_end_user_data;    /* passed to `on_call_end` */
    unsigned task_ttl_ms;      /* tasks: how long a task and its result are kept after it was
                                  created; 0 = 1 hour */
    unsigned task_poll_ms;     /* tasks: pollIntervalMs suggested to clients; 0 = 500 */
    unsigned max_tasks;        /* tasks kept per principal (or per server without
                                  authorization); 0 = 256 */
    const char *extensions;    /* JSON object: the extensions the server supports, by id, with their
                                  settings ({"io.modelcontextprotocol/ui": {}}), declared as
                                  capabilities.extensions in both eras (SEP-1724); NULL = none */
} mcp_server_opts;

/* MCP Apps (SEP-1865): the extension id and the MIME type of its HTML views. */
#define MCP_EXT_UI "io.modelcontextprotocol/ui"
#define MCP_UI_MIME_TYPE "text/html;profile=mcp-app"

/**
 * Creates a server and starts its worker pool.
 *
 * mcp_server_new() is a macro over mcp_server_new_sized(), which also
 * takes the caller's sizeof(mcp_server_opts) (base.h, "Option structs and
 * the ABI").
 *
 * @param out  receives the server; untouched on failure.
 * @param opts options, or NULL for the defaults.
 * @param opts_size sizeof(mcp_server_opts) as the caller knows it.
 * @param err  optional detail.
 * @return MCP_OK, MCP_ERR_INVALID_ARG (also for an opts_size of 0 or too
 *         small), MCP_ERR_UNSUPPORTED (opts sets fields this library does
 *         not know), MCP_ERR_IO (the transcript file cannot be opened, or a
 *         thread cannot start), MCP_ERR_NOMEM.
 * Thread-safety: safe.
 */
MCP_API mcp_status mcp_server_new_sized(mcp_server **out, const mcp_server_opts *opts, size_t opts_size,
                                        mcp_error *err);
#define mcp_server_new(out, opts, err) mcp_server_new_sized((out), (opts), sizeof(mcp_server_opts), (err))

/**
 * Stops the worker pool and frees the server. Every connection must have
 * been freed first (mcp_conn_free()).
 * @param srv may be NULL (no-op).
 */
MCP_API void mcp_server_free(mcp_server *srv);

/* ---- tools ---------------------------------------------------------------- */

/**
 * A tool handler. Runs on a worker thread (or inline, see
 * MCP_TOOL_NONBLOCKING). `args` is the validated `arguments` object
 * (borrowed, valid during the call; an absent `arguments` is an empty
 * object). Build the result with the mcp_call_* functions.
 *
 * @return MCP_OK when a result was built (including a tool failure reported
 *         with mcp_call_error()); any other status means the handler could
 *         not produce a result, and the client gets -32603.
 */
typedef mcp_status (*mcp_tool_fn)(mcp_call *call, const mcp_json *args, void *user_data);

/* Tool flags. */
#define MCP_TOOL_NONBLOCKING 0x1u /* the handler never blocks: run it on the I/O thread */
#define MCP_TOOL_DISABLED 0x2u    /* registered but hidden and not callable */
#define MCP_TOOL_UNLISTED 0x4u    /* callable but not listed in tools/list */
#define MCP_TOOL_TASK_AFTER_INPUT 0x8u /* tasks: the handler's first input_required rounds are answered
                                          in the request (MRTR); the request that brings the answers
                                          becomes the task (docs/server.md, "Tasks") */

/*
 * Whether a tool's calls may run as tasks (the io.modelcontextprotocol/tasks
 * extension, docs/server.md "Tasks"): a task answers tools/call at once with
 * a task id, and the client polls tasks/get for the result.
 */
typedef enum mcp_task_support {
    MCP_TASK_FORBIDDEN = 0, /* always an ordinary call (the default) */
    MCP_TASK_OPTIONAL,      /* a task when the request declares the extension, else an ordinary call */
    MCP_TASK_REQUIRED       /* a task; a request without the extension gets -32021 */
} mcp_task_support;

/* Optional hint values for mcp_tool_def annotations. */
#define MCP_HINT_UNSET 0
#define MCP_HINT_FALSE 1
#define MCP_HINT_TRUE 2

/*
 * A tool to register. Strings are copied; JSON texts are parsed and
 * checked at registration. Zero-initialise; may grow at its end (base.h,
 * "Option structs and the ABI").
 */
typedef struct mcp_tool_def {
    const char *name;          /* 1-128 chars of [A-Za-z0-9_.-]; required */
    const char *title;         /* display name, or NULL */
    const char *description;   /* for the model, or NULL */
    const char *input_schema;  /* JSON Schema text; NULL = {"type":"object"} */
    const char *output_schema; /* JSON Schema text for structuredContent, or NULL */
    const char *icons;         /* JSON array of Icon objects, or NULL */
    const char *meta;          /* JSON object for the tool's _meta, or NULL */
    int read_only_hint;        /* MCP_HINT_*: annotations.readOnlyHint */
    int destructive_hint;      /* MCP_HINT_*: annotations.destructiveHint */
    int idempotent_hint;       /* MCP_HINT_*: annotations.idempotentHint */
    int open_world_hint;       /* MCP_HINT_*: annotations.openWorldHint */
    unsigned flags;            /* MCP_TOOL_* */
    unsigned timeout_ms;       /* time limit; 0 = the server's call_timeout_ms */
    mcp_tool_fn handler;       /* required */
    void *user_data;           /* passed to the handler */
    void (*user_data_free)(void *user_data); /* called when the tool is gone, or NULL */
    const char *scopes;        /* space-separated OAuth scopes a caller's token must hold
                                  (with authorization on), or NULL */
    mcp_task_support task_support; /* tasks extension; MCP_TASK_FORBIDDEN by default */
    const char *extension;     /* an extension id (MCP_EXT_UI), with extension_meta; or NULL */
    const char *extension_meta; /* JSON object merged into the tool's _meta in tools/list for clients
                                   that declared `extension` (e.g. {"ui":{"resourceUri":"ui://app/view"}});
                                   other clients never see it */
} mcp_tool_def;

/**
 * Registers a tool. Its schemas are compiled now (JSON Schema 2020-12 by
 * default, draft-07 when `$schema` says so). Connections that can receive
 * it get notifications/tools/list_changed.
 *
 * Ownership: `user_data_free` (if set) is called exactly once: when the tool
 * is removed or the server freed, or right away when registration fails
 * (but not when def_size is 0 or too small: then `def` is not read at all).
 *
 * mcp_server_add_tool() is a macro over mcp_server_add_tool_sized(), which
 * also takes the caller's sizeof(mcp_tool_def) (base.h, "Option structs
 * and the ABI").
 *
 * @return MCP_OK;
 *         MCP_ERR_INVALID_ARG (bad name, no handler, invalid icons/meta JSON,
 *         `scopes` with characters RFC 6749 forbids in a scope, def_size 0
 *         or too small);
 *         MCP_ERR_SCHEMA / MCP_ERR_UNSUPPORTED / MCP_ERR_LIMIT (a schema does not
 *         compile: err->message carries the validator's reason);
 *         MCP_ERR_UNSUPPORTED also when `def` sets fields this library does
 *         not know;
 *         MCP_ERR_EXISTS (the name is taken); MCP_ERR_NOMEM.
 * Thread-safety: safe, also while serving.
 */
MCP_API mcp_status mcp_server_add_tool_sized(mcp_server *srv, const mcp_tool_def *def, size_t def_size,
                                             mcp_error *err);
#define mcp_server_add_tool(srv, def, err) mcp_server_add_tool_sized((srv), (def), sizeof(mcp_tool_def), (err))

/**
 * Removes a tool. Calls already running finish normally.
 * @return MCP_OK or MCP_ERR_NOT_FOUND.
 * Thread-safety: safe, also while serving.
 */
MCP_API mcp_status mcp_server_remove_tool(mcp_server *srv, const char *name);

/**
 * Enables or disables a tool. A disabled tool is not listed and calling it
 * is "Unknown tool".
 * @return MCP_OK or MCP_ERR_NOT_FOUND.
 * Thread-safety: safe, also while serving.
 */
MCP_API mcp_status mcp_server_enable_tool(mcp_server *srv, const char *name, int enabled);

/**
 * Tells clients that a list changed without changing the registry (for
 * lists a server computes itself): `which` is "tools", "prompts" or
 * "resources". Legacy clients get notifications/<which>/list_changed;
 * 2026-07-28 listen streams that asked for it get it tagged.
 * @return MCP_OK or MCP_ERR_INVALID_ARG. Thread-safety: safe from any thread.
 */
MCP_API mcp_status mcp_server_list_changed(mcp_server *srv, const char *which);

/* ---- connections (sans I/O) ----------------------------------------------- */

/**
 * Sends one complete frame (a JSON-RPC message, no trailing newline) to the
 * client. libmcp never calls it concurrently for the same connection, but
 * may call it from any thread. The bytes are valid only during the call.
 * @return MCP_OK, or an error that closes the connection for sending.
 */
typedef mcp_status (*mcp_send_fn)(const char *frame, size_t len, void *user_data);

/**
 * Creates a connection: the protocol engine for one client.
 *
 * @param out  receives the connection; untouched on failure.
 * @param srv  the server; must outlive the connection.
 * @param send how frames leave; required.
 * @param user_data passed to `send`; not owned.
 * @return MCP_OK, MCP_ERR_INVALID_ARG, MCP_ERR_NOMEM.
 * Thread-safety: safe.
 */
MCP_API mcp_status mcp_conn_new(mcp_conn **out, mcp_server *srv, mcp_send_fn send, void *user_data);

/**
 * Feeds one complete frame from the client. Cheap requests are answered
 * before it returns; tool calls are queued to the worker pool and answered
 * later through `send`. Malformed input is answered with its JSON-RPC error
 * and the connection keeps working.
 *
 * @return MCP_OK (also when the frame was answered with an error);
 *         MCP_ERR_CLOSED after mcp_conn_close(); MCP_ERR_INVALID_ARG.
 * Thread-safety: call from one thread at a time per connection (the
 * transport's I/O thread).
 */
MCP_API mcp_status mcp_conn_recv(mcp_conn *conn, const char *frame, size_t len);

/**
 * As mcp_conn_recv(), for a frame that arrived with a verified bearer
 * token (a transport of your own: verify with mcp_auth_check_header()).
 * Every request of the frame runs as `principal`: registered `scopes` are
 * enforced (a refused request gets -32600 "Forbidden: insufficient scope"
 * without its handler running), and handlers see it through
 * mcp_call_principal(). The connection takes its own reference; the
 * caller keeps its own. NULL is the same as mcp_conn_recv().
 *
 * @return as mcp_conn_recv().
 * Thread-safety: as mcp_conn_recv().
 */
MCP_API mcp_status mcp_conn_recv_auth(mcp_conn *conn, const char *frame, size_t len, const mcp_principal *principal);

/**
 * Closes a connection: waits up to `grace_ms` for calls in flight (queued
 * or running) to finish (their responses are still sent), then cancels
 * the rest, answering each with a -32603 error ("Request cancelled: the
 * connection closed ..."; the handler's own result, if it comes later, is
 * discarded), and stops sending. Returns when no handler of this
 * connection is running any more, or `grace_ms` later again if one
 * ignores cancellation (it is then abandoned, and a warning is logged).
 * With `grace_ms` 0 it returns at once and writes nothing: running
 * handlers are flagged cancelled and finish on their own, silently.
 *
 * @return MCP_OK, or MCP_ERR_TIMEOUT when a handler was abandoned.
 * Thread-safety: call once, from the transport's thread.
 */
MCP_API mcp_status mcp_conn_close(mcp_conn *conn, unsigned grace_ms);

/**
 * Frees a connection (closing it first with no grace if still open).
 * Memory still used by abandoned handlers is released when they return.
 * @param conn may be NULL (no-op).
 */
MCP_API void mcp_conn_free(mcp_conn *conn);

/**
 * The protocol version negotiated by `initialize` on this connection, or
 * NULL before (modern requests carry their own version).
 * Thread-safety: safe.
 */
MCP_API const char *mcp_conn_version(const mcp_conn *conn);

/* ---- building a tool result (handlers) ------------------------------------ */

/* Annotations a content block may carry. Zero-initialise (then set
 * priority, whose unset value is negative); may grow at its end (base.h,
 * "Option structs and the ABI"). */
typedef struct mcp_annotations {
    unsigned audience;          /* MCP_AUDIENCE_* bits; 0 = unset */
    double priority;            /* 0.0 .. 1.0; negative = unset */
    const char *last_modified;  /* ISO 8601 timestamp, or NULL */
} mcp_annotations;

#define MCP_AUDIENCE_USER 0x1u
#define MCP_AUDIENCE_ASSISTANT 0x2u

/*
 * Content blocks, added in order to the result's `content`. Each returns
 * MCP_OK, MCP_ERR_INVALID_ARG (NULL where a value is required, invalid
 * UTF-8, a bad annotation, an ann_size of 0 or too small),
 * MCP_ERR_UNSUPPORTED (`ann` sets fields this library does not know),
 * MCP_ERR_LIMIT (the result grew past the server's message size) or
 * MCP_ERR_NOMEM. A failed block leaves the result as it was. `ann` may be
 * NULL. Safe from the handler's thread.
 *
 * Those that take annotations are macros over NAME_sized functions, which
 * also take the caller's sizeof(mcp_annotations) right after `ann`
 * (base.h, "Option structs and the ABI"); mcp_call_text() is a macro over
 * mcp_call_text_sized().
 */
MCP_API mcp_status mcp_call_text_sized(mcp_call *call, const char *text, const mcp_annotations *ann,
                                       size_t ann_size);
#define mcp_call_text(call, text, ann) mcp_call_text_sized((call), (text), (ann), sizeof(mcp_annotations))
MCP_API mcp_status mcp_call_textf(mcp_call *call, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** An image block: `bytes` are base64-encoded into the result. A macro over mcp_call_image_sized(). */
MCP_API mcp_status mcp_call_image_sized(mcp_call *call, const void *bytes, size_t n,
                                        const char *mime_type, const mcp_annotations *ann, size_t ann_size);
#define mcp_call_image(call, bytes, n, mime_type, ann) \
    mcp_call_image_sized((call), (bytes), (n), (mime_type), (ann), sizeof(mcp_annotations))
/** An audio block: `bytes` are base64-encoded into the result. A macro over mcp_call_audio_sized(). */
MCP_API mcp_status mcp_call_audio_sized(mcp_call *call, const void *bytes, size_t n,
                                        const char *mime_type, const mcp_annotations *ann, size_t ann_size);
#define mcp_call_audio(call, bytes, n, mime_type, ann) \
    mcp_call_audio_sized((call), (bytes), (n), (mime_type), (ann), sizeof(mcp_annotations))
/**
 * A resource_link block (name required; description and mime_type
 * optional). A macro over mcp_call_resource_link_sized().
 */
MCP_API mcp_status mcp_call_resource_link_sized(mcp_call *call, const char *uri, const char *name,
                                                const char *description, const char *mime_type,
                                                const mcp_annotations *ann, size_t ann_size);
#define mcp_call_resource_link(call, uri, name, description, mime_type, ann) \
    mcp_call_resource_link_sized((call), (uri), (name), (description), (mime_type), (ann), sizeof(mcp_annotations))
/** An embedded text resource. A macro over mcp_call_resource_text_sized(). */
MCP_API mcp_status mcp_call_resource_text_sized(mcp_call *call, const char *uri, const char *mime_type,
                                                const char *text, const mcp_annotations *ann, size_t ann_size);
#define mcp_call_resource_text(call, uri, mime_type, text, ann) \
    mcp_call_resource_text_sized((call), (uri), (mime_type), (text), (ann), sizeof(mcp_annotations))
/**
 * An embedded binary resource (base64-encoded into the result).
 * A macro over mcp_call_resource_blob_sized().
 */
MCP_API mcp_status mcp_call_resource_blob_sized(mcp_call *call, const char *uri, const char *mime_type,
                                                const void *bytes, size_t n, const mcp_annotations *ann,
                                                size_t ann_size);
#define mcp_call_resource_blob(call, uri, mime_type, bytes, n, ann) \
    mcp_call_resource_blob_sized((call), (uri), (mime_type), (bytes), (n), (ann), sizeof(mcp_annotations))

/**
 * Sets the result's structuredContent from JSON text (parsed and checked
 * now; validated against the tool's outputSchema when the handler returns).
 * Calling it again replaces the previous value.
 * @return MCP_OK, MCP_ERR_PARSE (not JSON), MCP_ERR_NOMEM.
 */
MCP_API mcp_status mcp_call_structured(mcp_call *call, const char *json, size_t len);

/**
 * Reports a tool execution failure: the result gets isError: true and a
 * text block with the formatted message (something the model can act on).
 * The handler then still returns MCP_OK.
 */
MCP_API mcp_status mcp_call_error(mcp_call *call, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/**
 * 1 when the client cancelled the call, its time limit passed, the
 * connection is closing, or a notification about the call found its
 * stream gone for good (the client left, or stopped reading and the
 * transport closed the stream at its byte limit): the handler should stop
 * soon (its result will be discarded). Cheap; call it often in long loops.
 * Thread-safety: safe from any thread.
 */
MCP_API int mcp_call_is_cancelled(const mcp_call *call);

/**
 * Sends notifications/progress when the request carried a progressToken
 * (otherwise does nothing and returns MCP_OK).
 *
 * @param progress must increase from one call to the next.
 * @param total    negative when unknown.
 * @param message  optional text, or NULL.
 * @return MCP_OK, MCP_ERR_INVALID_ARG (progress did not increase, or NaN),
 *         MCP_ERR_CANCELLED (the call is cancelled, or is now because the
 *         notification's stream is gone: see mcp_call_is_cancelled),
 *         MCP_ERR_NOMEM.
 * Thread-safety: safe from any thread.
 */
MCP_API mcp_status mcp_call_progress(mcp_call *call, double progress, double total,
                                     const char *message);

/**
 * Sends a notifications/message log line for this call, when the client
 * asked for this level: legacy clients through logging/setLevel (all
 * levels until they do), 2026-07-28 requests through their `_meta`
 * `io.modelcontextprotocol/logLevel` (none without it).
 *
 * @param logger optional logger name, or NULL.
 * @return MCP_OK (also when filtered out), MCP_ERR_INVALID_ARG, MCP_ERR_NOMEM,
 *         MCP_ERR_CANCELLED (the line's stream is gone; the call is now
 *         cancelled, see mcp_call_is_cancelled).
 * Thread-safety: safe from any thread.
 */
MCP_API mcp_status mcp_call_log(mcp_call *call, mcp_log_level level, const char *logger,
                                const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/** Name of the tool being called (valid during the call). */
MCP_API const char *mcp_call_tool_name(const mcp_call *call);

/**
 * The taskId when this call runs as a task (the tasks extension), else
 * NULL. Valid during the call.
 */
MCP_API const char *mcp_call_task_id(const mcp_call *call);

/**
 * The request's W3C trace context (SEP-414: `_meta.traceparent` and
 * `_meta.tracestate`): the traceparent when it is well-formed, else NULL.
 * `tracestate` (may be NULL) receives the tracestate when there is a
 * traceparent and it is well-formed too, else NULL. Pass them on with
 * mcp_request_opts.traceparent to follow the request into other servers.
 * Valid during the call.
 */
MCP_API const char *mcp_call_trace(const mcp_call *call, const char **tracestate);

/** Protocol version of the request ("2025-11-25", "2026-07-28", ...). */
MCP_API const char *mcp_call_protocol_version(const mcp_call *call);

/** The request's params._meta object, or NULL (borrowed, valid during the call). */
MCP_API const mcp_json *mcp_call_meta(const mcp_call *call);

/**
 * The settings the client declared for extension `id` in its capabilities
 * (`capabilities.extensions[id]`: from initialize on a legacy connection,
 * from the request's clientCapabilities in 2026-07-28), or NULL when it
 * declared none. Borrowed, valid during the call. A tool linked to an MCP
 * App view can check mcp_client_extension_has_mime_type(
 * mcp_call_client_extension(call, MCP_EXT_UI), MCP_UI_MIME_TYPE) to know
 * whether the host will show the view, and otherwise say more in text.
 * Thread-safety: from the handler's thread.
 */
MCP_API const mcp_json *mcp_call_client_extension(const mcp_call *call, const char *id);

/**
 * 1 when extension settings (as mcp_call_client_extension() returns them)
 * list `mime_type` in their "mimeTypes" array, else 0 (also for NULL).
 */
MCP_API int mcp_client_extension_has_mime_type(const mcp_json *settings, const char *mime_type);

/**
 * Who the call runs for: the principal of the bearer token its request
 * carried (per request in 2026-07-28, per POST in legacy HTTP sessions,
 * since a token may change mid-session). NULL without authorization.
 * Borrowed: valid during the call. Thread-safety: safe from any thread.
 */
MCP_API const mcp_principal *mcp_call_principal(const mcp_call *call);

/** The token's subject (`sub`), or NULL (no authorization, or no sub). Valid during the call. */
MCP_API const char *mcp_call_subject(const mcp_call *call);

/**
 * 1 when the call's token holds `scope` (directly or through the
 * verifier's scope hierarchy); 0 otherwise, and always 0 without
 * authorization. For finer checks than the tool's `scopes`
 * (e.g. "files:write" only for some arguments).
 */
MCP_API int mcp_call_has_scope(const mcp_call *call, const char *scope);

/* ---- asking the client (both eras) -------------------------------------- */

/*
 * A handler may need input from the client: a form filled in by the user
 * (elicitation), a model completion (sampling), or the client's roots.
 * One API serves both eras:
 *   - legacy: the server sends the request to the client and the handler
 *     waits for the answer: until the call's time limit answers the call
 *     (the ask then returns MCP_ERR_CANCELLED and the client gets the
 *     time-limit error), or 60 s for a call without one (MCP_ERR_TIMEOUT);
 *   - 2026-07-28: the first round ends with `resultType: "input_required"`
 *     listing the request; the client retries with `inputResponses`, and
 *     the handler runs again from the start, now getting the answer.
 * So a handler asks, and returns the status it got when that is not
 * MCP_OK; it must be written to run again from the top:
 *
 *     const mcp_json *answer;
 *     mcp_status st = mcp_call_elicit(call, "user_name", "What is your name?", schema, &answer);
 *     if (st)
 *         return st;   (MCP_ERR_INPUT_REQUIRED ends this round; others are failures)
 *     ... use answer ...
 *
 * `key` names the request within the call (unique per request you make).
 */

/**
 * Asks the client to elicit information from the user with a form.
 *
 * @param key            names this input request (e.g. "user_name").
 * @param message        what to ask, shown to the user.
 * @param requested_schema JSON text of the form's schema (a flat object schema).
 * @param answer         receives the client's ElicitResult
 *                       ({"action":"accept"|"decline"|"cancel","content":{...}}),
 *                       borrowed, valid until the handler returns.
 * @return MCP_OK (answer set);
 *         MCP_ERR_INPUT_REQUIRED (2026-07-28 first round: return it);
 *         MCP_ERR_UNSUPPORTED (the client did not declare the elicitation
 *         capability; returning it gives the client -32021 in 2026-07-28
 *         and -32603 otherwise);
 *         MCP_ERR_TIMEOUT (legacy, a call without a time limit: no answer in 60 s);
 *         MCP_ERR_CANCELLED (also when the call's time limit answered it);
 *         MCP_ERR_PROTOCOL (the client answered with an error);
 *         MCP_ERR_INVALID (the 2026-07-28 retry carried an answer of the wrong shape);
 *         MCP_ERR_INVALID_ARG; MCP_ERR_NOMEM.
 * Thread-safety: from the handler's thread.
 */
MCP_API mcp_status mcp_call_elicit(mcp_call *call, const char *key, const char *message,
                                   const char *requested_schema, const mcp_json **answer);

/**
 * Asks the client to elicit through a URL it opens for the user (URL mode).
 * @param elicitation_id an id for the elicitation (legacy), or NULL.
 * Statuses and `answer` as mcp_call_elicit().
 */
MCP_API mcp_status mcp_call_elicit_url(mcp_call *call, const char *key, const char *message, const char *url,
                                       const char *elicitation_id, const mcp_json **answer);

/**
 * Asks the client's model for a completion (sampling/createMessage).
 * @param params JSON text of CreateMessageRequest params
 *               ({"messages":[...],"maxTokens":N,...}).
 * @param answer receives the CreateMessageResult (borrowed).
 * Statuses as mcp_call_elicit() (capability "sampling").
 */
MCP_API mcp_status mcp_call_sample(mcp_call *call, const char *key, const char *params, const mcp_json **answer);

/**
 * Asks the client for its roots (roots/list).
 * @param answer receives the ListRootsResult ({"roots":[...]}, borrowed).
 * Statuses as mcp_call_elicit() (capability "roots").
 */
MCP_API mcp_status mcp_call_list_roots(mcp_call *call, const char *key, const mcp_json **answer);

/**
 * Requires a client capability without asking anything yet ("sampling",
 * "elicitation" or "roots"). When the client did not declare it, returns
 * MCP_ERR_UNSUPPORTED; a handler that returns that status gives the client
 * -32021 with data.requiredCapabilities (2026-07-28) or -32603 (legacy).
 * @return MCP_OK, MCP_ERR_UNSUPPORTED, MCP_ERR_INVALID_ARG.
 */
MCP_API mcp_status mcp_call_require(mcp_call *call, const char *capability);

/**
 * Asks the transport to close this call's response stream now, without
 * ending the call (SEP-1699 polling): an HTTP client reconnects with GET
 * and Last-Event-ID and receives the rest, including the result. Only
 * legacy Streamable HTTP streams support it; elsewhere it does nothing.
 * @return MCP_OK.
 */
MCP_API mcp_status mcp_call_close_stream(mcp_call *call);

/**
 * Keeps handler state across 2026-07-28 rounds: the bytes travel to the
 * client inside the integrity-protected `requestState` and come back with
 * the retry (mcp_call_state()). Legacy calls keep them in memory.
 * @return MCP_OK, MCP_ERR_LIMIT (over 16 KiB), MCP_ERR_NOMEM.
 */
MCP_API mcp_status mcp_call_set_state(mcp_call *call, const void *bytes, size_t n);

/**
 * The state set in an earlier round, or NULL (and *n = 0).
 * @param n receives the length (may be NULL).
 */
MCP_API const void *mcp_call_state(const mcp_call *call, size_t *n);

/* ---- resources ------------------------------------------------------------ */

typedef struct mcp_read mcp_read; /* a resources/read being answered */

/**
 * Reads a resource. Runs on a worker thread, like a tool handler, unless
 * the resource is flagged MCP_RESOURCE_NONBLOCKING (then on the thread
 * that received the request: it must not block). `uri` is the requested
 * URI; for a template, `vars` is an object of the variables it matched
 * (strings), else NULL. Add contents
 * with mcp_read_text()/mcp_read_blob(); return MCP_ERR_NOT_FOUND when the
 * URI names nothing (the client gets the era's not-found error), MCP_OK
 * otherwise. Other statuses give -32603.
 */
typedef mcp_status (*mcp_resource_fn)(mcp_read *rd, const char *uri, const mcp_json *vars, void *user_data);

/*
 * Completes a resource-template variable or prompt argument for
 * completion/complete: add candidates with mcp_completion_add().
 * `context` is the object of already-resolved arguments, or NULL. Runs on
 * a worker thread, like the handler, unless the resource or prompt is
 * flagged MCP_RESOURCE_NONBLOCKING / MCP_PROMPT_NONBLOCKING (then on the
 * thread that received the request: it must not block).
 */
typedef struct mcp_completion mcp_completion;
typedef mcp_status (*mcp_complete_fn)(mcp_completion *cmp, const char *argument, const char *value,
                                      const mcp_json *context, void *user_data);

#define MCP_RESOURCE_SUBSCRIBABLE 0x1u /* clients may subscribe to updates */
#define MCP_RESOURCE_NONBLOCKING 0x2u  /* the handler never blocks: run it on the I/O thread */

/* A resource (exact `uri`) or resource template (`uri_template`).
 * Zero-initialise; may grow at its end (base.h, "Option structs and the ABI"). */
typedef struct mcp_resource_def {
    const char *uri;           /* exact URI; or NULL with uri_template set */
    const char *uri_template;  /* RFC 6570 template (levels 1-3), or NULL */
    const char *name;          /* required */
    const char *title;         /* or NULL */
    const char *description;   /* or NULL */
    const char *mime_type;     /* or NULL */
    int64_t size;              /* bytes, or -1 when unknown (0 is a real size: set -1) */
    const char *icons;         /* JSON array, or NULL */
    const char *meta;          /* JSON object for _meta, or NULL */
    const char *text;          /* static text content (no handler needed), or NULL */
    const void *blob;          /* static binary content, or NULL */
    size_t blob_len;           /* its length */
    mcp_resource_fn handler;   /* dynamic content (required for templates) */
    mcp_complete_fn complete;  /* template variable completion, or NULL */
    void *user_data;           /* passed to handler and complete */
    void (*user_data_free)(void *user_data); /* called once when the resource is gone */
    unsigned flags;            /* MCP_RESOURCE_* */
    const char *scopes;        /* space-separated OAuth scopes resources/read (and subscribe)
                                  needs (with authorization on), or NULL */
    const char *extension;     /* an extension id (MCP_EXT_UI): the resource is listed only to clients
                                  that declared it (reads are not refused); or NULL */
    const char *extension_meta; /* JSON object merged into _meta: in listings for those clients, and in
                                   the contents of a static (text/blob) resource's reads; or NULL */
} mcp_resource_def;

/**
 * Registers a resource or template (copied; text and blob too).
 *
 * mcp_server_add_resource() is a macro over mcp_server_add_resource_sized(),
 * which also takes the caller's sizeof(mcp_resource_def) (base.h, "Option
 * structs and the ABI").
 *
 * @return MCP_OK; MCP_ERR_INVALID_ARG (no name, neither or both of uri and
 *         uri_template, a template that does not parse, static content with
 *         a template, no content and no handler, bad icons/meta JSON,
 *         invalid `scopes`, def_size 0 or too small);
 *         MCP_ERR_UNSUPPORTED (`def` sets fields this library does not know);
 *         MCP_ERR_EXISTS; MCP_ERR_NOMEM. `user_data_free` runs on failure too
 *         (except for a def_size of 0 or too small: `def` is not read then).
 * Thread-safety: safe, also while serving; clients get list_changed.
 */
MCP_API mcp_status mcp_server_add_resource_sized(mcp_server *srv, const mcp_resource_def *def, size_t def_size,
                                                 mcp_error *err);
#define mcp_server_add_resource(srv, def, err) \
    mcp_server_add_resource_sized((srv), (def), sizeof(mcp_resource_def), (err))

/** Removes a resource or template by its uri or uri_template. MCP_OK or MCP_ERR_NOT_FOUND. */
MCP_API mcp_status mcp_server_remove_resource(mcp_server *srv, const char *uri_or_template);

/**
 * Tells subscribers that a resource changed (legacy resources/subscribe and
 * 2026-07-28 subscriptions/listen with resourceSubscriptions).
 * @return MCP_OK. Thread-safety: safe from any thread.
 */
MCP_API mcp_status mcp_server_resource_updated(mcp_server *srv, const char *uri);

/** Adds a text content item ({uri, mimeType, text}) to a read. */
MCP_API mcp_status mcp_read_text(mcp_read *rd, const char *uri, const char *mime_type, const char *text);
/** Adds a binary content item ({uri, mimeType, blob}) to a read. */
MCP_API mcp_status mcp_read_blob(mcp_read *rd, const char *uri, const char *mime_type, const void *bytes,
                                 size_t n);

/** The principal the read runs for, or NULL without authorization (valid during the read). */
MCP_API const mcp_principal *mcp_read_principal(const mcp_read *rd);

/* ---- prompts -------------------------------------------------------------- */

typedef struct mcp_prompt mcp_prompt; /* a prompts/get being answered */

/* One declared prompt argument. Zero-initialise; may grow at its end: an
 * array of them is walked with the caller's element size (base.h, "Option
 * structs and the ABI"). */
typedef struct mcp_prompt_arg {
    const char *name;        /* required */
    const char *title;       /* or NULL */
    const char *description; /* or NULL */
    int required;            /* nonzero: prompts/get without it is -32602 */
} mcp_prompt_arg;

/**
 * Builds a prompt's messages. Runs on a worker thread, like a tool handler,
 * unless the prompt is flagged MCP_PROMPT_NONBLOCKING (then on the thread
 * that received the request). `args` is the arguments object (strings),
 * required ones guaranteed present. Return MCP_OK, or MCP_ERR_INVALID_ARG
 * with mcp_prompt_invalid() to reject an argument value (-32602).
 */
typedef mcp_status (*mcp_prompt_fn)(mcp_prompt *p, const mcp_json *args, void *user_data);

/* A prompt to register. Zero-initialise; may grow at its end (base.h,
 * "Option structs and the ABI"). */
typedef struct mcp_prompt_def {
    const char *name;              /* required */
    const char *title;             /* or NULL */
    const char *description;       /* or NULL */
    const mcp_prompt_arg *args;    /* declared arguments (copied) */
    size_t nargs;                  /* how many */
    const char *icons;             /* JSON array, or NULL */
    const char *meta;              /* JSON object, or NULL */
    mcp_prompt_fn handler;         /* required */
    mcp_complete_fn complete;      /* argument completion, or NULL */
    void *user_data;               /* passed to handler and complete */
    void (*user_data_free)(void *user_data); /* called once when the prompt is gone */
    const char *scopes;            /* space-separated OAuth scopes prompts/get needs
                                      (with authorization on), or NULL */
    unsigned flags;                /* MCP_PROMPT_* */
} mcp_prompt_def;

/* Prompt flags. */
#define MCP_PROMPT_NONBLOCKING 0x1u /* the handler never blocks: run it on the I/O thread */

/**
 * Registers a prompt. Statuses as mcp_server_add_resource(); an `args`
 * element that sets fields this library does not know is
 * MCP_ERR_UNSUPPORTED too.
 *
 * mcp_server_add_prompt() is a macro over mcp_server_add_prompt_sized(),
 * which also takes the caller's sizeof(mcp_prompt_def) and
 * sizeof(mcp_prompt_arg), the stride of `def->args` (base.h, "Option
 * structs and the ABI"). arg_size is checked only when nargs > 0.
 * Thread-safety: safe, also while serving; clients get list_changed.
 */
MCP_API mcp_status mcp_server_add_prompt_sized(mcp_server *srv, const mcp_prompt_def *def, size_t def_size,
                                               size_t arg_size, mcp_error *err);
#define mcp_server_add_prompt(srv, def, err) \
    mcp_server_add_prompt_sized((srv), (def), sizeof(mcp_prompt_def), sizeof(mcp_prompt_arg), (err))

/** Removes a prompt. MCP_OK or MCP_ERR_NOT_FOUND. */
MCP_API mcp_status mcp_server_remove_prompt(mcp_server *srv, const char *name);

/* Message roles. */
typedef enum mcp_role { MCP_ROLE_USER = 0, MCP_ROLE_ASSISTANT } mcp_role;

/** Sets the result's description. */
MCP_API mcp_status mcp_prompt_description(mcp_prompt *p, const char *description);
/** Adds a message with a text block. */
MCP_API mcp_status mcp_prompt_text(mcp_prompt *p, mcp_role role, const char *text);
/** Adds a message with an image block (bytes base64-encoded). */
MCP_API mcp_status mcp_prompt_image(mcp_prompt *p, mcp_role role, const void *bytes, size_t n,
                                    const char *mime_type);
/** Adds a message with an audio block (bytes base64-encoded). */
MCP_API mcp_status mcp_prompt_audio(mcp_prompt *p, mcp_role role, const void *bytes, size_t n,
                                    const char *mime_type);
/** Adds a message with an embedded text resource. */
MCP_API mcp_status mcp_prompt_resource_text(mcp_prompt *p, mcp_role role, const char *uri,
                                            const char *mime_type, const char *text);
/**
 * Asks the client for form input while building a prompt. Works in
 * 2026-07-28 only (the round ends with input_required, the prompt runs
 * again with the answer); legacy requests get MCP_ERR_UNSUPPORTED, since
 * prompts run on the I/O thread and cannot wait for an answer there.
 * Statuses as mcp_call_elicit().
 */
MCP_API mcp_status mcp_prompt_elicit(mcp_prompt *p, const char *key, const char *message,
                                     const char *requested_schema, const mcp_json **answer);

/** The principal the prompts/get runs for, or NULL without authorization (valid during the call). */
MCP_API const mcp_principal *mcp_prompt_principal(const mcp_prompt *p);

/**
 * Rejects the request with -32602 and this message (return
 * MCP_ERR_INVALID_ARG from the handler after calling it).
 */
MCP_API mcp_status mcp_prompt_invalid(mcp_prompt *p, const char *message);

/* ---- completion ----------------------------------------------------------- */

/** Adds one completion candidate (at most 100 are sent; the rest counts toward total). */
MCP_API mcp_status mcp_completion_add(mcp_completion *cmp, const char *value);

/* ---- metrics (Prometheus) -------------------------------------------------- */

/*
 * The server keeps counters for operators and writes them in the
 * Prometheus text exposition format 0.0.4 (docs/server.md, "Metrics"):
 * tools/call requests by tool and outcome, latency histograms per tool,
 * calls in flight, the worker queue, HTTP sessions and streams, quota
 * refusals and authorization failures. mcp_metrics_server_start()
 * (transport.h) serves them on a listener of their own.
 */

typedef struct mcp_metrics_out mcp_metrics_out; /* one scrape being written */

/**
 * Adds an application's own metrics to every scrape. Called by
 * mcp_server_metrics_text() on the thread that scrapes, after the
 * library's families: describe each family with mcp_metrics_family(), then
 * write its samples with mcp_metrics_sample(). If a write fails the
 * collector's lines are left out of this scrape. It must be thread-safe
 * and quick, and must not call mcp_server_metrics_text().
 */
typedef void (*mcp_metrics_fn)(mcp_metrics_out *out, void *user_data);

/**
 * Starts counting tools/call requests per tool (outcomes and latencies).
 * Off by default: until then a call costs the metrics nothing but the
 * in-flight gauge. mcp_metrics_server_start() calls it.
 * @return MCP_OK or MCP_ERR_INVALID_ARG (srv NULL).
 * Thread-safety: safe, also while serving.
 */
MCP_API mcp_status mcp_server_metrics_enable(mcp_server *srv);

/**
 * Registers a collector of the application's own metrics (at most 16 per
 * server), kept until the server is freed; then `user_data_free` (may be
 * NULL) receives `user_data`, also right away when this fails.
 * @return MCP_OK; MCP_ERR_INVALID_ARG (srv or fn NULL); MCP_ERR_LIMIT (16 already).
 * Thread-safety: safe, also while serving.
 */
MCP_API mcp_status mcp_server_add_metrics(mcp_server *srv, mcp_metrics_fn fn, void *user_data,
                                          void (*user_data_free)(void *user_data));

/**
 * Appends the exposition text of every metric to `out` (the library's,
 * then each collector's), each family with its HELP and TYPE lines.
 * Serve it as "text/plain; version=0.0.4; charset=utf-8".
 * @return MCP_OK; MCP_ERR_INVALID_ARG; MCP_ERR_NOMEM or MCP_ERR_LIMIT
 *         (`out` as it was).
 * Thread-safety: safe from any thread.
 */
MCP_API mcp_status mcp_server_metrics_text(mcp_server *srv, mcp_buf *out);

/**
 * In a collector: starts a family. `name` matches [a-zA-Z_:][a-zA-Z0-9_:]*
 * (at most 200 bytes), must not start with "mcp_" (the library's) and may
 * appear once per scrape; `type` is "counter", "gauge" or "untyped";
 * `help` is escaped as the format requires (may be NULL).
 * @return MCP_OK; MCP_ERR_INVALID_ARG; MCP_ERR_EXISTS (name taken);
 *         MCP_ERR_LIMIT (more than 64 families); MCP_ERR_NOMEM. After
 *         an error every later write of this collector returns it too.
 */
MCP_API mcp_status mcp_metrics_family(mcp_metrics_out *out, const char *name, const char *type, const char *help);

/**
 * In a collector: one sample of the current family. `labels` alternates
 * label names ([a-zA-Z_][a-zA-Z0-9_]*, not "__..."; each once) and values
 * (escaped here), ended by NULL; NULL for none. NaN and infinities are
 * written as the format spells them.
 * @return MCP_OK; MCP_ERR_STATE (no family yet); MCP_ERR_INVALID_ARG;
 *         MCP_ERR_NOMEM.
 */
MCP_API mcp_status mcp_metrics_sample(mcp_metrics_out *out, const char *const *labels, double value);

#ifdef __cplusplus
}
#endif

#endif /* MCP_SERVER_H */
