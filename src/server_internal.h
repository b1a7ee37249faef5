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

#include "mcp/schema.h"
#include "mcp/server.h"
#include "pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

typedef struct mcp__tool {
    atomic_int refs;            /* registry + running calls */
    char *name;                 /* NUL-terminated */
    size_t name_len;            /* its length */
    char *title;                /* or NULL */
    char *description;          /* or NULL */
    mcp_json_doc *input_doc;    /* inputSchema as registered (spliced into tools/list) */
    mcp_json_doc *output_doc;   /* outputSchema, or NULL */
    mcp_json_doc *icons_doc;    /* icons array, or NULL */
    mcp_json_doc *meta_doc;     /* _meta object, or NULL */
    mcp_schema *input_schema;   /* compiled inputSchema */
    mcp_schema *output_schema;  /* compiled outputSchema, or NULL */
    int hints[4];               /* MCP_HINT_* for readOnly, destructive, idempotent, openWorld */
    unsigned flags;             /* MCP_TOOL_* (DISABLED changes under the registry lock) */
    unsigned timeout_ms;        /* per-tool limit, 0 = server default */
    mcp_tool_fn handler;        /* the handler */
    void *user_data;            /* its user data */
    void (*user_data_free)(void *); /* user data destructor, or NULL */
    uint64_t seq;               /* registration number: order and cursors */
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
    mcp_server_opts opts;       /* copy; string fields point to the copies above */
    mcp_json_parse_opts popts;  /* frame limits */
    uint64_t cursor_key[2];     /* key for authenticating pagination cursors */

    /* Registry. */
    pthread_rwlock_t reg_lock;  /* guards the fields below */
    mcp__tool **tools;          /* registration order */
    size_t ntools;              /* number of tools */
    size_t captools;            /* capacity of `tools` */
    mcp__tool **index;          /* open-addressing name index, `index_cap` slots */
    size_t index_cap;           /* power of two, > 2 * ntools */
    uint64_t next_seq;          /* next registration number */

    /* Workers. */
    mcp__pool *pool;            /* runs blocking tool handlers */

    /* Time limits: one thread sleeps until the earliest deadline. */
    pthread_mutex_t timer_mu;   /* guards the timer list and flags */
    pthread_cond_t timer_cv;    /* signalled when the list changes or on stop */
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
};

/* In-flight table buckets per connection (a power of two). */
#define MCP__CONN_BUCKETS 256u

struct mcp_conn {
    mcp_server *srv;            /* the server */
    atomic_int refs;            /* owner + calls in flight */
    mcp_send_fn send;           /* transport's send */
    void *send_ud;              /* its user data */

    pthread_mutex_t send_mu;    /* serialises send() and transcript lines */
    int send_closed;            /* sends are dropped (after close or a send failure) */

    pthread_mutex_t mu;         /* guards the fields below */
    pthread_cond_t cv;          /* signalled when a call ends or a handler returns */
    int closing;                /* mcp_conn_close() has begun */
    int initialized;            /* legacy `initialize` answered */
    const char *version;        /* negotiated legacy version (static string) */
    atomic_int log_level;       /* legacy minimum level, -1 = all (no setLevel yet) */
    struct mcp_call *buckets[MCP__CONN_BUCKETS]; /* in-flight calls by id */
    unsigned in_flight;         /* calls in the table */
    unsigned running;           /* handlers executing right now */

    struct mcp_conn *prev;      /* server's connection list */
    struct mcp_conn *next;
};

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

    struct mcp_call *bucket_next; /* conn in-flight table chain */
    struct mcp_call *timer_next;  /* server timer list */
    struct mcp_call *timer_prev;
    int on_timer;               /* in the timer list */
};

/* ---- server.c ---- */
void mcp__server_diag(mcp_server *srv, mcp_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void mcp__server_transcript(mcp_server *srv, const char *dir, const char *frame, size_t len);
mcp__tool *mcp__server_find_tool(mcp_server *srv, const char *name, size_t len); /* +1 ref */
void mcp__tool_release(mcp__tool *t);
void mcp__server_add_conn(mcp_server *srv, mcp_conn *c);
void mcp__server_remove_conn(mcp_server *srv, mcp_conn *c);
void mcp__server_timer_add(mcp_server *srv, struct mcp_call *call);
void mcp__server_timer_remove(mcp_server *srv, struct mcp_call *call);
uint64_t mcp__now_ns(void);
/* Writes the tools/list page starting at `cursor` (NULL = first) into w as
 * the members "tools" and maybe "nextCursor"; MCP_ERR_INVALID_ARG for a bad cursor. */
mcp_status mcp__server_write_tools(mcp_server *srv, mcp_jw *w, const char *cursor, size_t cursor_len,
                                   const char *version);

/* ---- conn.c ---- */
mcp_status mcp__conn_send(mcp_conn *c, const mcp_buf *frame);
void mcp__conn_release(mcp_conn *c);
void mcp__conn_notify_tools_changed(mcp_conn *c);
/* Writes `_meta` with serverInfo and resultType for a modern result. */
void mcp__write_modern_result_fields(mcp_jw *w, mcp_server *srv);
/* Protocol version helpers. */
int mcp__version_at_least(const char *version, const char *min);

/* ---- call.c ---- */
/* Takes `msg` (its document) whatever happens. Answers errors itself. */
void mcp__call_start(mcp_conn *c, mcp_rpc_msg *msg, const char *version, int modern, int log_threshold);
void mcp__call_cancel(mcp_call *call);        /* client cancelled (conn->mu NOT held) */
void mcp__call_timeout(mcp_call *call);       /* from the timer thread */
void mcp__call_release(mcp_call *call);

/* The in-flight table; the caller holds conn->mu. */
mcp_call *mcp__conn_take_call_locked(mcp_conn *c, const mcp_rpc_id *id); /* find and unlink by id */
mcp_call *mcp__conn_find_call_locked(mcp_conn *c, const mcp_rpc_id *id);
void mcp__conn_insert_call_locked(mcp_conn *c, mcp_call *call);
void mcp__conn_unlink_call_locked(mcp_conn *c, mcp_call *call); /* no-op when not in the table */

#endif /* MCP_SERVER_INTERNAL_H */
