/*
 * The tasks extension (io.modelcontextprotocol/tasks, SEP-2663): a
 * tools/call that outlives its request.
 *
 * A task runs its tool on a private connection of its own (`conn`), so it
 * survives the request (an HTTP 2026-07-28 request's connection dies with
 * its response) and the ordinary call pipeline does all the work: schema
 * checks, the worker pool, time limits, MRTR rounds, on_call_end. The
 * request that made the task gets CreateTaskResult at once; what the
 * private connection would have sent to a client is caught by task_send()
 * and becomes the task's state:
 *   - the final result: `completed` (a tool error is still completed,
 *     with isError), a JSON-RPC error: `failed`;
 *   - an InputRequiredResult: `input_required`; tasks/update collects the
 *     answers, and when every request of the round is answered the call is
 *     sent again on the private connection with inputResponses and the
 *     round's requestState, as a 2026-07-28 client would retry it;
 *   - progress notifications: their message becomes statusMessage.
 * tasks/cancel cancels the call on the private connection.
 *
 * The store is in memory: a list under one mutex, bounded per principal,
 * each task kept `task_ttl_ms` after its creation, then swept. A task is
 * seen only by the principal that created it (the same key that binds a
 * requestState); to any other it does not exist (-32602).
 *
 * Locks: the store's `mu` is never held while a connection is entered
 * (dispatch, close); task_send() runs under the private connection's send
 * lock and takes `mu`, so the opposite order would deadlock.
 */
#include "util/util.h"
#include "server/server_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define DEFAULT_TTL_MS 3600000u
#define DEFAULT_POLL_MS 500u
#define DEFAULT_MAX_TASKS 256u
#define ID_BYTES 16
#define MAX_INPUT_KEYS 64 /* input requests of one round a task can hold */
#define MAX_WATCHES 4096  /* listen streams following tasks, server-wide */
#define PROGRESS_TOKEN "io.modelcontextprotocol/tasks"
#define MCP__RELATED_TASK "io.modelcontextprotocol/related-task"

enum { ST_WORKING = 0, ST_INPUT, ST_COMPLETED, ST_FAILED, ST_CANCELLED };
static const char *const g_status[] = {"working", "input_required", "completed", "failed", "cancelled"};

typedef struct mcp__task {
    struct mcp__task *next;     /* the store's list */
    atomic_int refs;            /* the store + operations holding it */
    char id[2 * ID_BYTES + 1];  /* taskId: 128 random bits in hex */
    char owner[MCP__PRINCIPAL_KEY_SIZE]; /* mcp__principal_key of its creator ("" without authorization) */
    mcp_server *srv;            /* the server */
    mcp_conn *conn;             /* the private connection its rounds run on */
    pthread_mutex_t dispatch_mu; /* one frame at a time into `conn` */
    pthread_mutex_t notify_mu;  /* one notifications/tasks round at a time (their order is the status order) */
    mcp_principal *principal;   /* its creator (a reference), or NULL */
    mcp_json_doc *params;       /* the tools/call params as received */
    char traceparent[MCP__TRACEPARENT_MAX + 1]; /* the creating request's HTTP trace context when its _meta */
    char tracestate[MCP__TRACESTATE_MAX + 1];   /* had none (put into every round's _meta), or "" */
    int modern;                 /* a 2026-07-28 request made it */
    int legacy;                 /* the 2025-11-25 form made it (params.task): tasks/result, tasks/list */
    unsigned ttl;               /* ms it is kept after its creation */
    struct waiter *waiters;     /* 2025-11-25 tasks/result requests waiting for its end (the store's mu) */
    int64_t round;              /* request id of the current round on `conn` */
    /* Under the store's mu: */
    int status;                 /* ST_* */
    uint64_t created_ms;        /* wall clock */
    uint64_t updated_ms;        /* wall clock of the last status change */
    uint64_t expires_ns;        /* monotonic: swept after this */
    char *message;              /* statusMessage, or NULL */
    mcp_json_doc *answer;       /* the last frame of the round: result, error or InputRequiredResult */
    char *answered[MAX_INPUT_KEYS]; /* input_required: keys answered so far this round */
    size_t nanswered;           /* how many */
    mcp_buf responses;          /* their answers: `"key":value,...` */
} mcp__task;

/* A 2025-11-25 tasks/result request waiting for its task to end. */
typedef struct waiter {
    struct waiter *next;        /* the task's list */
    mcp_conn *conn;             /* the client's connection (a reference) */
    mcp_rpc_msg msg;            /* the request (its id answers it) */
} waiter;

/* A listen stream following a task (notifications/tasks). */
typedef struct watch {
    struct watch *next;         /* the store's list */
    char task[2 * ID_BYTES + 1]; /* the taskId */
    mcp_conn *conn;             /* the stream's connection: no reference; the watch is gone before it closes */
    mcp_rpc_id id;              /* the listen request's id */
    char *id_str;               /* owned copy of a string id */
} watch;

struct mcp__tasks {
    pthread_mutex_t mu;         /* guards the list, the watches and every task's status fields */
    mcp__task *head;            /* newest first */
    watch *watches;             /* listen streams following tasks */
    unsigned nwatches;          /* how many (at most MAX_WATCHES) */
};

static void answer_waiters(mcp__task *k, waiter *list);
static void notify(mcp__task *k);
static int legacy_divert(mcp__req *r, mcp__tool *t);
static void reply_created_legacy(mcp__req *r, mcp__task *k);

/*
 * A request in the 2025-11-25 form: from a client that negotiated
 * 2025-11-25 (tasks were experimental core then) and did not declare the
 * extension (a legacy client that did gets the extension's form).
 */
static int legacy_form(const mcp__req *r)
{
    return !r->modern && r->version && strcmp(r->version, MCP_PROTOCOL_2025_11_25) == 0 &&
           !mcp__tasks_declared(r->caps);
}

/* ------------------------------------------------------------------------ */
/* Lifetime                                                                  */

static void task_release(mcp__task *k)
{
    if (!k || atomic_fetch_sub(&k->refs, 1) != 1)
        return;
    if (k->conn) {
        /* After the close no send can be running or start: task_send never
         * sees `k` again. Handlers still running finish on their own. */
        mcp_conn_close(k->conn, 0);
        mcp_conn_free(k->conn);
    }
    answer_waiters(k, k->waiters); /* expired or the server stops: they get an error */
    for (size_t i = 0; i < k->nanswered; i++)
        mcp_free(k->answered[i]);
    mcp_buf_cleanup(&k->responses);
    mcp_json_doc_free(k->answer);
    mcp_json_doc_free(k->params);
    mcp_free(k->message);
    mcp_principal_free(k->principal);
    pthread_mutex_destroy(&k->dispatch_mu);
    pthread_mutex_destroy(&k->notify_mu);
    mcp_free(k);
}

mcp_status mcp__tasks_new(mcp_server *srv)
{
    srv->tasks = mcp__calloc(1, sizeof *srv->tasks);
    if (!srv->tasks)
        return MCP_ERR_NOMEM;
    pthread_mutex_init(&srv->tasks->mu, NULL);
    return MCP_OK;
}

void mcp__tasks_stop(mcp_server *srv)
{
    if (!srv->tasks)
        return;
    pthread_mutex_lock(&srv->tasks->mu);
    mcp__task *all = srv->tasks->head;
    srv->tasks->head = NULL;
    pthread_mutex_unlock(&srv->tasks->mu);
    while (all) {
        mcp__task *n = all->next;
        task_release(all);
        all = n;
    }
}

void mcp__tasks_free(mcp_server *srv)
{
    if (!srv->tasks)
        return;
    mcp__tasks_stop(srv);
    while (srv->tasks->watches) {
        watch *w = srv->tasks->watches;
        srv->tasks->watches = w->next;
        mcp_free(w->id_str);
        mcp_free(w);
    }
    pthread_mutex_destroy(&srv->tasks->mu);
    mcp_free(srv->tasks);
    srv->tasks = NULL;
}

static unsigned ttl_ms(const mcp_server *srv)
{
    return srv->opts.task_ttl_ms ? srv->opts.task_ttl_ms : DEFAULT_TTL_MS;
}

/* Unlinks expired tasks onto *dead (the store's references move there). */
static void sweep_locked(struct mcp__tasks *s, uint64_t now_ns, mcp__task **dead)
{
    for (mcp__task **pp = &s->head; *pp;) {
        mcp__task *k = *pp;
        if (k->expires_ns <= now_ns) {
            *pp = k->next;
            k->next = *dead;
            *dead = k;
        } else {
            pp = &k->next;
        }
    }
}

static void release_all(mcp__task *dead)
{
    while (dead) {
        mcp__task *n = dead->next;
        task_release(dead);
        dead = n;
    }
}

/* The task `id` of `owner`, with a reference; NULL when unknown (or another principal's). */
static mcp__task *find(mcp_server *srv, const char *id, size_t len, const char *owner)
{
    struct mcp__tasks *s = srv->tasks;
    mcp__task *dead = NULL, *hit = NULL;
    pthread_mutex_lock(&s->mu);
    sweep_locked(s, mcp__mono_ns(), &dead);
    for (mcp__task *k = s->head; k && !hit; k = k->next)
        if (strlen(k->id) == len && memcmp(k->id, id, len) == 0 && strcmp(k->owner, owner) == 0)
            hit = k;
    if (hit)
        atomic_fetch_add(&hit->refs, 1);
    pthread_mutex_unlock(&s->mu);
    release_all(dead);
    return hit;
}

/*
 * Adds `k` to the store. At the per-principal limit the oldest finished
 * task of the same principal makes room; when all of them still run,
 * MCP_ERR_LIMIT.
 */
static mcp_status store_add(mcp_server *srv, mcp__task *k)
{
    struct mcp__tasks *s = srv->tasks;
    unsigned max = srv->opts.max_tasks ? srv->opts.max_tasks : DEFAULT_MAX_TASKS;
    mcp__task *dead = NULL;
    mcp_status st = MCP_OK;
    pthread_mutex_lock(&s->mu);
    sweep_locked(s, mcp__mono_ns(), &dead);
    unsigned mine = 0;
    mcp__task **oldest_done = NULL;
    for (mcp__task **pp = &s->head; *pp; pp = &(*pp)->next) {
        if (strcmp((*pp)->owner, k->owner) != 0)
            continue;
        mine++;
        if ((*pp)->status >= ST_COMPLETED)
            oldest_done = pp; /* newest first: the last one seen is the oldest */
    }
    if (mine >= max) {
        if (oldest_done) {
            mcp__task *victim = *oldest_done;
            *oldest_done = victim->next;
            victim->next = dead;
            dead = victim;
        } else {
            st = MCP_ERR_LIMIT;
        }
    }
    if (!st) {
        k->next = s->head;
        s->head = k;
    }
    pthread_mutex_unlock(&s->mu);
    release_all(dead);
    return st;
}

/* ------------------------------------------------------------------------ */
/* What the private connection sends                                         */

static void set_message(mcp__task *k, const mcp_json *msg)
{
    size_t n;
    const char *m = mcp_json_str(msg, &n);
    if (!m)
        return;
    char *copy = mcp__strndup(m, n > 1024 ? 1024 : n);
    if (!copy)
        return;
    mcp_free(k->message);
    k->message = copy;
}

static void forget_answers(mcp__task *k)
{
    for (size_t i = 0; i < k->nanswered; i++)
        mcp_free(k->answered[i]);
    k->nanswered = 0;
    k->responses.len = 0;
    if (k->responses.data)
        k->responses.data[0] = '\0';
}

/* The send function of a task's private connection. */
static mcp_status task_send(const char *frame, size_t len, void *user_data)
{
    mcp__task *k = user_data;
    mcp_json_doc *doc;
    if (mcp_json_parse(&doc, frame, len, &k->srv->popts, NULL) != MCP_OK)
        return MCP_OK;
    const mcp_json *root = mcp_json_doc_root(doc);
    const char *method = mcp_json_str(mcp_json_get(root, "method"), NULL);
    const mcp_json *result = mcp_json_get(root, "result");
    struct mcp__tasks *s = k->srv->tasks;
    pthread_mutex_lock(&s->mu);
    int was = k->status;
    if (k->status == ST_WORKING) {
        if (method) {
            if (strcmp(method, "notifications/progress") == 0) {
                set_message(k, mcp_json_get(mcp_json_get(root, "params"), "message"));
                k->updated_ms = mcp__wall_ms();
            }
        } else if (mcp_json_get(root, "error") || result) {
            const char *rt = mcp_json_str(mcp_json_get(result, "resultType"), NULL);
            k->status = !result ? ST_FAILED : rt && strcmp(rt, "input_required") == 0 ? ST_INPUT : ST_COMPLETED;
            if (k->legacy && k->status == ST_COMPLETED && mcp_json_bool(mcp_json_get(result, "isError")))
                k->status = ST_FAILED; /* 2025-11-25: a tool error fails the task */
            mcp_json_doc_free(k->answer);
            k->answer = doc;
            doc = NULL;
            forget_answers(k);
            mcp_free(k->message); /* a progress message of the run does not describe its end */
            k->message = NULL;
            k->updated_ms = mcp__wall_ms();
        }
    }
    waiter *wake = k->status >= ST_COMPLETED ? k->waiters : NULL;
    if (wake)
        k->waiters = NULL;
    int changed = k->status != was;
    pthread_mutex_unlock(&s->mu);
    mcp_json_doc_free(doc);
    answer_waiters(k, wake);
    if (changed)
        notify(k);
    return MCP_OK;
}

/* The HTTP headers' trace context of the creating request, when its _meta has no traceparent of its own. */
static void task_trace(mcp__task *k, const mcp_json *meta)
{
    size_t n = 0;
    const char *own = mcp_json_str(mcp_json_get(meta, "traceparent"), &n);
    const char *tp, *ts;
    mcp__trace_http_get(&tp, &ts);
    if ((own && mcp__traceparent_valid(own, n)) || !tp)
        return;
    snprintf(k->traceparent, sizeof k->traceparent, "%s", tp);
    snprintf(k->tracestate, sizeof k->tracestate, "%s", ts ? ts : "");
}

/* ------------------------------------------------------------------------ */
/* Running a round                                                           */

/* Copies _meta, adding a progress token so that progress messages reach the
 * task, and the trace context the creating request had in its headers. */
static void write_meta(mcp_jw *w, const mcp_json *meta, const mcp__task *k)
{
    mcp_jw_object_begin(w);
    for (size_t i = 0; i < mcp_json_len(meta); i++) {
        size_t kl;
        const char *key = mcp_json_key_at(meta, i, &kl);
        if ((kl == 13 && memcmp(key, "progressToken", 13) == 0) ||
            (k->traceparent[0] && ((kl == 11 && memcmp(key, "traceparent", 11) == 0) ||
                                   (kl == 10 && memcmp(key, "tracestate", 10) == 0))))
            continue;
        mcp_jw_keyn(w, key, kl);
        mcp_jw_value(w, mcp_json_value_at(meta, i));
    }
    mcp_jw_key(w, "progressToken");
    mcp_jw_string(w, PROGRESS_TOKEN);
    if (k->traceparent[0]) {
        mcp_jw_key(w, "traceparent");
        mcp_jw_string(w, k->traceparent);
    }
    if (k->tracestate[0]) {
        mcp_jw_key(w, "tracestate");
        mcp_jw_string(w, k->tracestate);
    }
    mcp_jw_object_end(w);
}

/*
 * Sends round `k->round` of the call into the private connection: the
 * params as received, or (`responses` set) with this round's
 * inputResponses and requestState in place of the client's.
 */
static void run_round(mcp__task *k, const char *responses, size_t rlen, const mcp_json *state)
{
    const mcp_json *p = mcp_json_doc_root(k->params);
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_id id;
    memset(&id, 0, sizeof id);
    id.type = MCP_RPC_ID_INT;
    id.num = k->round;
    mcp_rpc_begin_request(&w, &id, "tools/call");
    mcp_jw_object_begin(&w);
    for (size_t i = 0; i < mcp_json_len(p); i++) {
        size_t kl;
        const char *key = mcp_json_key_at(p, i, &kl);
        int is_meta = kl == 5 && memcmp(key, "_meta", 5) == 0;
        int replaced = responses && ((kl == 14 && memcmp(key, "inputResponses", 14) == 0) ||
                                     (kl == 12 && memcmp(key, "requestState", 12) == 0));
        if (replaced)
            continue;
        mcp_jw_keyn(&w, key, kl);
        if (is_meta)
            write_meta(&w, mcp_json_value_at(p, i), k);
        else
            mcp_jw_value(&w, mcp_json_value_at(p, i));
    }
    if (!mcp_json_get(p, "_meta")) {
        mcp_jw_key(&w, "_meta");
        write_meta(&w, NULL, k);
    }
    if (responses) {
        mcp_buf obj; /* the collected members, between braces */
        mcp_buf_init(&obj, 0);
        mcp_buf_append(&obj, "{", 1);
        mcp_buf_append(&obj, responses, rlen);
        mcp_buf_append(&obj, "}", 1);
        mcp_jw_key(&w, "inputResponses");
        mcp_jw_raw(&w, obj.data ? obj.data : "{}", obj.data ? obj.len : 2);
        mcp_buf_cleanup(&obj);
        if (state) {
            mcp_jw_key(&w, "requestState");
            mcp_jw_value(&w, state);
        }
    }
    mcp_jw_object_end(&w);
    mcp_rpc_end(&w);
    mcp_rpc_msg m;
    memset(&m, 0, sizeof m);
    mcp_status st = mcp_jw_finish(&w);
    if (!st)
        st = mcp_rpc_decode(&m, b.data, b.len, &k->srv->popts, NULL);
    if (!st) {
        /* The round carries the task's own trace context in _meta, not that
         * of the HTTP request (tasks/update) that happens to run it. */
        const char *tp, *ts;
        mcp__trace_http_get(&tp, &ts);
        mcp__trace_http_set(NULL, NULL);
        pthread_mutex_lock(&k->dispatch_mu);
        mcp__conn_dispatch_as(k->conn, &m, k->principal);
        pthread_mutex_unlock(&k->dispatch_mu);
        mcp__trace_http_set(tp, ts);
        mcp_rpc_msg_cleanup(&m);
    } else {
        pthread_mutex_lock(&k->srv->tasks->mu);
        int failed = k->status == ST_WORKING;
        if (failed) {
            k->status = ST_FAILED;
            k->updated_ms = mcp__wall_ms();
        }
        pthread_mutex_unlock(&k->srv->tasks->mu);
        if (failed)
            notify(k);
    }
    mcp_buf_cleanup(&b);
}

/* ------------------------------------------------------------------------ */
/* Writing a task                                                            */

static void write_time(mcp_jw *w, const char *key, uint64_t ms)
{
    time_t t = (time_t)(ms / 1000u);
    struct tm tm;
    gmtime_r(&t, &tm);
    char text[40];
    size_t n = strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(text + n, sizeof text - n, ".%03uZ", (unsigned)(ms % 1000u));
    mcp_jw_key(w, key);
    mcp_jw_string(w, text);
}

/* 1 when `key` was answered this round. */
static int answered(const mcp__task *k, const char *key, size_t kl)
{
    for (size_t i = 0; i < k->nanswered; i++)
        if (strlen(k->answered[i]) == kl && memcmp(k->answered[i], key, kl) == 0)
            return 1;
    return 0;
}

/* The round's outstanding input requests (those not answered yet). */
static void write_input_requests(mcp_jw *w, const mcp__task *k)
{
    const mcp_json *all = mcp_json_get(mcp_json_get(mcp_json_doc_root(k->answer), "result"), "inputRequests");
    mcp_jw_key(w, "inputRequests");
    mcp_jw_object_begin(w);
    for (size_t i = 0; i < mcp_json_len(all); i++) {
        size_t kl;
        const char *key = mcp_json_key_at(all, i, &kl);
        if (answered(k, key, kl))
            continue;
        mcp_jw_keyn(w, key, kl);
        mcp_jw_value(w, mcp_json_value_at(all, i));
    }
    mcp_jw_object_end(w);
}

/* The Task members; `detailed` adds what its status carries (tasks/get). Under the store's mu. */
static void write_task(mcp_jw *w, const mcp__task *k, int detailed)
{
    const mcp_server_opts *o = &k->srv->opts;
    mcp_jw_key(w, "taskId");
    mcp_jw_string(w, k->id);
    mcp_jw_key(w, "status");
    mcp_jw_string(w, g_status[k->status]);
    if (k->message) {
        mcp_jw_key(w, "statusMessage");
        mcp_jw_string(w, k->message);
    }
    write_time(w, "createdAt", k->created_ms);
    write_time(w, "lastUpdatedAt", k->updated_ms);
    mcp_jw_key(w, k->legacy ? "ttl" : "ttlMs");
    mcp_jw_int(w, k->ttl);
    mcp_jw_key(w, k->legacy ? "pollInterval" : "pollIntervalMs");
    mcp_jw_int(w, o->task_poll_ms ? o->task_poll_ms : DEFAULT_POLL_MS);
    if (!detailed || k->legacy) /* 2025-11-25: the result comes from tasks/result */
        return;
    const mcp_json *root = mcp_json_doc_root(k->answer);
    if (k->status == ST_COMPLETED) {
        mcp_jw_key(w, "result");
        mcp_jw_value(w, mcp_json_get(root, "result"));
    } else if (k->status == ST_FAILED) {
        const mcp_json *e = mcp_json_get(root, "error");
        mcp_jw_key(w, "error");
        if (e) {
            mcp_jw_value(w, e);
        } else {
            mcp_jw_object_begin(w);
            mcp_jw_key(w, "code");
            mcp_jw_int(w, MCP_RPC_INTERNAL_ERROR);
            mcp_jw_key(w, "message");
            mcp_jw_string(w, "Internal error: the task could not run");
            mcp_jw_object_end(w);
        }
    } else if (k->status == ST_INPUT) {
        write_input_requests(w, k);
    }
}

/* ------------------------------------------------------------------------ */
/* notifications/tasks on listen streams                                     */

int mcp__task_visible(mcp_server *srv, const char *id, size_t len, const mcp_principal *principal)
{
    if (!srv->tasks)
        return 0;
    char owner[MCP__PRINCIPAL_KEY_SIZE];
    mcp__principal_key(principal, owner, sizeof owner);
    mcp__task *k = find(srv, id, len, owner);
    task_release(k);
    return k != NULL;
}

static void watch_free(watch *w)
{
    mcp_free(w->id_str);
    mcp_free(w);
}

void mcp__tasks_watch_locked(mcp_conn *c, const mcp__listen *l)
{
    struct mcp__tasks *s = c->srv->tasks;
    if (!s)
        return;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < l->ntasks && s->nwatches < MAX_WATCHES; i++) {
        watch *w = mcp__calloc(1, sizeof *w);
        if (!w)
            break;
        snprintf(w->task, sizeof w->task, "%s", l->tasks[i]);
        w->conn = c;
        w->id = l->id;
        if (l->id.type == MCP_RPC_ID_STRING) {
            if (!(w->id_str = mcp__strndup(l->id.str, l->id.len))) {
                mcp_free(w);
                break;
            }
            w->id.str = w->id_str;
        }
        w->next = s->watches;
        s->watches = w;
        s->nwatches++;
    }
    c->task_watches = 1;
    pthread_mutex_unlock(&s->mu);
}

void mcp__tasks_unwatch(mcp_conn *c, const mcp_rpc_id *id)
{
    struct mcp__tasks *s = c->srv->tasks;
    pthread_mutex_lock(&c->mu);
    int any = c->task_watches;
    pthread_mutex_unlock(&c->mu);
    if (!s || !any)
        return;
    watch *dead = NULL;
    pthread_mutex_lock(&s->mu);
    for (watch **pp = &s->watches; *pp;) {
        watch *w = *pp;
        if (w->conn == c && (!id || mcp_rpc_id_equal(&w->id, id))) {
            *pp = w->next;
            w->next = dead;
            dead = w;
            s->nwatches--;
        } else {
            pp = &w->next;
        }
    }
    pthread_mutex_unlock(&s->mu);
    while (dead) {
        watch *n = dead->next;
        watch_free(dead);
        dead = n;
    }
}

/* One notifications/tasks frame: the task's members (`task`, an object) and the stream's subscriptionId. */
static void send_task_note(mcp_conn *c, const mcp_rpc_id *listen, const mcp_json *task)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_rpc_begin_notification(&w, "notifications/tasks");
    mcp_jw_object_begin(&w);
    for (size_t i = 0; i < mcp_json_len(task); i++) {
        size_t kl;
        const char *key = mcp_json_key_at(task, i, &kl);
        mcp_jw_keyn(&w, key, kl);
        mcp_jw_value(&w, mcp_json_value_at(task, i));
    }
    mcp__write_sub_meta(&w, listen);
    mcp_jw_object_end(&w);
    mcp_rpc_end(&w);
    if (mcp_jw_finish(&w) == MCP_OK)
        mcp__conn_send_to(c, &b, listen, 0);
    mcp_buf_cleanup(&b);
}

/* The task's DetailedTask now, as a document; NULL when out of memory. Under the store's mu. */
static mcp_json_doc *snapshot_locked(const mcp__task *k)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    write_task(&w, k, 1);
    mcp_jw_object_end(&w);
    mcp_json_doc *doc = NULL;
    if (mcp_jw_finish(&w) == MCP_OK && mcp_json_parse(&doc, b.data, b.len, &k->srv->popts, NULL) != MCP_OK)
        doc = NULL;
    mcp_buf_cleanup(&b);
    return doc;
}

/*
 * Tells the streams following `k` its state now. Called after each status
 * change, without the store's mu; k->notify_mu orders the rounds, and each
 * round reads the state afresh, so a stream never hears an older state
 * after a newer one.
 */
static void notify(mcp__task *k)
{
    struct mcp__tasks *s = k->srv->tasks;
    typedef struct target {
        mcp_conn *conn;
        mcp_rpc_id id;
        char *str;
    } target;
    target *t = NULL;
    size_t n = 0, cap = 0;
    mcp_json_doc *doc = NULL;
    pthread_mutex_lock(&k->notify_mu);
    pthread_mutex_lock(&s->mu);
    for (watch *w = s->watches; w; w = w->next)
        cap += strcmp(w->task, k->id) == 0;
    if (cap && (t = mcp__calloc(cap, sizeof *t)) != NULL) {
        for (watch *w = s->watches; w && n < cap; w = w->next) {
            if (strcmp(w->task, k->id) != 0)
                continue;
            t[n].id = w->id;
            if (w->id.type == MCP_RPC_ID_STRING) {
                if (!(t[n].str = mcp__strndup(w->id.str, w->id.len)))
                    continue;
                t[n].id.str = t[n].str;
            }
            t[n].conn = w->conn;
            atomic_fetch_add(&w->conn->refs, 1); /* the watch lives while its connection is open */
            n++;
        }
        doc = snapshot_locked(k);
    }
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < n; i++) {
        if (doc)
            send_task_note(t[i].conn, &t[i].id, mcp_json_doc_root(doc));
        mcp__conn_release(t[i].conn);
        mcp_free(t[i].str);
    }
    pthread_mutex_unlock(&k->notify_mu);
    mcp_free(t);
    mcp_json_doc_free(doc);
}

void mcp__tasks_send_current(mcp_conn *c, const mcp_rpc_id *listen, char *const *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        /* The watch was agreed for the requester's own task: found by id alone here. */
        mcp__task *k = NULL;
        struct mcp__tasks *s = c->srv->tasks;
        pthread_mutex_lock(&s->mu);
        for (mcp__task *t = s->head; t && !k; t = t->next)
            if (strcmp(t->id, ids[i]) == 0)
                k = t;
        if (k)
            atomic_fetch_add(&k->refs, 1);
        pthread_mutex_unlock(&s->mu);
        if (!k)
            continue;
        pthread_mutex_lock(&k->notify_mu);
        pthread_mutex_lock(&s->mu);
        mcp_json_doc *doc = snapshot_locked(k);
        pthread_mutex_unlock(&s->mu);
        if (doc)
            send_task_note(c, listen, mcp_json_doc_root(doc));
        pthread_mutex_unlock(&k->notify_mu);
        mcp_json_doc_free(doc);
        task_release(k);
    }
}

/* Ends a result whose resultType is `type` (the modern _meta too) and sends it. */
static void result_end_as(mcp__req *r, const char *type)
{
    mcp_jw_key(&r->w, "resultType");
    mcp_jw_string(&r->w, type);
    if (r->modern) {
        mcp_jw_key(&r->w, "_meta");
        mcp_jw_object_begin(&r->w);
        mcp_jw_key(&r->w, "io.modelcontextprotocol/serverInfo");
        mcp_jw_object_begin(&r->w);
        mcp_jw_key(&r->w, "name");
        mcp_jw_string(&r->w, r->c->srv->name);
        mcp_jw_key(&r->w, "version");
        mcp_jw_string(&r->w, r->c->srv->version);
        mcp_jw_object_end(&r->w);
        mcp_jw_object_end(&r->w);
    }
    mcp_jw_object_end(&r->w);
    mcp_rpc_end(&r->w);
    mcp__send_reply(r);
}

/* ------------------------------------------------------------------------ */
/* Capability                                                                */

int mcp__tasks_declared(const mcp_json *caps)
{
    return mcp_json_typeof(mcp_json_get(mcp_json_get(caps, "extensions"), MCP__TASKS_EXT)) == MCP_JSON_OBJECT;
}

void mcp__tasks_write_capability(mcp_jw *w)
{
    mcp_jw_key(w, "extensions");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, MCP__TASKS_EXT);
    mcp_jw_object_begin(w);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
}

void mcp__tasks_write_legacy_capability(mcp_jw *w)
{
    mcp_jw_key(w, "tasks");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "list");
    mcp_jw_object_begin(w);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "cancel");
    mcp_jw_object_begin(w);
    mcp_jw_object_end(w);
    mcp_jw_key(w, "requests");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "tools");
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "call");
    mcp_jw_object_begin(w);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
}

/* -32021 naming the extension in data.requiredCapabilities. */
void mcp__tasks_reply_missing(mcp__req *r, const char *message)
{
    mcp_buf_init(&r->buf, 0);
    mcp_jw_init(&r->w, &r->buf);
    mcp_rpc_begin_error(&r->w, &r->msg->id, MCP_RPC_MISSING_CAPABILITY, message);
    mcp_jw_key(&r->w, "data");
    mcp_jw_object_begin(&r->w);
    mcp_jw_key(&r->w, "requiredCapabilities");
    mcp_jw_object_begin(&r->w);
    mcp__tasks_write_capability(&r->w);
    mcp_jw_object_end(&r->w);
    mcp_jw_object_end(&r->w);
    mcp_rpc_end_error(&r->w);
    mcp__send_reply(r);
}

/* ------------------------------------------------------------------------ */
/* Creating a task                                                           */

static mcp__task *task_new(mcp__req *r)
{
    mcp_server *srv = r->c->srv;
    mcp__task *k = mcp__calloc(1, sizeof *k);
    if (!k)
        return NULL;
    atomic_init(&k->refs, 1);
    pthread_mutex_init(&k->dispatch_mu, NULL);
    pthread_mutex_init(&k->notify_mu, NULL);
    k->srv = srv;
    k->modern = r->modern;
    k->round = 1;
    mcp_buf_init(&k->responses, 0);
    unsigned char raw[ID_BYTES];
    if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw) {
        task_release(k);
        return NULL;
    }
    for (int i = 0; i < ID_BYTES; i++)
        snprintf(k->id + 2 * i, 3, "%02x", raw[i]);
    mcp__principal_key(r->principal, k->owner, sizeof k->owner);
    k->principal = mcp__principal_ref(r->principal);
    k->status = ST_WORKING;
    k->created_ms = k->updated_ms = mcp__wall_ms();
    k->ttl = ttl_ms(srv);
    k->legacy = legacy_form(r);
    const mcp_json *asked = mcp_json_get(mcp_json_get(r->msg->params, "task"), "ttl");
    if (k->legacy && mcp_json_typeof(asked) == MCP_JSON_INT && mcp_json_int(asked) > 0 &&
        mcp_json_int(asked) < (int64_t)k->ttl)
        k->ttl = (unsigned)mcp_json_int(asked); /* a shorter life when asked; never a longer one */
    k->expires_ns = mcp__mono_ns() + (uint64_t)k->ttl * 1000000ull;
    task_trace(k, mcp_json_get(r->msg->params, "_meta"));
    /* The params outlive the request: a copy of their own. */
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_value(&w, r->msg->params);
    mcp_status st = mcp_jw_finish(&w);
    if (!st)
        st = mcp_json_parse(&k->params, b.data, b.len, &srv->popts, NULL);
    mcp_buf_cleanup(&b);
    if (!st)
        st = mcp_conn_new(&k->conn, srv, task_send, k);
    if (!st && !r->modern)
        st = mcp__conn_assume_version(k->conn, r->version, strlen(r->version));
    if (st) {
        task_release(k);
        return NULL;
    }
    snprintf(k->conn->task_id, sizeof k->conn->task_id, "%s", k->id);
    return k;
}

int mcp__task_divert(mcp__req *r, mcp__tool *t)
{
    if (r->c->task_id[0])
        return 0; /* a task's own round */
    int legacy = legacy_form(r) ? legacy_divert(r, t) : 0;
    if (legacy >= 0 && legacy_form(r))
        return legacy;
    if (!legacy && t->task_support == MCP_TASK_FORBIDDEN)
        return 0;
    if (!legacy && !mcp__tasks_declared(r->caps)) {
        if (t->task_support != MCP_TASK_REQUIRED)
            return 0;
        mcp__tasks_reply_missing(r, "Missing required client capability: this tool runs as a task "
                                   "(extension io.modelcontextprotocol/tasks)");
        return 2;
    }
    if (!legacy && (t->flags & MCP_TOOL_TASK_AFTER_INPUT) && !mcp_json_get(r->msg->params, "inputResponses"))
        return 0; /* its input comes first, in ordinary rounds */
    mcp__task *k = task_new(r);
    mcp_status st = k ? store_add(r->c->srv, k) : MCP_ERR_NOMEM;
    if (st) {
        task_release(k);
        mcp__reply_error(r, MCP_RPC_INTERNAL_ERROR,
                         st == MCP_ERR_LIMIT ? "Server busy: too many tasks still running for this caller; retry later"
                                             : "Internal error: could not create the task");
        return 3;
    }
    /* The store holds it (tasks/get finds it) before anyone hears of it. */
    atomic_fetch_add(&k->refs, 1);
    run_round(k, NULL, 0, NULL);
    if (legacy) {
        reply_created_legacy(r, k);
        task_release(k);
        return 1;
    }
    mcp__result_begin(r);
    pthread_mutex_lock(&k->srv->tasks->mu);
    write_task(&r->w, k, 0);
    pthread_mutex_unlock(&k->srv->tasks->mu);
    result_end_as(r, "task");
    task_release(k);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* tasks/get, tasks/update, tasks/cancel                                     */

/* The task a tasks/ request names, with a reference; NULL when answered. */
static mcp__task *named_task(mcp__req *r)
{
    if (!legacy_form(r) && !mcp__tasks_declared(r->caps)) {
        mcp__tasks_reply_missing(r, "Missing required client capability: tasks/ methods need the "
                                   "extension io.modelcontextprotocol/tasks");
        return NULL;
    }
    size_t n;
    const char *id = mcp_json_str(mcp_json_get(r->msg->params, "taskId"), &n);
    if (!id) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: a string \"taskId\" is required");
        return NULL;
    }
    char owner[MCP__PRINCIPAL_KEY_SIZE];
    mcp__principal_key(r->principal, owner, sizeof owner);
    mcp__task *k = find(r->c->srv, id, n, owner);
    if (!k)
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: unknown task");
    return k;
}

void mcp__m_tasks_get(mcp__req *r)
{
    mcp__task *k = named_task(r);
    if (!k)
        return;
    mcp__result_begin(r);
    pthread_mutex_lock(&k->srv->tasks->mu);
    write_task(&r->w, k, 1);
    pthread_mutex_unlock(&k->srv->tasks->mu);
    if (legacy_form(r))
        mcp__result_end(r); /* 2025-11-25: the Task itself */
    else
        result_end_as(r, "complete");
    task_release(k);
}

/* 1 when `key` is an outstanding input request of the task's round. */
static int outstanding(const mcp__task *k, const char *key, size_t kl)
{
    const mcp_json *all = mcp_json_get(mcp_json_get(mcp_json_doc_root(k->answer), "result"), "inputRequests");
    return mcp_json_getn(all, key, kl) && !answered(k, key, kl);
}

/*
 * Takes the answers of `responses` that match outstanding requests. When
 * none is left the task goes back to work: 1, with the collected answers
 * copied to *next (the caller runs the round).
 */
static int take_answers(mcp__task *k, const mcp_json *responses, mcp_buf *next, mcp_json_doc **state)
{
    for (size_t i = 0; i < mcp_json_len(responses) && k->nanswered < MAX_INPUT_KEYS; i++) {
        size_t kl;
        const char *key = mcp_json_key_at(responses, i, &kl);
        if (!outstanding(k, key, kl))
            continue; /* unknown or already answered: ignored, as the extension says */
        char *copy = mcp__strndup(key, kl);
        if (!copy)
            return 0;
        mcp_buf one;
        mcp_buf_init(&one, 0);
        mcp_jw w;
        mcp_jw_init(&w, &one);
        mcp_jw_object_begin(&w);
        mcp_jw_keyn(&w, key, kl);
        mcp_jw_value(&w, mcp_json_value_at(responses, i));
        mcp_jw_object_end(&w);
        if (mcp_jw_finish(&w) != MCP_OK || one.len < 2) {
            mcp_buf_cleanup(&one);
            mcp_free(copy);
            return 0;
        }
        if (k->responses.len)
            mcp_buf_append(&k->responses, ",", 1);
        mcp_buf_append(&k->responses, one.data + 1, one.len - 2); /* the member without the braces */
        mcp_buf_cleanup(&one);
        k->answered[k->nanswered++] = copy;
    }
    const mcp_json *all = mcp_json_get(mcp_json_get(mcp_json_doc_root(k->answer), "result"), "inputRequests");
    for (size_t i = 0; i < mcp_json_len(all); i++) {
        size_t kl;
        const char *key = mcp_json_key_at(all, i, &kl);
        if (!answered(k, key, kl))
            return 0;
    }
    /* Every request answered: the next round. */
    if (k->responses.len)
        mcp_buf_append(next, k->responses.data, k->responses.len);
    *state = k->answer; /* its requestState goes with the next round */
    k->answer = NULL;
    forget_answers(k);
    k->status = ST_WORKING;
    k->round++;
    k->updated_ms = mcp__wall_ms();
    return 1;
}

void mcp__m_tasks_update(mcp__req *r)
{
    const mcp_json *responses = mcp_json_get(r->msg->params, "inputResponses");
    mcp__task *k = named_task(r);
    if (!k)
        return;
    if (mcp_json_typeof(responses) != MCP_JSON_OBJECT) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: \"inputResponses\" must be an object");
        task_release(k);
        return;
    }
    mcp_buf next;
    mcp_buf_init(&next, 0);
    mcp_json_doc *last = NULL;
    pthread_mutex_lock(&k->srv->tasks->mu);
    int go = k->status == ST_INPUT && take_answers(k, responses, &next, &last);
    pthread_mutex_unlock(&k->srv->tasks->mu);
    if (go) {
        notify(k); /* working again */
        const mcp_json *state = mcp_json_get(mcp_json_get(mcp_json_doc_root(last), "result"), "requestState");
        run_round(k, next.data ? next.data : "", next.len, state);
    }
    mcp_json_doc_free(last);
    mcp_buf_cleanup(&next);
    mcp__result_begin(r);
    result_end_as(r, "complete");
    task_release(k);
}

void mcp__m_tasks_cancel(mcp__req *r)
{
    mcp__task *k = named_task(r);
    if (!k)
        return;
    pthread_mutex_lock(&k->srv->tasks->mu);
    int stop = k->status < ST_COMPLETED;
    waiter *wake = NULL;
    if (stop) {
        k->status = ST_CANCELLED;
        k->updated_ms = mcp__wall_ms();
        wake = k->waiters;
        k->waiters = NULL;
    }
    int64_t round = k->round;
    pthread_mutex_unlock(&k->srv->tasks->mu);
    answer_waiters(k, wake);
    if (stop)
        notify(k);
    if (!stop && legacy_form(r)) { /* 2025-11-25: a finished task cannot be cancelled */
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: the task has already ended");
        task_release(k);
        return;
    }
    if (stop) {
        /* The running round, cancelled as a client would cancel a request. */
        char frame[160];
        int n = snprintf(frame, sizeof frame,
                         "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":%lld}}",
                         (long long)round);
        mcp_rpc_msg m;
        if (mcp_rpc_decode(&m, frame, (size_t)n, &k->srv->popts, NULL) == MCP_OK) {
            pthread_mutex_lock(&k->dispatch_mu);
            mcp__conn_dispatch_as(k->conn, &m, k->principal);
            pthread_mutex_unlock(&k->dispatch_mu);
            mcp_rpc_msg_cleanup(&m);
        }
    }
    mcp__result_begin(r);
    if (legacy_form(r)) { /* 2025-11-25: the cancelled Task */
        pthread_mutex_lock(&k->srv->tasks->mu);
        write_task(&r->w, k, 0);
        pthread_mutex_unlock(&k->srv->tasks->mu);
        mcp__result_end(r);
    } else {
        result_end_as(r, "complete");
    }
    task_release(k);
}

/* ------------------------------------------------------------------------ */
/* The 2025-11-25 form: params.task, tasks/result, tasks/list                */

/*
 * Writes what the underlying tools/call answered (tasks/result of a task
 * that ended): its result with _meta io.modelcontextprotocol/related-task,
 * or its JSON-RPC error; an error for a task cancelled or gone before it
 * ended. Under the store's mu, or once nobody else holds `k`.
 */
static void write_final(mcp_jw *w, const mcp_rpc_id *id, const mcp__task *k, int gone)
{
    const mcp_json *root = mcp_json_doc_root(k->answer);
    const mcp_json *res = mcp_json_get(root, "result"), *err = mcp_json_get(root, "error");
    if (gone || k->status == ST_CANCELLED || (!res && !err)) {
        mcp_rpc_write_error(w, id, MCP_RPC_INTERNAL_ERROR,
                            k->status == ST_CANCELLED ? "Internal error: the task was cancelled"
                                                      : "Internal error: the task ended before its result",
                            NULL);
        return;
    }
    if (!res) { /* the JSON-RPC error as it was */
        mcp_jw_object_begin(w);
        mcp_jw_key(w, "jsonrpc");
        mcp_jw_string(w, "2.0");
        mcp_jw_key(w, "id");
        mcp_rpc_write_id(w, id);
        mcp_jw_key(w, "error");
        mcp_jw_value(w, err);
        mcp_jw_object_end(w);
        return;
    }
    mcp_rpc_begin_result(w, id);
    mcp_jw_object_begin(w);
    const mcp_json *meta = mcp_json_get(res, "_meta");
    for (size_t i = 0; i < mcp_json_len(res); i++) {
        size_t kl;
        const char *key = mcp_json_key_at(res, i, &kl);
        if (kl == 5 && memcmp(key, "_meta", 5) == 0)
            continue;
        mcp_jw_keyn(w, key, kl);
        mcp_jw_value(w, mcp_json_value_at(res, i));
    }
    mcp_jw_key(w, "_meta");
    mcp_jw_object_begin(w);
    for (size_t i = 0; i < mcp_json_len(meta); i++) {
        size_t kl;
        const char *key = mcp_json_key_at(meta, i, &kl);
        if (kl == sizeof MCP__RELATED_TASK - 1 && memcmp(key, MCP__RELATED_TASK, kl) == 0)
            continue;
        mcp_jw_keyn(w, key, kl);
        mcp_jw_value(w, mcp_json_value_at(meta, i));
    }
    mcp_jw_key(w, MCP__RELATED_TASK);
    mcp_jw_object_begin(w);
    mcp_jw_key(w, "taskId");
    mcp_jw_string(w, k->id);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
    mcp_jw_object_end(w);
    mcp_rpc_end(w);
}

/* Answers the tasks/result requests that waited for `k` to end, and frees them. */
static void answer_waiters(mcp__task *k, waiter *list)
{
    int gone = atomic_load(&k->refs) == 0;
    while (list) {
        waiter *next = list->next;
        mcp_buf b;
        mcp_buf_init(&b, 0);
        mcp_jw w;
        mcp_jw_init(&w, &b);
        write_final(&w, &list->msg.id, k, gone);
        if (mcp_jw_finish(&w) == MCP_OK)
            mcp__conn_send_to(list->conn, &b, &list->msg.id, 1);
        mcp_buf_cleanup(&b);
        mcp_rpc_msg_cleanup(&list->msg);
        mcp__conn_release(list->conn);
        mcp_free(list);
        list = next;
    }
}

/* -32601 for a tools/call the tool's task support refuses (2025-11-25, "Tool-Level Negotiation"). */
static int legacy_refuse(mcp__req *r, const char *why)
{
    mcp__reply_error(r, MCP_RPC_METHOD_NOT_FOUND, why);
    return 4;
}

/* How a 2025-11-25 tools/call goes: 0 an ordinary call, -1 a task, 4 or 5 refused (-32601, -32602). */
static int legacy_divert(mcp__req *r, mcp__tool *t)
{
    const mcp_json *task = mcp_json_get(r->msg->params, "task");
    if (!task && t->task_support == MCP_TASK_REQUIRED)
        return legacy_refuse(r, "Method not found: this tool runs only as a task (params.task)");
    if (!task)
        return 0;
    if (t->task_support == MCP_TASK_FORBIDDEN)
        return legacy_refuse(r, "Method not found: this tool does not run as a task");
    if (mcp_json_typeof(task) != MCP_JSON_OBJECT) {
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: \"task\" must be an object");
        return 5;
    }
    return -1; /* make the task */
}

/* The CreateTaskResult of the 2025-11-25 form: {"task": Task}. */
static void reply_created_legacy(mcp__req *r, mcp__task *k)
{
    mcp__result_begin(r);
    mcp_jw_key(&r->w, "task");
    mcp_jw_object_begin(&r->w);
    pthread_mutex_lock(&k->srv->tasks->mu);
    write_task(&r->w, k, 0);
    pthread_mutex_unlock(&k->srv->tasks->mu);
    mcp_jw_object_end(&r->w);
    mcp_jw_object_end(&r->w);
    mcp_rpc_end(&r->w);
    mcp__send_reply(r);
}

void mcp__m_tasks_result(mcp__req *r)
{
    if (!legacy_form(r)) {
        mcp__reply_error(r, MCP_RPC_METHOD_NOT_FOUND, "Method not found: tasks/result (a 2025-11-25 method)");
        return;
    }
    mcp__task *k = named_task(r);
    if (!k)
        return;
    waiter *wt = mcp__calloc(1, sizeof *wt);
    pthread_mutex_lock(&k->srv->tasks->mu);
    int ended = k->status >= ST_COMPLETED;
    if (!ended && wt) {
        /* Answered when the task ends (task_send, tasks/cancel, its release). */
        wt->conn = r->c;
        atomic_fetch_add(&r->c->refs, 1);
        wt->msg = *r->msg;
        memset(r->msg, 0, sizeof *r->msg);
        wt->next = k->waiters;
        k->waiters = wt;
        wt = NULL;
    } else if (ended) {
        mcp_buf_init(&r->buf, 0);
        mcp_jw_init(&r->w, &r->buf);
        write_final(&r->w, &r->msg->id, k, 0);
    }
    pthread_mutex_unlock(&k->srv->tasks->mu);
    if (ended)
        mcp__send_reply(r);
    else if (wt)
        mcp__reply_error(r, MCP_RPC_INTERNAL_ERROR, "Internal error: out of memory");
    mcp_free(wt);
    task_release(k);
}

void mcp__m_tasks_list(mcp__req *r)
{
    if (!legacy_form(r)) {
        mcp__reply_error(r, MCP_RPC_METHOD_NOT_FOUND, "Method not found: tasks/list (a 2025-11-25 method)");
        return;
    }
    if (mcp_json_get(r->msg->params, "cursor")) { /* every task fits one page: no cursor was ever given */
        mcp__reply_error(r, MCP_RPC_INVALID_PARAMS, "Invalid params: unknown cursor");
        return;
    }
    char owner[MCP__PRINCIPAL_KEY_SIZE];
    mcp__principal_key(r->principal, owner, sizeof owner);
    struct mcp__tasks *s = r->c->srv->tasks;
    mcp__task *dead = NULL;
    mcp__result_begin(r);
    mcp_jw_key(&r->w, "tasks");
    mcp_jw_array_begin(&r->w);
    pthread_mutex_lock(&s->mu);
    sweep_locked(s, mcp__mono_ns(), &dead);
    for (mcp__task *k = s->head; k; k = k->next) {
        if (strcmp(k->owner, owner) != 0)
            continue;
        mcp_jw_object_begin(&r->w);
        write_task(&r->w, k, 0);
        mcp_jw_object_end(&r->w);
    }
    pthread_mutex_unlock(&s->mu);
    release_all(dead);
    mcp_jw_array_end(&r->w);
    mcp__result_end(r);
}

const char *mcp_call_task_id(const mcp_call *call)
{
    return call && call->conn->task_id[0] ? call->conn->task_id : NULL;
}
