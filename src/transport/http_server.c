/*
 * Streamable HTTP server transport on libmicrohttpd.
 *
 * One endpoint serves both protocol eras:
 *   - 2026-07-28 (a request whose params._meta names a protocol version):
 *     stateless. Each POST gets its own short-lived connection object whose
 *     frames all belong to that POST's response.
 *   - legacy: `initialize` opens a session (Mcp-Session-Id); later POSTs,
 *     the GET stream and DELETE name it. The session's connection routes
 *     each frame to the POST of the request it belongs to, session traffic
 *     to the GET stream.
 *
 * A response starts as late as possible: when the first frame for a POST
 * is its final answer, the reply is a single application/json body; when a
 * notification comes first (progress, logs, legacy server requests), or
 * the answer takes longer than a keep-alive period, it becomes a
 * text/event-stream. Waiting requests are suspended in libmicrohttpd and
 * resumed by the thread that routes the next frame. Streams that wait get
 * keep-alive comments, so a client that went away is noticed (and, in
 * 2026-07-28, its request cancelled).
 *
 * Legacy SSE streams carry event ids "<stream>_<seq>" and start with a
 * priming event and a retry hint (SEP-1699); their events are kept per
 * session (bounded in bytes), so a client that lost the stream resumes it
 * with GET and Last-Event-ID, the standalone GET stream included; a
 * stream whose client left is released after stream_linger_ms.
 *
 * With an mcp_auth (docs/auth.md) every request must carry a bearer token,
 * checked when its headers arrive (401, or 400 for a malformed header);
 * the principal rides along with the request into dispatch. The scopes
 * the named tool, prompt or resource needs are checked once the body is
 * read (403), so a refused request never reaches a handler. The RFC 9728
 * metadata is served without a token. Token buckets per client address
 * (before anything else) and per token subject answer 429.
 *
 * Against one client shutting the others out (docs/http.md, "Limits"):
 * libmicrohttpd caps connections per address; a connection's first
 * request head must arrive within head_timeout_s (a short libmicrohttpd
 * timeout until then, plus the ticker's sweep of late heads); legacy
 * sessions are counted per address and per principal (429), and at the
 * server-wide cap the biggest holder's least recently used idle session
 * makes room; so are requests in flight and open streams (429,
 * http_quota.c). Response bytes are budgeted, not counted: unsent SSE bytes
 * per request (a client that stops reading loses its stream), replay
 * bytes per legacy stream, and their sum over the server (hs->buffered),
 * which the ticker brings back under max_buffer_bytes by dropping what
 * nobody reads first (budget_sweep_locked).
 */
#include "auth/auth_internal.h"
#include "json/json_internal.h"
#include "util/abi.h"
#include "util/util.h"
#include "server/server_internal.h"
#include "mcp/transport.h"
#include "transport/http_internal.h"
#include "util/crypto_api.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_PATH "/mcp"
#define DEFAULT_MAX_CONNECTIONS 1024u
#define DEFAULT_MAX_SESSIONS 1024u
#define DEFAULT_SESSION_IDLE_MS (30u * 60u * 1000u)
#define DEFAULT_CONN_TIMEOUT_S 60u
#define DEFAULT_RETRY_MS 1000u
#define DEFAULT_KEEPALIVE_MS 1000u
#define DEFAULT_SESSIONS_PER_ADDRESS 64u
#define DEFAULT_SESSIONS_PER_PRINCIPAL 64u
#define DEFAULT_CONNECTIONS_PER_ADDRESS 64u
#define DEFAULT_HEAD_TIMEOUT_S 5u
#define DEFAULT_QUEUE_BYTES (1u << 20)  /* unsent SSE bytes one request may hold */
#define DEFAULT_REPLAY_BYTES (256u << 10) /* events kept per legacy stream for Last-Event-ID */
#define DEFAULT_BUFFER_BYTES (32u << 20) /* every buffered response byte of the server */
#define DEFAULT_STREAM_LINGER_MS 60000u /* a stream whose client left waits this long for it */
#define DEFAULT_REQUESTS_PER_CLIENT 32u /* requests in flight per client address, and per principal */
#define DEFAULT_STREAMS_PER_CLIENT 16u  /* open streams (GET, listen) per client address, and per principal */
/* libmicrohttpd's memory per connection (its default is 32 KiB): the
 * request head is read into it (a bigger head gets 431) and the response
 * head written from it; bodies go past it. Resident for every open
 * connection, so 64 keep-alive connections hold 1 MiB instead of 2. */
#define CONNECTION_MEMORY (16u << 10)
#define IN_FLIGHT_RETRY_S 1u            /* Retry-After when over those */
#define AUTH_THREADS 4u                 /* token checks waiting on the authorization server at once */
#define AUTH_QUEUE 64u                  /* and queued behind them (then 503) */
#define OFFENDER_MIN_BYTES (64u << 10)  /* over the server's budget, a request holding more
                                           unsent bytes than this is closed on its next event */
#define MAX_REPLAY_EVENTS 256u          /* kept per legacy stream for Last-Event-ID (and bytes, above) */
#define MAX_STREAMS_PER_SESSION 256u    /* resumable streams kept per session */

/* For bench/http only (bench_http_server_noacct, never a library build):
 * MCP_BENCH_NO_ACCOUNTING compiles out what the server counts per client
 * and per byte (the quotas on sessions, requests and streams, the
 * per-address connection cap, the byte accounting behind max_buffer_bytes
 * and the pool flows), so that its cost per call can be measured. */
#ifdef MCP_BENCH_NO_ACCOUNTING
#define ACCOUNTING 0
#else
#define ACCOUNTING 1
#endif

/* ------------------------------------------------------------------------ */
/* Types                                                                     */

typedef struct frame {
    struct frame *next; /* queue order */
    char *data;         /* an SSE event or a JSON body, ready to write */
    size_t len;         /* its length */
    size_t off;         /* bytes already written */
} frame;

typedef struct session session;
typedef struct stream stream;
typedef struct hreq hreq;
typedef struct hconn hconn;

/* An event kept for replay on a legacy stream. */
typedef struct event {
    uint64_t seq;       /* its number in the stream */
    char *text;         /* the whole SSE event */
    size_t len;         /* its length */
} event;

/* A legacy SSE stream: one POST's response, or the standalone GET stream. */
struct stream {
    stream *next;       /* session's streams */
    uint64_t id;        /* stream number: event ids are "<id>_<seq>" */
    mcp_rpc_id req;     /* the request it answers (MCP_RPC_ID_NONE for the GET stream) */
    char *req_str;      /* owned copy of a string request id */
    uint64_t seq;       /* last event number */
    event *events;      /* recent events, oldest first (ring of MAX_REPLAY_EVENTS) */
    size_t nevents;     /* how many kept */
    size_t first;       /* ring start */
    size_t rbytes;      /* bytes of the kept events (counted in hs->buffered) */
    int final;          /* the request's response is among the events */
    hreq *attached;     /* the HTTP request delivering it now, or NULL */
    uint64_t detached;  /* monotonic ms when its last request left (0 while attached or new) */
};

/* A legacy session (Mcp-Session-Id). */
struct session {
    session *next;       /* server's sessions */
    char id[40];         /* 32 hex characters */
    mcp_conn *conn;      /* the session's protocol engine */
    mcp_http_server *hs; /* owner */
    pthread_mutex_t mu;  /* guards streams, pending, current */
    stream *streams;     /* resumable streams */
    uint64_t next_stream; /* stream numbers */
    hreq *pending;       /* POSTs waiting for answers (by request id) */
    hreq *current;       /* the POST being dispatched on the I/O thread */
    hreq *get;           /* the request delivering the standalone GET stream, or NULL */
    stream *get_st;      /* that stream (kept after its request left, for Last-Event-ID), or NULL */
    int refs;            /* requests using it + the table (under hs->mu) */
    int closed;          /* DELETEd or expired: unknown from now on */
    hreq *sse;           /* HTTP+SSE (2024-11-05) transport: the GET /sse stream, or NULL */
    uint64_t last_used;  /* monotonic ms */
    char owner[MCP__PRINCIPAL_KEY_SIZE]; /* with authorization: the principal that opened it (mcp__principal_key) */
    char addr[64];       /* the client address that opened it (client_key), for the per-address quota */
};

enum { MODE_NONE = 0, MODE_JSON, MODE_SSE };

/* One HTTP request. */
struct hreq {
    mcp_http_server *hs;        /* the server */
    struct MHD_Connection *mc;  /* libmicrohttpd's connection */
    pthread_mutex_t mu;         /* guards the fields below the line */
    int refs;                   /* libmicrohttpd + the ticker list */
    int method;                 /* HTTP method (M_*) */
    mcp_buf body;               /* POST body */
    int too_big;                /* the body passed the limit */
    int modern;                 /* 2026-07-28 request */
    session *sess;              /* legacy session (a reference), or NULL */
    mcp_conn *conn;             /* own connection (modern), else the session's */
    mcp_rpc_id id;              /* the JSON-RPC request id */
    char *id_str;               /* owned copy of a string id */
    int is_request;             /* the POST carries a request (else 202) */
    int legacy_path;            /* HTTP+SSE transport: 1 = GET /sse, 2 = POST /messages */
    int accept_json;            /* Accept allows application/json */
    int accept_sse;             /* Accept allows text/event-stream */
    char new_session[40];       /* Mcp-Session-Id to return (initialize), or "" */
    hreq *pending_next;         /* session's pending list */
    hreq *active_next;          /* server's list for keep-alives */
    hreq **active_pprev;        /* the link pointing at this one, for O(1) removal */
    int on_active;              /* in that list (set and cleared with hs->mu and mu held) */
    uint64_t started;           /* monotonic ms */
    mcp_principal *principal;   /* the verified token's principal (authorization on), or NULL */
    /* ---- guarded by mu ---- */
    frame *head, *tail;         /* SSE bytes waiting to be written */
    char *final_json;           /* the final response while still undecided (JSON mode) */
    size_t final_len;           /* its length */
    int final_status;           /* HTTP status for it */
    int got_final;              /* the final frame was routed */
    int mode;                   /* MODE_* */
    int queued;                 /* a response was queued with libmicrohttpd */
    int suspended;              /* libmicrohttpd connection suspended */
    int ended;                  /* libmicrohttpd finished with the request */
    int close_stream;           /* end the SSE stream without a final (SEP-1699) */
    stream *st;                 /* the legacy stream this request delivers, or NULL */
    uint64_t last_write;        /* monotonic ms of the last bytes queued */
    size_t qbytes;              /* bytes in head..tail (counted in hs->buffered) */
    int overflow;               /* closed for holding too many unsent bytes: nothing more is queued */
    int fd;                     /* the connection's socket (valid while !ended) */
    hconn *hc;                  /* the connection's deadline record, or NULL */
    char addr[64];              /* the client's address as a quota key (client_key), "" when unknown */
    int held;                   /* HOLD_*: what it counts in hs->quota until it ends */
    int auth_state;             /* AUTH_*: a token checked off the network threads (under mu) */
    mcp_status auth_st;         /* that check's outcome, once AUTH_DONE */
    mcp_auth_error auth_why;
    char auth_msg[256];
    int answered;               /* refused after its token check: nothing more to do */
};

enum { AUTH_NONE = 0, AUTH_WAITING, AUTH_DONE };

/* What a request holds in the quotas of its address and principal. */
enum { HOLD_NONE = 0, HOLD_REQUEST = 'r', HOLD_STREAM = 's' };

enum { M_OTHER = 0, M_POST, M_GET, M_DELETE, M_OPTIONS };

/* What a connection is waiting for from its client, with a deadline. */
enum { PH_HEAD = 0, PH_BODY, PH_NONE, PH_NEXT, PH_LATE };

/* A TCP connection: the ticker closes it when its client is late with the
 * first request head (head_timeout_s), a request body, or the next request
 * head on a kept-alive connection (connection_timeout_s each), however the
 * bytes trickle in (slowloris). */
struct hconn {
    hconn *next, *prev;  /* server's list (under conns_mu) */
    int fd;              /* its socket, noted on libmicrohttpd's thread */
    int phase;           /* PH_*: what it waits for (PH_NONE: the server is answering) */
    uint64_t deadline;   /* monotonic ms by which that must have arrived */
};

struct mcp_http_server {
    mcp_server *srv;              /* the MCP server */
    struct MHD_Daemon *mhd;       /* libmicrohttpd */
    char *path;                   /* endpoint */
    char *health_path;            /* health check path, or NULL */
    char **hosts;                 /* allowed Host names (no port), NULL-terminated */
    char **origins;               /* allowed Origins, NULL-terminated */
    int any_origin;               /* checks off */
    unsigned port;                /* bound port */
    unsigned max_sessions;        /* limit */
    unsigned sessions_per_address; /* quota per client address */
    unsigned sessions_per_principal; /* quota per principal (with authorization) */
    unsigned head_timeout_s;      /* a request head must arrive within this */
    unsigned conn_timeout_s;      /* idle connections are closed after this */
    pthread_mutex_t conns_mu;     /* guards conns */
    hconn *conns;                 /* open TCP connections */
    unsigned session_idle_ms;     /* expiry */
    unsigned retry_ms;            /* SSE retry hint */
    unsigned keepalive_ms;        /* SSE keep-alive period */
    unsigned request_timeout_s;   /* longest time a request body may take to arrive */
    int legacy_sse;               /* HTTP+SSE (2024-11-05) transport on */
    int sessionless;              /* legacy requests without sessions */
    pthread_mutex_t mu;           /* guards sessions, active, stopping */
    pthread_cond_t cv;            /* wakes the ticker */
    session *sessions;            /* legacy sessions */
    unsigned nsessions;           /* how many */
    hreq *active;                 /* requests waiting or streaming */
    int stopping;                 /* no new work */
    pthread_t ticker;             /* keep-alives, upgrades to SSE, session expiry */
    int ticker_started;           /* the thread exists */
    mcp_auth *auth;               /* token verifier, or NULL (not owned) */
    char *prm_paths[3];           /* where the RFC 9728 metadata is served (NULL-padded) */
    size_t queue_cap;             /* unsent SSE bytes per request */
    size_t replay_cap;            /* replay bytes per legacy stream */
    size_t budget;                /* all buffered response bytes of the server */
    unsigned linger_ms;           /* detached legacy streams are released after this */
    size_t buffered;              /* bytes held now: SSE queues, replay events (atomic) */
    mcp__ratelimit *rl_addr;      /* per client address, or NULL */
    mcp__ratelimit *rl_subject;   /* per token subject, or NULL */
    mcp__quota *quota;            /* requests in flight and open streams per address and principal */
    struct proxy_addr *proxies;   /* trusted reverse proxies */
    size_t nproxies;              /* how many */
    mcp__pool *auth_pool;         /* checks tokens that may wait on the network (introspection, a
                                     key fetch) off the network threads; NULL without auth */
    unsigned requests_per_address; /* quotas on them */
    unsigned requests_per_principal;
    unsigned streams_per_address;
    unsigned streams_per_principal;
    uint64_t quota_logged;        /* (atomic) monotonic ms of the last quota refusal logged (one a second) */
    uint64_t budget_logged;       /* (atomic) the same for refusals over max_buffer_bytes */
    uint64_t auth_logged;         /* (atomic) the same for a full auth pool */
    int tls;                      /* serving https */
    char *tls_cert;               /* PEM kept for libmicrohttpd while it runs */
    char *tls_key;
};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */

static const char *header(struct MHD_Connection *mc, const char *name)
{
    return MHD_lookup_connection_value(mc, MHD_HEADER_KIND, name);
}

static struct MHD_Response *text_response(const char *body, size_t len, const char *type)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (r && type)
        MHD_add_response_header(r, "Content-Type", type);
    return r;
}

static enum MHD_Result queue(struct MHD_Connection *mc, unsigned status, struct MHD_Response *r)
{
    if (!r)
        return MHD_NO;
    enum MHD_Result ok = MHD_queue_response(mc, status, r);
    MHD_destroy_response(r);
    return ok;
}

/*
 * Queues the JSON body `w` wrote into `b` as the response, with a
 * WWW-Authenticate challenge when `www` is not NULL and a Retry-After
 * header when retry_after is not 0; b is cleaned up. MHD_NO when the body
 * could not be written or queued.
 */
static enum MHD_Result queue_json(struct MHD_Connection *mc, unsigned status, mcp_jw *w, mcp_buf *b, const char *www,
                                  unsigned retry_after)
{
    enum MHD_Result res = MHD_NO;
    if (mcp_jw_finish(w) == MCP_OK) {
        struct MHD_Response *resp = text_response(b->data, b->len, "application/json");
        if (resp && www) {
            MHD_add_response_header(resp, "WWW-Authenticate", www);
            MHD_add_response_header(resp, "Access-Control-Expose-Headers", "WWW-Authenticate");
        }
        if (resp && retry_after) {
            char ra[16];
            snprintf(ra, sizeof ra, "%u", retry_after);
            MHD_add_response_header(resp, "Retry-After", ra);
        }
        res = queue(mc, status, resp);
    }
    mcp_buf_cleanup(b);
    return res;
}

/* A JSON-RPC error as the whole body of an HTTP error response, with a Retry-After header unless retry_after
 * is 0 (429, 503). */
static enum MHD_Result reply_rpc_retry(struct MHD_Connection *mc, unsigned status, const mcp_rpc_id *id, int code,
                                       const char *message, unsigned retry_after)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_write_error(&w, id, code, message, NULL);
    return queue_json(mc, status, &w, &b, NULL, retry_after);
}

/* The same without Retry-After. */
static enum MHD_Result reply_rpc_error(struct MHD_Connection *mc, unsigned status, const mcp_rpc_id *id, int code,
                                       const char *message)
{
    return reply_rpc_retry(mc, status, id, code, message, 0);
}

static enum MHD_Result reply_plain(struct MHD_Connection *mc, unsigned status, const char *text)
{
    return queue(mc, status, text_response(text, strlen(text), "text/plain; charset=utf-8"));
}

/* Does a comma-separated header value (Accept) contain `type` (or a wildcard)? */
int mcp__http_accepts(const char *value, const char *type)
{
    if (!value)
        return 1; /* no Accept header: anything goes */
    size_t tl = strlen(type);
    const char *slash = strchr(type, '/');
    for (const char *p = value; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',' && *e != ';')
            e++;
        size_t n = (size_t)(e - p);
        while (n && p[n - 1] == ' ')
            n--;
        if ((n == tl && strncasecmp(p, type, tl) == 0) || (n == 3 && strncmp(p, "*/*", 3) == 0) ||
            (slash && n == (size_t)(slash - type) + 2 && strncasecmp(p, type, (size_t)(slash - type) + 1) == 0 &&
             p[n - 1] == '*'))
            return 1;
        while (*e && *e != ',')
            e++;
        p = e;
    }
    return 0;
}

/* Host without port: "[::1]:8080" -> "[::1]", "localhost:1" -> "localhost". */
size_t mcp__http_host_part(const char *h, char *out, size_t cap)
{
    size_t n;
    if (h[0] == '[') {
        const char *close = strchr(h, ']');
        n = close ? (size_t)(close - h) + 1 : strlen(h);
    } else {
        const char *colon = strchr(h, ':');
        n = colon ? (size_t)(colon - h) : strlen(h);
    }
    if (n >= cap)
        return 0;
    for (size_t i = 0; i < n; i++)
        out[i] = (char)(h[i] >= 'A' && h[i] <= 'Z' ? h[i] + 32 : h[i]);
    out[n] = '\0';
    return n;
}

/* A host as compared: "[::1]:8080" -> "[::1]", "Example.COM.:80" ->
 * "example.com" (no port, lower case, no trailing dot); a bare IPv6 address
 * ("::1") gets its brackets. 0 when it does not fit or is empty. */
static size_t norm_host(const char *h, char *out, size_t cap)
{
    size_t n;
    if (h[0] != '[' && strchr(h, ':') && strchr(h, ':') != strrchr(h, ':')) {
        char b[300];
        if ((size_t)snprintf(b, sizeof b, "[%s]", h) >= sizeof b)
            return 0;
        n = mcp__http_host_part(b, out, cap);
    } else {
        n = mcp__http_host_part(h, out, cap);
    }
    if (n > 1 && out[n - 1] == '.')
        out[--n] = '\0';
    return n;
}

static int host_allowed(const mcp_http_server *hs, const char *host)
{
    char h[256];
    if (!host || !norm_host(host, h, sizeof h))
        return 0;
    for (char **p = hs->hosts; *p; p++)
        if (strcmp(*p, h) == 0)
            return 1;
    return 0;
}

/* An origin "scheme://host[:port]" in parts: the scheme and host in lower
 * case, the host without a trailing dot, *port -1 when there is none.
 * 0 for anything else ("null", a path, a bad port). */
static int parse_origin(const char *o, char *scheme, size_t scap, char *host, size_t hcap, long *port)
{
    const char *sep = strstr(o, "://");
    if (!sep || sep == o || (size_t)(sep - o) >= scap)
        return 0;
    for (size_t i = 0; o + i < sep; i++) {
        char c = o[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '+' ||
              c == '-' || c == '.'))
            return 0;
        scheme[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    scheme[sep - o] = '\0';
    const char *h = sep + 3, *end;
    if (h[0] == '[') {
        const char *close = strchr(h, ']');
        if (!close)
            return 0;
        end = close + 1;
    } else {
        end = h + strcspn(h, ":/?#@");
    }
    size_t n = (size_t)(end - h);
    if (n == 0 || n >= hcap)
        return 0;
    for (size_t i = 0; i < n; i++)
        host[i] = (char)(h[i] >= 'A' && h[i] <= 'Z' ? h[i] + 32 : h[i]);
    host[n] = '\0';
    if (n > 1 && host[n - 1] == '.')
        host[--n] = '\0';
    *port = -1;
    if (*end == ':') {
        const char *d = end + 1;
        long v = 0;
        size_t k = 0;
        for (; d[k] >= '0' && d[k] <= '9' && k < 6; k++)
            v = v * 10 + (d[k] - '0');
        if (k == 0 || d[k] != '\0' || v < 1 || v > 65535)
            return 0;
        *port = v;
    } else if (*end != '\0') {
        return 0;
    }
    return 1;
}

static long default_port(const char *scheme)
{
    return !strcmp(scheme, "http") ? 80 : !strcmp(scheme, "https") ? 443 : -1;
}

/* "http://x" allows any port of x; "http://x:8080" that port only, and
 * "http://x:80" also "http://x". Names compare without case or a trailing
 * dot. An entry that is no scheme://host ("null") must match whole. */
static int origin_allowed(const mcp_http_server *hs, const char *origin)
{
    if (!origin)
        return 1; /* no Origin: not a browser request */
    char s[32], h[256];
    long port;
    int parsed = parse_origin(origin, s, sizeof s, h, sizeof h, &port);
    if (parsed && port < 0)
        port = default_port(s);
    for (char **p = hs->origins; *p; p++) {
        char ps[32], ph[256];
        long pport;
        if (!parse_origin(*p, ps, sizeof ps, ph, sizeof ph, &pport)) {
            if (strcasecmp(*p, origin) == 0)
                return 1;
            continue;
        }
        if (!parsed || strcmp(s, ps) != 0 || strcmp(h, ph) != 0)
            continue;
        if (pport < 0 || pport == port)
            return 1;
    }
    return 0;
}

static void copy_id(const mcp_rpc_id *in, mcp_rpc_id *out, char **owned)
{
    *out = *in;
    *owned = NULL;
    if (in->type == MCP_RPC_ID_STRING) {
        *owned = mcp__strndup(in->str, in->len);
        out->str = *owned ? *owned : "";
        if (!*owned)
            out->len = 0;
    }
}


/* ------------------------------------------------------------------------ */
/* Authorization and rate limits                                             */

/* The client's address as a rate-limit key: IPv4 whole, IPv6 by its /64
 * (one host usually holds a whole /64). "" when unknown. */
static void client_key(struct MHD_Connection *mc, char *out, size_t cap)
{
    out[0] = '\0';
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr)
        return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)cap);
    } else if (sa->sa_family == AF_INET6) {
        struct in6_addr a = ((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (!IN6_IS_ADDR_V4MAPPED(&a))
            memset(a.s6_addr + 8, 0, 8);
        inet_ntop(AF_INET6, &a, out, (socklen_t)cap);
    }
}

/* A trusted proxy's address (mcp_http_opts.trusted_proxies). */
struct proxy_addr {
    int family;              /* AF_INET or AF_INET6 */
    unsigned char a[16];     /* the address (4 bytes for AF_INET) */
};

#define XFF_MAX 1024u /* longest X-Forwarded-For value looked at */

/* One number of an event id at *p: digits up to `stop`, as %llu writes them. */
static int event_id_part(const char **p, char stop, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    size_t n = 0;
    for (; s[n] >= '0' && s[n] <= '9'; n++) {
        unsigned d = (unsigned)(s[n] - '0');
        if (v > (UINT64_MAX - d) / 10u)
            return 0; /* past 64 bits */
        v = v * 10u + d;
    }
    if (n == 0 || (n > 1 && s[0] == '0') || s[n] != stop)
        return 0;
    *out = v;
    *p = s + n + (stop ? 1 : 0);
    return 1;
}

int mcp__http_event_id(const char *value, uint64_t *stream_no, uint64_t *seq)
{
    uint64_t a, b;
    if (!value || !event_id_part(&value, '_', &a) || !event_id_part(&value, '\0', &b))
        return 0;
    *stream_no = a;
    *seq = b;
    return 1;
}

int mcp__http_forwarded_for(const char *value, char *out, size_t cap)
{
    if (!value)
        return 0;
    size_t n = strnlen(value, XFF_MAX + 1);
    if (n > XFF_MAX)
        return 0;
    const char *hop = memrchr(value, ',', n);
    hop = hop ? hop + 1 : value;
    const char *end = value + n;
    while (hop < end && (*hop == ' ' || *hop == '\t'))
        hop++;
    while (end > hop && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    if (end - hop >= 2 && *hop == '[' && end[-1] == ']') {
        hop++;
        end--;
    }
    char a[64];
    size_t len = (size_t)(end - hop);
    if (len == 0 || len >= sizeof a)
        return 0;
    memcpy(a, hop, len);
    a[len] = '\0';
    unsigned char bin[16];
    if (inet_pton(AF_INET, a, bin) == 1)
        return inet_ntop(AF_INET, bin, out, (socklen_t)cap) != NULL;
    if (inet_pton(AF_INET6, a, bin) == 1)
        return inet_ntop(AF_INET6, bin, out, (socklen_t)cap) != NULL;
    return 0;
}

/* 1 when the peer of `mc` is a trusted proxy. */
static int from_proxy(const mcp_http_server *hs, struct MHD_Connection *mc)
{
    if (!hs->nproxies)
        return 0;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !ci->client_addr)
        return 0;
    const struct sockaddr *sa = ci->client_addr;
    unsigned char a[16];
    int fam;
    if (sa->sa_family == AF_INET) {
        fam = AF_INET;
        memcpy(a, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        fam = IN6_IS_ADDR_V4MAPPED(a6) ? AF_INET : AF_INET6;
        memcpy(a, fam == AF_INET ? a6->s6_addr + 12 : a6->s6_addr, fam == AF_INET ? 4 : 16);
    } else {
        return 0;
    }
    for (size_t i = 0; i < hs->nproxies; i++)
        if (hs->proxies[i].family == fam && !memcmp(hs->proxies[i].a, a, fam == AF_INET ? 4 : 16))
            return 1;
    return 0;
}

static enum MHD_Result last_xff(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    if (key && value && !strcasecmp(key, "X-Forwarded-For"))
        *(const char **)cls = value; /* the last one: the nearest proxy appended it */
    return MHD_YES;
}

/* The request's client as per-address limits see it: the peer, or behind a
 * trusted proxy the last X-Forwarded-For hop (the proxy's own address when
 * that is missing or malformed). IPv6 by its /64, as client_key. */
static void request_client(const mcp_http_server *hs, struct MHD_Connection *mc, char *out, size_t cap)
{
    client_key(mc, out, cap);
    if (!from_proxy(hs, mc))
        return;
    const char *xff = NULL;
    MHD_get_connection_values(mc, MHD_HEADER_KIND, last_xff, &xff);
    char hop[64];
    if (!mcp__http_forwarded_for(xff, hop, sizeof hop))
        return;
    struct in6_addr a6;
    if (inet_pton(AF_INET6, hop, &a6) == 1 && !IN6_IS_ADDR_V4MAPPED(&a6)) {
        memset(a6.s6_addr + 8, 0, 8);
        inet_ntop(AF_INET6, &a6, out, (socklen_t)cap);
    } else {
        snprintf(out, cap, "%s", hop);
    }
}

/* Parses mcp_http_opts.trusted_proxies. */
static mcp_status setup_proxies(mcp_http_server *hs, const char *const *list, mcp_error *err)
{
    size_t n = 0;
    while (list && list[n])
        n++;
    if (!n)
        return MCP_OK;
    hs->proxies = mcp__calloc(n, sizeof *hs->proxies);
    if (!hs->proxies)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    for (size_t i = 0; i < n; i++) {
        struct proxy_addr *p = &hs->proxies[i];
        if (inet_pton(AF_INET, list[i], p->a) == 1)
            p->family = AF_INET;
        else if (inet_pton(AF_INET6, list[i], p->a) == 1)
            p->family = AF_INET6;
        else
            return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "trusted proxy \"%.64s\" is not an IP address", list[i]);
        hs->nproxies++;
    }
    return MCP_OK;
}

/* An OAuth-style JSON error body, with an optional challenge and Retry-After. */
static enum MHD_Result reply_json_error(struct MHD_Connection *mc, unsigned status, const char *code,
                                        const char *desc, const char *www, unsigned retry_after)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "error");
    mcp_jw_string(&w, code);
    mcp_jw_key(&w, "error_description");
    mcp_jw_string(&w, desc);
    mcp_jw_object_end(&w);
    return queue_json(mc, status, &w, &b, www, retry_after);
}

static enum MHD_Result reply_too_many(struct MHD_Connection *mc, unsigned wait)
{
    char d[96];
    snprintf(d, sizeof d, "too many requests: retry after %u s", wait);
    return reply_json_error(mc, MHD_HTTP_TOO_MANY_REQUESTS, "too_many_requests", d, NULL, wait);
}

/* Appends each word of `list` to `out` (space-separated) unless already there. */
static void add_words(mcp_buf *out, const char *list)
{
    for (const char *p = list; p && *p;) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        int dup = 0;
        for (const char *q = out->data; q && *q && !dup;) {
            while (*q == ' ')
                q++;
            size_t m = strcspn(q, " ");
            dup = m == n && memcmp(p, q, n) == 0;
            q += m;
        }
        if (n && !dup && (!out->len || mcp_buf_append(out, " ", 1) == MCP_OK))
            mcp_buf_append(out, p, n);
        p += n;
    }
}

/*
 * Answers a request the verifier refused: 401 (no or invalid token), 400
 * (malformed header), 403 (insufficient scope) with a WWW-Authenticate
 * challenge naming the metadata and `scope`, or 503 when the keys or the
 * introspection endpoint cannot be reached. The token is never logged.
 */
static enum MHD_Result reply_auth(mcp_http_server *hs, struct MHD_Connection *mc, mcp_auth_error why,
                                  const char *desc, const char *scope)
{
    unsigned status = why == MCP_AUTH_INVALID_REQUEST    ? MHD_HTTP_BAD_REQUEST
                      : why == MCP_AUTH_INSUFFICIENT_SCOPE ? MHD_HTTP_FORBIDDEN
                      : why == MCP_AUTH_UNAVAILABLE        ? MHD_HTTP_SERVICE_UNAVAILABLE
                                                           : MHD_HTTP_UNAUTHORIZED;
    const char *code = mcp_auth_error_code(why);
    mcp__metrics_auth_failed(hs->srv, (int)why);
    mcp_buf ch;
    mcp_buf_init(&ch, 0);
    if (why != MCP_AUTH_UNAVAILABLE && mcp_auth_challenge(hs->auth, why, scope, NULL, &ch) != MCP_OK)
        mcp_buf_cleanup(&ch);
    char addr[64];
    request_client(hs, mc, addr, sizeof addr);
    mcp__server_diag(hs->srv, why == MCP_AUTH_NO_TOKEN ? MCP_LOG_DEBUG : why == MCP_AUTH_UNAVAILABLE ? MCP_LOG_WARNING
                                                                                                    : MCP_LOG_INFO,
                     "authorization: %u %s for %s: %s", status, code ? code : "(no token)", addr, desc);
    enum MHD_Result res = reply_json_error(mc, status, code ? code : "unauthorized", desc, ch.data,
                                           why == MCP_AUTH_UNAVAILABLE ? 5 : 0);
    mcp_buf_cleanup(&ch);
    return res;
}

static enum MHD_Result count_authorization(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    (void)value;
    if (key && strcasecmp(key, "Authorization") == 0)
        (*(int *)cls)++;
    return MHD_YES;
}

/* What a token check decided (r->principal set when it passed): 1 when the
 * request may go on, 0 when it was answered (*res). */
static int auth_checked(hreq *r, mcp_status st, mcp_auth_error why, const char *msg, enum MHD_Result *res)
{
    mcp_http_server *hs = r->hs;
    struct MHD_Connection *mc = r->mc;
    if (st == MCP_ERR_NOMEM || (st && why == MCP_AUTH_OK)) {
        *res = reply_plain(mc, MHD_HTTP_SERVICE_UNAVAILABLE, "Service Unavailable: out of memory");
        return 0;
    }
    if (st) {
        /* The scopes to ask for: what every request needs when that is what
         * failed, otherwise the basic set the server advertises. */
        const char *scope = mcp_auth_scopes_supported(hs->auth);
        if (why == MCP_AUTH_INSUFFICIENT_SCOPE || !*scope)
            scope = mcp_auth_required_scopes(hs->auth);
        *res = reply_auth(hs, mc, why, msg, scope);
        return 0;
    }
    if (hs->rl_subject) {
        char key[MCP__PRINCIPAL_KEY_SIZE];
        mcp__principal_key(r->principal, key, sizeof key);
        unsigned wait = mcp__ratelimit_take(hs->rl_subject, key, strlen(key), mcp__mono_ms());
        if (wait) {
            mcp__metrics_refused(hs->srv, MCP__REFUSE_RATE_SUBJECT);
            *res = reply_too_many(mc, wait);
            return 0;
        }
    }
    return 1;
}

/* 1 at most once a second per `*last` (monotonic ms, atomic): a flood of
 * refusals is logged, not written out one line each. */
static int log_now(uint64_t *last_ms)
{
    uint64_t now = mcp__mono_ms(), last = __atomic_load_n(last_ms, __ATOMIC_RELAXED);
    return now - last >= 1000u && __atomic_compare_exchange_n(last_ms, &last, now, 0, __ATOMIC_RELAXED,
                                                               __ATOMIC_RELAXED);
}

static void hreq_unref(hreq *r);
static void wake(hreq *r);

/* A token check on the auth pool; resumes its request when done. */
typedef struct auth_job {
    mcp__job job; /* pool linkage; must stay first */
    hreq *r;      /* holds a reference */
    char *header; /* the Authorization header */
} auth_job;

static void auth_job_run(mcp__job *job)
{
    auth_job *j = (auth_job *)job;
    hreq *r = j->r;
    mcp_http_server *hs = r->hs;
    mcp_principal *p = NULL;
    mcp_auth_error why = MCP_AUTH_UNAVAILABLE;
    mcp_error err;
    memset(&err, 0, sizeof err);
    pthread_mutex_lock(&hs->mu);
    int stopping = hs->stopping;
    pthread_mutex_unlock(&hs->mu);
    mcp_status st = MCP_ERR_AUTH;
    if (stopping)
        snprintf(err.message, sizeof err.message, "the server is shutting down");
    else
        st = mcp_auth_check_header(hs->auth, j->header, &p, &why, &err);
    pthread_mutex_lock(&r->mu);
    r->principal = p;
    r->auth_st = st;
    r->auth_why = why;
    snprintf(r->auth_msg, sizeof r->auth_msg, "%s", err.message);
    r->auth_state = AUTH_DONE;
    wake(r);
    pthread_mutex_unlock(&r->mu);
    hreq_unref(r);
    mcp_free(j->header);
    mcp_free(j);
}

/*
 * Checks the token on the auth pool (bounded: a full queue is 503 with
 * Retry-After) and suspends the request until then; access_handler picks
 * it up again (auth_resumed). 0 with *res = MHD_YES, or the 503.
 */
static int auth_defer(hreq *r, const char *hv, enum MHD_Result *res)
{
    auth_job *j = mcp__calloc(1, sizeof *j);
    char *h = j ? mcp__strdup(hv) : NULL;
    if (!h) {
        mcp_free(j);
        *res = reply_plain(r->mc, MHD_HTTP_SERVICE_UNAVAILABLE, "Service Unavailable: out of memory");
        return 0;
    }
    j->job.run = auth_job_run;
    j->r = r;
    j->header = h;
    pthread_mutex_lock(&r->mu);
    r->refs++;
    r->auth_state = AUTH_WAITING;
    if (mcp__pool_submit(r->hs->auth_pool, &j->job) != MCP_OK) {
        r->refs--;
        r->auth_state = AUTH_NONE;
        pthread_mutex_unlock(&r->mu);
        mcp_free(h);
        mcp_free(j);
        if (log_now(&r->hs->auth_logged))
            mcp__server_diag(r->hs->srv, MCP_LOG_WARNING,
                             "http: the token checks waiting on the authorization server are at their limit; 503");
        *res = reply_json_error(r->mc, MHD_HTTP_SERVICE_UNAVAILABLE, "temporarily_unavailable",
                                "too many token checks waiting on the authorization server; retry later", NULL,
                                IN_FLIGHT_RETRY_S);
        return 0;
    }
    /* Suspending under r->mu pairs with the job's wake(). */
    r->suspended = 1;
    MHD_suspend_connection(r->mc);
    pthread_mutex_unlock(&r->mu);
    *res = MHD_YES;
    return 0;
}

/*
 * Checks the bearer token of a request whose headers just arrived. Returns
 * 1 when it may go on (r->principal set), 0 when it was answered (*res).
 */
static int authenticate(hreq *r, enum MHD_Result *res)
{
    mcp_http_server *hs = r->hs;
    struct MHD_Connection *mc = r->mc;
    int n = 0;
    MHD_get_connection_values(mc, MHD_HEADER_KIND, count_authorization, &n);
    if (n > 1) {
        *res = reply_auth(hs, mc, MCP_AUTH_INVALID_REQUEST, "malformed request: more than one Authorization header",
                          NULL);
        return 0;
    }
    if (MHD_lookup_connection_value(mc, MHD_GET_ARGUMENT_KIND, "access_token")) {
        *res = reply_auth(hs, mc, MCP_AUTH_INVALID_REQUEST,
                          "access tokens are not accepted in the query string; send Authorization: Bearer", NULL);
        return 0;
    }
    const char *hv = header(mc, "Authorization");
    if (hs->auth_pool && mcp__auth_may_block(hs->auth, hv))
        return auth_defer(r, hv, res);
    mcp_auth_error why;
    mcp_error err;
    mcp_status st = mcp_auth_check_header(hs->auth, hv, &r->principal, &why, &err);
    return auth_checked(r, st, why, err.message, res);
}

/* 1 when `url` is one of the paths the metadata is served at. */
static int is_prm_path(const mcp_http_server *hs, const char *url)
{
    for (size_t i = 0; i < sizeof hs->prm_paths / sizeof hs->prm_paths[0]; i++)
        if (hs->prm_paths[i] && strcmp(hs->prm_paths[i], url) == 0)
            return 1;
    return 0;
}

/* GET of the RFC 9728 Protected Resource Metadata: public, no token needed. */
static enum MHD_Result serve_prm(hreq *r)
{
    mcp_http_server *hs = r->hs;
    struct MHD_Connection *mc = r->mc;
    if (!hs->any_origin && !host_allowed(hs, header(mc, "Host")))
        return reply_plain(mc, MHD_HTTP_FORBIDDEN, "Forbidden: Host not allowed");
    if (r->method != M_GET)
        return reply_plain(mc, MHD_HTTP_METHOD_NOT_ALLOWED, "Method Not Allowed");
    mcp_buf b;
    mcp_buf_init(&b, 0);
    if (mcp_auth_metadata(hs->auth, &b) != MCP_OK) {
        mcp_buf_cleanup(&b);
        return reply_plain(mc, MHD_HTTP_SERVICE_UNAVAILABLE, "Service Unavailable");
    }
    struct MHD_Response *resp = text_response(b.data, b.len, "application/json");
    mcp_buf_cleanup(&b);
    if (resp) {
        /* Browser-based clients read it from other origins. */
        MHD_add_response_header(resp, "Access-Control-Allow-Origin", "*");
        MHD_add_response_header(resp, "Cache-Control", "max-age=300");
    }
    return queue(mc, MHD_HTTP_OK, resp);
}

/* With authorization, a legacy session belongs to the principal that opened it. */
static int owner_ok(const session *s, const hreq *r)
{
    if (!r->hs->auth)
        return 1;
    char key[MCP__PRINCIPAL_KEY_SIZE];
    mcp__principal_key(r->principal, key, sizeof key);
    return strcmp(key, s->owner) == 0;
}

/*
 * The scopes a POSTed request needs (those of the tool, prompt or resource
 * it names): when the principal lacks one, answers 403 (returns 0) before
 * anything is dispatched.
 */
static int scopes_ok(hreq *r, const mcp_rpc_msg *m, enum MHD_Result *res)
{
    mcp_http_server *hs = r->hs;
    if (!hs->auth || m->kind != MCP_RPC_REQUEST)
        return 1;
    mcp_buf need;
    mcp_buf_init(&need, 0);
    mcp__server_request_scopes(hs->srv, m, &need);
    int ok = !need.len || mcp_principal_has_scopes(r->principal, need.data);
    if (!ok) {
        /* One challenge with every scope the operation needs (the spec asks
         * servers not to make clients step up one scope at a time). */
        mcp_buf all;
        mcp_buf_init(&all, 0);
        add_words(&all, mcp_auth_required_scopes(hs->auth));
        add_words(&all, need.data);
        *res = reply_auth(hs, r->mc, MCP_AUTH_INSUFFICIENT_SCOPE,
                          "the token lacks a scope this request needs (see the scope parameter)", all.data);
        mcp__call_report_forbidden(hs->srv, m, r->principal, need.data);
        mcp_buf_cleanup(&all);
    }
    mcp_buf_cleanup(&need);
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Request lifetime                                                          */

static void hreq_unref(hreq *r);

/* Bytes held for responses, server-wide: added and taken without a lock. */
static void account(mcp_http_server *hs, size_t add, size_t sub)
{
    if (!ACCOUNTING)
        return;
    if (add)
        __atomic_add_fetch(&hs->buffered, add, __ATOMIC_RELAXED);
    if (sub)
        __atomic_sub_fetch(&hs->buffered, sub, __ATOMIC_RELAXED);
}

static size_t buffered(const mcp_http_server *hs)
{
    return __atomic_load_n(&hs->buffered, __ATOMIC_RELAXED);
}

/* Frees a request's unsent SSE bytes (r->mu held, or the last reference). */
static void frames_free(hreq *r)
{
    for (frame *f = r->head; f;) {
        frame *n = f->next;
        mcp_free(f->data);
        mcp_free(f);
        f = n;
    }
    r->head = r->tail = NULL;
    account(r->hs, 0, r->qbytes);
    r->qbytes = 0;
}

static void session_unref(session *s);

static void hreq_free(hreq *r)
{
    mcp_principal_free(r->principal);
    frames_free(r);
    mcp_free(r->final_json);
    mcp_buf_cleanup(&r->body);
    mcp_free(r->id_str);
    pthread_mutex_destroy(&r->mu);
    mcp_free(r);
}

static void hreq_unref(hreq *r)
{
    pthread_mutex_lock(&r->mu);
    int last = --r->refs == 0;
    pthread_mutex_unlock(&r->mu);
    if (last)
        hreq_free(r);
}

/* Wakes a suspended request so libmicrohttpd calls back into it (mu held). */
static void wake(hreq *r)
{
    if (r->suspended && !r->ended) {
        r->suspended = 0;
        MHD_resume_connection(r->mc);
    }
}

/* Ends a request's stream once its queued bytes are sent (r->mu not held). */
static void end_stream(hreq *r)
{
    pthread_mutex_lock(&r->mu);
    r->close_stream = 1;
    wake(r);
    pthread_mutex_unlock(&r->mu);
}

/*
 * Ends the stream of a request whose client does not read (r->mu held, the
 * request not ended, so its socket is still open): the unsent bytes are
 * freed at once, nothing more is queued, and the socket is shut down so
 * libmicrohttpd ends the request (a 2026-07-28 call is then cancelled; a
 * legacy stream stays resumable from its replay events).
 */
static void overflow_close(hreq *r, const char *why, size_t limit)
{
    mcp_http_server *hs = r->hs;
    size_t held = r->qbytes;
    const char *addr = r->addr;
    r->overflow = 1;
    r->close_stream = 1;
    frames_free(r);
    if (r->fd >= 0)
        shutdown(r->fd, SHUT_RDWR);
    wake(r);
    mcp__server_diag(hs->srv, MCP_LOG_WARNING,
                     "http: closed the event stream of %s: %zu bytes unsent, over %s (%zu bytes)",
                     addr[0] ? addr : "(unknown)", held, why, limit);
}

/*
 * Appends bytes to the SSE queue and wakes the writer (mu held). A client
 * that stops reading makes the queue grow: past the per-request cap, or
 * past OFFENDER_MIN_BYTES while the server is over its budget, the stream
 * is closed (overflow_close) and 0 returned.
 */
static int push_bytes(hreq *r, const char *data, size_t len)
{
    mcp_http_server *hs = r->hs;
    if (r->overflow || r->ended)
        return 0;
    if (r->qbytes + len > hs->queue_cap) {
        overflow_close(r, "the per-request limit", hs->queue_cap);
        return 0;
    }
    if (r->qbytes + len > OFFENDER_MIN_BYTES && buffered(hs) + len > hs->budget) {
        overflow_close(r, "the server's budget for buffered responses", hs->budget);
        return 0;
    }
    frame *f = mcp__calloc(1, sizeof *f);
    if (!f)
        return 0;
    f->data = mcp_malloc(len ? len : 1);
    if (!f->data) {
        mcp_free(f);
        return 0;
    }
    memcpy(f->data, data, len);
    f->len = len;
    r->qbytes += len;
    account(hs, len, 0);
    if (r->tail)
        r->tail->next = f;
    else
        r->head = f;
    r->tail = f;
    r->last_write = mcp__mono_ms();
    wake(r);
    return 1;
}

/* "[id: ..\n]data: <frame>\n\n" */
static char *sse_event(const char *event_id, const char *data, size_t len, size_t *out_len)
{
    size_t n = (event_id ? strlen(event_id) + 5 : 0) + 6 + len + 2;
    char *e = mcp_malloc(n + 1);
    if (!e)
        return NULL;
    size_t o = 0;
    if (event_id)
        o += (size_t)snprintf(e + o, n + 1 - o, "id: %s\n", event_id);
    memcpy(e + o, "data: ", 6);
    o += 6;
    memcpy(e + o, data, len);
    o += len;
    e[o++] = '\n';
    e[o++] = '\n';
    e[o] = '\0';
    *out_len = o;
    return e;
}

/* HTTP status for a final frame: the 2026-07-28 mapping of error codes. */
static int status_for(const hreq *r, const char *text, size_t len)
{
    if (len < 40 || !memmem(text, len, "\"error\":", 8))
        return MHD_HTTP_OK;
    mcp_json_doc *d;
    if (mcp_json_parse(&d, text, len, NULL, NULL) != MCP_OK)
        return MHD_HTTP_OK;
    int64_t code = mcp_json_int(mcp_json_get(mcp_json_get(mcp_json_doc_root(d), "error"), "code"));
    mcp_json_doc_free(d);
    switch (code) {
    case MCP_RPC_PARSE_ERROR:
    case MCP_RPC_INVALID_REQUEST:
        return MHD_HTTP_BAD_REQUEST;
    case MCP_RPC_METHOD_NOT_FOUND:
        return r->modern ? MHD_HTTP_NOT_FOUND : MHD_HTTP_OK;
    case MCP_RPC_HEADER_MISMATCH:
    case MCP_RPC_MISSING_CAPABILITY:
    case MCP_RPC_UNSUPPORTED_VERSION:
        return MHD_HTTP_BAD_REQUEST;
    default:
        return MHD_HTTP_OK;
    }
}

/* ------------------------------------------------------------------------ */
/* Legacy streams: numbering, replay                                         */

/* The ring of a stream's replay events is counted with its events. */
#define RING_BYTES (MAX_REPLAY_EVENTS * sizeof(event))

static void stream_free(mcp_http_server *hs, stream *st)
{
    for (size_t i = 0; i < st->nevents; i++)
        mcp_free(st->events[(st->first + i) % MAX_REPLAY_EVENTS].text);
    account(hs, 0, st->rbytes + RING_BYTES);
    mcp_free(st->events);
    mcp_free(st->req_str);
    mcp_free(st);
}

/* Forgets a stream's oldest replay event (s->mu held). */
static void stream_drop_oldest(mcp_http_server *hs, stream *st)
{
    event *e = &st->events[st->first];
    st->rbytes -= e->len;
    account(hs, 0, e->len);
    mcp_free(e->text);
    e->text = NULL;
    st->first = (st->first + 1) % MAX_REPLAY_EVENTS;
    st->nevents--;
}

/* Unlinks and frees a stream of the session (s->mu held). */
static void stream_remove(session *s, stream *st)
{
    for (stream **pp = &s->streams; *pp; pp = &(*pp)->next)
        if (*pp == st) {
            *pp = st->next;
            break;
        }
    if (s->get_st == st)
        s->get_st = NULL;
    stream_free(s->hs, st);
}

/* A new stream in the session (s->mu held). */
static stream *stream_new(session *s, const mcp_rpc_id *req)
{
    size_t count = 0;
    for (stream *x = s->streams; x; x = x->next)
        count++;
    if (count >= MAX_STREAMS_PER_SESSION) {
        /* Forget the oldest detached stream. */
        stream **pp = &s->streams, **oldest = NULL;
        for (; *pp; pp = &(*pp)->next)
            if (!(*pp)->attached)
                oldest = pp;
        if (!oldest)
            return NULL;
        stream_remove(s, *oldest);
    }
    stream *st = mcp__calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->events = mcp__calloc(MAX_REPLAY_EVENTS, sizeof *st->events);
    if (!st->events) {
        mcp_free(st);
        return NULL;
    }
    account(s->hs, RING_BYTES, 0);
    st->id = ++s->next_stream;
    if (req)
        copy_id(req, &st->req, &st->req_str);
    st->next = s->streams;
    s->streams = st;
    return st;
}

/*
 * Records an SSE event in the stream and delivers it if a request is
 * attached (s->mu held). The replay keeps the newest events within the
 * per-stream byte cap (and MAX_REPLAY_EVENTS); the newest always stays.
 */
static void stream_emit(mcp_http_server *hs, stream *st, const char *data, size_t len, int final)
{
    char id[48];
    snprintf(id, sizeof id, "%llu_%llu", (unsigned long long)st->id, (unsigned long long)++st->seq);
    size_t n;
    char *ev = sse_event(id, data, len, &n);
    if (!ev)
        return;
    while (st->nevents && (st->nevents == MAX_REPLAY_EVENTS || st->rbytes + n > hs->replay_cap))
        stream_drop_oldest(hs, st);
    event *e = &st->events[(st->first + st->nevents) % MAX_REPLAY_EVENTS];
    e->seq = st->seq;
    e->text = ev;
    e->len = n;
    st->nevents++;
    st->rbytes += n;
    account(hs, n, 0);
    if (final)
        st->final = 1;
    hreq *r = st->attached;
    if (r) {
        pthread_mutex_lock(&r->mu);
        push_bytes(r, ev, n);
        if (final) {
            r->got_final = 1;
            wake(r);
        }
        pthread_mutex_unlock(&r->mu);
    }
}

/* The priming event: an id and empty data, plus the retry hint (SEP-1699). */
static void stream_prime(mcp_http_server *hs, stream *st, hreq *r)
{
    char ev[128];
    int n = snprintf(ev, sizeof ev, "id: %llu_%llu\nretry: %u\ndata: \n\n", (unsigned long long)st->id,
                     (unsigned long long)st->seq, hs->retry_ms);
    pthread_mutex_lock(&r->mu);
    push_bytes(r, ev, (size_t)n);
    pthread_mutex_unlock(&r->mu);
}

/* ------------------------------------------------------------------------ */
/* Routing frames to requests                                                */

/*
 * Delivers a frame to a request: decides JSON or SSE on the first frame,
 * queues SSE events, and wakes the request (r->mu held; for legacy SSE the
 * caller went through stream_emit instead).
 */
static void deliver(hreq *r, const char *frame_data, size_t len, int final)
{
    if (r->ended)
        return;
    if (r->mode == MODE_NONE) {
        if (final && r->accept_json) {
            /* The answer came first: one application/json body. */
            r->final_json = mcp_malloc(len ? len : 1);
            if (r->final_json) {
                memcpy(r->final_json, frame_data, len);
                r->final_len = len;
                r->final_status = status_for(r, frame_data, len);
            }
            r->got_final = 1;
            r->mode = MODE_JSON;
            wake(r);
            return;
        }
        if (!r->accept_sse)
            return; /* a JSON-only client gets no intermediate messages */
        r->mode = MODE_SSE;
    }
    size_t n;
    char *ev = sse_event(NULL, frame_data, len, &n);
    if (ev) {
        push_bytes(r, ev, n);
        mcp_free(ev);
    }
    if (final) {
        r->got_final = 1;
        wake(r);
    }
}

/* Connections here always route; this send function is never reached. */
static mcp_status unused_send(const char *frame_data, size_t len, void *ud)
{
    (void)frame_data;
    (void)len;
    (void)ud;
    return MCP_ERR_CLOSED;
}

/* Router of a 2026-07-28 request's own connection: every frame is its. */
static mcp_status route_modern(const char *data, size_t len, const mcp_rpc_id *related, mcp__route_kind kind,
                               void *ud)
{
    (void)related;
    hreq *r = ud;
    pthread_mutex_lock(&r->mu);
    /* MCP__ROUTE_CLOSE has no meaning here: 2026-07-28 streams are not
     * resumable, so closing one would lose the answer. */
    if (data && kind != MCP__ROUTE_CLOSE)
        deliver(r, data, len, kind == MCP__ROUTE_FINAL);
    /* A stream closed over its byte budget is gone too: the call is then
     * cancelled at once (call.c), its worker free for others. */
    int gone = r->ended || r->overflow;
    pthread_mutex_unlock(&r->mu);
    return gone ? MCP_ERR_CLOSED : MCP_OK;
}

/* The session's pending POST answering `id` (s->mu held). */
static hreq *pending_find(session *s, const mcp_rpc_id *id)
{
    for (hreq *r = s->pending; r; r = r->pending_next)
        if (mcp_rpc_id_equal(&r->id, id))
            return r;
    return NULL;
}

static stream *stream_for(session *s, const mcp_rpc_id *id)
{
    for (stream *st = s->streams; st; st = st->next)
        if (st->req.type != MCP_RPC_ID_NONE && mcp_rpc_id_equal(&st->req, id))
            return st;
    return NULL;
}

/* Starts a legacy SSE stream for a POST (s->mu and r->mu held). */
static stream *begin_legacy_sse(session *s, hreq *r)
{
    stream *st = stream_new(s, &r->id);
    if (!st)
        return NULL;
    st->attached = r;
    r->st = st;
    r->mode = MODE_SSE;
    char ev[128];
    int n = snprintf(ev, sizeof ev, "id: %llu_0\nretry: %u\ndata: \n\n", (unsigned long long)st->id,
                     s->hs->retry_ms);
    push_bytes(r, ev, (size_t)n);
    return st;
}

/*
 * Router of a legacy session: a frame about request X goes to the POST
 * carrying X (or its resumable stream), a decode error to the POST being
 * dispatched, session traffic to the GET stream.
 */
static mcp_status route_session(const char *data, size_t len, const mcp_rpc_id *related, mcp__route_kind kind,
                                void *ud)
{
    session *s = ud;
    int final = kind == MCP__ROUTE_FINAL;
    pthread_mutex_lock(&s->mu);
    if (!related) {
        if (final && s->current && data) {
            /* The answer to a frame that had no readable id (a decode error). */
            pthread_mutex_lock(&s->current->mu);
            deliver(s->current, data, len, final);
            pthread_mutex_unlock(&s->current->mu);
        } else if (!final && s->get_st && data) {
            /* Session traffic (list_changed, resource updates): the GET
             * stream, kept for replay while no request delivers it. */
            stream_emit(s->hs, s->get_st, data, len, 0);
        }
        pthread_mutex_unlock(&s->mu);
        return MCP_OK;
    }
    stream *st = stream_for(s, related);
    if (st) {
        if (kind == MCP__ROUTE_CLOSE) {
            /* SEP-1699: close the connection, keep the stream for Last-Event-ID. */
            if (st->attached)
                end_stream(st->attached);
        } else if (data) {
            stream_emit(s->hs, st, data, len, final);
        }
        pthread_mutex_unlock(&s->mu);
        return MCP_OK;
    }
    hreq *r = pending_find(s, related);
    if (r && data) {
        pthread_mutex_lock(&r->mu);
        if (r->mode == MODE_NONE && !(final && r->accept_json) && r->accept_sse) {
            /* A notification or request before the answer: a resumable stream. */
            stream *nst = begin_legacy_sse(s, r);
            pthread_mutex_unlock(&r->mu);
            if (nst)
                stream_emit(s->hs, nst, data, len, final);
        } else {
            deliver(r, data, len, final);
            pthread_mutex_unlock(&r->mu);
        }
    } else if (r && kind == MCP__ROUTE_CLOSE) {
        pthread_mutex_lock(&r->mu);
        if (r->mode == MODE_NONE && r->accept_sse)
            begin_legacy_sse(s, r);
        r->close_stream = 1;
        wake(r);
        pthread_mutex_unlock(&r->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return MCP_OK;
}

/*
 * Router of a session on the deprecated HTTP+SSE transport (2024-11-05):
 * every frame goes down the one GET /sse stream as an "event: message".
 */
static mcp_status route_sse_transport(const char *data, size_t len, const mcp_rpc_id *related,
                                      mcp__route_kind kind, void *ud)
{
    (void)related;
    session *s = ud;
    if (!data || kind == MCP__ROUTE_CLOSE)
        return MCP_OK;
    pthread_mutex_lock(&s->mu);
    hreq *r = s->sse;
    mcp_status st = MCP_ERR_CLOSED;
    if (r) {
        size_t n = len + 32;
        char *ev = mcp_malloc(n);
        if (ev) {
            memcpy(ev, "event: message\ndata: ", 21);
            memcpy(ev + 21, data, len);
            memcpy(ev + 21 + len, "\n\n", 2);
            pthread_mutex_lock(&r->mu);
            if (!r->ended && push_bytes(r, ev, 21 + len + 2))
                st = MCP_OK;
            pthread_mutex_unlock(&r->mu);
            mcp_free(ev);
        }
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

/* ------------------------------------------------------------------------ */
/* Sessions                                                                  */

/*
 * The worker pool's flow for the work of a client (mcp__conn_set_flow): its
 * principal key when it has one (`owner`, mcp__principal_key), else its
 * address (client_key), hashed with the quota table's seed. The pool takes
 * turns between flows, so one client's backlog of calls does not hold up
 * another's (docs/http.md, "Limits").
 */
static uint64_t client_flow(mcp_http_server *hs, const char *owner, const char *addr)
{
    if (!ACCOUNTING)
        return 0;
    char key[MCP__PRINCIPAL_KEY_SIZE + 72];
    snprintf(key, sizeof key, "%c%s", owner[0] ? 'p' : 'a', owner[0] ? owner : addr);
    return mcp__quota_hash(hs->quota, key);
}

/*
 * Frees a session whose last reference went: often on a network thread
 * (the request that held it ended), so nothing here waits. A session ends
 * by DELETE, expiry, eviction or stop: its calls are cancelled without
 * grace (stop gave them theirs already, mcp_http_server_stop); a handler
 * still unwinding keeps the connection alive on its own reference, and
 * its frames are no longer routed here.
 */
static void session_destroy(session *s)
{
    mcp_conn_close(s->conn, 0);
    mcp_conn_free(s->conn);
    while (s->streams) {
        stream *n = s->streams->next;
        stream_free(s->hs, s->streams);
        s->streams = n;
    }
    pthread_mutex_destroy(&s->mu);
    mcp_free(s);
}

/* hs->mu held. */
static void session_unlink_locked(mcp_http_server *hs, session *s)
{
    for (session **pp = &hs->sessions; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            hs->nsessions--;
            mcp__metrics_gauge(hs->srv, MCP__GAUGE_SESSIONS, -1);
            break;
        }
}

static void session_unref(session *s)
{
    mcp_http_server *hs = s->hs;
    pthread_mutex_lock(&hs->mu);
    int last = --s->refs == 0;
    pthread_mutex_unlock(&hs->mu);
    if (last)
        session_destroy(s);
}

/* Finds a live session and takes a reference; NULL when unknown or closed. */
static session *session_get(mcp_http_server *hs, const char *id)
{
    pthread_mutex_lock(&hs->mu);
    session *s = hs->sessions;
    while (s && strcmp(s->id, id) != 0)
        s = s->next;
    if (s && s->closed)
        s = NULL;
    if (s) {
        s->refs++;
        s->last_used = mcp__mono_ms();
    }
    pthread_mutex_unlock(&hs->mu);
    return s;
}

/* Why session_create_with() refused: the server-wide cap or a quota. */
enum { REFUSED_SERVER = 1, REFUSED_ADDRESS, REFUSED_PRINCIPAL };

/*
 * hs->mu held. Which quota a new session of `addr`/`owner` would exceed
 * (REFUSED_*), or 0. Every session is counted: idle ones hold memory too.
 */
static int session_quota_locked(const mcp_http_server *hs, const char *addr, const char *owner)
{
    if (!ACCOUNTING)
        return 0;
    unsigned by_addr = 0, by_owner = 0;
    for (const session *s = hs->sessions; s; s = s->next) {
        by_addr += addr[0] && !strcmp(s->addr, addr);
        by_owner += owner[0] && !strcmp(s->owner, owner);
    }
    if (by_addr >= hs->sessions_per_address)
        return REFUSED_ADDRESS;
    if (by_owner >= hs->sessions_per_principal)
        return REFUSED_PRINCIPAL;
    return 0;
}

/*
 * hs->mu held; the server-wide cap is reached. Rather than refuse a new
 * client, end the least recently used idle session of the address holding
 * the most sessions, when it holds more than `addr` would after this one.
 * Returns that session, unlinked and closed (its table reference is the
 * caller's to drop), or NULL. Quadratic in the sessions, but only at the cap.
 */
static session *session_evict_locked(mcp_http_server *hs, const char *addr)
{
    const char *most = NULL;
    unsigned most_n = 0, mine = 0;
    for (const session *a = hs->sessions; a; a = a->next) {
        if (!a->addr[0] || (most && !strcmp(a->addr, most)))
            continue;
        unsigned n = 0;
        for (const session *b = hs->sessions; b; b = b->next)
            n += !strcmp(a->addr, b->addr);
        if (!strcmp(a->addr, addr))
            mine = n;
        if (n > most_n) {
            most_n = n;
            most = a->addr;
        }
    }
    if (!most || most_n <= mine + 1)
        return NULL;
    session *victim = NULL;
    for (session *s = hs->sessions; s; s = s->next)
        if (s->refs == 1 && !strcmp(s->addr, most) && (!victim || s->last_used < victim->last_used))
            victim = s;
    if (victim) {
        session_unlink_locked(hs, victim);
        victim->closed = 1;
    }
    return victim;
}

/*
 * A new session for the request `r` (its client address and principal are
 * recorded for the quotas). MCP_ERR_LIMIT with *why (REFUSED_*) when a cap
 * or quota is reached.
 */
static mcp_status session_create_with(hreq *r, session **out, mcp__route_fn route, int *why)
{
    mcp_http_server *hs = r->hs;
    *why = 0;
    session *s = mcp__calloc(1, sizeof *s);
    if (!s)
        return MCP_ERR_NOMEM;
    unsigned char rnd[16];
    if (mcp__random(rnd, sizeof rnd) != 0 && RAND_bytes(rnd, sizeof rnd) != 1) {
        mcp_free(s);
        return MCP_ERR_IO;
    }
    for (int i = 0; i < 16; i++)
        snprintf(s->id + 2 * i, 3, "%02x", rnd[i]);
    s->hs = hs;
    pthread_mutex_init(&s->mu, NULL);
    mcp_status st = mcp_conn_new(&s->conn, hs->srv, unused_send, s);
    if (st) {
        pthread_mutex_destroy(&s->mu);
        mcp_free(s);
        return st;
    }
    /* Every frame goes through the router; `send` is unused. */
    mcp__conn_set_route(s->conn, route, s);
    snprintf(s->addr, sizeof s->addr, "%s", r->addr);
    mcp__principal_key(r->principal, s->owner, sizeof s->owner);
    mcp__conn_set_flow(s->conn, client_flow(hs, s->owner, s->addr));
    pthread_mutex_lock(&hs->mu);
    session *evicted = NULL;
    *why = hs->stopping ? REFUSED_SERVER : session_quota_locked(hs, s->addr, s->owner);
    if (!*why && hs->nsessions >= hs->max_sessions) {
        evicted = session_evict_locked(hs, s->addr);
        if (!evicted)
            *why = REFUSED_SERVER;
    }
    if (*why) {
        pthread_mutex_unlock(&hs->mu);
        mcp_conn_free(s->conn);
        pthread_mutex_destroy(&s->mu);
        mcp_free(s);
        return MCP_ERR_LIMIT;
    }
    s->refs = 2; /* the table and the caller */
    s->last_used = mcp__mono_ms();
    s->next = hs->sessions;
    hs->sessions = s;
    hs->nsessions++;
    mcp__metrics_gauge(hs->srv, MCP__GAUGE_SESSIONS, 1);
    pthread_mutex_unlock(&hs->mu);
    if (evicted) {
        mcp__server_diag(hs->srv, MCP_LOG_NOTICE,
                         "http: sessions at the server's cap (%u): ended the least recently used idle session of "
                         "%s, the address holding the most, for a new one from %s",
                         hs->max_sessions, evicted->addr, s->addr[0] ? s->addr : "(unknown)");
        session_unref(evicted); /* the table's reference */
    }
    *out = s;
    return MCP_OK;
}

static mcp_status session_create(hreq *r, session **out, int *why)
{
    return session_create_with(r, out, route_session, why);
}

/* How long a client refused a session should wait: sessions free up when
 * their holders DELETE them or they expire. */
static unsigned session_retry_after(const mcp_http_server *hs)
{
    unsigned s = hs->session_idle_ms / 1000u;
    return s < 1 ? 1 : s > 60 ? 60 : s;
}

/*
 * Answers a refused session: 429 with Retry-After and a JSON-RPC error
 * naming the quota (503 for the server-wide cap or shutdown), and logs it.
 */
static enum MHD_Result reply_session_refused(hreq *r, const mcp_rpc_id *id, mcp_status st, int why)
{
    mcp_http_server *hs = r->hs;
    if (st != MCP_ERR_LIMIT)
        return reply_rpc_error(r->mc, MHD_HTTP_SERVICE_UNAVAILABLE, id, MCP_RPC_INTERNAL_ERROR,
                               "Internal error: cannot create a session");
    mcp__metrics_refused(hs->srv, why == REFUSED_SERVER    ? MCP__REFUSE_SESSIONS
                                  : why == REFUSED_ADDRESS ? MCP__REFUSE_SESSIONS_ADDRESS
                                                           : MCP__REFUSE_SESSIONS_PRINCIPAL);
    if (why == REFUSED_SERVER)
        return reply_rpc_error(r->mc, MHD_HTTP_SERVICE_UNAVAILABLE, id, MCP_RPC_INTERNAL_ERROR,
                               "Server busy: too many sessions; retry later");
    const char *addr = r->addr;
    unsigned limit = why == REFUSED_ADDRESS ? hs->sessions_per_address : hs->sessions_per_principal;
    const char *per = why == REFUSED_ADDRESS ? "client address" : "client principal";
    unsigned wait = session_retry_after(hs);
    mcp__server_diag(hs->srv, MCP_LOG_WARNING, "http: session quota: %s %s holds %u sessions (the limit); refused",
                     per, why == REFUSED_ADDRESS ? addr : "(token subject)", limit);
    char msg[160];
    snprintf(msg, sizeof msg,
             "Too many sessions: at most %u sessions per %s; end one (DELETE) or retry after %u s", limit, per, wait);
    return reply_rpc_retry(r->mc, MHD_HTTP_TOO_MANY_REQUESTS, id, MCP_RPC_INTERNAL_ERROR, msg, wait);
}

/*
 * Ends a session (DELETE, expiry, shutdown): unknown from now on. Its open
 * streams (the GET stream, POST streams) end at once: left open, a stream
 * waits for its next frame, which for the GET stream never comes, and a
 * client that already closed its end would only be noticed at the next
 * keep-alive (a suspended connection is not polled).
 */
static void session_close(mcp_http_server *hs, session *s)
{
    pthread_mutex_lock(&hs->mu);
    int was = s->closed;
    s->closed = 1;
    if (!was)
        session_unlink_locked(hs, s);
    pthread_mutex_unlock(&hs->mu);
    if (was)
        return;
    pthread_mutex_lock(&s->mu);
    for (stream *st = s->streams; st; st = st->next)
        if (st->attached)
            end_stream(st->attached);
    pthread_mutex_unlock(&s->mu);
    session_unref(s); /* the table's reference */
}

/* ------------------------------------------------------------------------ */
/* The ticker: keep-alives, late answers become streams, session expiry      */

/* What a connection waits for next, and for how long (s); 0 s: no deadline. */
static void conn_wait(mcp_http_server *hs, hconn *c, int phase, unsigned secs)
{
    if (!c)
        return;
    pthread_mutex_lock(&hs->conns_mu);
    if (c->phase != PH_LATE) {
        c->phase = phase;
        c->deadline = secs ? mcp__mono_ms() + (uint64_t)secs * 1000u : 0;
    }
    pthread_mutex_unlock(&hs->conns_mu);
}

/*
 * Connections whose client is late (conn_wait) are shut down;
 * libmicrohttpd then sees the end of the stream and closes them on its own
 * thread. Only descriptors still on the list are touched, and a connection
 * leaves the list before its socket is closed (on_connection).
 */
static void head_sweep(mcp_http_server *hs, uint64_t now)
{
    unsigned late[PH_LATE] = {0};
    pthread_mutex_lock(&hs->conns_mu);
    for (hconn *c = hs->conns; c; c = c->next)
        if (c->phase != PH_LATE && c->deadline && now >= c->deadline) {
            late[c->phase]++;
            c->phase = PH_LATE;
            shutdown(c->fd, SHUT_RDWR);
        }
    pthread_mutex_unlock(&hs->conns_mu);
    if (late[PH_HEAD])
        mcp__server_diag(hs->srv, MCP_LOG_INFO, "http: closed %u connection(s) whose request head took over %u s",
                         late[PH_HEAD], hs->head_timeout_s);
    if (late[PH_BODY] || late[PH_NEXT])
        mcp__server_diag(hs->srv, MCP_LOG_INFO,
                         "http: closed %u connection(s) whose request body, and %u whose next request head on a "
                         "kept-alive connection, took over %u s",
                         late[PH_BODY], late[PH_NEXT], hs->request_timeout_s);
}

static void active_add(hreq *r)
{
    mcp_http_server *hs = r->hs;
    pthread_mutex_lock(&hs->mu);
    pthread_mutex_lock(&r->mu);
    if (!r->on_active) {
        r->on_active = 1;
        r->refs++;
        r->active_next = hs->active;
        r->active_pprev = &hs->active;
        if (hs->active)
            hs->active->active_pprev = &r->active_next;
        hs->active = r;
    }
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_unlock(&hs->mu);
}

/*
 * Takes a finished request off the ticker's list at once (request_completed).
 * Left to the ticker, every request answered in one keep-alive period would
 * stay listed, and allocated, until the next tick: at tens of thousands of
 * calls a second that is megabytes of dead requests, and a long walk under
 * hs->mu that every new request waits for. on_active changes with both
 * hs->mu and r->mu held, so either lock is enough to read it.
 */
static void active_remove(hreq *r)
{
    mcp_http_server *hs = r->hs;
    pthread_mutex_lock(&hs->mu);
    pthread_mutex_lock(&r->mu);
    int was = r->on_active;
    if (was) {
        *r->active_pprev = r->active_next;
        if (r->active_next)
            r->active_next->active_pprev = r->active_pprev;
        r->on_active = 0;
    }
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_unlock(&hs->mu);
    if (was)
        hreq_unref(r); /* the list's reference */
}

/*
 * hs->mu held. Releases the detached legacy streams (their client left)
 * detached at least `age` ms ago; returns how many.
 */
static unsigned release_detached_locked(mcp_http_server *hs, uint64_t now, uint64_t age)
{
    unsigned n = 0;
    for (session *s = hs->sessions; s; s = s->next) {
        pthread_mutex_lock(&s->mu);
        for (stream *st = s->streams, *next; st; st = next) {
            next = st->next;
            if (!st->attached && st->detached && now - st->detached >= age) {
                stream_remove(s, st);
                n++;
            }
        }
        pthread_mutex_unlock(&s->mu);
    }
    return n;
}

/* hs->mu held. Trims every stream's replay to `cap` bytes (the newest
 * event stays); returns the events dropped. */
static unsigned trim_replay_locked(mcp_http_server *hs, size_t cap)
{
    unsigned n = 0;
    for (session *s = hs->sessions; s; s = s->next) {
        pthread_mutex_lock(&s->mu);
        for (stream *st = s->streams; st; st = st->next)
            while (st->nevents > 1 && st->rbytes > cap) {
                stream_drop_oldest(hs, st);
                n++;
            }
        pthread_mutex_unlock(&s->mu);
    }
    return n;
}

/* hs->mu held. Closes the stream holding the most unsent bytes; 0 when none holds any. */
static int close_biggest_queue_locked(mcp_http_server *hs)
{
    hreq *big = NULL;
    size_t most = 0;
    for (hreq *r = hs->active; r; r = r->active_next) {
        pthread_mutex_lock(&r->mu);
        if (!r->ended && !r->overflow && r->qbytes > most) {
            most = r->qbytes;
            big = r;
        }
        pthread_mutex_unlock(&r->mu);
    }
    if (!big)
        return 0;
    pthread_mutex_lock(&big->mu);
    if (!big->ended)
        overflow_close(big, "the server's budget for buffered responses", hs->budget);
    pthread_mutex_unlock(&big->mu);
    return 1;
}

/*
 * hs->mu held. Streams whose client left are released after linger_ms.
 * While the server holds more response bytes than its budget, what goes
 * first is what nobody is reading: detached streams, longest detached
 * first; then the oldest replay events of every stream, the biggest
 * trimmed first; last, the request with the most unsent bytes (its client
 * is not reading) has its stream closed, one at a time.
 */
static void budget_sweep_locked(mcp_http_server *hs, uint64_t now)
{
    unsigned released = release_detached_locked(hs, now, hs->linger_ms), dropped = 0, closed = 0;
    size_t before = buffered(hs);
    for (uint64_t age = hs->linger_ms / 2; buffered(hs) > hs->budget; age /= 2) {
        released += release_detached_locked(hs, now, age);
        if (!age)
            break;
    }
    for (size_t cap = hs->replay_cap / 2; buffered(hs) > hs->budget && cap >= 1024; cap /= 2)
        dropped += trim_replay_locked(hs, cap);
    while (buffered(hs) > hs->budget && closed < 64 && close_biggest_queue_locked(hs))
        closed++;
    if (before > hs->budget)
        mcp__server_diag(hs->srv, MCP_LOG_WARNING,
                         "http: response buffers held %zu bytes, over the server's budget (%zu): released %u "
                         "stream(s) whose client left, dropped %u replay event(s), closed %u stream(s) not read; "
                         "now %zu bytes",
                         before, hs->budget, released, dropped, closed, buffered(hs));
}

static void *ticker_main(void *arg)
{
    mcp_http_server *hs = arg;
    pthread_mutex_lock(&hs->mu);
    while (!hs->stopping) {
        unsigned period = hs->keepalive_ms / 2 + 1; /* at least twice a second: head_sweep */
        if (period > 500)
            period = 500;
        uint64_t t = mcp__mono_ns() + (uint64_t)period * 1000000ull;
        struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
        pthread_cond_timedwait(&hs->cv, &hs->mu, &ts);
        if (hs->stopping)
            break;
        uint64_t now = mcp__mono_ms();
        /* Requests: drop finished ones; keep the rest alive. */
        hreq *done = NULL;
        for (hreq **pp = &hs->active; *pp;) {
            hreq *r = *pp;
            pthread_mutex_lock(&r->mu);
            if (r->ended) {
                *pp = r->active_next;
                if (r->active_next)
                    r->active_next->active_pprev = pp;
                r->on_active = 0;
                r->active_next = done;
                done = r;
                pthread_mutex_unlock(&r->mu);
                continue;
            }
            if (now - r->last_write >= hs->keepalive_ms && !r->got_final) {
                if (r->mode == MODE_NONE && r->accept_sse && !r->sess) {
                    /* A slow 2026-07-28 answer: open the stream now, so a client
                     * that leaves is noticed (and its request cancelled). */
                    r->mode = MODE_SSE;
                }
                if (r->mode == MODE_SSE)
                    push_bytes(r, ":\n\n", 3);
            }
            pthread_mutex_unlock(&r->mu);
            pp = &r->active_next;
        }
        budget_sweep_locked(hs, now);
        /* Idle legacy sessions expire. */
        session *expired = NULL;
        for (session **sp = &hs->sessions; *sp;) {
            session *s = *sp;
            if (s->refs == 1 && now - s->last_used > hs->session_idle_ms) {
                *sp = s->next;
                hs->nsessions--;
                mcp__metrics_gauge(hs->srv, MCP__GAUGE_SESSIONS, -1);
                s->closed = 1;
                s->next = expired;
                expired = s;
                continue;
            }
            sp = &s->next;
        }
        pthread_mutex_unlock(&hs->mu);
        head_sweep(hs, now);
        while (done) {
            hreq *n = done->active_next;
            hreq_unref(done);
            done = n;
        }
        while (expired) {
            session *n = expired->next;
            session_unref(expired);
            expired = n;
        }
        pthread_mutex_lock(&hs->mu);
    }
    pthread_mutex_unlock(&hs->mu);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Writing responses                                                         */

/* libmicrohttpd pulls SSE bytes from here. */
static ssize_t sse_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    hreq *r = cls;
    pthread_mutex_lock(&r->mu);
    size_t o = 0;
    while (r->head && o < max) {
        frame *f = r->head;
        size_t n = f->len - f->off;
        if (n > max - o)
            n = max - o;
        memcpy(buf + o, f->data + f->off, n);
        o += n;
        f->off += n;
        if (f->off == f->len) {
            r->head = f->next;
            if (!r->head)
                r->tail = NULL;
            r->qbytes -= f->len;
            account(r->hs, 0, f->len);
            mcp_free(f->data);
            mcp_free(f);
        }
    }
    ssize_t ret;
    if (o) {
        ret = (ssize_t)o;
    } else if (r->got_final || r->close_stream) {
        ret = MHD_CONTENT_READER_END_OF_STREAM;
    } else {
        /* Nothing to send yet: sleep until a frame arrives (see wake()). */
        r->suspended = 1;
        MHD_suspend_connection(r->mc);
        ret = 0;
    }
    pthread_mutex_unlock(&r->mu);
    return ret;
}

static void sse_reader_free(void *cls)
{
    hreq *r = cls;
    mcp__metrics_gauge(r->hs->srv, MCP__GAUGE_STREAMS, -1);
    hreq_unref(r);
}

/* The JSON answer's response (r->mu held): libmicrohttpd takes the body
 * the worker left in r->final_json, to free with mcp_free once sent, rather
 * than a copy of it. */
static struct MHD_Response *json_answer(hreq *r)
{
    if (!r->final_json)
        return text_response("", 0, "application/json");
    struct MHD_Response *resp = MHD_create_response_from_buffer_with_free_callback(r->final_len, r->final_json, mcp_free);
    if (!resp)
        return NULL;
    r->final_json = NULL;
    MHD_add_response_header(resp, "Content-Type", "application/json");
    return resp;
}

static void add_common_headers(hreq *r, struct MHD_Response *resp)
{
    if (r->new_session[0])
        MHD_add_response_header(resp, "Mcp-Session-Id", r->new_session);
    MHD_add_response_header(resp, "Access-Control-Expose-Headers", "Mcp-Session-Id");
}

/*
 * Queues the response once it is decided: a JSON body, an SSE stream, or a
 * 503 while stopping. Returns MHD_YES when the request should simply wait.
 * Called without r->mu: the decision is taken under it, but the response is
 * queued after unlocking, because libmicrohttpd calls sse_reader() with the
 * response's own mutex held and sse_reader() then takes r->mu.
 */
static enum MHD_Result respond(hreq *r)
{
    struct MHD_Response *resp = NULL;
    unsigned status = MHD_HTTP_OK;
    pthread_mutex_lock(&r->mu);
    if (r->queued) {
        pthread_mutex_unlock(&r->mu);
        return MHD_YES;
    }
    if (r->mode == MODE_JSON && r->got_final) {
        resp = json_answer(r);
        status = (unsigned)r->final_status;
    } else if (r->mode == MODE_SSE) {
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, sse_reader, r, sse_reader_free);
        if (resp) {
            r->refs++; /* the reader's */
            mcp__metrics_gauge(r->hs->srv, MCP__GAUGE_STREAMS, 1);
            MHD_add_response_header(resp, "Content-Type", "text/event-stream");
            MHD_add_response_header(resp, "Cache-Control", "no-cache");
            MHD_add_response_header(resp, "X-Accel-Buffering", "no");
        }
    } else if (r->close_stream) {
        /* Shutting down before anything was decided: no answer will come. */
        resp = text_response("Service Unavailable: shutting down", 34, "text/plain");
        mcp__metrics_refused(r->hs->srv, MCP__REFUSE_SHUTDOWN);
        status = MHD_HTTP_SERVICE_UNAVAILABLE;
    } else {
        /* Undecided: wait for the first frame (or the ticker). Suspending
         * under r->mu pairs with wake(), so no frame slips between. */
        r->suspended = 1;
        MHD_suspend_connection(r->mc);
        pthread_mutex_unlock(&r->mu);
        return MHD_YES;
    }
    if (!resp) {
        pthread_mutex_unlock(&r->mu);
        return MHD_NO;
    }
    add_common_headers(r, resp);
    r->queued = 1;
    pthread_mutex_unlock(&r->mu);
    return queue(r->mc, status, resp);
}

/* ------------------------------------------------------------------------ */
/* 2026-07-28 header checks                                                  */

/* Trims optional whitespace and decodes "=?base64?...?=" strictly. */
int mcp__http_header_value(const char *raw, char *out, size_t cap, size_t *out_len)
{
    while (*raw == ' ' || *raw == '\t')
        raw++;
    size_t n = strlen(raw);
    while (n && (raw[n - 1] == ' ' || raw[n - 1] == '\t'))
        n--;
    if (n >= 12 && strncmp(raw, "=?base64?", 9) == 0 && strncmp(raw + n - 2, "?=", 2) == 0) {
        /* Padded base64; cap - 1 leaves room for the terminator. */
        if (!cap || !mcp__base64_decode(raw + 9, n - 11, (unsigned char *)out, cap - 1, out_len, 0))
            return 0;
        out[*out_len] = '\0';
        return 1;
    }
    if (n >= cap)
        return 0;
    memcpy(out, raw, n);
    out[n] = '\0';
    *out_len = n;
    return 1;
}

/* Compares a header with a JSON value (strings exactly, numbers numerically, booleans). */
int mcp__http_header_matches(const char *h, size_t hl, const mcp_json *v)
{
    switch (mcp_json_typeof(v)) {
    case MCP_JSON_STRING: {
        size_t n;
        const char *s = mcp_json_str(v, &n);
        return n == hl && memcmp(s, h, n) == 0;
    }
    case MCP_JSON_INT:
    case MCP_JSON_REAL: {
        /* In the C locale: an embedder's setlocale() must not make "1.5" unreadable. */
        char *end;
        locale_t c = mcp__c_locale();
        double d = c ? strtod_l(h, &end, c) : strtod(h, &end);
        return hl && end == h + hl && d == mcp_json_number(v);
    }
    case MCP_JSON_BOOL:
        return mcp_json_bool(v) ? (hl == 4 && !memcmp(h, "true", 4)) : (hl == 5 && !memcmp(h, "false", 5));
    default:
        return 0;
    }
}

/*
 * The SEP-2243 checks: Mcp-Method always, Mcp-Name for the named methods,
 * Mcp-Param-* for tool parameters marked x-mcp-header. NULL when they hold,
 * else the reason.
 */
static const char *check_standard_headers(hreq *r, const mcp_rpc_msg *m)
{
    char v[1024];
    size_t vl;
    const char *raw = header(r->mc, "Mcp-Method");
    if (!raw)
        return "missing Mcp-Method header";
    if (!mcp__http_header_value(raw, v, sizeof v, &vl) || vl != m->method_len || memcmp(v, m->method, vl) != 0)
        return "Mcp-Method header does not match the request's method";
    const char *want = NULL;
    if (mcp_rpc_method_is(m, "tools/call") || mcp_rpc_method_is(m, "prompts/get"))
        want = "name";
    else if (mcp_rpc_method_is(m, "resources/read"))
        want = "uri";
    else if (mcp_rpc_method_is(m, "tasks/get") || mcp_rpc_method_is(m, "tasks/update") ||
             mcp_rpc_method_is(m, "tasks/cancel"))
        want = "taskId"; /* the tasks extension routes on the task id */
    if (want) {
        const mcp_json *val = mcp_json_get(m->params, want);
        raw = header(r->mc, "Mcp-Name");
        if (!raw)
            return "missing Mcp-Name header";
        if (!mcp__http_header_value(raw, v, sizeof v, &vl) || !mcp__http_header_matches(v, vl, val))
            return "Mcp-Name header does not match the request";
    }
    if (mcp_rpc_method_is(m, "tools/call")) {
        size_t nl;
        const char *name = mcp_json_str(mcp_json_get(m->params, "name"), &nl);
        mcp__tool *t = name ? mcp__server_find_tool(r->hs->srv, name, nl) : NULL;
        const char *why = NULL;
        if (t) {
            const mcp_json *props = mcp_json_get(mcp_json_doc_root(t->input_doc), "properties");
            const mcp_json *args = mcp_json_get(m->params, "arguments");
            for (size_t i = 0; i < mcp_json_len(props) && !why; i++) {
                const char *hn = mcp_json_str(mcp_json_get(mcp_json_value_at(props, i), "x-mcp-header"), NULL);
                if (!hn)
                    continue;
                size_t kl;
                const char *k = mcp_json_key_at(props, i, &kl);
                const mcp_json *val = mcp_json_getn(args, k, kl);
                char hname[200];
                snprintf(hname, sizeof hname, "Mcp-Param-%s", hn);
                raw = header(r->mc, hname);
                if (!val || mcp_json_typeof(val) == MCP_JSON_NULL)
                    continue;
                if (!raw)
                    why = "missing Mcp-Param header for a parameter marked x-mcp-header";
                else if (!mcp__http_header_value(raw, v, sizeof v, &vl) || !mcp__http_header_matches(v, vl, val))
                    why = "Mcp-Param header does not match its argument";
            }
            mcp__tool_release(t);
        }
        if (why)
            return why;
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Handling requests                                                         */

/*
 * Serves a POST on a connection of its own, which lives as long as the
 * request: every 2026-07-28 request, and legacy requests when the server
 * keeps no sessions (`version` then says which legacy version to assume).
 * Takes over `m`.
 */
static enum MHD_Result serve_alone(hreq *r, mcp_rpc_msg *m, const char *version)
{
    mcp_http_server *hs = r->hs;
    const mcp_rpc_id *id = r->is_request ? &r->id : NULL;
    if (!r->is_request) {
        mcp__server_transcript(hs->srv, "in", r->body.data, r->body.len);
        mcp_rpc_msg_cleanup(m);
        return queue(r->mc, MHD_HTTP_ACCEPTED, text_response("", 0, NULL));
    }
    if (mcp_conn_new(&r->conn, hs->srv, unused_send, r) != MCP_OK) {
        mcp_rpc_msg_cleanup(m);
        return reply_rpc_error(r->mc, MHD_HTTP_SERVICE_UNAVAILABLE, id, MCP_RPC_INTERNAL_ERROR,
                               "Internal error: out of memory");
    }
    /* `version` is an entry of mcp__versions (handle_post looked it up), so
     * assuming it cannot fail. */
    if (version)
        (void)mcp__conn_assume_version(r->conn, version, strlen(version));
    char owner[MCP__PRINCIPAL_KEY_SIZE];
    mcp__principal_key(r->principal, owner, sizeof owner);
    mcp__conn_set_flow(r->conn, client_flow(hs, owner, r->addr));
    mcp__conn_set_route(r->conn, route_modern, r);
    mcp__server_transcript(hs->srv, "in", r->body.data, r->body.len);
    mcp__conn_dispatch_as(r->conn, m, r->principal);
    mcp_rpc_msg_cleanup(m);
    pthread_mutex_lock(&r->mu);
    r->last_write = mcp__mono_ms();
    pthread_mutex_unlock(&r->mu);
    enum MHD_Result res = respond(r);
    if (!r->queued || r->mode == MODE_SSE)
        active_add(r);
    return res;
}

/* A POST whose body is not a JSON-RPC message: 400 with the decoder's error. */
static enum MHD_Result reply_decode_error(hreq *r, const mcp_error *err)
{
    mcp__server_transcript(r->hs->srv, "in", r->body.data ? r->body.data : "", r->body.len);
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_write_decode_error(&w, err);
    enum MHD_Result res = MHD_NO;
    if (mcp_jw_finish(&w) == MCP_OK)
        res = queue(r->mc, MHD_HTTP_BAD_REQUEST, text_response(b.data, b.len, "application/json"));
    mcp_buf_cleanup(&b);
    return res;
}

/* A 2026-07-28 POST: stateless. The _meta fields and the headers must
 * agree; then the request gets a connection of its own. Takes over `m`. */
static enum MHD_Result post_modern(hreq *r, mcp_rpc_msg *m, const mcp_json *meta, const mcp_json *pv,
                                   const char *hv)
{
    r->modern = 1;
    const mcp_rpc_id *id = r->is_request ? &r->id : NULL;
    const char *why = NULL;
    int code = MCP_RPC_HEADER_MISMATCH;
    if (!hv) {
        why = "Header mismatch: missing MCP-Protocol-Version header";
    } else if (mcp_json_typeof(pv) != MCP_JSON_STRING ||
               mcp_json_typeof(mcp_json_get(meta, "io.modelcontextprotocol/clientCapabilities")) != MCP_JSON_OBJECT) {
        why = "Invalid params: missing required _meta fields (io.modelcontextprotocol/protocolVersion, "
              "io.modelcontextprotocol/clientCapabilities)";
        code = MCP_RPC_INVALID_PARAMS;
    } else if (!mcp_json_str_eq(pv, hv)) {
        why = "Header mismatch: MCP-Protocol-Version header differs from _meta protocolVersion";
    } else if (m->kind == MCP_RPC_REQUEST && mcp__version_known(hv, strlen(hv)) && mcp__version_modern(hv)) {
        why = check_standard_headers(r, m);
    }
    if (why) {
        mcp__server_transcript(r->hs->srv, "in", r->body.data, r->body.len);
        mcp_rpc_msg_cleanup(m);
        return reply_rpc_error(r->mc, MHD_HTTP_BAD_REQUEST, id, code, why);
    }
    return serve_alone(r, m, NULL);
}

/* A legacy POST to a server without sessions: it stands alone, at the
 * version its header names (2025-03-26 without one). Takes over `m`. */
static enum MHD_Result post_sessionless(hreq *r, mcp_rpc_msg *m, const char *hv)
{
    const char *version = hv ? hv : MCP_PROTOCOL_2025_03_26; /* the spec's default */
    int init = mcp_rpc_method_is(m, "initialize");
    const char *legacy = mcp__version_legacy(version, strlen(version));
    if (mcp__version_modern(version) || (!init && !legacy)) {
        mcp__server_transcript(r->hs->srv, "in", r->body.data, r->body.len);
        mcp_rpc_msg_cleanup(m);
        return reply_rpc_error(r->mc, MHD_HTTP_BAD_REQUEST, r->is_request ? &r->id : NULL, MCP_RPC_INVALID_REQUEST,
                               "Bad Request: unsupported MCP-Protocol-Version header");
    }
    return serve_alone(r, m, init ? NULL : legacy);
}

/*
 * The legacy session of a POST (a reference): a new one for initialize,
 * else the one Mcp-Session-Id names, if the principal owns it and the
 * version header suits it. NULL when the POST was answered (*res).
 */
static session *post_session(hreq *r, const mcp_rpc_msg *m, const char *hv, const char *sid, enum MHD_Result *res)
{
    mcp_http_server *hs = r->hs;
    const mcp_rpc_id *id = r->is_request ? &r->id : NULL;
    session *s = NULL;
    if (m->kind == MCP_RPC_REQUEST && mcp_rpc_method_is(m, "initialize") && !sid) {
        int why;
        mcp_status st = session_create(r, &s, &why);
        if (st) {
            *res = reply_session_refused(r, &r->id, st, why);
            return NULL;
        }
        snprintf(r->new_session, sizeof r->new_session, "%s", s->id);
        return s;
    }
    if (!sid) {
        *res = reply_rpc_error(r->mc, MHD_HTTP_BAD_REQUEST, id, MCP_RPC_INVALID_REQUEST,
                               "Bad Request: missing Mcp-Session-Id header (send initialize first, or use "
                               "2026-07-28 per-request _meta)");
        return NULL;
    }
    s = session_get(hs, sid);
    if (s && !owner_ok(s, r)) {
        /* Another principal's session: as unknown as a made-up id. */
        session_unref(s);
        s = NULL;
    }
    if (!s) {
        *res = reply_rpc_error(r->mc, MHD_HTTP_NOT_FOUND, id, MCP_RPC_INVALID_REQUEST,
                               "Not Found: unknown or expired session");
        return NULL;
    }
    /* A protocol version header, when sent, must be one this session can speak. */
    if (hv && !mcp__version_legacy(hv, strlen(hv))) {
        session_unref(s);
        *res = reply_rpc_error(r->mc, MHD_HTTP_BAD_REQUEST, id, MCP_RPC_INVALID_REQUEST,
                               "Bad Request: unsupported MCP-Protocol-Version header");
        return NULL;
    }
    return s;
}

/* Dispatches a POST on its session's connection (the request keeps the
 * reference to `s`): notifications and responses are accepted at once, a
 * request waits for its answer. Takes over `m`. */
static enum MHD_Result post_in_session(hreq *r, mcp_rpc_msg *m, session *s)
{
    r->sess = s;
    r->conn = s->conn;
    mcp__server_transcript(r->hs->srv, "in", r->body.data, r->body.len);
    if (!r->is_request) {
        /* Notifications and responses: accepted, no body. */
        pthread_mutex_lock(&s->mu);
        s->current = NULL;
        pthread_mutex_unlock(&s->mu);
        mcp__conn_dispatch_as(s->conn, m, r->principal);
        mcp_rpc_msg_cleanup(m);
        return queue(r->mc, MHD_HTTP_ACCEPTED, text_response("", 0, NULL));
    }
    pthread_mutex_lock(&s->mu);
    r->pending_next = s->pending;
    s->pending = r;
    s->current = r;
    pthread_mutex_unlock(&s->mu);
    mcp__conn_dispatch_as(s->conn, m, r->principal);
    mcp_rpc_msg_cleanup(m);
    pthread_mutex_lock(&s->mu);
    s->current = NULL;
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_lock(&r->mu);
    r->last_write = mcp__mono_ms();
    pthread_mutex_unlock(&r->mu);
    enum MHD_Result res = respond(r);
    /* The ticker only serves requests still waiting or streaming: one
     * answered with a JSON body right away needs no keep-alives. */
    if (!r->queued || r->mode == MODE_SSE)
        active_add(r);
    return res;
}

/* A POST to the endpoint: decoded, its scopes checked, then served in the
 * era it belongs to. */
/* ---- requests in flight and open streams per client ---- */

/*
 * Over its budget for buffered response bytes (what the ticker's sweep
 * has not yet brought back under it), the server starts no new work: a
 * POST or GET gets 503 with Retry-After and a JSON-RPC error, logged at
 * warning level at most once a second. DELETE still ends sessions.
 */
static int over_budget(hreq *r, enum MHD_Result *res)
{
    mcp_http_server *hs = r->hs;
    size_t held = buffered(hs);
    if (held <= hs->budget || r->method == M_DELETE)
        return 0;
    if (log_now(&hs->budget_logged))
        mcp__server_diag(hs->srv, MCP_LOG_WARNING,
                         "http: response buffers hold %zu bytes, over the server's budget (%zu): new requests get 503",
                         held, hs->budget);
    mcp__metrics_refused(hs->srv, MCP__REFUSE_BUFFERS);
    *res = reply_rpc_retry(r->mc, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, MCP_RPC_INTERNAL_ERROR,
                           "Server busy: over its budget for buffered responses; retry later", IN_FLIGHT_RETRY_S);
    return 1;
}

/* The quota keys of a request: kind letter, 'a' or 'p', then the address or principal key. */
static void quota_keys(const hreq *r, int kind, char *ka, size_t ca, char *kp, size_t cp)
{
    snprintf(ka, ca, "%ca%s", kind, r->addr);
    kp[0] = '\0';
    if (r->principal) {
        char key[MCP__PRINCIPAL_KEY_SIZE];
        mcp__principal_key(r->principal, key, sizeof key);
        snprintf(kp, cp, "%cp%s", kind, key);
    }
}

/* Gives back what the request holds (when it ends). */
static void quota_release(hreq *r)
{
    if (r->held == HOLD_NONE)
        return;
    char ka[80], kp[80];
    quota_keys(r, r->held, ka, sizeof ka, kp, sizeof kp);
    mcp__quota_give(r->hs->quota, ka);
    if (kp[0])
        mcp__quota_give(r->hs->quota, kp);
    r->held = HOLD_NONE;
}

/* 429 with Retry-After and a JSON-RPC error naming the quota; logged at
 * warning level, at most once a second. */
static enum MHD_Result reply_over_quota(hreq *r, const mcp_rpc_id *id, int kind, int by_principal, unsigned limit)
{
    mcp_http_server *hs = r->hs;
    const char *what = kind == HOLD_STREAM ? "open streams" : "requests in flight";
    const char *per = by_principal ? "client principal" : "client address";
    mcp__metrics_refused(hs->srv, kind == HOLD_STREAM ? (by_principal ? MCP__REFUSE_STREAMS_PRINCIPAL
                                                                      : MCP__REFUSE_STREAMS_ADDRESS)
                                                      : (by_principal ? MCP__REFUSE_REQUESTS_PRINCIPAL
                                                                      : MCP__REFUSE_REQUESTS_ADDRESS));
    if (log_now(&hs->quota_logged))
        mcp__server_diag(hs->srv, MCP_LOG_WARNING, "http: %s quota: %s %s holds %u (the limit); refused with 429",
                         what, per, by_principal ? "(token subject)" : r->addr[0] ? r->addr : "(unknown)", limit);
    char msg[200];
    snprintf(msg, sizeof msg, "Too many %s: at most %u per %s; retry after %u s", what, limit, per, IN_FLIGHT_RETRY_S);
    return reply_rpc_retry(r->mc, MHD_HTTP_TOO_MANY_REQUESTS, id, MCP_RPC_INTERNAL_ERROR, msg, IN_FLIGHT_RETRY_S);
}

/*
 * Counts the request among the requests in flight (kind HOLD_REQUEST) or
 * the open streams (HOLD_STREAM) of its client address and principal until
 * it ends. 1 when within both quotas; 0 when over one, answered (*res).
 */
static int quota_admit(hreq *r, int kind, const mcp_rpc_id *id, enum MHD_Result *res)
{
    mcp_http_server *hs = r->hs;
    if (!ACCOUNTING)
        return 1;
    char ka[80], kp[80];
    quota_keys(r, kind, ka, sizeof ka, kp, sizeof kp);
    unsigned la = kind == HOLD_STREAM ? hs->streams_per_address : hs->requests_per_address;
    unsigned lp = kind == HOLD_STREAM ? hs->streams_per_principal : hs->requests_per_principal;
    if (!mcp__quota_take(hs->quota, ka, la)) {
        *res = reply_over_quota(r, id, kind, 0, la);
        return 0;
    }
    if (kp[0] && !mcp__quota_take(hs->quota, kp, lp)) {
        mcp__quota_give(hs->quota, ka);
        *res = reply_over_quota(r, id, kind, 1, lp);
        return 0;
    }
    r->held = kind;
    return 1;
}

static enum MHD_Result handle_post(hreq *r)
{
    mcp_http_server *hs = r->hs;
    struct MHD_Connection *mc = r->mc;
    if (r->too_big)
        return reply_rpc_error(mc, MHD_HTTP_CONTENT_TOO_LARGE, NULL, MCP_RPC_INVALID_REQUEST,
                               "Invalid Request: body exceeds the size limit");
    mcp_rpc_msg m;
    mcp_error err;
    if (mcp_rpc_decode(&m, r->body.data ? r->body.data : "", r->body.len, &hs->srv->popts, &err) != MCP_OK)
        return reply_decode_error(r, &err);
    r->is_request = m.kind == MCP_RPC_REQUEST;
    if (r->is_request)
        copy_id(&m.id, &r->id, &r->id_str);
    enum MHD_Result res = MHD_NO;
    if (!scopes_ok(r, &m, &res)) {
        mcp_rpc_msg_cleanup(&m);
        return res;
    }
    /* A request waits for its answer: one of the client's requests in
     * flight (a subscriptions/listen stays open: one of its streams). */
    int kind = mcp_rpc_method_is(&m, "subscriptions/listen") ? HOLD_STREAM : HOLD_REQUEST;
    if (r->is_request && !quota_admit(r, kind, &r->id, &res)) {
        mcp_rpc_msg_cleanup(&m);
        return res;
    }
    const mcp_json *meta = mcp_json_get(m.params, "_meta");
    const mcp_json *pv = mcp_json_get(meta, "io.modelcontextprotocol/protocolVersion");
    const char *hv = header(mc, "MCP-Protocol-Version");
    const char *sid = header(mc, "Mcp-Session-Id");
    int inbound = m.kind == MCP_RPC_REQUEST || m.kind == MCP_RPC_NOTIFICATION; /* not a response */
    if (inbound && !sid && (pv || mcp__version_modern(hv)))
        return post_modern(r, &m, meta, pv, hv);
    if (inbound && !sid && hs->sessionless)
        return post_sessionless(r, &m, hv);
    session *s = post_session(r, &m, hv, sid, &res);
    if (!s) {
        mcp_rpc_msg_cleanup(&m);
        return res;
    }
    return post_in_session(r, &m, s);
}

/* Counts the request's headers named h->name, keeping the first value. */
typedef struct hcount {
    const char *name; /* the header */
    int n;            /* how many */
    const char *v;    /* the first one's value */
} hcount;

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    hcount *h = cls;
    if (key && strcasecmp(key, h->name) == 0 && h->n++ == 0)
        h->v = value;
    return MHD_YES;
}

/*
 * Handles a POST with the W3C trace context of its headers in effect for
 * requests whose _meta has none (mcp__trace_http_set checks the values;
 * _meta wins). Two traceparent headers are no trace context, two
 * tracestate headers no tracestate (W3C Trace Context, 3.2 and 3.3).
 */
static enum MHD_Result traced(hreq *r, enum MHD_Result (*handle)(hreq *r))
{
    hcount p = {"traceparent", 0, NULL}, st = {"tracestate", 0, NULL};
    MHD_get_connection_values(r->mc, MHD_HEADER_KIND, count_header, &p);
    MHD_get_connection_values(r->mc, MHD_HEADER_KIND, count_header, &st);
    mcp__trace_http_set(p.n == 1 ? p.v : NULL, st.n == 1 ? st.v : NULL);
    enum MHD_Result res = handle(r);
    mcp__trace_http_set(NULL, NULL);
    return res;
}

/* GET: the legacy standalone stream, or a resumption with Last-Event-ID. */
static enum MHD_Result handle_get(hreq *r)
{
    mcp_http_server *hs = r->hs;
    struct MHD_Connection *mc = r->mc;
    const char *sid = header(mc, "Mcp-Session-Id");
    const char *hv = header(mc, "MCP-Protocol-Version");
    if (!sid || mcp__version_modern(hv))
        return reply_plain(mc, MHD_HTTP_METHOD_NOT_ALLOWED,
                           "Method Not Allowed: GET needs a legacy session (2026-07-28 uses subscriptions/listen)");
    if (!mcp__http_accepts(header(mc, "Accept"), "text/event-stream"))
        return reply_plain(mc, MHD_HTTP_NOT_ACCEPTABLE, "Not Acceptable: GET streams text/event-stream");
    enum MHD_Result res;
    if (!quota_admit(r, HOLD_STREAM, NULL, &res))
        return res;
    session *s = session_get(hs, sid);
    if (s && !owner_ok(s, r)) {
        session_unref(s);
        s = NULL;
    }
    if (!s)
        return reply_plain(mc, MHD_HTTP_NOT_FOUND, "Not Found: unknown or expired session");
    r->sess = s;
    r->accept_sse = 1;
    const char *last = header(mc, "Last-Event-ID");
    pthread_mutex_lock(&s->mu);
    if (last) {
        uint64_t sno = 0, seq = 0;
        stream *st = NULL;
        if (mcp__http_event_id(last, &sno, &seq))
            for (st = s->streams; st && st->id != sno; st = st->next)
                ;
        if (!st) {
            pthread_mutex_unlock(&s->mu);
            return reply_plain(mc, MHD_HTTP_NOT_FOUND, "Not Found: unknown event id");
        }
        /* Take the stream over: replay what came after the last id seen.
         * A connection still holding it (the client gave up on it first)
         * ends; the GET stream's session traffic follows the new one. */
        if (st->attached) {
            pthread_mutex_lock(&st->attached->mu);
            st->attached->close_stream = 1;
            st->attached->st = NULL;
            wake(st->attached);
            pthread_mutex_unlock(&st->attached->mu);
        }
        st->attached = r;
        st->detached = 0;
        if (st == s->get_st)
            s->get = r;
        pthread_mutex_lock(&r->mu);
        r->st = st;
        r->mode = MODE_SSE;
        for (size_t i = 0; i < st->nevents; i++) {
            event *e = &st->events[(st->first + i) % MAX_REPLAY_EVENTS];
            if (e->seq > seq && !push_bytes(r, e->text, e->len))
                break;
        }
        if (st->final)
            r->got_final = 1;
        pthread_mutex_unlock(&r->mu);
    } else {
        if (s->get) {
            pthread_mutex_unlock(&s->mu);
            return reply_plain(mc, MHD_HTTP_CONFLICT, "Conflict: this session already has a GET stream");
        }
        /* A new GET stream without Last-Event-ID: the old one's events are
         * not wanted any more. */
        if (s->get_st)
            stream_remove(s, s->get_st);
        stream *st = stream_new(s, NULL);
        if (!st) {
            pthread_mutex_unlock(&s->mu);
            mcp__metrics_refused(r->hs->srv, MCP__REFUSE_STREAMS);
            return reply_plain(mc, MHD_HTTP_SERVICE_UNAVAILABLE, "Service Unavailable: too many streams");
        }
        st->attached = r;
        s->get = r;
        s->get_st = st;
        pthread_mutex_lock(&r->mu);
        r->st = st;
        r->mode = MODE_SSE;
        pthread_mutex_unlock(&r->mu);
        stream_prime(hs, st, r);
    }
    pthread_mutex_unlock(&s->mu);
    res = respond(r);
    active_add(r);
    return res;
}

static enum MHD_Result handle_delete(hreq *r)
{
    const char *sid = header(r->mc, "Mcp-Session-Id");
    const char *hv = header(r->mc, "MCP-Protocol-Version");
    if (!sid || mcp__version_modern(hv))
        return reply_plain(r->mc, MHD_HTTP_METHOD_NOT_ALLOWED, "Method Not Allowed: DELETE ends legacy sessions only");
    session *s = session_get(r->hs, sid);
    if (s && !owner_ok(s, r)) {
        session_unref(s);
        s = NULL;
    }
    if (!s)
        return reply_plain(r->mc, MHD_HTTP_NOT_FOUND, "Not Found: unknown or expired session");
    session_close(r->hs, s);
    session_unref(s);
    return queue(r->mc, MHD_HTTP_OK, text_response("", 0, NULL));
}

/* ---- the deprecated HTTP+SSE transport (2024-11-05) ---- */

/* GET /sse: a new session whose every message travels on this stream. */
static enum MHD_Result handle_sse_open(hreq *r)
{
    if (!mcp__http_accepts(header(r->mc, "Accept"), "text/event-stream"))
        return reply_plain(r->mc, MHD_HTTP_NOT_ACCEPTABLE, "Not Acceptable: GET /sse streams text/event-stream");
    enum MHD_Result qres;
    if (!quota_admit(r, HOLD_STREAM, NULL, &qres))
        return qres;
    session *s;
    int why;
    mcp_status st = session_create_with(r, &s, route_sse_transport, &why);
    if (st)
        return reply_session_refused(r, NULL, st, why);
    r->sess = s;
    r->accept_sse = 1;
    pthread_mutex_lock(&s->mu);
    s->sse = r;
    pthread_mutex_unlock(&s->mu);
    char ev[160];
    int n = snprintf(ev, sizeof ev, "event: endpoint\ndata: /messages?sessionId=%s\n\n", s->id);
    pthread_mutex_lock(&r->mu);
    r->mode = MODE_SSE;
    push_bytes(r, ev, (size_t)n);
    pthread_mutex_unlock(&r->mu);
    enum MHD_Result res = respond(r);
    active_add(r);
    return res;
}

/* POST /messages?sessionId=...: a frame for the session; answers go down its stream. */
static enum MHD_Result handle_sse_message(hreq *r)
{
    mcp_http_server *hs = r->hs;
    const char *sid = MHD_lookup_connection_value(r->mc, MHD_GET_ARGUMENT_KIND, "sessionId");
    if (!sid)
        return reply_plain(r->mc, MHD_HTTP_BAD_REQUEST, "Bad Request: missing sessionId");
    session *s = session_get(hs, sid);
    if (s && !owner_ok(s, r)) {
        session_unref(s);
        s = NULL;
    }
    if (!s || !s->sse) {
        if (s)
            session_unref(s);
        return reply_plain(r->mc, MHD_HTTP_NOT_FOUND, "Not Found: unknown session");
    }
    if (r->too_big) {
        session_unref(s);
        return reply_plain(r->mc, MHD_HTTP_CONTENT_TOO_LARGE, "Content Too Large");
    }
    /* The connection decodes it and answers on the stream (errors too). */
    mcp_conn_recv_auth(s->conn, r->body.data ? r->body.data : "", r->body.len, r->principal);
    session_unref(s);
    return queue(r->mc, MHD_HTTP_ACCEPTED, text_response("Accepted", 8, "text/plain"));
}

/*
 * The health check (health_path): 200 while serving, 503 once stopping, so
 * a load balancer takes the server out before its socket closes. It reads
 * nothing and says nothing about the data, so it needs no token and skips
 * the Host/Origin checks; it also skips the rate limit, so that a flood
 * from the balancer's address cannot make a healthy server look dead.
 */
static enum MHD_Result serve_health(mcp_http_server *hs, struct MHD_Connection *mc, const char *method)
{
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply_plain(mc, MHD_HTTP_METHOD_NOT_ALLOWED, "Method Not Allowed: the health check takes GET or HEAD");
    pthread_mutex_lock(&hs->mu);
    int stopping = hs->stopping;
    pthread_mutex_unlock(&hs->mu);
    struct MHD_Response *res = stopping ? text_response("stopping\n", 9, "text/plain; charset=utf-8")
                                        : text_response("ok\n", 3, "text/plain; charset=utf-8");
    if (res)
        MHD_add_response_header(res, "Cache-Control", "no-store");
    return queue(mc, stopping ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK, res);
}

/*
 * The first call for a request: its headers are in. Everything that needs
 * no body is checked here (rate limit, path, Host and Origin, token, a
 * POST's media types and length); MHD_YES lets the body come.
 */
static int head_ok(hreq *r, enum MHD_Result *res);

static enum MHD_Result on_headers(mcp_http_server *hs, struct MHD_Connection *mc, const char *url, const char *method,
                                  void **con_cls)
{
    /* The head is in: from now on the idle timeout applies (on_connection). */
    MHD_set_connection_option(mc, MHD_CONNECTION_OPTION_TIMEOUT, hs->conn_timeout_s);
    /* The body (if any) must be complete within request_timeout_s. */
    const union MHD_ConnectionInfo *sc = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    hconn *hc = sc ? sc->socket_context : NULL;
    conn_wait(hs, hc, PH_BODY, hs->request_timeout_s);
    hreq *r = mcp__calloc(1, sizeof *r);
    if (!r)
        return MHD_NO;
    r->hc = hc;
    pthread_mutex_init(&r->mu, NULL);
    r->refs = 1; /* libmicrohttpd's, dropped in request_completed */
    r->hs = hs;
    r->mc = mc;
    r->started = mcp__mono_ms();
    const union MHD_ConnectionInfo *fi = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    r->fd = fi ? fi->connect_fd : -1;
    mcp_buf_init(&r->body, hs->srv->opts.max_message);
    r->method = !strcmp(method, "POST") ? M_POST : !strcmp(method, "GET") ? M_GET
              : !strcmp(method, "DELETE") ? M_DELETE : !strcmp(method, "OPTIONS") ? M_OPTIONS : M_OTHER;
    *con_cls = r;
    if (hs->health_path && !strcmp(url, hs->health_path))
        return serve_health(hs, mc, method);
    request_client(hs, mc, r->addr, sizeof r->addr);
    if (hs->rl_addr) {
        /* Before anything costs: a flood from one address is refused here. */
        unsigned wait = mcp__ratelimit_take(hs->rl_addr, r->addr, strlen(r->addr), mcp__mono_ms());
        if (wait) {
            mcp__metrics_refused(hs->srv, MCP__REFUSE_RATE_ADDRESS);
            return reply_too_many(mc, wait);
        }
    }
    if (hs->auth && is_prm_path(hs, url))
        return serve_prm(r);
    if (hs->legacy_sse && (!strcmp(url, "/sse") || !strcmp(url, "/messages")))
        r->legacy_path = !strcmp(url, "/sse") ? 1 : 2;
    else if (strcmp(url, hs->path) != 0)
        return reply_plain(mc, MHD_HTTP_NOT_FOUND, "Not Found");
    /* DNS rebinding: the Host and the Origin must name an allowed host. */
    if (!hs->any_origin) {
        if (!host_allowed(hs, header(mc, "Host")))
            return reply_plain(mc, MHD_HTTP_FORBIDDEN, "Forbidden: Host not allowed");
        if (!origin_allowed(hs, header(mc, "Origin")))
            return reply_plain(mc, MHD_HTTP_FORBIDDEN, "Forbidden: Origin not allowed");
    }
    if (hs->auth && r->method != M_OPTIONS) {
        enum MHD_Result res;
        if (!authenticate(r, &res))
            return res;
    }
    enum MHD_Result res;
    return head_ok(r, &res) ? MHD_YES : res;
}

/* The head's checks after the token's: a POST's media types and length.
 * 1 when they pass, 0 when answered (*res). */
static int head_ok(hreq *r, enum MHD_Result *res)
{
    mcp_http_server *hs = r->hs;
    struct MHD_Connection *mc = r->mc;
    *res = MHD_YES;
    if (r->method != M_POST)
        return 1;
    const char *ct = header(mc, "Content-Type");
    const char *acc = header(mc, "Accept");
    r->accept_json = mcp__http_accepts(acc, "application/json");
    r->accept_sse = mcp__http_accepts(acc, "text/event-stream");
    const char *cl = header(mc, "Content-Length");
    if (!ct || strncasecmp(ct, "application/json", 16) != 0 || (ct[16] && ct[16] != ';' && ct[16] != ' '))
        *res = reply_plain(mc, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, "Unsupported Media Type: POST bodies are application/json");
    else if (!r->accept_json && !r->accept_sse)
        *res = reply_plain(mc, MHD_HTTP_NOT_ACCEPTABLE, "Not Acceptable: accept application/json and text/event-stream");
    else if (cl && strtoull(cl, NULL, 10) > hs->srv->opts.max_message)
        *res = reply_rpc_error(mc, MHD_HTTP_CONTENT_TOO_LARGE, NULL, MCP_RPC_INVALID_REQUEST,
                               "Invalid Request: body exceeds the size limit");
    else
        return 1;
    return 0;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *mc, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
    (void)version;
    mcp_http_server *hs = cls;
    hreq *r = *con_cls;
    if (!r)
        return on_headers(hs, mc, url, method, con_cls);
    pthread_mutex_lock(&r->mu);
    int auth = r->auth_state;
    if (auth == AUTH_DONE)
        r->auth_state = AUTH_NONE;
    pthread_mutex_unlock(&r->mu);
    if (auth == AUTH_WAITING)
        return MHD_YES; /* not resumed yet */
    if (auth == AUTH_DONE) {
        /* The token was checked on the auth pool: the head's checks go on. */
        enum MHD_Result res;
        if (!auth_checked(r, r->auth_st, r->auth_why, r->auth_msg, &res) || !head_ok(r, &res)) {
            r->answered = 1;
            return res;
        }
        /* This call stands for the first one (the head's): the body, if any,
         * comes in the calls that follow. */
        return MHD_YES;
    }
    if (r->queued || r->ended || r->answered)
        return MHD_YES;
    if (*upload_data_size) {
        /* A body trickling in byte by byte holds a connection: bound the time. */
        if (mcp__mono_ms() - r->started > (uint64_t)hs->request_timeout_s * 1000u)
            return MHD_NO;
        if (!r->too_big && mcp_buf_append(&r->body, upload_data, *upload_data_size) != MCP_OK)
            r->too_big = 1;
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (r->conn || r->sess) {
        /* Called again after a resume: the response can now be decided. */
        return respond(r);
    }
    /* The request is all in: the server owes the next move. */
    conn_wait(hs, r->hc, PH_NONE, 0);
    pthread_mutex_lock(&hs->mu);
    int stopping = hs->stopping;
    pthread_mutex_unlock(&hs->mu);
    if (stopping) {
        mcp__metrics_refused(hs->srv, MCP__REFUSE_SHUTDOWN);
        return reply_plain(mc, MHD_HTTP_SERVICE_UNAVAILABLE, "Service Unavailable: shutting down");
    }
    enum MHD_Result res;
    if (over_budget(r, &res))
        return res;
    if (r->legacy_path == 1 && r->method == M_GET)
        return handle_sse_open(r);
    if (r->legacy_path == 2 && r->method == M_POST)
        return traced(r, handle_sse_message);
    if (r->legacy_path)
        return reply_plain(mc, MHD_HTTP_METHOD_NOT_ALLOWED, "Method Not Allowed");
    switch (r->method) {
    case M_POST:
        return traced(r, handle_post);
    case M_GET:
        return handle_get(r);
    case M_DELETE:
        return handle_delete(r);
    default:
        return reply_plain(mc, MHD_HTTP_METHOD_NOT_ALLOWED, "Method Not Allowed");
    }
}

/*
 * A new TCP connection: until its first request head is complete it may
 * stall for head_timeout_s only (slowloris), not the idle timeout;
 * on_headers() restores that. libmicrohttpd has put the connection on its
 * timeout list before this runs, so the timeout can be changed here.
 */
static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    mcp_http_server *hs = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        if (hs->head_timeout_s < hs->conn_timeout_s)
            MHD_set_connection_option(mc, MHD_CONNECTION_OPTION_TIMEOUT, hs->head_timeout_s);
        /* A head trickling in byte by byte is not idle: note the start, so
         * the ticker can enforce the deadline (head_sweep). */
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
        hconn *c = ci ? mcp__calloc(1, sizeof *c) : NULL;
        if (!c)
            return;
        c->fd = ci->connect_fd;
        c->phase = PH_HEAD;
        c->deadline = mcp__mono_ms() + (uint64_t)hs->head_timeout_s * 1000u;
        pthread_mutex_lock(&hs->conns_mu);
        c->next = hs->conns;
        if (c->next)
            c->next->prev = c;
        hs->conns = c;
        pthread_mutex_unlock(&hs->conns_mu);
        *socket_context = c;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
        /* Runs before libmicrohttpd closes the socket: once unlinked here,
         * the ticker no longer touches the descriptor. */
        hconn *c = *socket_context;
        pthread_mutex_lock(&hs->conns_mu);
        if (c->prev)
            c->prev->next = c->next;
        else
            hs->conns = c->next;
        if (c->next)
            c->next->prev = c->prev;
        pthread_mutex_unlock(&hs->conns_mu);
        *socket_context = NULL;
        mcp_free(c);
    }
}

/* libmicrohttpd is done with a request: on a broken stream, cancel (2026-07-28). */
static void request_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)mc;
    /* However it ended, a 2026-07-28 request ends with its stream. */
    hreq *r = *con_cls;
    if (!r)
        return;
    *con_cls = NULL;
    pthread_mutex_lock(&r->mu);
    r->ended = 1;
    /* Only the ticker can change this now (1 -> 0), and it holds r->mu too. */
    int listed = r->on_active;
    pthread_mutex_unlock(&r->mu);
    session *s = r->sess;
    if (s) {
        pthread_mutex_lock(&s->mu);
        for (hreq **pp = &s->pending; *pp; pp = &(*pp)->pending_next)
            if (*pp == r) {
                *pp = r->pending_next;
                break;
            }
        if (s->get == r)
            s->get = NULL;
        int sse_done = s->sse == r;
        if (sse_done)
            s->sse = NULL;
        if (s->current == r)
            s->current = NULL;
        /* A legacy stream outlives its connection, for Last-Event-ID,
         * unless its answer went out whole; the ticker releases it after
         * linger_ms (or sooner when the server is over its budget). */
        if (r->st && r->st->attached == r) {
            r->st->attached = NULL;
            r->st->detached = mcp__mono_ms();
            if (r->st->final && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
                stream_remove(s, r->st);
        }
        pthread_mutex_unlock(&s->mu);
        if (sse_done)
            session_close(r->hs, s); /* HTTP+SSE: the session lives as long as its stream */
        session_unref(s);
        r->sess = NULL;
    } else if (r->conn) {
        /* 2026-07-28: the request lives and dies with its stream. A client that
         * left before the answer cancelled it (the spec says so). */
        mcp_conn_close(r->conn, 0);
        mcp_conn_free(r->conn);
        r->conn = NULL;
    }
    if (listed)
        active_remove(r);
    quota_release(r);
    /* Kept alive, the connection's next request head must be complete
     * within the idle timeout, however it trickles in. */
    conn_wait(r->hs, r->hc, PH_NEXT, r->hs->conn_timeout_s);
    hreq_unref(r);
}

/* ------------------------------------------------------------------------ */
/* Start and stop                                                            */

static char **strv_dup(const char *const *v, const char *const *defaults, const char *extra)
{
    const char *const *src = v ? v : defaults;
    size_t n = 0;
    while (src[n])
        n++;
    char **out = mcp__calloc(n + 2, sizeof *out);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
        if (!(out[o++] = mcp__strdup(src[i])))
            goto fail;
    if (extra && !v && !(out[o++] = mcp__strdup(extra)))
        goto fail;
    return out;
fail:
    for (size_t i = 0; out[i]; i++)
        mcp_free(out[i]);
    mcp_free(out);
    return NULL;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        mcp_free(v[i]);
    mcp_free(v);
}

static void hs_free(mcp_http_server *hs)
{
    strv_free(hs->hosts);
    strv_free(hs->origins);
    mcp_free(hs->path);
    mcp_free(hs->health_path);
    for (size_t i = 0; i < sizeof hs->prm_paths / sizeof hs->prm_paths[0]; i++)
        mcp_free(hs->prm_paths[i]);
    mcp__ratelimit_free(hs->rl_addr);
    mcp__ratelimit_free(hs->rl_subject);
    mcp__quota_free(hs->quota);
    mcp__pool_free(hs->auth_pool);
    mcp_free(hs->proxies);
    mcp_free(hs->tls_cert);
    if (hs->tls_key)
        OPENSSL_cleanse(hs->tls_key, strlen(hs->tls_key));
    mcp_free(hs->tls_key);
    pthread_mutex_destroy(&hs->mu);
    pthread_mutex_destroy(&hs->conns_mu);
    pthread_cond_destroy(&hs->cv);
    mcp_free(hs);
}

static int is_loopback_name(const char *h)
{
    return !strcmp(h, "127.0.0.1") || !strcmp(h, "localhost") || !strcmp(h, "::1") || !strcmp(h, "[::1]");
}

/* Reads a PEM file whole (at most 1 MiB) into a NUL-terminated string. */
static char *read_pem(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    mcp_buf b;
    mcp_buf_init(&b, (size_t)1 << 20);
    char chunk[4096];
    size_t n;
    int ok = 1;
    while (ok && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        ok = mcp_buf_append(&b, chunk, n) == MCP_OK;
    ok = ok && !ferror(f) && b.len;
    fclose(f);
    if (!ok) {
        if (b.data)
            OPENSSL_cleanse(b.data, b.len);
        mcp_buf_cleanup(&b);
        return NULL;
    }
    return mcp_buf_take(&b, NULL);
}

/*
 * Authorization and rate limits from the options: the metadata paths (the
 * root form, and with the resource's and the endpoint's paths appended, as
 * RFC 9728 section 3.1 builds them) and the token buckets.
 */
static mcp_status setup_auth(mcp_http_server *hs, const mcp_http_opts *o, mcp_error *err)
{
    static const char wk[] = "/.well-known/oauth-protected-resource";
    if ((o->rate_per_address != 0 && !(o->rate_per_address > 0)) ||
        (o->rate_per_subject != 0 && !(o->rate_per_subject > 0)))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "rates must be positive (or 0 for off)");
    if (o->rate_per_address > 0) {
        unsigned burst = o->burst_per_address ? o->burst_per_address : (unsigned)ceil(o->rate_per_address);
        if (mcp__ratelimit_new(&hs->rl_addr, o->rate_per_address, burst, 4096))
            return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    if (o->rate_per_subject > 0) {
        unsigned burst = o->burst_per_subject ? o->burst_per_subject : (unsigned)ceil(o->rate_per_subject);
        if (mcp__ratelimit_new(&hs->rl_subject, o->rate_per_subject, burst, 4096))
            return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    mcp_status pst = setup_proxies(hs, o->trusted_proxies, err);
    if (pst)
        return pst;
    hs->auth = o->auth;
    /* Token checks that may wait on the network run here, not on the network
     * threads: a few at once, a bounded queue (503 when full). */
    if (hs->auth && mcp__pool_new(&hs->auth_pool, AUTH_THREADS, AUTH_QUEUE, NULL) != MCP_OK)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    if (!hs->auth)
        return MCP_OK;
    const char *rpath = mcp_auth_resource(hs->auth) ? mcp__auth_resource_path(hs->auth) : hs->path;
    const char *paths[3] = {"", rpath, strcmp(rpath, hs->path) ? hs->path : ""};
    for (size_t i = 0; i < 3; i++) {
        if (i && !*paths[i])
            continue;
        size_t n = sizeof wk - 1 + strlen(paths[i]);
        if (!(hs->prm_paths[i] = mcp_malloc(n + 1)))
            return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
        snprintf(hs->prm_paths[i], n + 1, "%s%s", wk, paths[i]);
    }
    return MCP_OK;
}

/* A server with the options' limits (defaults for zeros); NULL when out of memory. */
static mcp_http_server *hs_new(mcp_server *srv, const mcp_http_opts *o)
{
    mcp_http_server *hs = mcp__calloc(1, sizeof *hs);
    if (!hs)
        return NULL;
    pthread_mutex_init(&hs->mu, NULL);
    pthread_mutex_init(&hs->conns_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&hs->cv, &ca);
    pthread_condattr_destroy(&ca);
    hs->srv = srv;
    hs->any_origin = o->allow_any_origin;
    hs->max_sessions = o->max_sessions ? o->max_sessions : DEFAULT_MAX_SESSIONS;
    hs->sessions_per_address = o->max_sessions_per_address ? o->max_sessions_per_address : DEFAULT_SESSIONS_PER_ADDRESS;
    hs->sessions_per_principal =
        o->max_sessions_per_principal ? o->max_sessions_per_principal : DEFAULT_SESSIONS_PER_PRINCIPAL;
    hs->conn_timeout_s = o->connection_timeout_s ? o->connection_timeout_s : DEFAULT_CONN_TIMEOUT_S;
    hs->head_timeout_s = o->head_timeout_s ? o->head_timeout_s : DEFAULT_HEAD_TIMEOUT_S;
    hs->session_idle_ms = o->session_idle_ms ? o->session_idle_ms : DEFAULT_SESSION_IDLE_MS;
    hs->retry_ms = o->retry_ms ? o->retry_ms : DEFAULT_RETRY_MS;
    hs->keepalive_ms = o->keepalive_ms ? o->keepalive_ms : DEFAULT_KEEPALIVE_MS;
    hs->request_timeout_s = o->connection_timeout_s ? o->connection_timeout_s : DEFAULT_CONN_TIMEOUT_S;
    hs->legacy_sse = o->legacy_sse;
    hs->sessionless = o->sessionless;
    hs->queue_cap = o->max_queue_bytes ? o->max_queue_bytes : DEFAULT_QUEUE_BYTES;
    hs->replay_cap = o->max_replay_bytes ? o->max_replay_bytes : DEFAULT_REPLAY_BYTES;
    hs->budget = o->max_buffer_bytes ? o->max_buffer_bytes : DEFAULT_BUFFER_BYTES;
    hs->linger_ms = o->stream_linger_ms ? o->stream_linger_ms : DEFAULT_STREAM_LINGER_MS;
    hs->requests_per_address = o->max_requests_per_address ? o->max_requests_per_address : DEFAULT_REQUESTS_PER_CLIENT;
    hs->requests_per_principal =
        o->max_requests_per_principal ? o->max_requests_per_principal : DEFAULT_REQUESTS_PER_CLIENT;
    hs->streams_per_address = o->max_streams_per_address ? o->max_streams_per_address : DEFAULT_STREAMS_PER_CLIENT;
    hs->streams_per_principal =
        o->max_streams_per_principal ? o->max_streams_per_principal : DEFAULT_STREAMS_PER_CLIENT;
    if (mcp__quota_new(&hs->quota)) {
        pthread_mutex_destroy(&hs->mu);
        pthread_mutex_destroy(&hs->conns_mu);
        pthread_cond_destroy(&hs->cv);
        mcp_free(hs);
        return NULL;
    }
    return hs;
}

/*
 * The endpoint path and what DNS-rebinding protection allows: Host names
 * (the loopback names, plus the bound host when it is not one of them,
 * unless the options list their own) and Origins (http and https on every
 * allowed host, any port, unless the options list their own).
 */
static mcp_status setup_hosts(mcp_http_server *hs, const mcp_http_opts *o, const char *host, const char *path,
                              mcp_error *err)
{
    static const char *const default_hosts[] = {"localhost", "127.0.0.1", "[::1]", NULL};
    char bound_host[300];
    snprintf(bound_host, sizeof bound_host, strchr(host, ':') ? "[%s]" : "%s", host);
    for (char *p = bound_host; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p + 32);
    hs->path = mcp__strdup(path);
    hs->hosts = strv_dup(o->allowed_hosts, default_hosts, is_loopback_name(host) ? NULL : bound_host);
    if (o->health_path && !(hs->health_path = mcp__strdup(o->health_path)))
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    if (!hs->path || !hs->hosts)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    /* Compared as the Host header is: no port, lower case, no trailing dot
     * (an entry too long to be a host name becomes "", which matches nothing). */
    for (char **p = hs->hosts; *p; p++) {
        char h[256];
        char *norm = mcp__strdup(norm_host(*p, h, sizeof h) ? h : "");
        if (!norm)
            return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
        mcp_free(*p);
        *p = norm;
    }
    if (o->allowed_origins) {
        hs->origins = strv_dup(o->allowed_origins, NULL, NULL);
    } else {
        size_t n = 0;
        while (hs->hosts[n])
            n++;
        hs->origins = mcp__calloc(2 * n + 1, sizeof *hs->origins);
        for (size_t i = 0; hs->origins && i < n; i++) {
            char b[400];
            snprintf(b, sizeof b, "http://%s", hs->hosts[i]);
            hs->origins[2 * i] = mcp__strdup(b);
            snprintf(b, sizeof b, "https://%s", hs->hosts[i]);
            hs->origins[2 * i + 1] = mcp__strdup(b);
            if (!hs->origins[2 * i] || !hs->origins[2 * i + 1]) {
                /* A NULL inside would end the list early (and leak what follows). */
                mcp_free(hs->origins[2 * i + 1]);
                hs->origins[2 * i + 1] = NULL;
                strv_free(hs->origins);
                hs->origins = NULL;
            }
        }
    }
    if (!hs->origins)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    return MCP_OK;
}

/* TLS: libmicrohttpd's https (GnuTLS on Debian), PEM from files, into the
 * daemon's options (left at MHD_OPTION_END without TLS). */
static mcp_status setup_tls(mcp_http_server *hs, const mcp_http_opts *o, struct MHD_OptionItem tls_opts[3],
                            mcp_error *err)
{
    for (int i = 0; i < 3; i++)
        tls_opts[i] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    if (!o->tls_cert_file && !o->tls_key_file)
        return MCP_OK;
    if (!o->tls_cert_file || !o->tls_key_file)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "https needs both tls_cert_file and tls_key_file");
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES)
        return mcp__fail(err, MCP_ERR_UNSUPPORTED, 0, 0, "this libmicrohttpd was built without TLS");
    hs->tls_cert = read_pem(o->tls_cert_file);
    hs->tls_key = read_pem(o->tls_key_file);
    if (!hs->tls_cert || !hs->tls_key)
        return mcp__fail(err, MCP_ERR_IO, 0, 0, "cannot read %.200s",
                         hs->tls_cert ? o->tls_key_file : o->tls_cert_file);
    hs->tls = 1;
    tls_opts[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, hs->tls_cert};
    tls_opts[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, hs->tls_key};
    return MCP_OK;
}

/* The address to bind: an IPv4 or IPv6 literal, or "localhost" (IPv4
 * loopback); IPv6 adds MHD_USE_IPv6 to *flags. */
mcp_status mcp__http_bind_address(const char *host, unsigned port, struct sockaddr_storage *ss, unsigned *flags,
                                  mcp_error *err)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *flags |= MHD_USE_IPv6;
    } else if (!strcmp(host, "localhost")) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    } else {
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "%s is not an IP address to bind", host);
    }
    return MCP_OK;
}

/*
 * Starts libmicrohttpd on `host`, then learns the port it bound and, when
 * the verifier has no resource URI of its own, gives it this server's URL.
 */
static mcp_status start_daemon(mcp_http_server *hs, const mcp_http_opts *o, const char *host, mcp_error *err)
{
    struct MHD_OptionItem tls_opts[3];
    mcp_status st = setup_tls(hs, o, tls_opts, err);
    if (st)
        return st;
    /*
     * poll(), not epoll: libmicrohttpd 0.9.75's edge-triggered epoll loop
     * can miss the read edge of a keep-alive connection whose next request
     * arrives while the previous answer is still being finished (seen under
     * load: requests sat unread in the socket until the idle timeout).
     * Level-triggered poll() cannot miss it, and each pool thread polls
     * only its own connections.
     */
    unsigned flags = MHD_USE_POLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | (hs->tls ? MHD_USE_TLS : 0);
    struct sockaddr_storage ss;
    if ((st = mcp__http_bind_address(host, o->port, &ss, &flags, err)))
        return st;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned threads = o->threads ? o->threads : (unsigned)(cores > 0 ? cores : 1);
    hs->mhd = MHD_start_daemon(flags, (uint16_t)o->port, NULL, NULL, access_handler, hs, MHD_OPTION_SOCK_ADDR,
                               (struct sockaddr *)&ss, MHD_OPTION_THREAD_POOL_SIZE, threads,
                               MHD_OPTION_CONNECTION_LIMIT,
                               o->max_connections ? o->max_connections : DEFAULT_MAX_CONNECTIONS,
                               MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                               !ACCOUNTING                    ? 0u
                               : o->max_connections_per_address ? o->max_connections_per_address
                                                              : DEFAULT_CONNECTIONS_PER_ADDRESS,
                               MHD_OPTION_CONNECTION_TIMEOUT, hs->conn_timeout_s, MHD_OPTION_NOTIFY_CONNECTION,
                               on_connection, hs, MHD_OPTION_NOTIFY_COMPLETED, request_completed, hs,
                               MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY, MHD_OPTION_ARRAY, tls_opts,
                               MHD_OPTION_END);
    if (!hs->mhd) {
        int e = errno;
        return mcp__fail(err, MCP_ERR_IO, 0, 0, "cannot listen on %s:%u: %s", host, o->port,
                         e ? strerror(e) : hs->tls ? "libmicrohttpd refused to start (is the TLS key and "
                                                     "certificate a matching PEM pair?)"
                                                   : "libmicrohttpd refused to start");
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(hs->mhd, MHD_DAEMON_INFO_BIND_PORT);
    hs->port = di ? di->port : o->port;
    if (hs->auth) {
        char url[400];
        const char *uh = !strcmp(host, "0.0.0.0") || !strcmp(host, "::") ? "localhost" : host;
        int v6 = strchr(uh, ':') != NULL;
        snprintf(url, sizeof url, "%s://%s%s%s:%u%s", hs->tls ? "https" : "http", v6 ? "[" : "", uh, v6 ? "]" : "",
                 hs->port, hs->path);
        mcp__auth_default_resource(hs->auth, url);
    }
    return MCP_OK;
}

mcp_status mcp_http_server_start_sized(mcp_http_server **out, mcp_server *srv, const mcp_http_opts *opts,
                                       size_t opts_size, mcp_error *err)
{
    mcp_http_opts opts_copy;
    mcp_status ost = MCP__OPTS_IN(mcp_http_opts, &opts_copy, opts, opts_size, err);
    if (ost)
        return ost;
    if (opts)
        opts = &opts_copy;
    if (!out || !srv)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "out and srv are required");
    mcp_http_opts o;
    if (opts)
        o = *opts;
    else
        memset(&o, 0, sizeof o);
    const char *host = o.host ? o.host : "127.0.0.1";
    const char *path = o.path ? o.path : DEFAULT_PATH;
    if (path[0] != '/')
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "the endpoint path must start with '/'");
    if (o.health_path && (o.health_path[0] != '/' || !strcmp(o.health_path, path)))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "the health path must start with '/' and differ from the endpoint");
    mcp_http_server *hs = hs_new(srv, &o);
    if (!hs)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    mcp_status st = setup_hosts(hs, &o, host, path, err);
    if (!st)
        st = setup_auth(hs, &o, err);
    if (!st)
        st = start_daemon(hs, &o, host, err);
    if (st) {
        hs_free(hs);
        return st;
    }
    if (pthread_create(&hs->ticker, NULL, ticker_main, hs) != 0) {
        MHD_stop_daemon(hs->mhd);
        hs_free(hs);
        return mcp__fail(err, MCP_ERR_IO, 0, 0, "cannot start the HTTP ticker thread");
    }
    hs->ticker_started = 1;
    *out = hs;
    return MCP_OK;
}

unsigned mcp_http_server_port(const mcp_http_server *hs)
{
    return hs ? hs->port : 0;
}

/* 1 while a 2026-07-28 request still waits for its answer. */
static int stop_calls_pending(mcp_http_server *hs)
{
    int pending = 0;
    pthread_mutex_lock(&hs->mu);
    for (hreq *r = hs->active; r && !pending; r = r->active_next) {
        pthread_mutex_lock(&r->mu);
        pending = !r->ended && r->conn && !r->sess && !r->got_final;
        pthread_mutex_unlock(&r->mu);
    }
    pthread_mutex_unlock(&hs->mu);
    return pending;
}

void mcp_http_server_stop(mcp_http_server *hs, unsigned grace_ms)
{
    if (!hs)
        return;
    /* Stop accepting first. The listening socket is ours from here on; it
     * is closed once the daemon's threads are gone (libmicrohttpd's rule). */
    MHD_socket lfd = MHD_quiesce_daemon(hs->mhd);
    pthread_mutex_lock(&hs->mu);
    hs->stopping = 1;
    pthread_cond_broadcast(&hs->cv);
    session *sessions = hs->sessions;
    hs->sessions = NULL;
    mcp__metrics_gauge(hs->srv, MCP__GAUGE_SESSIONS, -(long)hs->nsessions);
    hs->nsessions = 0;
    for (session *s = sessions; s; s = s->next)
        s->closed = 1;
    pthread_mutex_unlock(&hs->mu);
    /* Let calls in flight finish (their answers still go out), then cancel:
     * one grace for all sessions, not one each. Each close waits at most
     * half of what is left for calls to finish and half for cancelled ones
     * to unwind, so the last session starts with no time left at worst. */
    uint64_t until = mcp__mono_ms() + grace_ms;
    for (session *s = sessions; s; s = s->next) {
        uint64_t now = mcp__mono_ms();
        mcp_conn_close(s->conn, now < until ? (unsigned)((until - now) / 2) : 0);
    }
    /* 2026-07-28 calls get what is left of the same grace. */
    while (stop_calls_pending(hs) && mcp__mono_ms() < until) {
        struct timespec ts = {0, 10000000L};
        nanosleep(&ts, NULL);
    }
    if (hs->ticker_started)
        pthread_join(hs->ticker, NULL);
    /* Token checks still queued see `stopping` and refuse at once; each
     * resumes its request. */
    mcp__pool_free(hs->auth_pool);
    hs->auth_pool = NULL;
    /* libmicrohttpd refuses to stop with suspended connections: end every
     * waiting request and stream, and wait until none is suspended. */
    for (int round = 0; round < 100; round++) {
        int waiting = 0;
        pthread_mutex_lock(&hs->mu);
        for (hreq *r = hs->active; r; r = r->active_next) {
            pthread_mutex_lock(&r->mu);
            if (!r->ended) {
                r->close_stream = 1;
                wake(r);
                waiting |= !r->queued || r->suspended;
            }
            pthread_mutex_unlock(&r->mu);
        }
        pthread_mutex_unlock(&hs->mu);
        if (!waiting)
            break;
        struct timespec ts = {0, 20000000L};
        nanosleep(&ts, NULL);
    }
    {
        /* Give the daemon threads a moment to process the last resumptions. */
        struct timespec ts = {0, 50000000L};
        nanosleep(&ts, NULL);
    }
    MHD_stop_daemon(hs->mhd); /* ends every request: request_completed runs for each */
    if (lfd != MHD_INVALID_SOCKET)
        close(lfd);
    while (sessions) {
        session *n = sessions->next;
        session_unref(sessions);
        sessions = n;
    }
    while (hs->active) {
        hreq *r = hs->active;
        hs->active = r->active_next;
        hreq_unref(r);
    }
    hs_free(hs);
}

/* Signal handling for mcp_http_serve: the handler only posts a semaphore. */
static sem_t g_stop_sem;

static void on_stop_signal(int sig)
{
    (void)sig;
    sem_post(&g_stop_sem); /* async-signal-safe */
}

mcp_status mcp_http_serve_sized(mcp_server *srv, const mcp_http_opts *opts, size_t opts_size, mcp_error *err)
{
    mcp_http_opts opts_copy;
    mcp_status ost = MCP__OPTS_IN(mcp_http_opts, &opts_copy, opts, opts_size, err);
    if (ost)
        return ost;
    if (opts)
        opts = &opts_copy;
    mcp_http_server *hs;
    mcp_status st = mcp_http_server_start(&hs, srv, opts, err);
    if (st)
        return st;
    const char *h = opts && opts->host ? opts->host : "127.0.0.1";
    int v6 = strchr(h, ':') != NULL;
    mcp__server_diag(srv, MCP_LOG_NOTICE, "listening on %s://%s%s%s:%u%s", hs->tls ? "https" : "http", v6 ? "[" : "",
                     h, v6 ? "]" : "", mcp_http_server_port(hs), hs->path);
    /* Handlers rather than sigwait(): the server's threads may already run
     * with these signals unblocked, and a handler works on whichever thread
     * the kernel picks. The previous handlers come back afterwards. */
    sem_init(&g_stop_sem, 0, 0);
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    while (sem_wait(&g_stop_sem) != 0 && errno == EINTR)
        ;
    mcp_http_server_stop(hs, 5000);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sem_destroy(&g_stop_sem);
    return MCP_OK;
}

mcp_status mcp_http_parse_listen_sized(const char *spec, mcp_http_opts *opts, size_t opts_size, char *host_buf,
                                       size_t host_buf_len)
{
    if (!spec || !opts || !host_buf || !host_buf_len)
        return MCP_ERR_INVALID_ARG;
    /* host and port are 0.1.0 fields: a size that holds those is enough. */
    if (MCP__OPTS_SIZE_CHECK(mcp_http_opts, opts_size, NULL))
        return MCP_ERR_INVALID_ARG;
    const char *port = spec;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= host_buf_len)
            return MCP_ERR_INVALID_ARG;
        memcpy(host_buf, spec + 1, (size_t)(close - spec - 1));
        host_buf[close - spec - 1] = '\0';
        opts->host = host_buf;
        port = close + 2;
    } else if (strrchr(spec, ':')) {
        const char *colon = strrchr(spec, ':');
        if ((size_t)(colon - spec) >= host_buf_len)
            return MCP_ERR_INVALID_ARG;
        memcpy(host_buf, spec, (size_t)(colon - spec));
        host_buf[colon - spec] = '\0';
        opts->host = host_buf;
        port = colon + 1;
    }
    char *end;
    unsigned long p = strtoul(port, &end, 10);
    if (!*port || *end || p > 65535)
        return MCP_ERR_INVALID_ARG;
    opts->port = (unsigned)p;
    return MCP_OK;
}
