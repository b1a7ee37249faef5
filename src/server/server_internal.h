/*
 * Internal structures of the server role: the server and its tool
 * registry (server.c), connections and dispatch (conn.c), and tool calls
 * (call.c). Not part of the public API.
 *
 * Ownership and threads, in one place:
 * - The server owns the registry (a read-write lock), the worker pool, the
 *   timer thread for call time limits, and the list of connections.
 * - A tool is reference-counted: the registry holds one reference, every
 *   call running it another, so removing a tool never pulls it out from
 *   under a handler.
 * - A connection is reference-counted: the owner (transport) holds one,
 *   every call in flight another. Frames arrive on one I/O thread; sends
 *   may come from any thread and are serialised by `send_mu`.
 * - A call is owned by whoever finishes it: exactly one of "the handler
 *   returned", "the time limit passed", "the client cancelled" or "the
 *   connection closed" wins the atomic `finished` flag and answers (or
 *   stays silent); the handler's thread always releases the call last.
 */
#ifndef MCP_SERVER_INTERNAL_H
#define MCP_SERVER_INTERNAL_H

#include "auth/auth_internal.h"
#include "mcp/schema.h"
#include "mcp/server.h"
#include "util/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

/* A registered item (tool, resource, template, prompt); first member of each. */
typedef struct mcp__entry {
    atomic_int refs;            /* the registry + users (running calls, reads) */
    char *key;                  /* name, URI or URI template; NUL-terminated */
    size_t key_len;             /* its length */
    uint64_t seq;               /* registration number: list order and cursors */
    int hidden;                 /* not listed, not callable (disabled tools) */
    int unlisted;               /* not listed, but callable */
    char *scopes;               /* OAuth scopes a principal needs to use it (normalised), or NULL */
    void (*destroy)(struct mcp__entry *e); /* frees the containing object (and `scopes`) */
} mcp__entry;

/* One kind of item, in registration order, with a hash index by key. */
typedef struct mcp__registry {
    mcp__entry **items;         /* registration order */
    size_t n;                   /* number of items */
    size_t cap;                 /* capacity of `items` */
    mcp__entry **index;         /* open addressing by key, `index_cap` slots */
    size_t index_cap;           /* power of two, > 2 * n */
} mcp__registry;

typedef struct mcp__tool {
    mcp__entry e;               /* key = name */
    char *title;                /* or NULL */
    char *description;          /* or NULL */
    mcp_json_doc *input_doc;    /* inputSchema as registered (spliced into tools/list) */
    mcp_json_doc *output_doc;   /* outputSchema, or NULL */
    mcp_json_doc *icons_doc;    /* icons array, or NULL */
    mcp_json_doc *meta_doc;     /* _meta object, or NULL */
    char *extension;            /* extension id its ext_meta_doc needs, or NULL */
    mcp_json_doc *ext_meta_doc; /* merged into _meta for clients declaring `extension`, or NULL */
    mcp_schema *input_schema;   /* compiled inputSchema */
    mcp_schema *output_schema;  /* compiled outputSchema, or NULL */
    int hints[4];               /* MCP_HINT_* for readOnly, destructive, idempotent, openWorld */
    unsigned flags;             /* MCP_TOOL_* (DISABLED changes under the registry lock) */
    unsigned timeout_ms;        /* per-tool limit, 0 = server default */
    mcp_tool_fn handler;        /* the handler */
    void *user_data;            /* its user data */
    void (*user_data_free)(void *); /* user data destructor, or NULL */
    int task_support;           /* mcp_task_support */
    atomic_uint last_run_us;    /* how long its handler last ran, in µs + 1; 0 = not yet (a hint) */
} mcp__tool;

typedef struct mcp__conn_list {
    struct mcp_conn *head; /* connections, newest first */
} mcp__conn_list;

struct mcp_server {
    /* Identity and options (immutable after mcp_server_new). */
    char *name;                 /* serverInfo.name */
    char *version;              /* serverInfo.version */
    char *title;                /* serverInfo.title, or NULL */
    char *instructions;         /* or NULL */
    mcp_json_doc *extensions_doc; /* capabilities.extensions, or NULL */
    mcp_server_opts opts;       /* copy; string fields point to the copies above */
    mcp_json_parse_opts popts;  /* frame limits */
    uint64_t cursor_key[2];     /* key for authenticating pagination cursors */
    unsigned char state_key[32]; /* HMAC key for 2026-07-28 requestState */

    /* Registries. */
    pthread_rwlock_t reg_lock;  /* guards the fields below */
    mcp__registry tools;        /* mcp__tool */
    mcp__registry resources;    /* mcp__resource with an exact URI */
    mcp__registry templates;    /* mcp__resource with a URI template */
    mcp__registry prompts;      /* mcp__prompt */
    uint64_t next_seq;          /* next registration number (all kinds) */
    int has_resources;          /* a resource or template was ever registered */
    int has_prompts;            /* a prompt was ever registered */
    int has_completions;        /* some prompt or template completes arguments */
    int has_tasks;              /* a tool with task support was ever registered */

    /* Workers. */
    mcp__pool *pool;            /* runs blocking tool handlers */

    /* Time limits: one thread sleeps until the earliest deadline. */
    pthread_mutex_t timer_mu;   /* guards the timer list and flags */
    pthread_cond_t timer_cv;    /* signalled when the list changes or on stop */
    pthread_cond_t timer_fired_cv; /* broadcast when the timer thread is done answering expired calls */
    struct mcp_call *timers;    /* calls with a deadline (unsorted list) */
    pthread_t timer_thread;     /* the timer thread */
    int timer_started;          /* the thread exists */
    int timer_stop;             /* asks it to exit */

    /* Connections, for list_changed fan-out. */
    pthread_mutex_t conns_mu;   /* guards `conns` */
    struct mcp_conn *conns;     /* live connections (doubly linked) */

    /* Transcript. */
    pthread_mutex_t transcript_mu; /* serialises lines */
    FILE *transcript;           /* or NULL */

    struct mcp__tasks *tasks;   /* the task store (task.c) */
    struct mcp__metrics *metrics; /* counters for mcp_server_metrics_text (metrics.c) */
};

/* What a routed frame is to the request it belongs to. */
typedef enum mcp__route_kind {
    MCP__ROUTE_MORE = 0,  /* a message before the response (progress, a log, a nested request), or session traffic */
    MCP__ROUTE_FINAL = 1, /* the request's response: its stream ends after it */
    MCP__ROUTE_CLOSE = 2, /* no frame (NULL): end the request's stream now, the call goes on and the client resumes
                           * the stream to get the rest (SEP-1699; mcp__conn_close_stream) */
} mcp__route_kind;

/* How a transport that gives each request its own stream (HTTP) receives
 * frames: `related` is the request a frame belongs to (NULL for session
 * traffic such as list_changed), `kind` says what the frame is to it. */
typedef mcp_status (*mcp__route_fn)(const char *frame, size_t len, const mcp_rpc_id *related, mcp__route_kind kind,
                                    void *ud);

/* A 2026-07-28 subscriptions/listen stream on a connection. */
typedef struct mcp__listen {
    struct mcp__listen *next;   /* next stream on the connection */
    mcp_rpc_id id;              /* the listen request's id (str points into idbuf/heap) */
    char *id_str;               /* owned copy of a string id */
    unsigned what;              /* MCP__LISTEN_* */
    char **uris;                /* resourceSubscriptions */
    size_t nuris;               /* how many */
    char **tasks;               /* taskIds agreed (the tasks extension: notifications/tasks) */
    size_t ntasks;              /* how many */
} mcp__listen;

#define MCP__LISTEN_TOOLS 0x1u
#define MCP__LISTEN_PROMPTS 0x2u
#define MCP__LISTEN_RESOURCES 0x4u

/* A legacy server-to-client request waiting for its answer. */
typedef struct mcp__ask {
    struct mcp__ask *next;      /* next pending request on the connection */
    int64_t id;                 /* the id we sent */
    int done;                   /* answered (or abandoned) */
    mcp_rpc_msg answer;         /* the response, owned once done */
} mcp__ask;

/* In-flight table buckets per connection (a power of two). */
#define MCP__CONN_BUCKETS 256u

struct mcp_conn {
    mcp_server *srv;            /* the server */
    atomic_int refs;            /* owner + calls in flight */
    mcp_send_fn send;           /* transport's send */
    void *send_ud;              /* its user data */

    pthread_mutex_t send_mu;    /* serialises send() and transcript lines */
    int send_closed;            /* sends are dropped (after close or a send failure) */
    void (*flush)(void *user_data); /* libmcp's transports: runs after each send, outside send_mu; or NULL */
    atomic_int flushing;        /* threads inside `flush` */

    pthread_mutex_t mu;         /* guards the fields below */
    pthread_cond_t cv;          /* signalled when a call ends or a handler returns */
    int closing;                /* mcp_conn_close() has begun */
    int initialized;            /* legacy `initialize` answered */
    const char *version;        /* negotiated legacy version (static string) */
    atomic_int log_level;       /* legacy minimum level, -1 = all (no setLevel yet) */
    struct mcp_call *buckets[MCP__CONN_BUCKETS]; /* in-flight calls by id */
    unsigned in_flight;         /* calls in the table */
    unsigned running;           /* handlers executing right now */
    mcp_json_doc *client_caps;  /* legacy: initialize params.capabilities, or NULL */
    char **subs;                /* legacy resources/subscribe URIs */
    size_t nsubs;               /* how many */
    mcp__listen *listens;       /* 2026-07-28 listen streams */
    mcp__ask *asks;             /* legacy server-to-client requests awaiting answers */
    int64_t next_ask_id;        /* id of the next one */
    mcp__route_fn route;        /* per-request routing (HTTP), or NULL */
    uint64_t flow;              /* the pool flow of its calls (mcp__conn_set_flow), 0 by default */
    void *route_ud;             /* its user data */
    char task_id[33];           /* the task this private connection runs (task.c), or "" */
    int task_watches;           /* a listen stream of this connection followed tasks (task.c; under mu) */

    struct mcp_conn *prev;      /* server's connection list */
    struct mcp_conn *next;
};

/* Input requests of one request being answered (ask.c). */
typedef struct mcp__asker {
    int modern;                 /* 2026-07-28: rounds instead of waiting */
    const mcp_json *caps;       /* the client's capabilities for this request, or NULL */
    const mcp_json *responses;  /* this request's inputResponses, or NULL */
    mcp_json_doc *state_doc;    /* the verified requestState payload, or NULL */
    mcp_buf pending;            /* this round's inputRequests object (data NULL until one) */
    mcp_jw pw;                  /* writer over `pending` */
    unsigned npending;          /* questions in `pending` */
    char missing_cap[32];       /* first capability the client lacks, for -32021 */
    char invalid_key[64];       /* an inputResponses entry of the wrong shape */
    unsigned char *handler_state; /* mcp_call_set_state bytes, or NULL */
    size_t handler_state_len;   /* their length */
    mcp__ask *legacy;           /* legacy requests made (kept for their answers) */
    char principal_key[MCP__PRINCIPAL_KEY_SIZE]; /* who asks (mcp__principal_key; "" without
                                                    authorization): requestState is bound to it */
} mcp__asker;

/* Call states. */
enum { MCP__CALL_QUEUED = 0, MCP__CALL_RUNNING, MCP__CALL_DONE };

struct mcp_call {
    mcp__job job;               /* pool linkage; must stay first */
    mcp_conn *conn;             /* holds a reference */
    mcp__tool *tool;            /* holds a reference */
    mcp_rpc_msg msg;            /* the request; owns its document */
    const mcp_json *args;       /* params.arguments (NULL when absent) */
    const mcp_json *meta;       /* params._meta, or NULL */
    const mcp_json *progress_token; /* _meta.progressToken, or NULL */
    const char *traceparent;    /* _meta.traceparent when well-formed (W3C), else the HTTP header's, or NULL */
    const char *tracestate;     /* the tracestate beside it when well-formed, or NULL */
    char *trace_copy;           /* the HTTP headers' traceparent and tracestate (owned), or NULL */
    const char *version;        /* protocol version of this request (static) */
    int modern;                 /* 2026-07-28 request */
    int log_threshold;          /* modern: minimum level, or -1 for no logs */
    double last_progress;       /* last progress value sent */
    int progress_sent;          /* at least one progress notification went out */
    atomic_int cancelled;       /* stop requested */
    atomic_int finished;        /* the answer (or silence) is decided */
    int state;                  /* MCP__CALL_* (under conn->mu) */
    unsigned timeout_ms;        /* effective limit, 0 = none */
    uint64_t deadline_ns;       /* monotonic deadline when timeout_ms > 0 */
    int timed_out;              /* the timer answered */

    /* Result being built by the handler. */
    mcp_buf content;            /* `[` + blocks, comma-separated */
    mcp_jw cw;                  /* writer over `content` */
    unsigned nblocks;           /* content blocks so far */
    int is_error;               /* mcp_call_error() was called */
    mcp_json_doc *structured;   /* structuredContent, or NULL */

    mcp__asker ask;             /* input requests (elicitation, sampling, roots) */
    mcp_principal *principal;   /* who the call runs for (a reference), or NULL */

    /* For mcp_server_opts.on_call_end only. */
    uint64_t start_ns;          /* tools/call began */
    int reported;               /* whoever answered reported it (under conn->mu) */
    char err_text[200];         /* the handler's mcp_call_error() text (its thread only) */

    struct mcp_call *bucket_next; /* conn in-flight table chain */
    struct mcp_call *timer_next;  /* server timer list */
    struct mcp_call *timer_prev;
    int on_timer;               /* in the timer list */
    int timer_firing;           /* the timer thread is answering it (timer_mu); keeps it alive */
};

/* ---- server.c ---- */
void mcp__server_diag(mcp_server *srv, mcp_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void mcp__server_transcript(mcp_server *srv, const char *dir, const char *frame, size_t len);
/*
 * The W3C trace context of the HTTP request this thread is handling, for
 * requests whose _meta has none (SEP-414 puts it in _meta; HTTP clients
 * and proxies send the traceparent/tracestate headers). The HTTP transport
 * sets it around the handling of a POST (borrowed: the header values must
 * outlive it) and clears it with (NULL, NULL); values that are not
 * well-formed are dropped here. "in" transcript lines written meanwhile
 * carry it; calls copy it (call.c).
 */
void mcp__trace_http_set(const char *traceparent, const char *tracestate);
void mcp__trace_http_get(const char **traceparent, const char **tracestate);
/* The common start of mcp_server_add_tool/_resource/_prompt. `st` is the
 * status of copying the caller's definition (MCP__OPTS_IN) or
 * MCP_ERR_NOMEM; `present` says the server and the definition were given
 * (an INVALID_ARG naming `what` when not). On any failure the definition's
 * user_data passes to its destructor, as on every refused registration
 * (a definition that was not read at all has none). Returns the status. */
mcp_status mcp__def_in(mcp_status st, int present, const char *what, void *user_data,
                       void (*user_data_free)(void *), mcp_error *err);
mcp__tool *mcp__server_find_tool(mcp_server *srv, const char *name, size_t len); /* +1 ref */
/* 1 when principal `p` may use `e`: no principal (no authorization), no
 * scopes on the entry, or every one of them held. */
int mcp__entry_allows(const mcp__entry *e, const mcp_principal *p);
/* Appends e's required scopes (space-separated) to out; nothing for NULL or none (resource.c). */
mcp_status mcp__entry_append_scopes(const mcp__entry *e, mcp_buf *out);
/*
 * The scopes a request needs before it may run (for the HTTP transport's
 * 403, decided before dispatch): those of the tool, prompt or resource it
 * names (tools/call, prompts/get, resources/read, resources/subscribe,
 * completion/complete), appended space-separated to `out`; nothing for
 * other methods or unknown names (those fail later on their own).
 */
mcp_status mcp__server_request_scopes(mcp_server *srv, const mcp_rpc_msg *m, mcp_buf *out);
/* A tools/call refused before the connection saw it (HTTP 403 for a missing
 * scope): tells mcp_server_opts.on_call_end (MCP_CALL_FORBIDDEN). */
void mcp__call_report_forbidden(mcp_server *srv, const mcp_rpc_msg *m, const mcp_principal *p, const char *needs);
void mcp__tool_release(mcp__tool *t);
void mcp__entry_release(mcp__entry *e);
/* Registry operations; the caller holds srv->reg_lock (write for add/remove). */
mcp__entry *mcp__reg_find_locked(mcp__registry *r, const char *key, size_t len);
mcp_status mcp__reg_add_locked(mcp_server *srv, mcp__registry *r, mcp__entry *e);
mcp__entry *mcp__reg_remove_locked(mcp__registry *r, const char *key, size_t len);
/* Finds a visible entry and takes a reference (takes the read lock). */
mcp__entry *mcp__server_find(mcp_server *srv, mcp__registry *r, const char *key, size_t len);
/* 1 when the client capabilities `caps` declare extension `id` (capabilities.extensions[id] is an object). */
int mcp__caps_declare(const mcp_json *caps, const char *id);
/* Writes "_meta": `meta` with the members of `ext` merged over it (either may be NULL; nothing when both are). */
void mcp__write_meta(mcp_jw *w, const mcp_json *meta, const mcp_json *ext);
/* Writes `"<array_key>": [...]` for one page and `"nextCursor"` when more follow; `caps` are the
 * client's capabilities (extension-only items and metadata depend on them). */
typedef void (*mcp__write_item_fn)(mcp_jw *w, const mcp__entry *e, const char *version, const mcp_json *caps);
mcp_status mcp__server_write_page(mcp_server *srv, mcp__registry *r, mcp_jw *w, const char *array_key,
                                  const char *cursor, size_t cursor_len, const char *version,
                                  const mcp_json *caps, mcp__write_item_fn write_item);
/* Sends `method` (a list_changed notification) to every legacy connection. */
void mcp__server_notify_all(mcp_server *srv, const char *method);
void mcp__server_add_conn(mcp_server *srv, mcp_conn *c);
void mcp__server_remove_conn(mcp_server *srv, mcp_conn *c);
void mcp__server_timer_add(mcp_server *srv, struct mcp_call *call);
void mcp__server_timer_remove(mcp_server *srv, struct mcp_call *call);
const mcp_json *mcp__empty_object(void); /* a static {} */
mcp_status mcp__parse_opt_json(const char *text, mcp_json_type want, const char *what, mcp_json_doc **out,
                               mcp_error *err);
/* Writes a tools/list page (see mcp__server_write_page). */
mcp_status mcp__server_write_tools(mcp_server *srv, mcp_jw *w, const char *cursor, size_t cursor_len,
                                   const char *version, const mcp_json *caps);

/* A request being answered on the I/O thread (conn.c and the method files). */
typedef struct mcp__req {
    mcp_conn *c;          /* the connection */
    mcp_rpc_msg *msg;     /* the request */
    const char *version;  /* its protocol version (static string) */
    int modern;           /* 2026-07-28 request */
    int log_threshold;    /* modern: logLevel, or -1 */
    const mcp_json *caps; /* the client's capabilities for this request, or NULL */
    const mcp_principal *principal; /* who the request runs for (borrowed), or NULL without authorization */
    mcp_buf buf;          /* the response being written */
    mcp_jw w;             /* writer over buf */
} mcp__req;

/* ---- conn.c ---- */
/* Sends a frame; `related` and `final` (MCP__ROUTE_FINAL when nonzero, else
 * MCP__ROUTE_MORE) feed the router (see mcp__route_fn). */
mcp_status mcp__conn_send_to(mcp_conn *c, const mcp_buf *frame, const mcp_rpc_id *related, int final);
/* Answers request `id` with a JSON-RPC error (code, message; no data), its
 * final frame. Nothing is sent when the error cannot be encoded. */
void mcp__conn_send_error(mcp_conn *c, const mcp_rpc_id *id, int code, const char *message);
/* Handles one decoded message (the caller logged it in the transcript and
 * cleans it up afterwards; a tools/call takes it over). */
void mcp__conn_dispatch(mcp_conn *c, mcp_rpc_msg *m);
/* The same for a message that came with a verified token: its requests run
 * as `p` (borrowed; calls take their own reference). NULL: no authorization. */
void mcp__conn_dispatch_as(mcp_conn *c, mcp_rpc_msg *m, const mcp_principal *p);
/* Answers -32600 "Forbidden: insufficient scope" naming the scopes needed. */
void mcp__reply_forbidden(mcp__req *r, const char *scopes);
/* Asks the router to close the stream of `related` early (MCP__ROUTE_CLOSE). */
void mcp__conn_close_stream(mcp_conn *c, const mcp_rpc_id *related);
/* Installs per-request routing (HTTP). */
void mcp__conn_set_route(mcp_conn *c, mcp__route_fn route, void *ud);
/* Names the client the connection's work runs for (a key the transport
 * derives from the client's address or principal; 0, the default, for
 * none): the worker pool takes turns between such flows (util/pool.h).
 * Set before the first dispatch; not changed afterwards. */
void mcp__conn_set_flow(mcp_conn *c, uint64_t flow);
/* Marks a fresh connection initialized at a legacy version, without an
 * initialize exchange (sessionless HTTP). MCP_ERR_INVALID_ARG when the
 * version is not a legacy one libmcp speaks. */
mcp_status mcp__conn_assume_version(mcp_conn *c, const char *version, size_t len);
/* Finishes r->w and sends r->buf as the final frame for r's request, then frees it. */
void mcp__send_reply(mcp__req *r);
/* Adds (on = 1) or removes a legacy subscription. MCP_OK, MCP_ERR_LIMIT, MCP_ERR_NOMEM. */
mcp_status mcp__conn_subscribe(mcp_conn *c, const char *uri, size_t len, int on);
/* Sends notifications/resources/updated to this connection's subscribers of `uri`. */
void mcp__conn_resource_updated(mcp_conn *c, const char *uri);
/* `{"jsonrpc":"2.0","id":ID,"result":{` into r->buf. */
void mcp__result_begin(mcp__req *r);
/* Closes the result (adding the modern fields for 2026-07-28) and sends it. */
void mcp__result_end(mcp__req *r);
void mcp__reply_error(mcp__req *r, int code, const char *message);
/* "ttlMs" and "cacheScope" members. */
void mcp__write_caching(mcp__req *r);
mcp_status mcp__conn_send(mcp_conn *c, const mcp_buf *frame);
/*
 * For libmcp's own transports: `flush` runs after every successful send()
 * (not for a router), on the sending thread but outside the send lock,
 * with send()'s user data. A transport whose send() only queues the frame
 * writes there, so one sender's write() does not hold up the others. Set
 * it right after mcp_conn_new(), before the first frame arrives.
 */
void mcp__conn_set_flush(mcp_conn *c, void (*flush)(void *user_data));
/*
 * Pays the flush the calling worker owes, if any (see conn.c: a worker
 * defers writing a call's answer while other calls wait in the pool).
 * The server pool's idle hook; call.c calls it before a call that may be
 * slow.
 */
void mcp__conn_flush_owed(void);
/* Waits until no thread is inside the flush hook; call after mcp_conn_close(). */
void mcp__conn_wait_flush(mcp_conn *c);
void mcp__conn_release(mcp_conn *c);
void mcp__conn_destroy(mcp_conn *c); /* frees a connection whose last reference is gone */
/* Ends a worker's turn on a connection (a tools/call or a deferred
 * request): running--, wakes mcp_conn_close(), drops the worker's
 * reference and frees the connection on the last one. Call last: the
 * connection may be gone when it returns. */
void mcp__conn_work_done(mcp_conn *c);
void mcp__conn_notify(mcp_conn *c, const char *method);
/* Writes `_meta` with serverInfo and resultType for a modern result. */
void mcp__write_modern_result_fields(mcp_jw *w, mcp_server *srv);

/* ---- defer.c ---- */
/* Runs on a worker what follows a request's checks. `e` is the entry it
 * serves (the request's reference, released after fn returns). */
typedef void (*mcp__deferred_fn)(mcp__req *r, mcp__entry *e);
/*
 * Queues fn(r', e) on the worker pool, r' a copy of `r` that has taken
 * over its message (r->msg is left empty) and a reference to the
 * principal; the connection stays referenced and counted in `running`
 * until it ran. Takes over `e` in every case; a full queue is answered
 * -32603 (retryable) at once, a closing connection not at all.
 */
void mcp__req_defer(mcp__req *r, mcp__deferred_fn fn, mcp__entry *e);

/* ---- resource.c, prompt.c ---- */
void mcp__m_resources_list(mcp__req *r);
void mcp__m_templates_list(mcp__req *r);
void mcp__m_resources_read(mcp__req *r);
void mcp__m_resources_subscribe(mcp__req *r);
void mcp__m_resources_unsubscribe(mcp__req *r);
void mcp__m_prompts_list(mcp__req *r);
void mcp__m_prompts_get(mcp__req *r);
void mcp__m_complete(mcp__req *r);
/* What completes an argument of a prompt or resource (template). */
typedef struct mcp__completer {
    mcp_complete_fn fn; /* or NULL: no candidates */
    void *user_data;
    int blocking;       /* may block: runs on a worker (no *_NONBLOCKING flag) */
} mcp__completer;
/* The resource or template registered under `key`, for completion/complete
 * (a reference in *out): MCP_ERR_NOT_FOUND for none, MCP_ERR_AUTH when
 * `principal` lacks its scopes. */
mcp_status mcp__resource_complete_target(mcp_server *srv, const char *key, size_t len,
                                         const mcp_principal *principal, mcp__entry **out);
mcp__completer mcp__resource_completer(mcp__entry *e); /* e from the above */
/* Appends the scopes of the resource `uri` resolves to (exact or template), if any. */
mcp_status mcp__resource_scopes(mcp_server *srv, const char *uri, size_t len, mcp_buf *out);
/* Appends the scopes of the resource or template registered under `key`, if any. */
mcp_status mcp__resource_key_scopes(mcp_server *srv, const char *key, size_t len, mcp_buf *out);
/* Writes one resource contents object, {uri, mimeType?, text | blob}: what
 * resources/read returns and what a tool result embeds. `text` NULL: the
 * bytes, base64-encoded. */
void mcp__write_resource_contents(mcp_jw *w, const char *uri, const char *mime, const char *text, const void *bytes,
                                  size_t n);

/* ---- ask.c ---- */
mcp_status mcp__server_init_state_key(mcp_server *srv);
/* Verifies a requestState bound to `tool` and `args`; fills a->state_doc. MCP_ERR_INVALID if it fails. */
mcp_status mcp__ask_verify_state(mcp_server *srv, mcp__asker *a, const char *state, size_t len, const char *tool,
                                 const mcp_json *args);
/* Writes "requestState" for the round that ends. */
mcp_status mcp__ask_write_state(mcp_server *srv, mcp__asker *a, mcp_jw *w, const char *tool, const mcp_json *args);
void mcp__ask_cleanup(mcp__asker *a);
/* 1 when mcp__ask_finish would answer a handler's `st` (input, capability, bad answer). */
int mcp__ask_handles(const mcp__asker *a, mcp_status st);
/* Delivers a client response to a waiting legacy ask; 1 if it matched one. */
int mcp__ask_answer(mcp_conn *c, mcp_rpc_msg *m);
mcp_status mcp__ask_elicit(mcp__asker *a, const char *key, const char *message, const char *requested_schema,
                           const mcp_json **answer);
/*
 * Reads inputResponses/requestState of a 2026-07-28 request into `a`
 * (binding the state to `bound` and `args`). On failure answers -32602
 * itself and returns nonzero.
 */
int mcp__ask_begin(mcp__req *r, mcp__asker *a, const char *bound, const mcp_json *args);
int mcp__ask_begin_ex(mcp_conn *c, const mcp_rpc_id *id, const mcp_json *params, mcp__asker *a, const char *bound,
                      const mcp_json *args);
/*
 * Answers a request whose handler returned `st` because of input: the
 * InputRequiredResult, -32021 or -32602. Returns 1 when it answered.
 */
int mcp__ask_finish(mcp_conn *c, const mcp_rpc_id *id, mcp__asker *a, mcp_status st, const char *bound,
                    const mcp_json *args);

/* ---- task.c ---- */
#define MCP__TASKS_EXT "io.modelcontextprotocol/tasks"
mcp_status mcp__tasks_new(mcp_server *srv);
/* Cancels every task and lets its connection go (before the worker pool
 * stops); mcp__tasks_free then frees the store (after the pool). */
void mcp__tasks_stop(mcp_server *srv);
void mcp__tasks_free(mcp_server *srv);
/*
 * A tools/call of tool `t` that the tasks extension decides: -32021 for a
 * required tool without the extension, or a task created and answered with
 * CreateTaskResult. 1 when the request was answered (r->msg taken over or
 * left to the caller to clean up), 0 when it runs as an ordinary call;
 * 2, 3, 4, 5 when refused (-32021, -32603, -32601, -32602).
 */
int mcp__task_divert(mcp__req *r, mcp__tool *t);
/* 2025-11-25 clients (the experimental core form): tasks/result waits for the end; tasks/list. */
void mcp__m_tasks_result(mcp__req *r);
void mcp__m_tasks_list(mcp__req *r);
/* Writes the 2025-11-25 `tasks` server capability (tools/call, list, cancel). */
void mcp__tasks_write_legacy_capability(mcp_jw *w);
void mcp__m_tasks_get(mcp__req *r);
void mcp__m_tasks_update(mcp__req *r);
void mcp__m_tasks_cancel(mcp__req *r);
/* 1 when the request's capabilities declare the tasks extension. */
int mcp__tasks_declared(const mcp_json *caps);
/* Writes "extensions": {"io.modelcontextprotocol/tasks": {}} into a capabilities object. */
void mcp__tasks_write_capability(mcp_jw *w);
/* notifications/tasks on subscriptions/listen streams:
 * - mcp__task_visible: 1 when task `id` exists and belongs to `principal`'s key;
 * - mcp__tasks_watch_locked: the listen stream `l` of `c` hears of its tasks' status
 *   changes from now on (the caller holds c->mu, and c is not closing: the
 *   watch is gone before c can be freed);
 * - mcp__tasks_send_current: sends listen stream `listen` of `c` the current state
 *   of tasks `ids` once (after the acknowledgement), ordered with the status
 *   changes of the same task (never an older state after a newer one);
 * - mcp__tasks_unwatch: forgets the watches of listen `id` on `c` (NULL: all of c's). */
int mcp__task_visible(mcp_server *srv, const char *id, size_t len, const mcp_principal *principal);
void mcp__tasks_watch_locked(mcp_conn *c, const mcp__listen *l);
void mcp__tasks_send_current(mcp_conn *c, const mcp_rpc_id *listen, char *const *ids, size_t n);
void mcp__tasks_unwatch(mcp_conn *c, const mcp_rpc_id *id);
/* Answers -32021 naming the tasks extension in data.requiredCapabilities. */
void mcp__tasks_reply_missing(mcp__req *r, const char *message);
/* Writes `"_meta": {"io.modelcontextprotocol/subscriptionId": id}` (conn.c). */
void mcp__write_sub_meta(mcp_jw *w, const mcp_rpc_id *id);

/* ---- metrics.c ---- */
typedef struct mcp__metrics mcp__metrics;
/* Gauges the transports and the call path move. */
typedef enum mcp__gauge {
    MCP__GAUGE_IN_FLIGHT = 0, /* tools/call requests registered and not yet freed */
    MCP__GAUGE_SESSIONS,      /* open legacy HTTP sessions */
    MCP__GAUGE_STREAMS,       /* open SSE responses */
    MCP__GAUGE_N
} mcp__gauge;
/* Why the HTTP transport refused a request (mcp_http_refusals_total). */
typedef enum mcp__refusal {
    MCP__REFUSE_RATE_ADDRESS = 0,     /* 429: the per-address rate limit */
    MCP__REFUSE_RATE_SUBJECT,         /* 429: the per-subject rate limit */
    MCP__REFUSE_SESSIONS_ADDRESS,     /* 429: sessions per address */
    MCP__REFUSE_SESSIONS_PRINCIPAL,   /* 429: sessions per principal */
    MCP__REFUSE_REQUESTS_ADDRESS,     /* 429: requests in flight per address */
    MCP__REFUSE_REQUESTS_PRINCIPAL,   /* 429: requests in flight per principal */
    MCP__REFUSE_STREAMS_ADDRESS,      /* 429: open streams per address */
    MCP__REFUSE_STREAMS_PRINCIPAL,    /* 429: open streams per principal */
    MCP__REFUSE_SESSIONS,             /* 503: the server-wide session cap */
    MCP__REFUSE_STREAMS,              /* 503: streams per session */
    MCP__REFUSE_BUFFERS,              /* 503: the server's response buffers over their byte budget */
    MCP__REFUSE_SHUTDOWN,             /* 503: shutting down */
    MCP__REFUSE_N
} mcp__refusal;
mcp_status mcp__metrics_new(mcp_server *srv);
void mcp__metrics_free(mcp_server *srv);
/* A tool gets series of its own (up to a cap): its slot is allocated before
 * the registration (NULL: out of memory), then committed with the name once
 * registered, or with NULL to free it when the registration failed. */
void *mcp__metrics_tool_reserve(mcp_server *srv);
void mcp__metrics_tool_commit(mcp_server *srv, void *reserved, const char *name);
/* 1 when calls are counted per tool (mcp_server_metrics_enable). */
int mcp__metrics_on(const mcp_server *srv);
/* Counts a tools/call that ended with `outcome` (mcp_call_outcome) after duration_us. */
void mcp__metrics_call(mcp_server *srv, const char *tool, int outcome, uint64_t duration_us);
void mcp__metrics_gauge(mcp_server *srv, mcp__gauge g, long delta);
void mcp__metrics_refused(mcp_server *srv, mcp__refusal why);
/* An authorization failure; `why` is an mcp_auth_error other than MCP_AUTH_OK. */
void mcp__metrics_auth_failed(mcp_server *srv, int why);

/* ---- call.c ---- */
/* Takes `msg` (its document) whatever happens. Answers errors itself. */
void mcp__call_start(mcp__req *r);
void mcp__call_cancel(mcp_call *call);        /* client cancelled (conn->mu NOT held) */
void mcp__call_timeout(mcp_call *call);       /* from the timer thread */
void mcp__call_release(mcp_call *call);

/* The in-flight table; the caller holds conn->mu. */
mcp_call *mcp__conn_take_call_locked(mcp_conn *c, const mcp_rpc_id *id); /* find and unlink by id */
mcp_call *mcp__conn_find_call_locked(mcp_conn *c, const mcp_rpc_id *id);
void mcp__conn_insert_call_locked(mcp_conn *c, mcp_call *call);
void mcp__conn_unlink_call_locked(mcp_conn *c, mcp_call *call); /* no-op when not in the table */

#endif /* MCP_SERVER_INTERNAL_H */
