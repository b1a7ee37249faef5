/*
 * Streamable HTTP client transport on libcurl (docs/client-http.md).
 *
 * One libcurl multi handle, driven by one transport thread. Every message
 * the core sends becomes an HTTP POST (an easy handle) to the MCP
 * endpoint; the multi handle keeps connections alive between them. The
 * sending thread builds the easy handle and queues it; the transport
 * thread adds it to the multi handle, waking from curl_multi_poll() through
 * curl_multi_wakeup(). Everything that reads responses runs on the
 * transport thread, so every call into the core (frames, failed requests,
 * the end of the connection) comes from that one thread.
 *
 * What a POST's answer can be:
 *   - 202/204 and no body (a notification or a response was accepted);
 *   - application/json: one frame, handed to the core when complete;
 *   - text/event-stream: parsed as it arrives (sse.c); each `message`
 *     event is a frame. When the stream ends before the request's answer
 *     came, a legacy stream that carried event ids is resumed with GET and
 *     Last-Event-ID (after the server's `retry` delay); otherwise the
 *     request fails with MCP_ERR_CLOSED;
 *   - another status: a JSON-RPC answer to this request in the body is a
 *     frame like any other (the era probe's -32022); anything else fails
 *     the request (401/403 go to the core with the challenge, which
 *     authorizes and sends the request again when it has an OAuth session,
 *     else fails it with MCP_ERR_AUTH; a legacy 404 to a request that
 *     carried the session id goes to the core, which starts a new session
 *     and sends the request again; others MCP_ERR_PROTOCOL with the status).
 *
 * Legacy sessions keep the Mcp-Session-Id of the initialize response (an
 * initialize, also the one of a new session, never carries the old id), open
 * the standalone GET stream once the handshake settled (reconnecting when
 * it drops), and end with DELETE on close. The deprecated HTTP+SSE
 * transport (2024-11-05) is used when asked for, or when a legacy
 * initialize POST is refused with 400/404/405: a GET on the URL must then
 * stream an `endpoint` event, every message is POSTed there, and every
 * answer arrives on that one stream.
 *
 * Locking: t->mu guards what other threads touch (the send queue, the
 * cancellations, the session id, the version, the flags). Lists of live
 * transfers belong to the transport thread alone. No callback into the
 * core runs with t->mu held.
 */
#include "client/client_internal.h"
#include "util/abi.h"
#include "util/util.h"
#include "client/oauth.h"
#include "mcp/rpc.h"
#include "transport/sse.h"

#include "util/curl_api.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define DEFAULT_CONNECT_TIMEOUT_MS 10000u
#define DEFAULT_MAX_RECONNECTS 5u
#define DEFAULT_RETRY_MS 1000u         /* reconnection delay when the server named none */
#define MAX_HEADER_BYTES (64u << 10)   /* response header bytes accepted per response */
#define MAX_SESSION_ID 256u            /* longest Mcp-Session-Id accepted */
#define SNIPPET_MAX 512u               /* bytes of a non-JSON error body kept for the message */
#define QUOTE_MAX 160u                 /* of which this many are quoted */
#define DELETE_TIMEOUT_MS 2000L        /* how long close waits for the session's DELETE */
#define IDLE_POLL_MS 1000              /* longest sleep of the transport thread */
#define KEEPIDLE_S 15L                 /* TCP keep-alive: a dead peer is noticed after */
#define KEEPINTVL_S 5L                 /* KEEPIDLE + probes x KEEPINTVL seconds */
#define MIN_LINE 4096u                 /* SSE line bound never below this */
#define MAX_CHALLENGE 8192u            /* WWW-Authenticate bytes kept for the core */

/* ------------------------------------------------------------------------ */
/* Types                                                                     */

typedef enum xkind {
    XK_POST = 0, /* a message POST */
    XK_RESUME,   /* GET + Last-Event-ID continuing a POST's stream (same request) */
    XK_GET,      /* the legacy standalone GET stream */
    XK_DELETE,   /* ending the legacy session */
    XK_SSE       /* the HTTP+SSE (2024-11-05) stream carrying every answer */
} xkind;

enum { CT_NONE = 0, CT_JSON, CT_SSE, CT_OTHER };

typedef struct http_client http_client;

/* One HTTP exchange, or a stream that may be reconnected. */
typedef struct xfer {
    struct xfer *next;          /* the list it is on (queue, live, waiting or held) */
    http_client *t;             /* owner */
    CURL *easy;                 /* the current attempt; NULL while waiting to reconnect */
    struct curl_slist *hdrs;    /* its request headers */
    xkind kind;                 /* what it is */
    uint64_t id;                /* the request's wire id; 0 when not a request */
    int is_request;             /* a JSON-RPC request: it expects an answer */
    int modern;                 /* a 2026-07-28 request */
    int is_initialize;          /* the legacy initialize: keep the session id it gets */
    int barrier;                /* later messages wait until this one was accepted */
    int sent_session;           /* the request carried Mcp-Session-Id */
    char *body;                 /* the POST body (kept for a retry over HTTP+SSE) */
    size_t body_len;            /* its length */
    size_t body_off;            /* what read_body handed libcurl so far (no_replay) */
    int no_replay;              /* never let libcurl send this POST twice (mcp__out.no_replay) */
    char what[80];              /* "POST tools/call" etc., for messages */
    /* ---- the current attempt's response ---- */
    long status;                /* HTTP status of the final response, 0 before */
    int ctype;                  /* CT_* of its Content-Type */
    int headers_done;           /* the final response's headers are complete */
    size_t header_bytes;        /* header bytes received (bounded) */
    char *session;              /* its Mcp-Session-Id, validated */
    char challenge[256];        /* its WWW-Authenticate, truncated and quoted, for messages */
    mcp_buf challenge_raw;      /* its WWW-Authenticate value(s) as sent, joined with ", " */
    mcp_buf resp;               /* a JSON body, or the start of another body */
    int resp_cut;               /* the body was longer than what resp kept */
    mcp__sse sse;               /* SSE parser (id and retry survive reconnects) */
    int sse_started;            /* this attempt's body is an event stream */
    int got_response;           /* the request's answer was delivered */
    mcp_status fail_st;         /* a limit or protocol failure found in a callback */
    char fail_msg[200];         /* its message */
    char errbuf[CURL_ERROR_SIZE]; /* libcurl's message for the attempt */
    /* ---- reconnection ---- */
    int cancelled;              /* cancelled: finish silently */
    unsigned attempts;          /* reconnects since the stream was last connected */
    uint64_t due_ms;            /* when to reconnect (waiting list) */
} xfer;

struct http_client {
    mcp__ctransport base;        /* first: the core's view */
    /* ---- set at creation, then read-only ---- */
    char *url;                   /* the MCP endpoint (or the HTTP+SSE stream URL) */
    char **headers;              /* user headers, validated, NULL-terminated */
    char *auth;                  /* "Authorization: Bearer ..." or NULL; never logged (under mu:
                                    an authorization replaces it) */
    long connect_timeout_ms;     /* TCP/TLS connect limit */
    unsigned max_reconnects;     /* per broken stream */
    int force_sse;               /* legacy_sse option: HTTP+SSE only */
    int no_get_stream;           /* no standalone GET stream */
    size_t max_frame;            /* the core's frame limit (read after attach) */
    CURLM *multi;                /* the multi handle */
    pthread_t thread;            /* the transport thread */
    int thread_started;          /* it exists (join on close) */
    atomic_int closing;          /* close started: no more callbacks, no more sends */
    /* ---- guarded by mu ---- */
    pthread_mutex_t mu;
    xfer *queue;                 /* built by senders, not yet on the multi handle */
    xfer **queue_tail;           /* its end, for FIFO order */
    uint64_t *cancels;           /* request ids to abort */
    size_t ncancels, cancels_cap; /* how many, room */
    int dead;                    /* the connection is gone: sends fail */
    char *session_id;            /* legacy Mcp-Session-Id, or NULL */
    char version[32];            /* protocol version for GET and DELETE */
    int want_get;                /* ready(): open the standalone GET stream */
    /* ---- transport thread only ---- */
    xfer *live;                  /* on the multi handle */
    xfer *waiting;               /* streams waiting to reconnect */
    xfer *held;                  /* messages held behind a barrier or the HTTP+SSE endpoint */
    xfer *barrier;               /* the barrier in flight, or NULL */
    xfer *get_stream;            /* the standalone GET stream (live or waiting), or NULL */
    int sse_mode;                /* 0 Streamable HTTP; 1 HTTP+SSE, waiting for the endpoint; 2 ready */
    char *post_url;              /* HTTP+SSE: where messages go */
    xfer *fallback_init;         /* the initialize to re-POST once the endpoint is known */
    long fallback_status;        /* the status that made us fall back */
};

/* ------------------------------------------------------------------------ */
/* Small helpers                                                             */

static int is_closing(const http_client *t)
{
    return atomic_load(&((http_client *)t)->closing);
}

/* Has a legacy session id (an initialize answered with one)? */
static int has_session(http_client *t)
{
    pthread_mutex_lock(&t->mu);
    int yes = t->session_id != NULL;
    pthread_mutex_unlock(&t->mu);
    return yes;
}

/* snprintf for messages, where a cut is fine (they are bounded on purpose). */
static const char *reason(long status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
    }
}

/* Appends a formatted header line to a libcurl list (which copies it). */
static mcp_status add_header(struct curl_slist **list, const char *fmt, ...) MCP__PRINTF(2, 3);
static mcp_status add_header(struct curl_slist **list, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return MCP_ERR_INVALID_ARG;
    char *line = small;
    if ((size_t)n >= sizeof small) {
        line = mcp_malloc((size_t)n + 1);
        if (!line)
            return MCP_ERR_NOMEM;
        va_start(ap, fmt);
        vsnprintf(line, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    struct curl_slist *l = curl_slist_append(*list, line);
    if (line != small)
        mcp_free(line);
    if (!l)
        return MCP_ERR_NOMEM;
    *list = l;
    return MCP_OK;
}

/*
 * Can `s` travel as a header value as it is? Visible ASCII with inner
 * spaces or tabs, no whitespace at the edges (SEP-2243's plain form; a
 * value already in the "=?base64?...?=" form passes too).
 */
static int header_safe(const char *s, size_t n)
{
    if (n == 0)
        return 1;
    if (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t')
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if ((ch < 0x20 && ch != '\t') || ch > 0x7E)
            return 0;
    }
    return 1;
}

/*
 * "Name: value"; an empty value is sent as a present, empty header, which
 * libcurl spells "Name;" ("Name:" would remove the header instead).
 */
static mcp_status add_value_header(struct curl_slist **h, const char *name, size_t name_len, const char *v,
                                   size_t n)
{
    if (n == 0)
        return add_header(h, "%.*s;", (int)name_len, name);
    return add_header(h, "%.*s: %.*s", (int)name_len, name, (int)n, v);
}

/* Does the frame answer request `id` (a response, not a request or notification)? */
static int answers(const char *data, size_t len, uint64_t id)
{
    mcp_json_parse_opts o;
    memset(&o, 0, sizeof o);
    o.max_bytes = len < MCP_JSON_LIMIT_MAX_BYTES ? (len ? len : 1) : MCP_JSON_LIMIT_MAX_BYTES;
    o.max_depth = MCP_JSON_LIMIT_MAX_DEPTH;
    mcp_json_doc *d;
    if (mcp_json_parse(&d, data, len, &o, NULL) != MCP_OK)
        return 0;
    const mcp_json *r = mcp_json_doc_root(d);
    const mcp_json *v = mcp_json_get(r, "id");
    int yes = mcp_json_typeof(v) == MCP_JSON_INT && mcp_json_int(v) >= 0 && (uint64_t)mcp_json_int(v) == id &&
              !mcp_json_get(r, "method") && (mcp_json_get(r, "result") || mcp_json_get(r, "error"));
    mcp_json_doc_free(d);
    return yes;
}

/* ------------------------------------------------------------------------ */
/* Transfers                                                                 */

static void xfer_reset_response(xfer *x)
{
    x->status = 0;
    x->ctype = CT_NONE;
    x->headers_done = 0;
    x->header_bytes = 0;
    mcp_free(x->session);
    x->session = NULL;
    x->challenge[0] = '\0';
    mcp_buf_cleanup(&x->challenge_raw);
    mcp_buf_cleanup(&x->resp);
    x->resp_cut = 0;
    x->sse_started = 0;
    x->fail_st = MCP_OK;
    x->fail_msg[0] = '\0';
    x->errbuf[0] = '\0';
}

static void xfer_drop_easy(xfer *x)
{
    if (x->easy) {
        curl_easy_cleanup(x->easy);
        x->easy = NULL;
    }
    curl_slist_free_all(x->hdrs);
    x->hdrs = NULL;
}

static void xfer_free(xfer *x)
{
    if (!x)
        return;
    xfer_drop_easy(x);
    mcp_free(x->body);
    mcp_free(x->session);
    mcp_buf_cleanup(&x->challenge_raw);
    mcp_buf_cleanup(&x->resp);
    mcp__sse_cleanup(&x->sse);
    mcp_free(x);
}

static mcp_status on_sse_event(void *ud, const char *type, const char *data, size_t len);

static xfer *xfer_new(http_client *t, xkind kind)
{
    xfer *x = mcp__calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->t = t;
    x->kind = kind;
    mcp_buf_init(&x->resp, 0);
    mcp_buf_init(&x->challenge_raw, MAX_CHALLENGE);
    /* Bounds are set when the stream starts (the frame limit is the core's). */
    mcp__sse_init(&x->sse, 0, 0, on_sse_event, x);
    return x;
}

/* Records a failure found inside a libcurl callback; the callback then aborts. */
static void xfer_fail(xfer *x, mcp_status st, const char *fmt, ...) MCP__PRINTF(3, 4);
static void xfer_fail(xfer *x, mcp_status st, const char *fmt, ...)
{
    if (x->fail_st)
        return;
    x->fail_st = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->fail_msg, sizeof x->fail_msg, fmt, ap);
    va_end(ap);
}

/* Removes `x` from a singly linked list; 1 when it was there. */
static int list_remove(xfer **head, xfer *x)
{
    for (xfer **pp = head; *pp; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = x->next;
            x->next = NULL;
            return 1;
        }
    return 0;
}

static void list_append(xfer **head, xfer *x)
{
    xfer **pp = head;
    while (*pp)
        pp = &(*pp)->next;
    x->next = NULL;
    *pp = x;
}

/* ------------------------------------------------------------------------ */
/* libcurl callbacks (transport thread)                                      */

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud)
{
    xfer *x = ud;
    http_client *t = x->t;
    size_t len = size * nitems;
    x->header_bytes += len;
    if (x->header_bytes > MAX_HEADER_BYTES) {
        xfer_fail(x, MCP_ERR_LIMIT, "%s: response headers longer than %u bytes", x->what, MAX_HEADER_BYTES);
        return 0;
    }
    size_t n = len;
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    if (len >= 5 && memcmp(buf, "HTTP/", 5) == 0) {
        /* A status line starts a response (there may be 1xx ones first). */
        mcp_free(x->session);
        x->session = NULL;
        x->challenge[0] = '\0';
        mcp_buf_reset(&x->challenge_raw);
        x->ctype = CT_NONE;
        x->headers_done = 0;
        const char *sp = memchr(buf, ' ', n);
        x->status = 0;
        if (sp && (size_t)(buf + n - sp) >= 4)
            for (int i = 1; i <= 3 && sp[i] >= '0' && sp[i] <= '9'; i++)
                x->status = x->status * 10 + (sp[i] - '0');
        return len;
    }
    if (n == 0) {
        /* The blank line: this response's headers are complete. */
        if (x->status >= 100 && x->status < 200)
            return len;
        x->headers_done = 1;
        if (x->barrier && x->kind == XK_GET) {
            /* The GET stream is up: held messages go out after this perform
             * round (libcurl takes no new transfers inside a callback). */
            x->barrier = 0;
            if (t->barrier == x)
                t->barrier = NULL;
        }
        if (x->status >= 200 && x->status < 300 && x->is_initialize && x->kind == XK_POST && !t->sse_mode) {
            /* Keep the session before the body (the InitializeResult) reaches
             * the core, so the messages it sends next carry the id (none:
             * the new session has no id, the old one must not be sent). */
            pthread_mutex_lock(&t->mu);
            mcp_free(t->session_id);
            t->session_id = x->session;
            pthread_mutex_unlock(&t->mu);
            x->session = NULL;
        }
        if (x->status >= 200 && x->status < 300 && x->ctype == CT_SSE) {
            /* Lines hold a frame plus the "data: " field name. */
            size_t line = t->max_frame + 16 > MIN_LINE ? t->max_frame + 16 : MIN_LINE;
            mcp__sse_reset(&x->sse);
            mcp__sse_limits(&x->sse, line, t->max_frame);
            x->sse_started = 1;
            /* Connected again: the reconnection attempts start over. A
             * server that polls (SEP-1699) may close streams repeatedly. */
            x->attempts = 0;
        }
        return len;
    }
    const char *colon = memchr(buf, ':', n);
    if (!colon)
        return len;
    size_t nl = (size_t)(colon - buf);
    const char *v = colon + 1;
    const char *end = buf + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    size_t vl = (size_t)(end - v);
    if (nl == 12 && strncasecmp(buf, "Content-Type", 12) == 0) {
        const char *semi = memchr(v, ';', vl);
        size_t ml = semi ? (size_t)(semi - v) : vl;
        while (ml && (v[ml - 1] == ' ' || v[ml - 1] == '\t'))
            ml--;
        if (ml == 16 && strncasecmp(v, "application/json", 16) == 0)
            x->ctype = CT_JSON;
        else if (ml == 17 && strncasecmp(v, "text/event-stream", 17) == 0)
            x->ctype = CT_SSE;
        else
            x->ctype = CT_OTHER;
    } else if (nl == 14 && strncasecmp(buf, "Mcp-Session-Id", 14) == 0 && x->is_initialize) {
        if (vl > MAX_SESSION_ID || !mcp__visible_ascii(v, vl)) {
            xfer_fail(x, MCP_ERR_PROTOCOL,
                      "%s: the server sent an invalid Mcp-Session-Id (%zu bytes; visible ASCII, at most %u)",
                      x->what, vl, MAX_SESSION_ID);
            return 0;
        }
        mcp_free(x->session);
        x->session = mcp__strndup(v, vl);
        if (!x->session) {
            xfer_fail(x, MCP_ERR_NOMEM, "%s: out of memory", x->what);
            return 0;
        }
    } else if (nl == 16 && strncasecmp(buf, "WWW-Authenticate", 16) == 0) {
        if (!x->challenge[0])
            mcp__quote_text(x->challenge, sizeof x->challenge, v, vl);
        /* Several header lines are one comma-separated list (RFC 9110
         * section 5.3). Beyond the bound the rest is dropped: the Bearer
         * challenge comes first in practice, and a partial one still parses. */
        if (x->challenge_raw.len && mcp_buf_append(&x->challenge_raw, ", ", 2) != MCP_OK)
            return len;
        if (mcp_buf_append(&x->challenge_raw, v, vl) != MCP_OK) {
            size_t room = MAX_CHALLENGE - x->challenge_raw.len;
            mcp_buf_append(&x->challenge_raw, v, vl < room ? vl : room);
        }
    }
    return len;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t len = size * nmemb;
    if (is_closing(x->t) && x->kind != XK_DELETE)
        return 0;
    if (x->sse_started) {
        mcp_status st = mcp__sse_feed(&x->sse, ptr, len);
        if (st == MCP_ERR_LIMIT) {
            xfer_fail(x, MCP_ERR_LIMIT, "%s: %s (the limit follows max_message)", x->what, x->sse.error);
            return 0;
        }
        if (st) {
            xfer_fail(x, st, "%s: %s", x->what, st == MCP_ERR_NOMEM ? "out of memory" : "event stream failed");
            return 0;
        }
        return len;
    }
    int ok = x->status >= 200 && x->status < 300;
    if (x->ctype == CT_JSON) {
        /* A JSON body is one frame; an error body may be one too. */
        size_t room = x->t->max_frame - (x->resp.len < x->t->max_frame ? x->resp.len : x->t->max_frame);
        if (len > room) {
            if (ok) {
                xfer_fail(x, MCP_ERR_LIMIT, "%s: JSON response body longer than %zu bytes (max_message)", x->what,
                          x->t->max_frame);
                return 0;
            }
            x->resp_cut = 1;
            len = room;
        }
        if (len && mcp_buf_append(&x->resp, ptr, len) != MCP_OK) {
            xfer_fail(x, MCP_ERR_NOMEM, "%s: out of memory", x->what);
            return 0;
        }
        return size * nmemb;
    }
    /* Any other body: keep its start for the message, drop the rest. */
    if (x->resp.len < SNIPPET_MAX) {
        size_t take = SNIPPET_MAX - x->resp.len < len ? SNIPPET_MAX - x->resp.len : len;
        if (mcp_buf_append(&x->resp, ptr, take) != MCP_OK) {
            xfer_fail(x, MCP_ERR_NOMEM, "%s: out of memory", x->what);
            return 0;
        }
        if (take < len)
            x->resp_cut = 1;
    } else {
        x->resp_cut = 1;
    }
    return size * nmemb;
}

/* ------------------------------------------------------------------------ */
/* Building requests                                                         */

static mcp_status add_common_headers(http_client *t, struct curl_slist **h)
{
    mcp_status st = MCP_OK;
    for (char **p = t->headers; p && *p && !st; p++)
        st = add_header(h, "%s", *p);
    pthread_mutex_lock(&t->mu);
    if (!st && t->auth)
        st = add_header(h, "%s", t->auth);
    pthread_mutex_unlock(&t->mu);
    /* No "100-continue" round trip before large bodies. */
    if (!st)
        st = add_header(h, "Expect:");
    return st;
}

/* libcurl's read callback for a no_replay body. */
static size_t read_body(char *buf, size_t size, size_t n, void *ud)
{
    xfer *x = ud;
    size_t cap = size * n, left = x->body_len - x->body_off;
    size_t k = left < cap ? left : cap;
    memcpy(buf, x->body + x->body_off, k);
    x->body_off += k;
    return k;
}

/* Options every attempt shares. */
static mcp_status setup_easy(http_client *t, xfer *x)
{
    x->easy = curl_easy_init();
    if (!x->easy)
        return MCP_ERR_NOMEM;
    CURL *e = x->easy;
    CURLcode rc = CURLE_OK;
#define SET(opt, val)                                                                                              \
    do {                                                                                                           \
        if (rc == CURLE_OK)                                                                                        \
            rc = curl_easy_setopt(e, opt, val);                                                                    \
    } while (0)
    SET(CURLOPT_PRIVATE, (void *)x);
    SET(CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    /* Redirects are not followed: a POST must not wander, nor a token. */
    if (rc == CURLE_OK)
        rc = (CURLcode)mcp__curl_defaults(e);
    SET(CURLOPT_CONNECTTIMEOUT_MS, t->connect_timeout_ms);
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    SET(CURLOPT_TCP_KEEPIDLE, KEEPIDLE_S);
    SET(CURLOPT_TCP_KEEPINTVL, KEEPINTVL_S);
    SET(CURLOPT_TCP_NODELAY, 1L);
    SET(CURLOPT_USERAGENT, "libmcp/" MCP_VERSION_STRING);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, (void *)x);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, (void *)x);
    SET(CURLOPT_ERRORBUFFER, x->errbuf);
    if (x->kind == XK_POST) {
        SET(CURLOPT_POST, 1L);
        if (x->no_replay) {
            /* A body libcurl reads through a callback without a seek
             * function cannot be rewound, so libcurl cannot send it again
             * when a reused connection closes before any answer (which it
             * does for any method): the core decides about retries. */
            x->body_off = 0;
            SET(CURLOPT_READFUNCTION, read_body);
            SET(CURLOPT_READDATA, (void *)x);
        } else {
            SET(CURLOPT_POSTFIELDS, x->body);
        }
        SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->body_len);
    } else if (x->kind == XK_DELETE) {
        SET(CURLOPT_CUSTOMREQUEST, "DELETE");
        SET(CURLOPT_TIMEOUT_MS, DELETE_TIMEOUT_MS);
    } else {
        SET(CURLOPT_HTTPGET, 1L);
    }
    if (x->hdrs)
        SET(CURLOPT_HTTPHEADER, x->hdrs);
#undef SET
    if (rc == CURLE_OUT_OF_MEMORY)
        return MCP_ERR_NOMEM;
    return rc == CURLE_OK ? MCP_OK : MCP_ERR_INTERNAL;
}

/*
 * A GET (stream, resumption) or DELETE attempt's easy handle, built on the
 * transport thread with the session and version of the moment.
 */
static mcp_status build_get(http_client *t, xfer *x, const char *last_id)
{
    xfer_drop_easy(x);
    xfer_reset_response(x);
    struct curl_slist *h = NULL;
    mcp_status st = MCP_OK;
    if (x->kind != XK_DELETE)
        st = add_header(&h, "Accept: text/event-stream");
    pthread_mutex_lock(&t->mu);
    if (!st && t->version[0])
        st = add_header(&h, "MCP-Protocol-Version: %s", t->version);
    if (!st && t->session_id && x->kind != XK_SSE)
        st = add_header(&h, "Mcp-Session-Id: %s", t->session_id);
    x->sent_session = t->session_id != NULL && x->kind != XK_SSE;
    pthread_mutex_unlock(&t->mu);
    if (!st && last_id)
        st = add_header(&h, "Last-Event-ID: %s", last_id);
    if (!st)
        st = add_common_headers(t, &h);
    x->hdrs = h;
    if (!st)
        st = setup_easy(t, x);
    if (!st && curl_easy_setopt(x->easy, CURLOPT_URL, t->url) != CURLE_OK)
        st = MCP_ERR_NOMEM;
    return st;
}

/* Can this id go back to the server as Last-Event-ID? */
static int resumable_id(const mcp__sse *p)
{
    if (!p->has_id || !p->last_id[0])
        return 0;
    for (const char *s = p->last_id; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7E)
            return 0;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Calls into the core (transport thread only)                               */

static void deliver(http_client *t, const char *data, size_t len)
{
    if (!is_closing(t))
        mcp__client_on_frame(t->base.client, data, len);
}

static void fail_request(xfer *x, mcp_status st, long http_status, const char *msg)
{
    http_client *t = x->t;
    if (is_closing(t))
        return;
    if (x->is_request)
        mcp__client_on_request_failed(t->base.client, x->id, st, (int)http_status, msg);
    else
        mcp__client_log(t->base.client, MCP_LOG_WARNING, "HTTP transport: %s", msg);
}

/* The connection as a whole is gone: sends fail from now on. */
static void connection_gone(http_client *t, mcp_status st, const char *msg)
{
    pthread_mutex_lock(&t->mu);
    int was = t->dead;
    t->dead = 1;
    pthread_mutex_unlock(&t->mu);
    if (!was && !is_closing(t))
        mcp__client_on_closed(t->base.client, st, msg);
}

/* ------------------------------------------------------------------------ */
/* Starting transfers (transport thread)                                     */

static void start(http_client *t, xfer *x);

/* Starts held messages in order, until one of them is a barrier. */
static void release_held(http_client *t)
{
    while (t->held && !t->barrier && t->sse_mode != 1) {
        xfer *x = t->held;
        t->held = x->next;
        x->next = NULL;
        start(t, x);
    }
}

/* Puts an attempt on the multi handle (its easy handle is ready, URL aside). */
static void start(http_client *t, xfer *x)
{
    const char *url = x->kind == XK_POST && t->sse_mode == 2 ? t->post_url : t->url;
    if (curl_easy_setopt(x->easy, CURLOPT_URL, url) != CURLE_OK ||
        curl_multi_add_handle(t->multi, x->easy) != CURLM_OK) {
        mcp__say(x->fail_msg, sizeof x->fail_msg, "%s: libcurl refused the transfer", x->what);
        fail_request(x, MCP_ERR_INTERNAL, 0, x->fail_msg);
        if (x == t->get_stream)
            t->get_stream = NULL;
        xfer_free(x);
        return;
    }
    x->next = t->live;
    t->live = x;
    if (x->barrier)
        t->barrier = x;
}

/* A new message from the queue: start it now, or hold it. */
static void admit(http_client *t, xfer *x)
{
    if (x->kind == XK_SSE) {
        start(t, x);
        return;
    }
    if (t->barrier || t->sse_mode == 1 || t->held) {
        list_append(&t->held, x);
        return;
    }
    start(t, x);
}

static void open_get_stream(http_client *t)
{
    if (t->get_stream || t->sse_mode)
        return;
    xfer *x = xfer_new(t, XK_GET);
    if (!x)
        return;
    mcp__say(x->what, sizeof x->what, "GET stream");
    if (build_get(t, x, NULL) != MCP_OK) {
        mcp__client_log(t->base.client, MCP_LOG_WARNING, "HTTP transport: cannot open the GET stream");
        xfer_free(x);
        return;
    }
    /* Later messages wait until the server has answered the GET (headers or
     * a refusal): a server may send a request meant for this stream as soon
     * as the next call arrives, and a resumption must come after it. */
    x->barrier = 1;
    t->get_stream = x;
    admit(t, x);
}

/* Schedules a reconnection of a stream after the server's retry delay. */
static void schedule(http_client *t, xfer *x)
{
    xfer_drop_easy(x);
    long retry = x->sse.retry_ms >= 0 ? x->sse.retry_ms : (long)DEFAULT_RETRY_MS;
    x->due_ms = mcp__mono_ms() + (uint64_t)retry;
    x->attempts++;
    x->next = t->waiting;
    t->waiting = x;
}

/* Reconnects the streams whose time came; returns ms until the next one (or -1). */
static long run_timers(http_client *t)
{
    uint64_t now = mcp__mono_ms();
    long next = -1;
    xfer **pp = &t->waiting;
    while (*pp) {
        xfer *x = *pp;
        if (x->due_ms > now) {
            long d = (long)(x->due_ms - now);
            if (next < 0 || d < next)
                next = d;
            pp = &x->next;
            continue;
        }
        *pp = x->next;
        x->next = NULL;
        const char *last = resumable_id(&x->sse) ? x->sse.last_id : NULL;
        if (build_get(t, x, last) != MCP_OK) {
            mcp__say(x->fail_msg, sizeof x->fail_msg, "%s: cannot reconnect (out of memory)", x->what);
            fail_request(x, MCP_ERR_NOMEM, 0, x->fail_msg);
            if (x == t->get_stream)
                t->get_stream = NULL;
            xfer_free(x);
            continue;
        }
        start(t, x);
    }
    return next;
}

/* ------------------------------------------------------------------------ */
/* The deprecated HTTP+SSE transport                                         */

static mcp_status start_sse_stream(http_client *t)
{
    xfer *x = xfer_new(t, XK_SSE);
    if (!x)
        return MCP_ERR_NOMEM;
    mcp__say(x->what, sizeof x->what, "HTTP+SSE stream");
    mcp_status st = build_get(t, x, NULL);
    if (st) {
        xfer_free(x);
        return st;
    }
    t->sse_mode = 1;
    start(t, x);
    return MCP_OK;
}

/* Re-POSTs the initialize that fell back, now to the HTTP+SSE endpoint. */
static void repost_initialize(http_client *t)
{
    xfer *x = t->fallback_init;
    t->fallback_init = NULL;
    if (!x)
        return;
    xfer_reset_response(x);
    x->is_initialize = 0; /* HTTP+SSE has no session header to keep */
    if (setup_easy(t, x) != MCP_OK) {
        fail_request(x, MCP_ERR_NOMEM, 0, "HTTP+SSE: cannot re-send initialize (out of memory)");
        xfer_free(x);
        return;
    }
    start(t, x);
}

/* The `endpoint` event: where messages go, resolved against the stream's URL. */
static mcp_status on_endpoint(xfer *x, const char *data, size_t len)
{
    http_client *t = x->t;
    char *rel = mcp__strndup(data, len);
    CURLU *u = curl_url();
    CURLU *base = curl_url();
    char *full = NULL, *h1 = NULL, *h2 = NULL, *s1 = NULL, *s2 = NULL, *p1 = NULL, *p2 = NULL;
    mcp_status st = MCP_ERR_NOMEM;
    if (rel && u && base) {
        st = MCP_ERR_PROTOCOL;
        while (len && (rel[len - 1] == ' ' || rel[len - 1] == '\t'))
            rel[--len] = '\0';
        if (len && mcp__visible_ascii(rel, len) && curl_url_set(u, CURLUPART_URL, t->url, 0) == CURLUE_OK &&
            curl_url_set(base, CURLUPART_URL, t->url, 0) == CURLUE_OK &&
            curl_url_set(u, CURLUPART_URL, rel, 0) == CURLUE_OK &&
            curl_url_get(u, CURLUPART_URL, &full, 0) == CURLUE_OK &&
            curl_url_get(u, CURLUPART_HOST, &h1, 0) == CURLUE_OK &&
            curl_url_get(base, CURLUPART_HOST, &h2, 0) == CURLUE_OK &&
            curl_url_get(u, CURLUPART_SCHEME, &s1, 0) == CURLUE_OK &&
            curl_url_get(base, CURLUPART_SCHEME, &s2, 0) == CURLUE_OK &&
            curl_url_get(u, CURLUPART_PORT, &p1, CURLU_DEFAULT_PORT) == CURLUE_OK &&
            curl_url_get(base, CURLUPART_PORT, &p2, CURLU_DEFAULT_PORT) == CURLUE_OK) {
            /* Messages carry the token: they go to the stream's origin only. */
            if (strcasecmp(h1, h2) == 0 && strcasecmp(s1, s2) == 0 && strcmp(p1, p2) == 0) {
                mcp_free(t->post_url);
                t->post_url = mcp__strdup(full);
                st = t->post_url ? MCP_OK : MCP_ERR_NOMEM;
            }
        }
    }
    curl_free(full);
    curl_free(h1);
    curl_free(h2);
    curl_free(s1);
    curl_free(s2);
    curl_free(p1);
    curl_free(p2);
    curl_url_cleanup(u);
    curl_url_cleanup(base);
    mcp_free(rel);
    if (st) {
        xfer_fail(x, st, "HTTP+SSE: the endpoint event names %s",
                  st == MCP_ERR_NOMEM ? "a URL (out of memory)" : "no usable URL on the stream's origin");
        return st;
    }
    /* Held messages start from the transport loop: libcurl refuses new
     * transfers from inside its own callbacks. */
    if (t->sse_mode == 1)
        t->sse_mode = 2;
    return MCP_OK;
}

/* ------------------------------------------------------------------------ */
/* Events and completed transfers                                            */

static mcp_status on_sse_event(void *ud, const char *type, const char *data, size_t len)
{
    xfer *x = ud;
    http_client *t = x->t;
    if (x->kind == XK_SSE && strcmp(type, "endpoint") == 0)
        return on_endpoint(x, data, len);
    if (strcmp(type, "message") != 0 || len == 0)
        return MCP_OK; /* other types carry nothing for MCP; empty data primes a stream */
    if (x->is_request && !x->got_response && answers(data, len, x->id))
        x->got_response = 1;
    deliver(t, data, len);
    return MCP_OK;
}

/*
 * What a non-2xx answer said: "POST tools/call: Internal Server Error:
 * <start of the body>", with "HTTP 500 " before the reason when
 * `with_status` (the core prefixes the status to request failures itself).
 */
static void describe_status(const xfer *x, int with_status, char *out, size_t cap)
{
    char body[QUOTE_MAX + 1] = "";
    mcp_rpc_msg m;
    if (x->ctype == CT_JSON && x->resp.len && !x->resp_cut &&
        mcp_rpc_decode(&m, x->resp.data, x->resp.len, NULL, NULL) == MCP_OK) {
        if (m.kind == MCP_RPC_ERROR) {
            char em[QUOTE_MAX];
            mcp__quote_text(em, sizeof em, m.error_message, m.error_message_len);
            mcp__say(body, sizeof body, "JSON-RPC error %lld: %s", (long long)m.error_code, em);
        }
        mcp_rpc_msg_cleanup(&m);
    }
    if (!body[0] && x->resp.len)
        mcp__quote_text(body, sizeof body, x->resp.data, x->resp.len < QUOTE_MAX ? x->resp.len : QUOTE_MAX);
    const char *r = reason(x->status);
    if (r[0] && !strncmp(body, r, strlen(r)))
        r = ""; /* the body already starts with the reason phrase */
    char st[24] = "";
    if (with_status || !r[0])
        mcp__say(st, sizeof st, "HTTP %ld%s", x->status, r[0] ? " " : "");
    mcp__say(out, cap, "%s: %s%s%s%s", x->what, st, r[0] ? r : "", body[0] ? ": " : "", body);
}

/* The legacy session is no longer known to the server (404). */
static void session_gone(http_client *t, xfer *x)
{
    char msg[256];
    mcp__say(msg, sizeof msg, "HTTP 404: %s: the server no longer knows this session (it expired or was ended)",
        x->what);
    if (x->is_request && !is_closing(t))
        /* The core starts a new session and sends the request again. */
        mcp__client_on_session_gone(t->base.client, x->id, msg);
    else if (!is_closing(t))
        mcp__client_log(t->base.client, MCP_LOG_WARNING, "HTTP transport: %s; not sent again", msg);
}

/* Is the (non-2xx) body a JSON-RPC message at all? */
static int body_is_jsonrpc(const xfer *x, mcp_rpc_msg *m)
{
    if (x->ctype != CT_JSON || !x->resp.len || x->resp_cut)
        return 0;
    return mcp_rpc_decode(m, x->resp.data, x->resp.len, NULL, NULL) == MCP_OK;
}

/* A non-2xx answer to a POST (or resumption). Returns 1 when `x` was kept. */
static int http_error(http_client *t, xfer *x)
{
    if (x->status == 404 && x->kind == XK_POST && x->sent_session && !x->modern) {
        /* Whatever the body says: the session is gone (spec: start a new one). */
        session_gone(t, x);
        return 0;
    }
    mcp_rpc_msg m;
    int is_rpc = body_is_jsonrpc(x, &m);
    if (is_rpc) {
        int mine = x->is_request && (m.kind == MCP_RPC_RESULT || m.kind == MCP_RPC_ERROR) &&
                   m.id.type == MCP_RPC_ID_INT && m.id.num >= 0 && (uint64_t)m.id.num == x->id;
        mcp_rpc_msg_cleanup(&m);
        if (mine) {
            /* The server answered the request, with an HTTP error status
             * (modern errors: -32022, -32020, -32021, -32601 ...). */
            deliver(t, x->resp.data, x->resp.len);
            return 0;
        }
    }
    long s = x->status;
    if (x->kind == XK_POST && x->is_initialize && !t->sse_mode && !is_rpc && (s == 400 || s == 404 || s == 405) &&
        !has_session(t)) {
        /* Perhaps an old server with the HTTP+SSE transport: try it. */
        t->fallback_status = s;
        curl_easy_cleanup(x->easy); /* its headers stay for the retry */
        x->easy = NULL;
        t->fallback_init = x;
        if (start_sse_stream(t) == MCP_OK) {
            mcp__client_log(t->base.client, MCP_LOG_INFO,
                            "HTTP transport: initialize got HTTP %ld; trying the HTTP+SSE transport", s);
            return 1;
        }
        t->fallback_init = NULL;
    }
    char msg[400];
    describe_status(x, 0, msg, sizeof msg);
    if (s == 401 || s == 403) {
        char full[400];
        mcp__say(full, sizeof full, "%s (WWW-Authenticate: %s)", msg, x->challenge[0] ? x->challenge : "none");
        if (x->is_request && !is_closing(t))
            /* The core decides: authorize and send it again, or fail it. */
            mcp__client_on_auth_failed(t->base.client, x->id, (int)s,
                                       x->challenge_raw.len ? x->challenge_raw.data : NULL, full);
        else
            fail_request(x, MCP_ERR_AUTH, s, full);
        return 0;
    }
    if (x->kind == XK_RESUME) {
        char full[460];
        mcp__say(full, sizeof full, "resuming the stream with Last-Event-ID failed: %s", msg);
        fail_request(x, MCP_ERR_PROTOCOL, s, full);
        return 0;
    }
    fail_request(x, MCP_ERR_PROTOCOL, s, msg);
    return 0;
}

/* A request's event stream ended. Returns 1 when `x` was kept to resume. */
static int stream_ended(http_client *t, xfer *x, const char *why)
{
    if (x->got_response || !x->is_request)
        return 0;
    if (!x->modern && !t->sse_mode && resumable_id(&x->sse) && x->attempts < t->max_reconnects) {
        x->kind = XK_RESUME;
        mcp__say(x->what, sizeof x->what, "GET resuming request %llu", (unsigned long long)x->id);
        schedule(t, x);
        return 1;
    }
    char msg[300];
    if (x->attempts)
        mcp__say(msg, sizeof msg, "%s: stream ended before the response (after %u reconnects)%s%s", x->what,
                 x->attempts, why ? ": " : "", why ? why : "");
    else
        mcp__say(msg, sizeof msg, "%s: stream ended before the response%s%s", x->what, why ? ": " : "",
                 why ? why : "");
    fail_request(x, MCP_ERR_CLOSED, 0, msg);
    return 0;
}

static const char *curl_why(const xfer *x, CURLcode rc)
{
    return x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
}

/* A POST or resumption finished. Returns 1 when `x` was kept. */
static int post_done(http_client *t, xfer *x, CURLcode rc)
{
    char msg[400];
    int ok = x->status >= 200 && x->status < 300;
    if (x->fail_st) {
        fail_request(x, x->fail_st, ok ? 0 : x->status, x->fail_msg);
        return 0;
    }
    if (rc != CURLE_OK) {
        if (ok && x->sse_started)
            return stream_ended(t, x, curl_why(x, rc));
        /* A resumption that hit a network error is tried again (the path
         * may heal), unless nothing listens any more. */
        if (x->kind == XK_RESUME && rc != CURLE_COULDNT_CONNECT && x->attempts < t->max_reconnects) {
            schedule(t, x);
            return 1;
        }
        if (rc == CURLE_SEND_FAIL_REWIND)
            mcp__say(msg, sizeof msg, "%s: the connection closed without an answer", x->what);
        else
            mcp__say(msg, sizeof msg, "%s: %s", x->what, curl_why(x, rc));
        fail_request(x, MCP_ERR_IO, 0, msg);
        return 0;
    }
    if (!ok)
        return http_error(t, x);
    if (x->sse_started)
        return stream_ended(t, x, NULL);
    if (t->sse_mode == 2)
        return 0; /* HTTP+SSE: the answer comes on the stream */
    if (x->ctype == CT_JSON && x->resp.len && x->is_request) {
        deliver(t, x->resp.data, x->resp.len);
        if (!answers(x->resp.data, x->resp.len, x->id)) {
            mcp__say(msg, sizeof msg, "%s: the JSON body is not the response to request %llu", x->what,
                (unsigned long long)x->id);
            fail_request(x, MCP_ERR_PROTOCOL, x->status, msg);
        }
        return 0;
    }
    if (x->is_request) {
        mcp__say(msg, sizeof msg, "%s: no JSON or event-stream response", x->what);
        fail_request(x, MCP_ERR_PROTOCOL, x->status, msg);
    }
    return 0;
}

/* The standalone GET stream finished. Returns 1 when kept (reconnecting). */
static int get_done(http_client *t, xfer *x, CURLcode rc)
{
    mcp_client *c = t->base.client;
    int ok = x->status >= 200 && x->status < 300;
    if (is_closing(t))
        return 0;
    if (x->fail_st) {
        mcp__client_log(c, MCP_LOG_WARNING, "HTTP transport: %s; the GET stream is closed", x->fail_msg);
        return 0;
    }
    if (x->status == 405) {
        mcp__client_log(c, MCP_LOG_DEBUG, "HTTP transport: the server offers no GET stream (405)");
        return 0;
    }
    if (x->status == 404 && resumable_id(&x->sse)) {
        /* The server forgot the stream's events: start a fresh one. */
        x->sse.has_id = 0;
        x->sse.last_id[0] = '\0';
    } else if (x->status == 404) {
        mcp__client_log(c, MCP_LOG_WARNING, "HTTP transport: GET stream: HTTP 404 (session unknown); not retried");
        return 0;
    } else if (rc == CURLE_OK && ok && !x->sse_started) {
        mcp__client_log(c, MCP_LOG_WARNING, "HTTP transport: GET stream: not an event stream; not retried");
        return 0;
    }
    if (x->attempts >= t->max_reconnects) {
        char msg[300];
        if (rc != CURLE_OK && !x->status)
            mcp__say(msg, sizeof msg, "%s", curl_why(x, rc));
        else
            describe_status(x, 1, msg, sizeof msg);
        mcp__client_log(c, MCP_LOG_WARNING, "HTTP transport: GET stream given up after %u reconnects (%s)",
                        x->attempts, msg);
        return 0;
    }
    schedule(t, x);
    return 1;
}

/* The HTTP+SSE stream finished: the connection is over. */
static void sse_done(http_client *t, xfer *x, CURLcode rc)
{
    char msg[400];
    mcp_status st = MCP_ERR_CLOSED;
    long s = x->status;
    if (x->fail_st) {
        st = x->fail_st;
        mcp__say(msg, sizeof msg, "%s", x->fail_msg);
    } else if (rc != CURLE_OK && !x->sse_started) {
        st = MCP_ERR_IO;
        mcp__say(msg, sizeof msg, "%s: %s", x->what, curl_why(x, rc));
    } else if (s < 200 || s >= 300) {
        describe_status(x, 1, msg, sizeof msg);
        st = s == 401 || s == 403 ? MCP_ERR_AUTH : MCP_ERR_PROTOCOL;
    } else if (!x->sse_started) {
        st = MCP_ERR_PROTOCOL;
        mcp__say(msg, sizeof msg, "%s: HTTP %ld is not an event stream", x->what, s);
    } else {
        mcp__say(msg, sizeof msg, "%s ended%s%s", x->what, rc != CURLE_OK ? ": " : "",
                 rc != CURLE_OK ? curl_why(x, rc) : "");
    }
    if (t->sse_mode == 1 && t->fallback_init) {
        /* The fallback did not work either: report the first refusal. */
        xfer *init = t->fallback_init;
        t->fallback_init = NULL;
        char full[460];
        mcp__say(full, sizeof full, "POST initialize: %s, and the HTTP+SSE fallback failed (%s)",
            reason(t->fallback_status)[0] ? reason(t->fallback_status) : "refused", msg);
        t->sse_mode = 0;
        fail_request(init, MCP_ERR_PROTOCOL, t->fallback_status, full);
        xfer_free(init);
        release_held(t);
        return;
    }
    if (t->sse_mode == 1 && st == MCP_ERR_CLOSED) {
        st = MCP_ERR_PROTOCOL;
        mcp__say(msg + strlen(msg), sizeof msg - strlen(msg), " before its endpoint event");
    }
    connection_gone(t, st, msg);
}

/* Collects finished transfers from the multi handle. */
static void reap(http_client *t)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(t->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        CURL *e = m->easy_handle;
        CURLcode rc = m->data.result;
        xfer *x = NULL;
        curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&x);
        curl_multi_remove_handle(t->multi, e);
        list_remove(&t->live, x);
        if (!x->status) {
            long code = 0;
            curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
            x->status = code;
        }
        if (t->barrier == x)
            t->barrier = NULL;
        int kept = 0;
        if (!is_closing(t)) {
            switch (x->kind) {
            case XK_POST:
            case XK_RESUME:
                kept = post_done(t, x, rc);
                break;
            case XK_GET:
                kept = get_done(t, x, rc);
                if (!kept)
                    t->get_stream = NULL;
                break;
            case XK_SSE:
                sse_done(t, x, rc);
                break;
            case XK_DELETE:
                break;
            }
        }
        if (!kept)
            xfer_free(x);
        release_held(t);
    }
}

/* Drops every transfer of request `id` (cancelled by the core). */
static void abort_id(http_client *t, uint64_t id)
{
    xfer **lists[] = {&t->live, &t->waiting, &t->held};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        xfer **pp = lists[i];
        while (*pp) {
            xfer *x = *pp;
            if (x->is_request && x->id == id && (x->kind == XK_POST || x->kind == XK_RESUME)) {
                *pp = x->next;
                if (x->easy && i == 0)
                    curl_multi_remove_handle(t->multi, x->easy);
                if (t->barrier == x)
                    t->barrier = NULL;
                xfer_free(x);
            } else {
                pp = &x->next;
            }
        }
    }
    if (t->fallback_init && t->fallback_init->id == id) {
        xfer_free(t->fallback_init);
        t->fallback_init = NULL;
    }
}

/* ------------------------------------------------------------------------ */
/* The transport thread                                                      */

static void free_list(http_client *t, xfer **head, int on_multi)
{
    while (*head) {
        xfer *x = *head;
        *head = x->next;
        if (on_multi && x->easy)
            curl_multi_remove_handle(t->multi, x->easy);
        xfer_free(x);
    }
}

/* Close: everything stops; a legacy session is ended with DELETE. */
static void shutdown_transfers(http_client *t)
{
    free_list(t, &t->live, 1);
    free_list(t, &t->waiting, 0);
    free_list(t, &t->held, 0);
    xfer_free(t->fallback_init);
    t->fallback_init = NULL;
    t->get_stream = NULL;
    t->barrier = NULL;
    pthread_mutex_lock(&t->mu);
    int end_session = t->session_id && !t->dead && !t->sse_mode;
    pthread_mutex_unlock(&t->mu);
    if (!end_session)
        return;
    xfer *x = xfer_new(t, XK_DELETE);
    if (!x)
        return;
    mcp__say(x->what, sizeof x->what, "DELETE session");
    if (build_get(t, x, NULL) != MCP_OK || curl_multi_add_handle(t->multi, x->easy) != CURLM_OK) {
        xfer_free(x);
        return;
    }
    /* 405 (the server keeps sessions until they expire) is fine too. */
    int running = 1;
    uint64_t until = mcp__mono_ms() + (uint64_t)DELETE_TIMEOUT_MS + 500u;
    while (running && mcp__mono_ms() < until) {
        if (curl_multi_perform(t->multi, &running) != CURLM_OK)
            break;
        if (running)
            curl_multi_poll(t->multi, NULL, 0, 100, NULL);
    }
    curl_multi_remove_handle(t->multi, x->easy);
    xfer_free(x);
}

static void *run(void *arg)
{
    http_client *t = arg;
    for (;;) {
        pthread_mutex_lock(&t->mu);
        xfer *q = t->queue;
        t->queue = NULL;
        t->queue_tail = &t->queue;
        uint64_t cancels[64];
        size_t nc = t->ncancels < 64 ? t->ncancels : 64;
        if (nc) {
            memcpy(cancels, t->cancels, nc * sizeof *cancels);
            memmove(t->cancels, t->cancels + nc, (t->ncancels - nc) * sizeof *cancels);
            t->ncancels -= nc;
        }
        int more_cancels = t->ncancels > 0;
        int want_get = t->want_get;
        t->want_get = 0;
        int dead = t->dead;
        pthread_mutex_unlock(&t->mu);
        if (is_closing(t)) {
            free_list(t, &q, 0);
            break;
        }
        for (size_t i = 0; i < nc; i++)
            abort_id(t, cancels[i]);
        while (q) {
            xfer *x = q;
            q = x->next;
            x->next = NULL;
            if (dead)
                xfer_free(x); /* the core failed its request when the connection went */
            else
                admit(t, x);
        }
        if (want_get && !dead)
            open_get_stream(t);
        long next = run_timers(t);
        int running = 0;
        CURLMcode mc = curl_multi_perform(t->multi, &running);
        if (mc != CURLM_OK) {
            char msg[160];
            mcp__say(msg, sizeof msg, "HTTP transport: libcurl failed: %s", curl_multi_strerror(mc));
            connection_gone(t, MCP_ERR_IO, msg);
            break;
        }
        reap(t);
        if (t->sse_mode == 2 && t->fallback_init)
            repost_initialize(t);
        release_held(t);
        if (more_cancels)
            continue;
        int wait = IDLE_POLL_MS;
        if (next >= 0 && next < wait)
            wait = (int)next;
        curl_multi_poll(t->multi, NULL, 0, wait, NULL);
    }
    /* Wait for close (after a libcurl failure the loop ends early). */
    while (!is_closing(t))
        curl_multi_poll(t->multi, NULL, 0, IDLE_POLL_MS, NULL);
    shutdown_transfers(t);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* The transport interface                                                   */

static mcp_status hc_send(mcp__ctransport *base, const mcp__out *msg)
{
    http_client *t = (http_client *)base;
    if (is_closing(t))
        return MCP_ERR_CLOSED;
    xfer *x = xfer_new(t, XK_POST);
    if (!x)
        return MCP_ERR_NOMEM;
    x->is_request = msg->kind == MCP_RPC_REQUEST;
    x->id = x->is_request ? msg->id : 0;
    x->modern = msg->modern;
    x->is_initialize = msg->is_initialize;
    x->no_replay = msg->no_replay;
    x->barrier = msg->kind == MCP_RPC_NOTIFICATION && msg->method &&
                 strcmp(msg->method, "notifications/initialized") == 0;
    if (msg->method)
        mcp__say(x->what, sizeof x->what, "POST %s", msg->method);
    else
        mcp__say(x->what, sizeof x->what, "POST response");
    x->body = mcp__strndup(msg->frame, msg->len);
    x->body_len = msg->len;
    mcp_status st = x->body ? MCP_OK : MCP_ERR_NOMEM;
    struct curl_slist *h = NULL;
    if (!st)
        st = add_header(&h, "Content-Type: application/json");
    if (!st)
        st = add_header(&h, "Accept: application/json, text/event-stream");
    if (!st)
        st = add_header(&h, "Expect:"); /* no 100-continue round trip for a large body */
    if (!st && msg->version && mcp__visible_ascii(msg->version, strlen(msg->version)))
        st = add_header(&h, "MCP-Protocol-Version: %s", msg->version);
    pthread_mutex_lock(&t->mu);
    int dead = t->dead;
    if (!st && !msg->modern && t->session_id && !msg->is_initialize) {
        st = add_header(&h, "Mcp-Session-Id: %s", t->session_id);
        x->sent_session = 1;
    }
    if (!msg->modern && msg->version && strlen(msg->version) < sizeof t->version &&
        mcp__visible_ascii(msg->version, strlen(msg->version)))
        memcpy(t->version, msg->version, strlen(msg->version) + 1);
    pthread_mutex_unlock(&t->mu);
    if (msg->modern) {
        if (!st && msg->method && mcp__visible_ascii(msg->method, strlen(msg->method)))
            st = add_header(&h, "Mcp-Method: %s", msg->method);
        if (!st && msg->name) {
            /* The core encodes the value (SEP-2243); one that could still
             * break the header is encoded here rather than sent. */
            size_t n = strlen(msg->name);
            if (header_safe(msg->name, n)) {
                st = add_value_header(&h, "Mcp-Name", 8, msg->name, n);
            } else {
                char *enc = mcp__client_header_b64(msg->name, n);
                st = enc ? add_header(&h, "Mcp-Name: %s", enc) : MCP_ERR_NOMEM;
                mcp_free(enc);
            }
        }
        for (const char *const *p = msg->param_headers; !st && p && *p; p++) {
            const char *colon = strchr(*p, ':');
            if (!colon || strpbrk(*p, "\r\n"))
                continue;
            const char *v = colon + 1;
            while (*v == ' ')
                v++;
            st = add_value_header(&h, *p, (size_t)(colon - *p), v, strlen(v));
        }
    }
    if (!st)
        st = add_common_headers(t, &h);
    x->hdrs = h;
    if (!st)
        st = setup_easy(t, x);
    if (st || dead) {
        xfer_free(x);
        return dead ? MCP_ERR_CLOSED : st;
    }
    pthread_mutex_lock(&t->mu);
    if (is_closing(t) || t->dead) {
        pthread_mutex_unlock(&t->mu);
        xfer_free(x);
        return MCP_ERR_CLOSED;
    }
    *t->queue_tail = x;
    t->queue_tail = &x->next;
    curl_multi_wakeup(t->multi);
    pthread_mutex_unlock(&t->mu);
    return MCP_OK;
}

static int hc_cancel(mcp__ctransport *base, uint64_t id, int modern)
{
    http_client *t = (http_client *)base;
    pthread_mutex_lock(&t->mu);
    if (!is_closing(t)) {
        if (t->ncancels == t->cancels_cap) {
            size_t cap = t->cancels_cap ? t->cancels_cap * 2 : 16;
            uint64_t *n = mcp_realloc(t->cancels, cap * sizeof *n);
            if (n) {
                t->cancels = n;
                t->cancels_cap = cap;
            }
        }
        /* Out of memory: the transfer runs on and its answer is dropped by the core. */
        if (t->ncancels < t->cancels_cap)
            t->cancels[t->ncancels++] = id;
        curl_multi_wakeup(t->multi);
    }
    pthread_mutex_unlock(&t->mu);
    /* 2026-07-28: closing the stream is the cancellation. Legacy streams
     * are dropped too, but the server learns it from notifications/cancelled. */
    return modern ? 1 : 0;
}

static void hc_ready(mcp__ctransport *base, const char *version, int modern)
{
    http_client *t = (http_client *)base;
    pthread_mutex_lock(&t->mu);
    if (version && strlen(version) < sizeof t->version && mcp__visible_ascii(version, strlen(version)))
        memcpy(t->version, version, strlen(version) + 1);
    if (!modern && !t->no_get_stream && !is_closing(t)) {
        t->want_get = 1;
        curl_multi_wakeup(t->multi);
    }
    pthread_mutex_unlock(&t->mu);
}

static void hc_set_token(mcp__ctransport *base, const char *token)
{
    http_client *t = (http_client *)base;
    size_t n = strlen(token) + 32;
    char *line = mcp_malloc(n);
    if (!line)
        return; /* the old token stays; the request is refused again and fails in time */
    snprintf(line, n, "Authorization: Bearer %s", token);
    pthread_mutex_lock(&t->mu);
    char *old = t->auth;
    t->auth = line;
    pthread_mutex_unlock(&t->mu);
    mcp__oauth_wipe_free(old);
}

static void hc_free(http_client *t)
{
    if (!t)
        return;
    free_list(t, &t->queue, 0);
    free_list(t, &t->live, 1);
    free_list(t, &t->waiting, 0);
    free_list(t, &t->held, 0);
    xfer_free(t->fallback_init);
    if (t->multi)
        curl_multi_cleanup(t->multi);
    for (char **p = t->headers; p && *p; p++)
        mcp_free(*p);
    mcp_free(t->headers);
    /* The token does not linger in freed memory. */
    mcp__oauth_wipe_free(t->auth);
    mcp_free(t->url);
    mcp_free(t->post_url);
    mcp_free(t->session_id);
    mcp_free(t->cancels);
    pthread_mutex_destroy(&t->mu);
    mcp_free(t);
}

static void hc_close(mcp__ctransport *base)
{
    http_client *t = (http_client *)base;
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    atomic_store(&t->closing, 1);
    if (t->multi)
        curl_multi_wakeup(t->multi);
    pthread_mutex_unlock(&t->mu);
    if (t->thread_started)
        pthread_join(t->thread, NULL);
    hc_free(t);
}

static const mcp__ctransport_ops HC_OPS = {hc_send, hc_cancel, hc_ready, hc_close};

/* ------------------------------------------------------------------------ */
/* Connecting                                                                */

/* http:// or https:// with a host; libcurl's parser decides the rest. */
static mcp_status check_url(const char *url, mcp_error *err)
{
    if (!url || !*url)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "http: url is required");
    if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "http: url must start with http:// or https://");
    if (!mcp__visible_ascii(url, strlen(url)))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "http: url must be visible ASCII (percent-encode the rest)");
    CURLU *u = curl_url();
    if (!u)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    char *host = NULL;
    CURLUcode rc = curl_url_set(u, CURLUPART_URL, url, 0);
    if (rc == CURLUE_OK)
        rc = curl_url_get(u, CURLUPART_HOST, &host, 0);
    int ok = rc == CURLUE_OK && host && *host;
    curl_free(host);
    curl_url_cleanup(u);
    if (!ok)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "http: url is not a valid URL with a host");
    return MCP_OK;
}

/* "Name: value" with a token name and no line breaks. */
static int valid_header(const char *h)
{
    const char *colon = strchr(h, ':');
    if (!colon || colon == h)
        return 0;
    for (const char *p = h; p < colon; p++)
        if (!strchr("!#$%&'*+-.^_`|~", *p) && !((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                                                 (*p >= 'A' && *p <= 'Z')))
            return 0;
    for (const char *p = colon + 1; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\t')
            return 0;
    return 1;
}

static mcp_status hc_new(http_client **out, const mcp_http_client_opts *o, mcp_error *err)
{
    http_client *t = mcp__calloc(1, sizeof *t);
    if (!t)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    pthread_mutex_init(&t->mu, NULL);
    t->base.ops = &HC_OPS;
    t->queue_tail = &t->queue;
    t->connect_timeout_ms = o->connect_timeout_ms ? (long)o->connect_timeout_ms : (long)DEFAULT_CONNECT_TIMEOUT_MS;
    t->max_reconnects = o->max_reconnects ? o->max_reconnects : DEFAULT_MAX_RECONNECTS;
    t->force_sse = o->legacy_sse != 0;
    t->no_get_stream = o->no_get_stream != 0;
    t->max_frame = (size_t)64 << 20;
    t->url = mcp__strdup(o->url);
    size_t nh = 0;
    for (const char *const *p = o->headers; p && *p; p++)
        nh++;
    t->headers = mcp__calloc(nh + 1, sizeof *t->headers);
    int ok = t->url && t->headers;
    for (size_t i = 0; ok && i < nh; i++)
        ok = (t->headers[i] = mcp__strdup(o->headers[i])) != NULL;
    if (ok && o->bearer_token) {
        size_t n = strlen(o->bearer_token) + 32;
        t->auth = mcp_malloc(n);
        ok = t->auth != NULL;
        if (ok)
            snprintf(t->auth, n, "Authorization: Bearer %s", o->bearer_token);
    }
    if (ok)
        ok = (t->multi = curl_multi_init()) != NULL;
    if (!ok) {
        hc_free(t);
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    *out = t;
    return MCP_OK;
}

static void *start_thread(void *arg)
{
    return run(arg);
}

mcp_status mcp_client_connect_http_sized(mcp_client **out, const mcp_client_opts *opts, size_t opts_size,
                                         const mcp_http_client_opts *http, size_t http_size, size_t oauth_size,
                                         mcp_error *err)
{
    mcp_client_opts opts_copy;
    mcp_http_client_opts http_copy;
    mcp_oauth_opts oauth_copy;
    mcp_status ost = MCP__OPTS_IN(mcp_client_opts, &opts_copy, opts, opts_size, err);
    if (!ost)
        ost = MCP__OPTS_IN(mcp_http_client_opts, &http_copy, http, http_size, err);
    if (!ost && http && http_copy.oauth) {
        ost = MCP__OPTS_IN(mcp_oauth_opts, &oauth_copy, http_copy.oauth, oauth_size, err);
        http_copy.oauth = &oauth_copy;
    }
    if (ost)
        return ost;
    if (opts)
        opts = &opts_copy;
    if (http)
        http = &http_copy;
    if (!out || !http)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "http: out and http options are required");
    /* First: the URL checks below parse with libcurl. */
    CURLcode init = (CURLcode)mcp__curl_init();
    if (init != CURLE_OK)
        return mcp__fail(err, MCP_ERR_IO, 0, 0, "http: libcurl failed to initialise: %s", curl_easy_strerror(init));
    mcp_status st = check_url(http->url, err);
    if (st)
        return st;
    for (const char *const *p = http->headers; p && *p; p++)
        if (!valid_header(*p))
            return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0,
                             "http: extra header #%zu is not \"Name: value\" on one line",
                             (size_t)(p - http->headers) + 1);
    if (http->bearer_token && !mcp__visible_ascii(http->bearer_token, strlen(http->bearer_token)))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "http: bearer_token must be non-empty visible ASCII");
    if (http->bearer_token && !mcp__oauth_url_allowed(http->url, http->allow_insecure_bearer))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0,
                         "http: a bearer token goes over https, or plain http:// to loopback only "
                         "(allow_insecure_bearer to override)");
    mcp__oauth *oa = NULL;
    if (http->oauth && (st = mcp__oauth_new(&oa, http->oauth, http->url, opts ? opts->name : NULL, err)))
        return st;
    http_client *t = NULL;
    if ((st = hc_new(&t, http, err))) {
        mcp__oauth_free(oa);
        return st;
    }
    mcp_client *c = NULL;
    if ((st = mcp__client_new(&c, opts, err))) {
        mcp__oauth_free(oa);
        hc_free(t);
        return st;
    }
    mcp__client_attach(c, &t->base);
    mcp__client_set_oauth(c, oa, hc_set_token);
    t->max_frame = mcp__client_max_message(c);
    if (t->force_sse) {
        /* The stream comes first: messages wait for its endpoint event. */
        xfer *x = xfer_new(t, XK_SSE);
        if (!x) {
            mcp_client_close(c);
            return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
        }
        mcp__say(x->what, sizeof x->what, "HTTP+SSE stream");
        t->sse_mode = 1;
        if ((st = build_get(t, x, NULL))) {
            xfer_free(x);
            mcp_client_close(c);
            return mcp__fail(err, st, 0, 0, "out of memory");
        }
        *t->queue_tail = x;
        t->queue_tail = &x->next;
    }
    if (pthread_create(&t->thread, NULL, start_thread, t) != 0) {
        mcp_client_close(c);
        return mcp__fail(err, MCP_ERR_IO, 0, 0, "http: cannot start the transport thread");
    }
    t->thread_started = 1;
    if ((st = mcp__client_handshake(c, err))) {
        mcp_client_close(c);
        return st;
    }
    *out = c;
    return MCP_OK;
}
