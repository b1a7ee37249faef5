/*
 * libmcp client: talks to one MCP server over stdio (a child process) or
 * Streamable HTTP, in either protocol era, from many threads at once.
 *
 * Shape of a client program:
 *
 *     mcp_client_opts o = {0};
 *     o.name = "my-host"; o.version = "1.0.0";
 *     const char *argv[] = {"mcp-server-aml", NULL};
 *     mcp_stdio_client_opts so = {0};
 *     so.argv = argv;
 *     mcp_client *c;
 *     if (mcp_client_connect_stdio(&c, &o, &so, &err) != MCP_OK) ...
 *     mcp_response *r;
 *     mcp_status st = mcp_client_call_tool(c, "assessTypology", "{\"caseId\":\"C-1\"}", NULL, &r, &err);
 *     ... mcp_response_result(r) is the CallToolResult ...
 *     mcp_response_free(r);
 *     mcp_client_close(c);
 *
 * Eras (docs/client.md): by default the client probes with
 * `server/discover` (2026-07-28) and falls back to `initialize` when the
 * server is legacy, as the spec's dual-era rules say; `protocol_version`
 * forces one version instead.
 *
 * Requests are matched to their responses by id in any order. Every call
 * has a time limit; a call that timed out or was cancelled leaves a
 * tombstone so a late response is dropped. When the server dies, closes
 * its output or breaks the protocol, every pending call fails at once with
 * MCP_ERR_CLOSED or MCP_ERR_INVALID_MSG and the reason in its mcp_error.
 */
#ifndef MCP_CLIENT_H
#define MCP_CLIENT_H

#include "json.h"
#include "rpc.h"
#include "server.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcp_client mcp_client;     /* one connection to one server */
typedef struct mcp_response mcp_response; /* one response message, parsed */

/* ---- responses ------------------------------------------------------------ */

/** The `result` object of a successful response; NULL for an error response. */
MCP_API const mcp_json *mcp_response_result(const mcp_response *r);

/** The JSON-RPC error code of an error response; 0 for a result. */
MCP_API int mcp_response_error_code(const mcp_response *r);

/** The error's message ("" when absent); NULL for a result. */
MCP_API const char *mcp_response_error_message(const mcp_response *r);

/** The error's `data` member, or NULL. */
MCP_API const mcp_json *mcp_response_error_data(const mcp_response *r);

/** The whole message as received (id, result or error). */
MCP_API const mcp_json *mcp_response_message(const mcp_response *r);

/**
 * Nonzero when the response is a CallToolResult with `isError: true` (a
 * tool failure the model can act on; see docs/errors.md).
 */
MCP_API int mcp_response_is_tool_error(const mcp_response *r);

/** Frees a response and the document it owns. NULL is a no-op. */
MCP_API void mcp_response_free(mcp_response *r);

/* ---- callbacks -------------------------------------------------------------- */

/*
 * Answers a server's request for input: a legacy server-to-client request,
 * or one entry of a 2026-07-28 `input_required` result (the client then
 * retries the call with the answers). `method` is "elicitation/create",
 * "sampling/createMessage" or "roots/list"; `params` its params (borrowed,
 * valid during the call). Write the result object's members into `result`
 * (already inside an open object) and return MCP_OK; return
 * MCP_ERR_UNSUPPORTED to decline (the server gets -32601), any other
 * status to fail (-32603 with `message`, when set).
 * Runs on one of the client's worker threads; it may block (a person
 * answering). Declare the matching capability in `capabilities`.
 */
typedef mcp_status (*mcp_client_input_fn)(mcp_client *c, const char *method, const mcp_json *params,
                                          mcp_jw *result, char *message, size_t message_cap, void *user_data);

/*
 * A notification from the server: "notifications/message" (logging),
 * "notifications/tools/list_changed" and the other list changes,
 * "notifications/resources/updated", and any other method. Progress goes
 * to the call's own callback instead. `params` is borrowed (may be NULL).
 * Runs on the transport's reader thread: return quickly, and never make a
 * blocking request from it.
 */
typedef void (*mcp_client_notify_fn)(mcp_client *c, const char *method, const mcp_json *params, void *user_data);

/* Diagnostics of the client itself (late responses, a server's stderr in capture mode). */
typedef void (*mcp_client_log_fn)(mcp_log_level level, const char *message, void *user_data);

/* ---- options ---------------------------------------------------------------- */

/* Client options; zero-initialise and set what you need. May grow at its
 * end (base.h, "Option structs and the ABI"). */
typedef struct mcp_client_opts {
    const char *name;              /* clientInfo.name; NULL = "libmcp-client" */
    const char *version;           /* clientInfo.version; NULL = the library version */
    const char *protocol_version;  /* NULL: dual-era (probe 2026-07-28, fall back to initialize);
                                      else that version only (any of MCP_PROTOCOL_*) */
    const char *capabilities;      /* client capabilities as a JSON object, e.g.
                                      "{\"elicitation\":{},\"roots\":{}}"; NULL = {} */
    unsigned timeout_ms;           /* default time limit per request; 0 = 60000 */
    unsigned connect_timeout_ms;   /* limit for the whole handshake; 0 = 30000 */
    unsigned discover_timeout_ms;  /* a silent server/discover probe means legacy; 0 = 5000 */
    unsigned workers;              /* threads for input callbacks and input_required rounds; 0 = 2 */
    unsigned max_input_rounds;     /* input_required rounds per call before failing; 0 = 16 */
    size_t max_message;            /* largest frame accepted from the server; 0 = 64 MiB */
    int lenient;                   /* nonzero: skip non-JSON-RPC output and responses to ids never
                                      sent, with a warning (default: they end the connection) */
    mcp_client_input_fn on_input;  /* server asks for input; NULL = decline */
    mcp_client_notify_fn on_notify; /* server notifications; NULL = ignore */
    mcp_client_log_fn log;         /* client diagnostics; NULL = stderr (warnings and up) */
    void *user_data;               /* passed to the three callbacks above */
    const char *transcript_path;   /* append every frame in and out as JSON lines; NULL = none */
    int read_only_retries;         /* HTTP: times a tools/call that failed without any answer (the
                                      connection broke, the stream ended first, a proxy's 502/503/504)
                                      is sent again, with a new id, when tools/list showed the tool
                                      with readOnlyHint true; never for other tools. 0 = 2; negative
                                      = never (docs/client.md, "Retries") */
    unsigned retry_backoff_ms;     /* the wait before the first such retry, doubled for each next
                                      one (at most 5 s), plus up to half again at random; all
                                      within the call's time limit. 0 = 100 */
} mcp_client_opts;

/* What happens to a stdio server's stderr. */
typedef enum mcp_stderr_mode {
    MCP_STDERR_INHERIT = 0, /* the server writes to this process's stderr */
    MCP_STDERR_CAPTURE,     /* lines go to the log callback (info); the last 4 KiB is kept
                               and quoted when the server dies */
    MCP_STDERR_DISCARD      /* /dev/null */
} mcp_stderr_mode;

/* stdio transport options; zero-initialise. May grow at its end (base.h,
 * "Option structs and the ABI"). */
typedef struct mcp_stdio_client_opts {
    const char *const *argv;     /* the server command, NULL-terminated; argv[0] is looked up in PATH */
    const char *const *envp;     /* its environment, NULL-terminated; NULL = this process's */
    const char *cwd;             /* its working directory; NULL = this process's */
    mcp_stderr_mode stderr_mode; /* see above */
    unsigned kill_grace_ms;      /* on close: after stdin closes, wait this long, then SIGTERM,
                                    then as long again, then SIGKILL; 0 = 2000 */
} mcp_stdio_client_opts;

/* ---- authorization (OAuth 2.1; docs/client-http.md, "Authorization") ------------ */

/* How the client obtains access tokens. */
typedef enum mcp_oauth_grant {
    MCP_OAUTH_AUTHORIZATION_CODE = 0, /* a person signs in with a browser (PKCE S256, state, iss) */
    MCP_OAUTH_CLIENT_CREDENTIALS = 1  /* the client acts on its own behalf (client id and secret) */
} mcp_oauth_grant;

/*
 * Sends the user agent (a browser) to `authorization_url` and reports
 * where the authorization server sent it back: `redirect_uri` with `code`,
 * `state` and usually `iss` in its query. Write that whole URL,
 * NUL-terminated, into `redirect_out` (at most `redirect_cap` bytes) and
 * return MCP_OK; any other status ends the authorization, and the request
 * that needed it fails with MCP_ERR_AUTH. The client checks what comes
 * back (state, iss, the redirect URI itself) before it uses the code.
 * Runs on one of the client's worker threads and may block while a person
 * signs in; the request's time limit is paused meanwhile. The strings are
 * borrowed, valid during the call. mcp_oauth_authorize_unattended() is a
 * ready-made one for authorization servers that answer without a person.
 */
typedef mcp_status (*mcp_oauth_authorize_fn)(mcp_client *c, const char *authorization_url, const char *redirect_uri,
                                             char *redirect_out, size_t redirect_cap, void *user_data);

/*
 * OAuth client options (set mcp_http_client_opts.oauth to use them). With
 * them, a 401 from the server, or a 403 with error="insufficient_scope",
 * starts an authorization: Protected Resource Metadata (RFC 9728), the
 * authorization server's metadata (RFC 8414, OpenID Connect discovery),
 * client identification, the grant, and the request is sent again with the
 * new token. Zero-initialise and set what you need; strings are copied.
 * May grow at its end (base.h, "Option structs and the ABI").
 */
typedef struct mcp_oauth_opts {
    mcp_oauth_grant grant;           /* MCP_OAUTH_AUTHORIZATION_CODE (default) or _CLIENT_CREDENTIALS */
    const char *client_id;           /* a pre-registered client id; NULL: a Client ID Metadata Document
                                        or dynamic registration (required for client credentials) */
    const char *client_secret;       /* its secret (a confidential client); NULL for a public client */
    const char *client_issuer;       /* the authorization server (issuer) client_id belongs to;
                                        NULL = the first one the server names, then bound to it */
    const char *client_metadata_url; /* https URL of this client's metadata document: used as the
                                        client_id where the server supports it (CIMD); NULL = none */
    const char *client_name;         /* client_name for dynamic registration; NULL = mcp_client_opts.name */
    const char *redirect_uri;        /* where the authorization server sends the browser back
                                        (required for the authorization code grant) */
    const char *scope;               /* space-separated scopes requested besides the ones the server
                                        asks for; NULL = only the server's */
    mcp_oauth_authorize_fn authorize; /* shows the authorization page (required for the code grant) */
    void *user_data;                 /* passed to authorize */
    unsigned timeout_ms;             /* limit of each HTTP exchange for metadata, registration and
                                        tokens; 0 = 10000 */
    unsigned max_attempts;           /* authorizations one request may trigger (401, then 403 step-ups)
                                        before it fails with MCP_ERR_AUTH; 0 = 3 */
    int no_refresh;                  /* nonzero: never ask for refresh tokens (no offline_access) */
    int allow_insecure_http;         /* nonzero: accept http:// authorization servers off loopback
                                        (tests only; loopback http is always accepted) */
} mcp_oauth_opts;

/**
 * An mcp_oauth_authorize_fn for authorization servers that decide without
 * a person (test servers, pre-approved clients): it GETs the
 * authorization URL with libcurl and follows redirects (at most 10, http
 * and https only) until one points at `redirect_uri`, which it returns
 * without visiting. `user_data` is ignored.
 * @return MCP_OK; MCP_ERR_AUTH (the server showed a page instead of
 *         redirecting, or answered with an error status); MCP_ERR_IO;
 *         MCP_ERR_LIMIT (the redirect URL does not fit redirect_cap, or
 *         too many redirects); MCP_ERR_INVALID_ARG.
 * Thread-safety: safe.
 */
MCP_API mcp_status mcp_oauth_authorize_unattended(mcp_client *c, const char *authorization_url,
                                                  const char *redirect_uri, char *redirect_out, size_t redirect_cap,
                                                  void *user_data);

/* Streamable HTTP transport options; zero-initialise. May grow at its end
 * (base.h, "Option structs and the ABI"). */
typedef struct mcp_http_client_opts {
    const char *url;               /* the MCP endpoint, e.g. "http://127.0.0.1:8080/mcp" */
    const char *const *headers;    /* extra request headers, "Name: value", NULL-terminated */
    const char *bearer_token;      /* sent as "Authorization: Bearer ..."; never logged */
    int legacy_sse;                /* 0: Streamable HTTP, falling back to the deprecated HTTP+SSE
                                      transport when a legacy initialize POST gets 4xx;
                                      1: HTTP+SSE only (url names the SSE endpoint) */
    unsigned connect_timeout_ms;   /* TCP/TLS connect limit; 0 = 10000 */
    unsigned max_reconnects;       /* resumption attempts per broken SSE stream; 0 = 5 */
    int no_get_stream;             /* nonzero: do not open the legacy standalone GET stream */
    const mcp_oauth_opts *oauth;   /* OAuth 2.1 authorization on 401 and 403 insufficient_scope
                                      (copied); NULL = none: they fail with MCP_ERR_AUTH */
    int allow_insecure_bearer;     /* nonzero: send bearer_token over plain http:// to a host that
                                      is not loopback; 0 = refuse (MCP_ERR_INVALID_ARG): a token
                                      in clear text on a network can be replayed by anyone on it */
} mcp_http_client_opts;

/* ---- connecting --------------------------------------------------------------- */

/**
 * Starts the server command with pipes on its stdin and stdout, and
 * connects: the era probe or `initialize` (see protocol_version), then
 * `notifications/initialized` for legacy servers.
 *
 * mcp_client_connect_stdio() is a macro over mcp_client_connect_stdio_sized(),
 * which also takes the caller's sizeof(mcp_client_opts) and
 * sizeof(mcp_stdio_client_opts) (base.h, "Option structs and the ABI").
 *
 * @param out receives the client; untouched on failure.
 * @return MCP_OK; MCP_ERR_INVALID_ARG (no argv, bad options, a size of 0
 *         or too small); MCP_ERR_UNSUPPORTED also when an options struct
 *         sets fields this library does not know;
 *         MCP_ERR_IO (the command cannot be started: err->message says why);
 *         MCP_ERR_CLOSED (the server exited during the handshake; its
 *         status and the tail of its stderr in err->message);
 *         MCP_ERR_TIMEOUT; MCP_ERR_PROTOCOL (the server refused the
 *         handshake; err->rpc_code); MCP_ERR_UNSUPPORTED (no protocol
 *         version in common); MCP_ERR_INVALID_MSG; MCP_ERR_NOMEM.
 *         On failure the child, if started, has been ended and reaped.
 * Thread-safety: safe.
 */
MCP_API mcp_status mcp_client_connect_stdio_sized(mcp_client **out, const mcp_client_opts *opts, size_t opts_size,
                                                  const mcp_stdio_client_opts *stdio, size_t stdio_size,
                                                  mcp_error *err);
#define mcp_client_connect_stdio(out, opts, stdio, err) \
    mcp_client_connect_stdio_sized((out), (opts), sizeof(mcp_client_opts), (stdio), sizeof(mcp_stdio_client_opts), \
                                   (err))

/**
 * Connects to a server over Streamable HTTP (libcurl): the era probe (a
 * modern request; a 4xx without a modern JSON-RPC error means legacy) or
 * `initialize`, keeping the legacy session id, the protocol-version header
 * and the standalone GET stream. When the server later forgets the legacy
 * session (404), the client starts a new one and sends the refused
 * requests again (docs/client-http.md, "Legacy sessions").
 * With `http->oauth`, a 401 during the handshake (or later) runs the
 * authorization first (docs/client-http.md, "Authorization").
 * mcp_client_connect_http() is a macro over mcp_client_connect_http_sized(),
 * which also takes the caller's sizeof(mcp_client_opts),
 * sizeof(mcp_http_client_opts) and sizeof(mcp_oauth_opts) (the struct
 * `http->oauth` points to; checked only when it is set) (base.h, "Option
 * structs and the ABI").
 * @return as mcp_client_connect_stdio(); MCP_ERR_IO for network failures;
 *         MCP_ERR_AUTH for 401/403 without oauth, or when the
 *         authorization failed (err->message says why and quotes the
 *         challenge; never a token);
 *         MCP_ERR_INVALID_ARG also for unusable oauth options;
 *         MCP_ERR_LIMIT for an answer over max_message; MCP_ERR_PROTOCOL
 *         also for an HTTP error without a JSON-RPC body (the status in
 *         err->message). See docs/client-http.md.
 * Thread-safety: safe.
 */
MCP_API mcp_status mcp_client_connect_http_sized(mcp_client **out, const mcp_client_opts *opts, size_t opts_size,
                                                 const mcp_http_client_opts *http, size_t http_size,
                                                 size_t oauth_size, mcp_error *err);
#define mcp_client_connect_http(out, opts, http, err) \
    mcp_client_connect_http_sized((out), (opts), sizeof(mcp_client_opts), (http), sizeof(mcp_http_client_opts), \
                                  sizeof(mcp_oauth_opts), (err))

/**
 * Closes the connection and frees the client: new calls fail with
 * MCP_ERR_CLOSED, pending calls fail with MCP_ERR_CLOSED, a legacy HTTP
 * session is ended with DELETE, a stdio server is ended (stdin closed,
 * then SIGTERM, then SIGKILL, each after kill_grace_ms) and reaped.
 * NULL is a no-op.
 * Thread-safety: call once, after every other thread stopped using the
 * client, and never from a client callback.
 */
MCP_API void mcp_client_close(mcp_client *c);

/* ---- what was negotiated ------------------------------------------------------ */

/** The protocol version in use, e.g. "2025-11-25" or "2026-07-28". */
MCP_API const char *mcp_client_protocol_version(const mcp_client *c);

/** Nonzero when the server is spoken to in the 2026-07-28 (stateless) era. */
MCP_API int mcp_client_is_modern(const mcp_client *c);

/** The server's capabilities object (from initialize or server/discover); never NULL. */
MCP_API const mcp_json *mcp_client_server_capabilities(const mcp_client *c);

/** The server's serverInfo object (name, version, ...), or NULL if it sent none. */
MCP_API const mcp_json *mcp_client_server_info(const mcp_client *c);

/** The server's instructions, or NULL. */
MCP_API const char *mcp_client_instructions(const mcp_client *c);

/** The result of the handshake (InitializeResult or DiscoverResult), for display. */
MCP_API const mcp_json *mcp_client_handshake_result(const mcp_client *c);

/* ---- requests ------------------------------------------------------------------ */

/* Per-request options; zero-initialise, or pass NULL for the defaults. May
 * grow at its end (base.h, "Option structs and the ABI"). */
typedef struct mcp_request_opts {
    unsigned timeout_ms;        /* 0 = the client's timeout_ms */
    int progress_resets_timeout; /* nonzero: each progress notification restarts the time limit */
    void (*on_progress)(double progress, double total, const char *message, void *user_data);
                                /* progress of this request (a progressToken is sent when set);
                                   total < 0 when unknown; message may be NULL. Runs on the
                                   reader thread. */
    void *user_data;            /* passed to on_progress */
    uint64_t *handle_out;       /* receives the request's handle before it is sent, for
                                   mcp_client_cancel() from another thread */
    int as_task;                /* mcp_client_call_tool: declare the tasks extension on this call;
                                   when the server answers with a task, poll it until it ends
                                   (docs/client.md, "Tasks") */
    void (*on_task)(const char *task_id, const char *status, const char *message, void *user_data);
                                /* as_task: the task's status when it changes (message may be
                                   NULL); on the caller's thread; `user_data` as on_progress */
    const char *traceparent;    /* W3C trace context sent in the request's _meta (SEP-414), e.g.
                                   from mcp_call_trace(); NULL = none; malformed: MCP_ERR_INVALID_ARG */
    const char *tracestate;     /* and its tracestate (only with a traceparent), or NULL */
} mcp_request_opts;

/* Completion of an asynchronous request; `resp` is the callee's to free (NULL unless a
 * response arrived); `err` is set when st != MCP_OK. Runs on the reader thread, the
 * timer thread or the canceller's thread: return quickly, never block on the client. */
typedef void (*mcp_response_fn)(mcp_client *c, mcp_status st, mcp_response *resp, const mcp_error *err,
                                void *user_data);

/**
 * Sends a request and waits for its response. `params` is a JSON object as
 * text, or NULL for none; the client adds the `_meta` the era needs
 * (2026-07-28: protocol version, capabilities, client info) and a
 * progressToken when on_progress is set. A 2026-07-28 `input_required`
 * result is answered through on_input and retried until the final result.
 *
 * mcp_client_request() is a macro over mcp_client_request_sized(), which
 * also takes the caller's sizeof(mcp_request_opts) right after `ro`; so are
 * mcp_client_request_async() and mcp_client_call_tool() (base.h, "Option
 * structs and the ABI").
 *
 * @param out receives the response when one arrived (also for an error
 *        response); NULL when none did.
 * @return MCP_OK (a result); MCP_ERR_PROTOCOL (a JSON-RPC error response:
 *         err->rpc_code and err->message; *out holds it);
 *         MCP_ERR_TIMEOUT; MCP_ERR_CANCELLED (mcp_client_cancel);
 *         MCP_ERR_CLOSED (connection gone; err->message says why);
 *         MCP_ERR_INVALID_MSG (the server broke the protocol);
 *         MCP_ERR_INVALID_ARG (params is not a JSON object; empty method;
 *         ro_size 0 or too small); MCP_ERR_UNSUPPORTED (ro sets fields this
 *         library does not know);
 *         MCP_ERR_LIMIT (too many input_required rounds); MCP_ERR_NOMEM.
 * Thread-safety: safe; any number of threads may wait at once. Never call
 * it from a client callback.
 */
MCP_API mcp_status mcp_client_request_sized(mcp_client *c, const char *method, const char *params,
                                            const mcp_request_opts *ro, size_t ro_size, mcp_response **out,
                                            mcp_error *err);
#define mcp_client_request(c, method, params, ro, out, err) \
    mcp_client_request_sized((c), (method), (params), (ro), sizeof(mcp_request_opts), (out), (err))

/**
 * Sends a request; `done` is called exactly once with its outcome (the
 * statuses of mcp_client_request). When this returns an error, `done` is
 * never called. A macro over mcp_client_request_async_sized() (see
 * mcp_client_request()).
 * @param handle_out may be NULL; receives the handle for mcp_client_cancel().
 * Thread-safety: safe, also from callbacks.
 */
MCP_API mcp_status mcp_client_request_async_sized(mcp_client *c, const char *method, const char *params,
                                                  const mcp_request_opts *ro, size_t ro_size, mcp_response_fn done,
                                                  void *user_data, uint64_t *handle_out);
#define mcp_client_request_async(c, method, params, ro, done, user_data, handle_out) \
    mcp_client_request_async_sized((c), (method), (params), (ro), sizeof(mcp_request_opts), (done), (user_data), \
                                   (handle_out))

/**
 * Cancels a pending request: its waiter gets MCP_ERR_CANCELLED at once,
 * the server is told (`notifications/cancelled`, or on 2026-07-28 HTTP the
 * response stream is closed), and a late response is dropped.
 * @return MCP_OK; MCP_ERR_NOT_FOUND when the request already completed.
 * Thread-safety: safe, also from callbacks.
 */
MCP_API mcp_status mcp_client_cancel(mcp_client *c, uint64_t handle, const char *reason);

/**
 * Sends a notification (`params` a JSON object as text, or NULL).
 * @return MCP_OK; MCP_ERR_CLOSED; MCP_ERR_INVALID_ARG; MCP_ERR_NOMEM.
 * Thread-safety: safe.
 */
MCP_API mcp_status mcp_client_notify(mcp_client *c, const char *method, const char *params);

/* ---- typed helpers (all as mcp_client_request) ----------------------------------- */

/**
 * Lists every tool, following `nextCursor` to the end; the response's
 * result is `{"tools":[...all pages...]}`. The tools' output schemas are
 * kept so mcp_client_call_tool() can check structuredContent, and their
 * x-mcp-header parameters so 2026-07-28 HTTP requests carry the headers.
 */
MCP_API mcp_status mcp_client_list_tools(mcp_client *c, mcp_response **out, mcp_error *err);

/** Lists every resource (all pages): `{"resources":[...]}`. */
MCP_API mcp_status mcp_client_list_resources(mcp_client *c, mcp_response **out, mcp_error *err);

/** Lists every resource template (all pages): `{"resourceTemplates":[...]}`. */
MCP_API mcp_status mcp_client_list_resource_templates(mcp_client *c, mcp_response **out, mcp_error *err);

/** Lists every prompt (all pages): `{"prompts":[...]}`. */
MCP_API mcp_status mcp_client_list_prompts(mcp_client *c, mcp_response **out, mcp_error *err);

/**
 * Calls a tool. `arguments` is a JSON object as text, or NULL for {}.
 * A result with `isError: true` is still MCP_OK (check
 * mcp_response_is_tool_error). When the tool was listed with an
 * outputSchema, its structuredContent is validated: a mismatch returns
 * MCP_ERR_INVALID with the first violation in err->message (*out is set).
 *
 * With `ro->as_task` the call may run as a task (the tasks extension):
 * when the server answers with one, the client polls tasks/get (at the
 * task's pollIntervalMs), answers its input requests through `on_input`
 * (tasks/update), and returns the task's result as if the call had
 * answered it: a `failed` task is MCP_ERR_PROTOCOL with its error, a
 * task the server cancelled MCP_ERR_CANCELLED. The time limit covers the
 * whole wait; when it passes, or mcp_client_cancel() is called with the
 * handle of `ro->handle_out` (written once, before the request is sent;
 * it names the task as well once the task exists), the client sends
 * tasks/cancel and returns MCP_ERR_TIMEOUT or MCP_ERR_CANCELLED. A cancel
 * that arrives after the server answered with the task but before the
 * client registered its wait is not seen: the call then ends at its time
 * limit or when the task does.
 * A macro over mcp_client_call_tool_sized() (see mcp_client_request()).
 */
MCP_API mcp_status mcp_client_call_tool_sized(mcp_client *c, const char *name, const char *arguments,
                                              const mcp_request_opts *ro, size_t ro_size, mcp_response **out,
                                              mcp_error *err);
#define mcp_client_call_tool(c, name, arguments, ro, out, err) \
    mcp_client_call_tool_sized((c), (name), (arguments), (ro), sizeof(mcp_request_opts), (out), (err))

/** Reads a resource by URI. */
MCP_API mcp_status mcp_client_read_resource(mcp_client *c, const char *uri, mcp_response **out, mcp_error *err);

/** Gets a prompt; `arguments` is a JSON object of strings as text, or NULL. */
MCP_API mcp_status mcp_client_get_prompt(mcp_client *c, const char *name, const char *arguments,
                                         mcp_response **out, mcp_error *err);

/**
 * Asks for completions. `ref` is the reference object as JSON text
 * ({"type":"ref/prompt","name":...} or {"type":"ref/resource","uri":...});
 * `context_args` is a JSON object of already-chosen arguments, or NULL.
 */
MCP_API mcp_status mcp_client_complete(mcp_client *c, const char *ref, const char *arg_name, const char *arg_value,
                                       const char *context_args, mcp_response **out, mcp_error *err);

/** Pings the server (legacy era; 2026-07-28 servers answer -32601). */
MCP_API mcp_status mcp_client_ping(mcp_client *c, mcp_error *err);

#ifdef __cplusplus
}
#endif

#endif /* MCP_CLIENT_H */
