/*
 * libmcp transports: adapters that move frames between a connection
 * (server.h) and the outside world.
 */
#ifndef MCP_TRANSPORT_H
#define MCP_TRANSPORT_H

#include "server.h"

#ifdef __cplusplus
extern "C" {
#endif

/* stdio server options; zero-initialise and set what you need. May grow at
 * its end (base.h, "Option structs and the ABI"). */
typedef struct mcp_stdio_opts {
    int in_fd;          /* frames in; 0 = standard input (fd 0 is the default) */
    int out_fd;         /* frames out; 0 = standard output (1) */
    unsigned grace_ms;  /* at end of input, how long calls in flight may finish; 0 = 5000 */
} mcp_stdio_opts;

/**
 * Serves one MCP connection over stdio: newline-delimited JSON-RPC frames
 * on the input, answers on the output, until the input ends.
 *
 * - A trailing "\r" before the newline is dropped; empty lines are ignored.
 * - A frame longer than the server's max_message is answered with -32600
 *   and skipped up to the next newline; serving continues.
 * - Only protocol frames are written to the output; diagnostics go to the
 *   server's log callback (stderr by default).
 * - Answers leave as they complete, in any order.
 * - At end of input, reading stops; calls in flight (queued or running)
 *   get `grace_ms` to finish (their answers are still written), then the
 *   rest are cancelled, each answered with a -32603 error, so a client
 *   that writes its requests and closes the pipe gets an answer to every
 *   one. Then it returns.
 * - SIGPIPE is set to ignored if it was at its default disposition, so a
 *   client that goes away cannot kill the process; a failed write ends
 *   sending on this connection.
 *
 * Runs on the calling thread (the I/O thread); tool handlers run on the
 * server's workers.
 *
 * mcp_stdio_serve() is a macro over mcp_stdio_serve_sized(), which also
 * takes the caller's sizeof(mcp_stdio_opts) (base.h, "Option structs and
 * the ABI").
 *
 * @param srv  the server; must not be NULL.
 * @param opts options, or NULL for the defaults.
 * @param opts_size sizeof(mcp_stdio_opts) as the caller knows it.
 * @return MCP_OK at end of input (also after a write failure);
 *         MCP_ERR_IO when reading fails; MCP_ERR_INVALID_ARG (also for an
 *         opts_size of 0 or too small); MCP_ERR_UNSUPPORTED (opts sets
 *         fields this library does not know); MCP_ERR_NOMEM.
 * Thread-safety: one call per connection; several may serve different fds.
 */
MCP_API mcp_status mcp_stdio_serve_sized(mcp_server *srv, const mcp_stdio_opts *opts, size_t opts_size);
#define mcp_stdio_serve(srv, opts) mcp_stdio_serve_sized((srv), (opts), sizeof(mcp_stdio_opts))

/* ---- Streamable HTTP server ------------------------------------------------ */

typedef struct mcp_http_server mcp_http_server;

/* HTTP server options; zero-initialise and set what you need. May grow at
 * its end (base.h, "Option structs and the ABI"). */
typedef struct mcp_http_opts {
    const char *host;            /* address to bind; NULL = "127.0.0.1" */
    unsigned port;               /* TCP port; 0 = any free port (see mcp_http_server_port) */
    const char *path;            /* the MCP endpoint; NULL = "/mcp" */
    const char *const *allowed_hosts;   /* NULL-terminated Host values allowed (with or without port);
                                           NULL = localhost, 127.0.0.1, [::1] and the bound host */
    const char *const *allowed_origins; /* NULL-terminated Origin values allowed ("http://x:port" or
                                           "http://x" for any port); NULL = http(s) on the allowed hosts */
    int allow_any_origin;        /* nonzero: skip Host and Origin checks (behind a trusted proxy only) */
    unsigned threads;            /* HTTP threads; 0 = number of cores */
    unsigned max_connections;    /* open TCP connections; 0 = 1024 */
    unsigned max_sessions;       /* legacy sessions; 0 = 1024 */
    unsigned session_idle_ms;    /* legacy sessions expire after this idle time; 0 = 30 minutes */
    unsigned connection_timeout_s; /* idle connections are closed after this, and a request body
                                      (and on a kept-alive connection the next request head) must
                                      be complete within it; 0 = 60 */
    unsigned retry_ms;           /* the SSE `retry` hint (2025-11-25 streams); 0 = 1000 */
    unsigned keepalive_ms;       /* SSE keep-alive comments on waiting streams; 0 = 1000 */
    int legacy_sse;              /* nonzero: also serve the deprecated HTTP+SSE transport
                                    (GET /sse, POST /messages) for 2024-11-05 clients */
    int sessionless;             /* nonzero: keep no legacy sessions; every legacy POST stands alone
                                    (initialize assigns no Mcp-Session-Id; later requests assume
                                    their MCP-Protocol-Version header, default 2025-03-26). Server-
                                    to-client requests, subscriptions and log levels need a session
                                    and are unavailable to legacy clients then. 2026-07-28 requests
                                    are always stateless. */
    mcp_auth *auth;              /* bearer-token authorization (auth.h, docs/auth.md), or NULL for
                                    none; not owned, must outlive the server */
    double rate_per_address;     /* requests per second per client address (token bucket); 0 = off */
    unsigned burst_per_address;  /* that bucket's size; 0 = the rate rounded up (at least 1) */
    double rate_per_subject;     /* requests per second per token subject (with auth); 0 = off */
    unsigned burst_per_subject;  /* that bucket's size; 0 = the rate rounded up (at least 1) */
    const char *tls_cert_file;   /* PEM certificate (chain) to serve https, with tls_key_file; NULL = http */
    const char *tls_key_file;    /* PEM private key, unencrypted */
    unsigned max_sessions_per_address;   /* legacy sessions one client address may hold; 0 = 64 (then 429) */
    unsigned max_sessions_per_principal; /* legacy sessions one principal may hold (with auth); 0 = 64 */
    unsigned max_connections_per_address; /* open TCP connections per client address; 0 = 64 (more are
                                             closed at once) */
    unsigned head_timeout_s;     /* a request head must arrive within this (a connection that stalls
                                    before its head is complete is closed); 0 = 5 */
    size_t max_queue_bytes;      /* SSE bytes one request may hold unsent (its client stopped
                                    reading); 0 = 1 MiB (then its stream is closed) */
    size_t max_replay_bytes;     /* events kept per legacy stream for Last-Event-ID; 0 = 256 KiB
                                    (the oldest are dropped) */
    size_t max_buffer_bytes;     /* all response bytes the server holds (queues and replay);
                                    0 = 32 MiB (over it: streams nobody reads are dropped first) */
    unsigned stream_linger_ms;   /* a legacy stream whose client left is kept this long for
                                    Last-Event-ID; 0 = 60 s */
    unsigned max_requests_per_address;   /* JSON-RPC requests one client address may have waiting for
                                            their answers at once; 0 = 32 (then 429, Retry-After: 1) */
    unsigned max_requests_per_principal; /* the same per principal (with auth); 0 = 32 */
    unsigned max_streams_per_address;    /* open streams (legacy GET and GET /sse, 2026-07-28
                                            subscriptions/listen) per client address; 0 = 16 */
    unsigned max_streams_per_principal;  /* the same per principal (with auth); 0 = 16 */
    const char *health_path;     /* GET or HEAD here answers 200 "ok" (503 once stopping), without
                                    token, Host/Origin checks or rate limit, for load-balancer
                                    health checks (docs/http.md, "Health checks"); NULL = none */
    const char *const *trusted_proxies;  /* NULL-terminated IP addresses of reverse proxies (e.g.
                                            "127.0.0.1", "::1"): a request from one of them counts
                                            as coming from the last X-Forwarded-For hop (the address
                                            the proxy saw) for every per-address limit; NULL = none */
} mcp_http_opts;

/**
 * Starts serving `srv` over Streamable HTTP (both protocol eras on one
 * endpoint) on background threads. See docs/http.md for the rules it
 * enforces: Host/Origin checks (403), body size (413), content type (415),
 * Accept (406), legacy sessions (Mcp-Session-Id; 400 missing, 404
 * unknown), 2026-07-28 header checks (400 with -32020), and stream
 * handling (JSON or SSE per request, resumable legacy streams).
 *
 * With `auth` (docs/auth.md): RFC 9728 metadata at
 * /.well-known/oauth-protected-resource (and with the resource's and the
 * endpoint's path appended), no token needed; every other request needs a
 * valid bearer token (401 with a WWW-Authenticate challenge; 400 for a
 * malformed Authorization header; 503 when the keys cannot be loaded);
 * a request naming a tool, prompt or resource whose `scopes` the token
 * lacks gets 403 insufficient_scope before any handler runs; a legacy
 * session is usable only with tokens of the principal that opened it.
 * When the verifier has no resource URI yet, it gets this server's URL.
 * Rate limits answer 429 with Retry-After. Byte budgets (max_queue_bytes,
 * max_replay_bytes, max_buffer_bytes) close the stream of a client that
 * stops reading and drop replay nobody will ask for (docs/http.md,
 * "Limits"). With tls_cert_file and
 * tls_key_file the server speaks https (libmicrohttpd with GnuTLS). With
 * health_path, GET and HEAD there answer 200 "ok" (503 while stopping)
 * before any other check, for load balancers.
 *
 * mcp_http_server_start() is a macro over mcp_http_server_start_sized(),
 * which also takes the caller's sizeof(mcp_http_opts) (base.h, "Option
 * structs and the ABI").
 *
 * @param out  receives the running server; untouched on failure.
 * @param srv  the MCP server; must outlive the HTTP server.
 * @param opts options, or NULL for the defaults.
 * @param opts_size sizeof(mcp_http_opts) as the caller knows it.
 * @return MCP_OK; MCP_ERR_INVALID_ARG (bad host, path or health_path, only one of the
 *         TLS files, a negative or NaN rate, an opts_size of 0 or too
 *         small); MCP_ERR_IO (the port cannot be bound, a TLS file cannot
 *         be read, or TLS does not start); MCP_ERR_UNSUPPORTED
 *         (libmicrohttpd was built without TLS, or opts sets fields this
 *         library does not know); MCP_ERR_NOMEM.
 * Thread-safety: safe.
 */
MCP_API mcp_status mcp_http_server_start_sized(mcp_http_server **out, mcp_server *srv, const mcp_http_opts *opts,
                                               size_t opts_size, mcp_error *err);
#define mcp_http_server_start(out, srv, opts, err) \
    mcp_http_server_start_sized((out), (srv), (opts), sizeof(mcp_http_opts), (err))

/** The TCP port the server listens on (useful after asking for port 0). */
MCP_API unsigned mcp_http_server_port(const mcp_http_server *hs);

/**
 * Stops gracefully: stops accepting connections, lets calls in flight (of
 * every session and every 2026-07-28 request) finish within one `grace_ms`
 * in all (then cancels them; a handler that ignores cancellation is
 * abandoned, not waited for), ends open streams, and frees the server.
 * @param hs may be NULL (no-op).
 */
MCP_API void mcp_http_server_stop(mcp_http_server *hs, unsigned grace_ms);

/**
 * Serves until SIGINT or SIGTERM, then stops gracefully (5 s grace).
 * Once listening it logs "listening on http(s)://HOST:PORT/PATH" (notice
 * level, through the server's log callback; stderr by default).
 * Installs handlers for those two signals while it runs (restoring the
 * previous ones before it returns); call it from one thread only.
 * mcp_http_serve() is a macro over mcp_http_serve_sized(), which also takes
 * the caller's sizeof(mcp_http_opts) (base.h, "Option structs and the ABI").
 * @return MCP_OK after a signal, or the error of mcp_http_server_start().
 */
MCP_API mcp_status mcp_http_serve_sized(mcp_server *srv, const mcp_http_opts *opts, size_t opts_size,
                                        mcp_error *err);
#define mcp_http_serve(srv, opts, err) mcp_http_serve_sized((srv), (opts), sizeof(mcp_http_opts), (err))

/**
 * Parses "[HOST:]PORT" (HOST may be "[v6]") into opts->host and
 * opts->port. The host string points into `host_buf`, which must outlive
 * opts. mcp_http_parse_listen() is a macro over
 * mcp_http_parse_listen_sized(), which also takes the caller's
 * sizeof(mcp_http_opts) and writes only fields within it (base.h, "Option
 * structs and the ABI").
 * @return MCP_OK or MCP_ERR_INVALID_ARG (also for an opts_size of 0 or too small).
 */
MCP_API mcp_status mcp_http_parse_listen_sized(const char *spec, mcp_http_opts *opts, size_t opts_size,
                                               char *host_buf, size_t host_buf_len);
#define mcp_http_parse_listen(spec, opts, host_buf, host_buf_len) \
    mcp_http_parse_listen_sized((spec), (opts), sizeof(mcp_http_opts), (host_buf), (host_buf_len))

/* ---- metrics listener (Prometheus) ------------------------------------------ */

typedef struct mcp_metrics_server mcp_metrics_server;

/**
 * Serves the server's metrics (mcp_server_metrics_text(), server.h) at
 * GET /metrics on a listener of its own, in the Prometheus text exposition
 * format 0.0.4, and starts counting calls per tool
 * (mcp_server_metrics_enable()). No token is asked for: bind it to an
 * address only the scraper reaches (docs/server.md, "Metrics"). One
 * thread, at most 16 connections; other paths get 404, other methods 405.
 *
 * @param out    receives the listener; untouched on failure.
 * @param srv    the server; must outlive the listener.
 * @param listen "[HOST:]PORT" (HOST an IP literal or "localhost"; default
 *               127.0.0.1; port 0 picks a free one, see
 *               mcp_metrics_server_port()).
 * @return MCP_OK; MCP_ERR_INVALID_ARG (NULL argument, a spec that is not
 *         [HOST:]PORT, a host that is not an IP address); MCP_ERR_IO (the
 *         port cannot be bound); MCP_ERR_NOMEM.
 * Thread-safety: safe.
 */
MCP_API mcp_status mcp_metrics_server_start(mcp_metrics_server **out, mcp_server *srv, const char *listen,
                                            mcp_error *err);

/** The TCP port the metrics listener bound; 0 for NULL. */
MCP_API unsigned mcp_metrics_server_port(const mcp_metrics_server *ms);

/**
 * Stops the listener (a scrape in progress finishes first) and frees it.
 * Counting goes on. @param ms may be NULL (no-op).
 */
MCP_API void mcp_metrics_server_stop(mcp_metrics_server *ms);

#ifdef __cplusplus
}
#endif

#endif /* MCP_TRANSPORT_H */
