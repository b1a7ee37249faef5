/*
 * Between the client core (client.c) and its transports
 * (transport/stdio_client.c, transport/http_client.c). Internal to libmcp.
 *
 * The core is sans-I/O like the server's connection: it builds frames and
 * hands them to the transport's `send`; the transport delivers every frame
 * that arrives through mcp__client_on_frame(), a failure of one request
 * through mcp__client_on_request_failed(), and the end of the connection
 * through mcp__client_on_closed(). Those three may be called from any one
 * transport thread at a time; the core never calls back into the transport
 * while holding its own locks.
 */
#ifndef MCP_CLIENT_INTERNAL_H
#define MCP_CLIENT_INTERNAL_H

#include "mcp/client.h"

#include <stddef.h>
#include <stdint.h>

/* One outgoing message, with what an HTTP transport needs for its headers. */
typedef struct mcp__out {
    const char *frame;          /* the JSON-RPC message, one line, no newline */
    size_t len;
    mcp_rpc_kind kind;          /* request, notification or response */
    uint64_t id;                /* a request's wire id (always a number); 0 otherwise */
    const char *method;         /* request or notification method; NULL for responses */
    const char *name;           /* Mcp-Name value (tools/call and prompts/get name,
                                   resources/read uri), or NULL; modern requests only */
    const char *const *param_headers; /* "Mcp-Param-X: value" lines (value already encoded),
                                   NULL-terminated, or NULL; modern tools/call only */
    const char *version;        /* MCP-Protocol-Version to send; NULL before a legacy
                                   initialize has negotiated one */
    int modern;                 /* 2026-07-28 request: stateless, no session header */
    int is_initialize;          /* the legacy initialize request (HTTP: keep the session id
                                   from its response; may fall back to HTTP+SSE) */
    int no_replay;              /* the transport must never send it again on its own (a
                                   tools/call: the core decides; libcurl would otherwise repeat
                                   a POST whose reused connection closed without an answer) */
} mcp__out;

typedef struct mcp__ctransport mcp__ctransport;

/* What a transport implements. */
typedef struct mcp__ctransport_ops {
    /* Sends one message. MCP_OK; MCP_ERR_CLOSED when the connection is
     * gone, in which case the transport has called or will soon call
     * mcp__client_on_closed() with the reason (that fails the request);
     * any other status fails the request at once. */
    mcp_status (*send)(mcp__ctransport *t, const mcp__out *msg);
    /* The request `id` was cancelled or timed out. Returns 1 when the
     * transport told the server itself (2026-07-28 HTTP: the stream is
     * closed), 0 when the core should send notifications/cancelled. */
    int (*cancel)(mcp__ctransport *t, uint64_t id, int modern);
    /* The handshake settled (legacy: after notifications/initialized was
     * sent): HTTP opens the standalone GET stream here. May be NULL. */
    void (*ready)(mcp__ctransport *t, const char *version, int modern);
    /* Ends the connection (no more callbacks after it returns) and frees
     * the transport. */
    void (*close)(mcp__ctransport *t);
} mcp__ctransport_ops;

/* Embed first in each transport's own struct. */
struct mcp__ctransport {
    const mcp__ctransport_ops *ops;
    mcp_client *client; /* set by the core before the transport starts */
};

/*
 * Creates a client around a transport that is ready to send (and whose
 * reader may already deliver), runs the handshake and returns it. Takes
 * `t`: on failure it has been closed.
 */
mcp_status mcp__client_start(mcp_client **out, const mcp_client_opts *opts, mcp__ctransport *t,
                             mcp_error *err);

/*
 * Creates the client object only (no handshake), so a transport can be
 * wired to it before reading starts. mcp__client_handshake() finishes.
 */
mcp_status mcp__client_new(mcp_client **out, const mcp_client_opts *opts, mcp_error *err);
void mcp__client_attach(mcp_client *c, mcp__ctransport *t);
mcp_status mcp__client_handshake(mcp_client *c, mcp_error *err);

/* A whole frame from the server (one JSON-RPC message or a batch). */
void mcp__client_on_frame(mcp_client *c, const char *data, size_t len);

/*
 * One request failed at the transport level (HTTP: a status without a
 * JSON-RPC body, a broken stream that cannot be resumed). `st` is the
 * status the caller sees: MCP_ERR_IO, MCP_ERR_AUTH, MCP_ERR_CLOSED,
 * MCP_ERR_PROTOCOL (an HTTP 4xx/5xx; `http_status` says which).
 */
void mcp__client_on_request_failed(mcp_client *c, uint64_t id, mcp_status st, int http_status,
                                   const char *message);

/*
 * Request `id` was refused with HTTP 401 or 403; `challenge` is the
 * WWW-Authenticate value(s) (NULL when none), `message` what the caller
 * sees when it is not retried. With an OAuth session (mcp__client_set_oauth)
 * the core authorizes on its pool and sends the request again; otherwise
 * (or after too many attempts) the request fails with MCP_ERR_AUTH.
 */
void mcp__client_on_auth_failed(mcp_client *c, uint64_t id, int http_status, const char *challenge,
                                const char *message);

/*
 * Legacy request `id` was refused with HTTP 404 although it carried a
 * session id: the server no longer knows the session. The core starts a
 * new one on its pool (initialize, which the transport must send without
 * the old id, keeping the id of its answer; then ready() again) and sends
 * the request again; `message` is what the caller sees when it gives up.
 */
void mcp__client_on_session_gone(mcp_client *c, uint64_t id, const char *message);

/* Replaces the bearer token every later request of the transport carries. */
typedef void (*mcp__set_token_fn)(mcp__ctransport *t, const char *token);

struct mcp__oauth;
/*
 * Gives the client its OAuth session (taken; freed by mcp_client_close),
 * before the handshake. `set_token` installs a new token in the transport:
 * the core calls it with its own lock held, so it must not call into the
 * core (the HTTP transport takes only its own lock).
 */
void mcp__client_set_oauth(mcp_client *c, struct mcp__oauth *o, mcp__set_token_fn set_token);

/* The connection is gone: every pending request fails with `st` and `message`. */
void mcp__client_on_closed(mcp_client *c, mcp_status st, const char *message);

/* Diagnostics through the client's log callback. */
void mcp__client_log(mcp_client *c, mcp_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The client's limit on one incoming frame. */
size_t mcp__client_max_message(const mcp_client *c);

/* "=?base64?...?=": text that cannot travel plain as an SEP-2243 header
 * value, in padded base64. NULL when out of memory; free with mcp_free. */
char *mcp__client_header_b64(const char *s, size_t n);

#endif /* MCP_CLIENT_INTERNAL_H */
