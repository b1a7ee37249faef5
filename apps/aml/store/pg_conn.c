/*
 * The case store on PostgreSQL: the libpq connection, statements (placeholder
 * translation, prepared once per connection, text parameters, results
 * walked row by row or streamed through a cursor), transactions, errors with
 * their SQLSTATE, and COPY. See pg_conn.h; the schema is in pg_schema.c.
 */
#include "store/pg_conn.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PG_CACHE 128          /* statement slots (more than the static texts) */
#define PG_MAX_PARAMS 32766   /* SQLite's default limit on a placeholder's number */
#define COPY_BLOCK (64 * 1024) /* bytes buffered before PQputCopyData */
#define PG_PIPE_MAX 16        /* statements sent ahead in one pipeline (aml_pg_prefetch) */

struct aml_pg_st {
    aml_pg *pg;         /* the connection */
    const char *sql;    /* the static text (cache key: its address) */
    char *text;         /* translated to $n */
    char name[16];      /* prepared statement / cursor name */
    int nparams;        /* placeholders */
    int stream;         /* rows through a cursor */
    unsigned prepared;  /* the connection generation it was prepared in (0: not yet) */
    int oneshot;        /* never prepared: PQexecParams each run */
    int nbound;         /* highest parameter bound since the reset */
    char **vals;        /* nparams values (malloc'd) or NULL */
    Oid *types;         /* nparams type hints, fixed at the first prepare */
    PGresult *res;      /* the current batch of rows */
    int row;            /* current row in res */
    int started;        /* executed since the reset */
    int exhausted;      /* no more batches to fetch */
    int cursor_open;    /* a stream's cursor is declared */
    char cursor[32];    /* its name: the statement's and the run's number */
    unsigned runs;      /* runs so far (a cursor an aborted transaction kept cannot clash) */
    int pend;           /* sent ahead in the open pipeline, its result not read yet */
    int pend_prepare;   /* its prepare was sent in the open pipeline too, just before its run */
    char **sent;        /* the values it was sent ahead with (nparams), or NULL */
    PGresult *pre;      /* the result of the run sent ahead, kept for the run that binds the same values */
};

struct aml_pg {
    PGconn *conn;              /* the connection */
    char name[512];            /* the URI without its password */
    aml_pg_st *slots[PG_CACHE]; /* statement cache, open addressing by text address */
    unsigned nslots;           /* statements created (names s1, s2, ...) */
    int64_t changes;           /* rows changed by the last command */
    char errmsg[512];          /* last error */
    char sqlstate[6];          /* its SQLSTATE, "" when none */
    char *copybuf;             /* COPY buffer */
    size_t copylen;            /* bytes in it */
    int copy_field;            /* fields written in the current COPY row */
    int copy_failed;           /* a put failed: the end reports it */
    unsigned gen;              /* connection generation: a reset re-prepares every statement */
    aml_pg_st *pipe[PG_PIPE_MAX]; /* statements sent ahead in the open pipeline, in order */
    int npipe;                 /* how many (0: not in pipeline mode) */
    int64_t round_trips;       /* requests that waited for the server's answer (aml_pg_round_trips) */
};

/* ---- URI ---------------------------------------------------------------- */

/* Copies [from, to) into out at *k, bounded. */
static void put_span(char *out, size_t n, size_t *k, const char *from, const char *to)
{
    while (from < to && *k + 1 < n)
        out[(*k)++] = *from++;
    out[*k] = '\0';
}

/* Drops password=... (and its separator) from a query string. */
static void redact_query(const char *q, char *out, size_t n, size_t *k)
{
    int first = 1;
    while (*q) {
        const char *end = strchr(q, '&');
        if (!end)
            end = q + strlen(q);
        if (strncmp(q, "password=", 9) != 0) {
            if (!first)
                put_span(out, n, k, "&", "&" + 1);
            put_span(out, n, k, q, end);
            first = 0;
        }
        q = *end ? end + 1 : end;
    }
}

void aml_pg_redact(const char *uri, char *out, size_t n)
{
    size_t k = 0;
    if (!n)
        return;
    out[0] = '\0';
    const char *p = strstr(uri, "://");
    const char *auth = p ? p + 3 : uri;
    const char *slash = auth + strcspn(auth, "/?");
    const char *at = memchr(auth, '@', (size_t)(slash - auth));
    /* The last '@' before the path ends the user information. */
    for (const char *c = at; c && c < slash; c = memchr(c + 1, '@', (size_t)(slash - c - 1)))
        at = c;
    put_span(out, n, &k, uri, auth);
    if (at) {
        const char *colon = memchr(auth, ':', (size_t)(at - auth));
        put_span(out, n, &k, auth, colon ? colon : at);
        put_span(out, n, &k, at, slash);
    } else {
        put_span(out, n, &k, auth, slash);
    }
    const char *q = strchr(slash, '?');
    put_span(out, n, &k, slash, q ? q + 1 : slash + strlen(slash));
    if (q)
        redact_query(q + 1, out, n, &k);
    if (k && out[k - 1] == '?')
        out[--k] = '\0';
}

/* ---- errors -------------------------------------------------------------- */

static const char session_setup[] = "SET TimeZone TO 'UTC'; SET DateStyle TO 'ISO, YMD'; "
                                    "SET client_min_messages TO warning; SET IntervalStyle TO 'iso_8601'";

/*
 * A lost connection (the server restarted, a network cut) is reset once it
 * is noticed: the statement that noticed fails (it may or may not have run,
 * so it is not repeated), the next ones run on the new connection, prepared
 * again. A transaction open at the time is gone with the connection.
 */
static void recover(aml_pg *pg)
{
    if (PQstatus(pg->conn) != CONNECTION_BAD)
        return;
    PQreset(pg->conn);
    pg->gen++;
    pg->round_trips++;
    if (PQstatus(pg->conn) == CONNECTION_OK) {
        pg->round_trips++;
        PQclear(PQexec(pg->conn, session_setup));
    }
}

/* Keeps a failed result's message (its primary text) and SQLSTATE. */
static void set_error(aml_pg *pg, const PGresult *r)
{
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    const char *detail = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL) : NULL;
    snprintf(pg->sqlstate, sizeof pg->sqlstate, "%s", state ? state : "");
    if (msg && detail)
        snprintf(pg->errmsg, sizeof pg->errmsg, "%s (%s)", msg, detail);
    else
        snprintf(pg->errmsg, sizeof pg->errmsg, "%s", msg ? msg : PQerrorMessage(pg->conn));
    size_t len = strlen(pg->errmsg);
    while (len && (pg->errmsg[len - 1] == '\n' || pg->errmsg[len - 1] == ' '))
        pg->errmsg[--len] = '\0';
    if (PQstatus(pg->conn) == CONNECTION_BAD) {
        char why[300];
        snprintf(why, sizeof why, "%.299s", len ? pg->errmsg : "no answer");
        snprintf(pg->errmsg, sizeof pg->errmsg, "connection to PostgreSQL lost (%s); reconnecting", why);
        recover(pg);
    }
}

/* 0 when r is a success of the wanted kind; else -1 with the error kept. r is consumed on failure. */
static int check(aml_pg *pg, PGresult *r, ExecStatusType want)
{
    if (r && PQresultStatus(r) == want)
        return 0;
    set_error(pg, r);
    PQclear(r);
    return -1;
}

const char *aml_pg_errmsg(aml_pg *pg)
{
    return pg->errmsg;
}

const char *aml_pg_sqlstate(aml_pg *pg)
{
    return pg->sqlstate;
}

int64_t aml_pg_round_trips(const aml_pg *pg)
{
    return pg->round_trips;
}

int64_t aml_pg_resets(const aml_pg *pg)
{
    return (int64_t)pg->gen - 1;
}

int aml_pg_check(aml_pg *pg)
{
    if (pg->npipe)
        return 0;
    /* Reads what the server sent while the connection sat idle (no round trip, no wait): a session it
     * ended (pg_terminate_backend, a restart) left an error, then the end of the stream, which libpq
     * finds only at a read of its own: it then marks the connection bad. */
    for (int k = 0; k < 3 && PQstatus(pg->conn) == CONNECTION_OK && PQtransactionStatus(pg->conn) == PQTRANS_IDLE;
         k++)
        if (!PQconsumeInput(pg->conn))
            break;
    if (PQstatus(pg->conn) != CONNECTION_BAD)
        return 0;
    recover(pg);
    return 1;
}

/* ---- connection ---------------------------------------------------------- */

/* Notices ("there is already a transaction in progress") are not for the server's output. */
static void quiet_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/*
 * The URI must parse; a password in it (user:pw@ or password=) is refused.
 * @return NULL when fine, else why.
 */
static const char *check_uri(const char *uri, char *buf, size_t n)
{
    char *why = NULL;
    PQconninfoOption *opts = PQconninfoParse(uri, &why);
    if (!opts) {
        snprintf(buf, n, "%s", why ? why : "not a PostgreSQL connection URI");
        buf[strcspn(buf, "\n")] = '\0';
        PQfreemem(why);
        return buf;
    }
    int found = 0;
    for (PQconninfoOption *o = opts; o->keyword; o++)
        if (strcmp(o->keyword, "password") == 0 && o->val && *o->val)
            found = 1;
    PQconninfoFree(opts);
    return found ? "a password in the connection URI is refused (it would show in process lists and logs): "
                   "use ~/.pgpass, PGPASSFILE or PGPASSWORD"
                 : NULL;
}


int aml_pg_connect(aml_pg **out, const char *uri, aml_err *err)
{
    aml_pg *pg = calloc(1, sizeof *pg);
    if (!pg)
        return aml_errf(err, "out of memory");
    aml_pg_redact(uri, pg->name, sizeof pg->name);
    char buf[300];
    const char *bad = check_uri(uri, buf, sizeof buf);
    if (bad) {
        aml_errf(err, "%s: %s", pg->name, bad);
        free(pg);
        return -1;
    }
    /* Earlier keywords are defaults the URI overrides; client_encoding, after it, is forced. */
    const char *keys[] = {"connect_timeout", "fallback_application_name", "dbname", "client_encoding", NULL};
    const char *vals[] = {"10", "mcp-server-aml", uri, "UTF8", NULL};
    pg->conn = PQconnectdbParams(keys, vals, 1);
    if (!pg->conn || PQstatus(pg->conn) != CONNECTION_OK) {
        char why[400];
        snprintf(why, sizeof why, "%s", pg->conn ? PQerrorMessage(pg->conn) : "out of memory");
        why[strcspn(why, "\n")] = '\0';
        aml_errf(err, "%s: cannot connect to the PostgreSQL case store: %s", pg->name, why);
        aml_pg_free(pg);
        return -1;
    }
    PQsetNoticeProcessor(pg->conn, quiet_notice, NULL);
    pg->gen = 1;
    if (aml_pg_exec(pg, session_setup)) {
        aml_errf(err, "%s: %s", pg->name, pg->errmsg);
        aml_pg_free(pg);
        return -1;
    }
    *out = pg;
    return 0;
}

static void st_free(aml_pg_st *st);

void aml_pg_free(aml_pg *pg)
{
    if (!pg)
        return;
    pg->npipe = 0;
    for (size_t i = 0; i < PG_CACHE; i++)
        st_free(pg->slots[i]);
    if (pg->conn)
        PQfinish(pg->conn);
    free(pg->copybuf);
    free(pg);
}

const char *aml_pg_name(const aml_pg *pg)
{
    return pg->name;
}

static void drain(aml_pg *pg);

PGconn *aml_pg_conn(aml_pg *pg)
{
    drain(pg);
    return pg->conn;
}

/* ---- placeholders -------------------------------------------------------- */

/* Length of a dollar-quote tag at p ("$tag$" or "$$"), 0 when p starts none. */
static size_t dollar_tag(const char *p)
{
    size_t k = 1;
    if (isdigit((unsigned char)p[1]))
        return 0; /* $1 is a parameter */
    while (isalnum((unsigned char)p[k]) || p[k] == '_')
        k++;
    return p[k] == '$' ? k + 1 : 0;
}

/*
 * Where the quoted span or comment starting at p ends (the char after it),
 * or p when none starts there. `start` is the text's beginning: an E before
 * the quote (not ending a longer word) makes backslashes escapes.
 */
static const char *skip_quoted(const char *start, const char *p)
{
    if (*p == '\'' || *p == '"') {
        char q = *p;
        int backslash = q == '\'' && p > start && (p[-1] == 'E' || p[-1] == 'e') &&
                        (p - 1 == start || !(isalnum((unsigned char)p[-2]) || p[-2] == '_'));
        for (p++; *p; p++) {
            if (backslash && *p == '\\' && p[1])
                p++;
            else if (*p == q && p[1] == q)
                p++;
            else if (*p == q)
                return p + 1;
        }
        return p;
    }
    if (p[0] == '-' && p[1] == '-')
        return p + strcspn(p, "\n");
    if (p[0] == '/' && p[1] == '*') {
        const char *e = strstr(p + 2, "*/");
        return e ? e + 2 : p + strlen(p);
    }
    size_t tag = *p == '$' ? dollar_tag(p) : 0;
    if (tag) {
        for (const char *e = p + tag; *e; e++)
            if (strncmp(e, p, tag) == 0)
                return e + tag;
        return p + strlen(p);
    }
    return p;
}

char *aml_pg_translate(const char *sql, int *nparams)
{
    size_t len = strlen(sql);
    char *out = malloc(len * 6 + 1); /* "?" becomes at most "$32766" */
    if (!out)
        return NULL;
    size_t k = 0;
    long max = 0;
    const char *p = sql;
    while (*p) {
        const char *e = skip_quoted(sql, p);
        if (e != p) {
            memcpy(out + k, p, (size_t)(e - p));
            k += (size_t)(e - p);
            p = e;
            continue;
        }
        if (*p != '?') {
            out[k++] = *p++;
            continue;
        }
        long n = max + 1;
        p++;
        if (isdigit((unsigned char)*p)) {
            char *end;
            n = strtol(p, &end, 10);
            p = end;
        }
        if (n < 1 || n > PG_MAX_PARAMS) {
            free(out);
            return NULL;
        }
        if (n > max)
            max = n;
        k += (size_t)sprintf(out + k, "$%ld", n);
    }
    out[k] = '\0';
    *nparams = (int)max;
    return out;
}

/* ---- statements ---------------------------------------------------------- */

static void clear_binds(aml_pg_st *st)
{
    for (int i = 0; i < st->nparams; i++) {
        free(st->vals[i]);
        st->vals[i] = NULL;
    }
    st->nbound = 0;
}

static void free_vals(char **v, int n)
{
    for (int i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

static void st_free(aml_pg_st *st)
{
    if (!st)
        return;
    PQclear(st->res);
    PQclear(st->pre);
    free_vals(st->sent, st->nparams);
    if (st->vals)
        clear_binds(st);
    free(st->vals);
    free(st->types);
    free(st->text);
    free(st);
}

void aml_pg_st_free(aml_pg_st *st)
{
    st_free(st);
}

aml_pg_st *aml_pg_st_new(aml_pg *pg, const char *sql, int stream, int oneshot)
{
    aml_pg_st *st = calloc(1, sizeof *st);
    if (!st)
        goto nomem;
    st->pg = pg;
    st->sql = sql;
    st->stream = stream;
    st->oneshot = oneshot;
    st->text = aml_pg_translate(sql, &st->nparams);
    if (!st->text) {
        snprintf(pg->errmsg, sizeof pg->errmsg, "a placeholder is out of range (1..%d) or no memory", PG_MAX_PARAMS);
        free(st);
        return NULL;
    }
    int np = st->nparams ? st->nparams : 1;
    st->vals = calloc((size_t)np, sizeof *st->vals);
    st->types = calloc((size_t)np, sizeof *st->types);
    if (!st->vals || !st->types) {
        st_free(st);
        goto nomem;
    }
    snprintf(st->name, sizeof st->name, "%s%u", stream ? "c" : "s", ++pg->nslots);
    return st;
nomem:
    snprintf(pg->errmsg, sizeof pg->errmsg, "out of memory");
    return NULL;
}

aml_pg_st *aml_pg_get(aml_pg *pg, const char *sql, int stream)
{
    size_t h = ((uintptr_t)sql >> 3) % PG_CACHE;
    for (size_t k = 0; k < PG_CACHE; k++) {
        aml_pg_st **slot = &pg->slots[(h + k) % PG_CACHE];
        if (*slot && (*slot)->sql == sql && (*slot)->stream == !!stream) {
            aml_pg_clear(*slot);
            return *slot;
        }
        if (!*slot) {
            *slot = aml_pg_st_new(pg, sql, !!stream, 0);
            return *slot;
        }
    }
    snprintf(pg->errmsg, sizeof pg->errmsg, "statement cache full");
    return NULL;
}

void aml_pg_bind(aml_pg_st *st, int i, const char *v, size_t n, unsigned type)
{
    if (i < 1 || i > st->nparams)
        return;
    free(st->vals[i - 1]);
    st->vals[i - 1] = NULL;
    if (v) {
        /* A text containing NUL ends there, as libpq's text parameters do. */
        size_t len = strnlen(v, n);
        char *c = malloc(len + 1);
        if (c) {
            memcpy(c, v, len);
            c[len] = '\0';
        }
        st->vals[i - 1] = c;
    }
    if (!st->prepared || st->oneshot)
        st->types[i - 1] = type;
    if (i > st->nbound)
        st->nbound = i;
}

void aml_pg_bind_int(aml_pg_st *st, int i, int64_t v)
{
    char buf[24];
    int n = snprintf(buf, sizeof buf, "%" PRId64, v);
    aml_pg_bind(st, i, buf, (size_t)n, AML_PG_INT8);
}

void aml_pg_bind_double(aml_pg_st *st, int i, double v)
{
    char buf[40];
    int n;
    if (isnan(v))
        n = snprintf(buf, sizeof buf, "NaN");
    else if (isinf(v))
        n = snprintf(buf, sizeof buf, v > 0 ? "Infinity" : "-Infinity");
    else
        n = snprintf(buf, sizeof buf, "%.17g", v);
    aml_pg_bind(st, i, buf, (size_t)n, AML_PG_FLOAT8);
}

/* ---- statements sent ahead (pipeline mode) ----------------------------------- */

/*
 * Reads the open pipeline's results into their statements (each keeps its
 * own in `pre`) and leaves pipeline mode. Everything that uses the
 * connection otherwise calls this first.
 */
static void drain(aml_pg *pg)
{
    if (!pg->npipe)
        return;
    int sync = PQpipelineSync(pg->conn) == 1;
    pg->round_trips++;
    for (int k = 0; k < pg->npipe; k++) {
        aml_pg_st *st = pg->pipe[k];
        if (st->pend_prepare) {
            PGresult *p = sync ? PQgetResult(pg->conn) : NULL;
            if (p && PQresultStatus(p) == PGRES_COMMAND_OK)
                st->prepared = pg->gen;
            while (p) { /* up to the NULL that ends the prepare's results */
                PQclear(p);
                p = PQgetResult(pg->conn);
            }
            st->pend_prepare = 0;
        }
        if (!st->pend)
            continue;
        PGresult *r = sync ? PQgetResult(pg->conn) : NULL;
        st->pend = 0;
        st->pre = r;
        while (r && (r = PQgetResult(pg->conn)) != NULL) /* up to the NULL that ends this statement's results */
            PQclear(r);
    }
    pg->npipe = 0;
    for (int k = 0; sync && k < 4; k++) { /* the sync point */
        PGresult *r = PQgetResult(pg->conn);
        int end = !r || PQresultStatus(r) == PGRES_PIPELINE_SYNC;
        PQclear(r);
        if (end)
            break;
    }
    PQexitPipelineMode(pg->conn);
}

static void drop_pre(aml_pg_st *st)
{
    PQclear(st->pre);
    st->pre = NULL;
    free_vals(st->sent, st->nparams);
    st->sent = NULL;
}

static char **copy_vals(const aml_pg_st *st)
{
    char **v = calloc((size_t)(st->nparams ? st->nparams : 1), sizeof *v);
    for (int i = 0; v && i < st->nparams; i++)
        if (st->vals[i] && !(v[i] = strdup(st->vals[i]))) {
            free_vals(v, st->nparams);
            return NULL;
        }
    return v;
}

static int prepare(aml_pg_st *st);

void aml_pg_prefetch(aml_pg_st *st)
{
    aml_pg *pg = st->pg;
    if (st->stream || st->oneshot || st->pend || st->pend_prepare || pg->npipe == PG_PIPE_MAX ||
        PQstatus(pg->conn) != CONNECTION_OK)
        return;
    drop_pre(st);
    if (!(st->sent = copy_vals(st)))
        return;
    if (!pg->npipe && PQenterPipelineMode(pg->conn) != 1) {
        drop_pre(st);
        return;
    }
    /* Not prepared on this connection yet (its first use, or after a reset): the prepare goes in the same
     * pipeline, just before the run. Should it fail, the run is aborted with it, and running the statement
     * later prepares it again and reports the error. */
    if (st->prepared != pg->gen) {
        if (PQsendPrepare(pg->conn, st->name, st->text, st->nparams, st->types) != 1) {
            drop_pre(st);
            if (!pg->npipe)
                PQexitPipelineMode(pg->conn);
            return;
        }
        st->pend_prepare = 1;
    }
    if (PQsendQueryPrepared(pg->conn, st->name, st->nparams, (const char *const *)st->vals, NULL, NULL, 0) == 1)
        st->pend = 1;
    else
        drop_pre(st);
    if (st->pend || st->pend_prepare)
        pg->pipe[pg->npipe++] = st; /* a prepare sent alone is read with the pipeline too */
    else if (!pg->npipe)
        PQexitPipelineMode(pg->conn);
}

void aml_pg_prefetch_end(aml_pg *pg)
{
    drain(pg);
    for (size_t i = 0; i < PG_CACHE; i++)
        if (pg->slots[i])
            drop_pre(pg->slots[i]);
}

/* The result sent ahead when it was sent with the values bound now (then it is this run's), else NULL. */
static PGresult *take_pre(aml_pg_st *st)
{
    PGresult *r = st->pre;
    int same = r && st->sent && PQresultStatus(r) != PGRES_PIPELINE_ABORTED;
    for (int i = 0; same && i < st->nparams; i++)
        same = st->sent[i] && st->vals[i] ? strcmp(st->sent[i], st->vals[i]) == 0 : st->sent[i] == st->vals[i];
    st->pre = NULL;
    drop_pre(st);
    if (!same)
        PQclear(r);
    return same ? r : NULL;
}

/* Prepares once per connection, with the parameter types of the first bindings. */
static int prepare(aml_pg_st *st)
{
    if (st->prepared == st->pg->gen)
        return 0;
    st->pg->round_trips++;
    PGresult *r = PQprepare(st->pg->conn, st->name, st->text, st->nparams, st->types);
    if (check(st->pg, r, PGRES_COMMAND_OK))
        return -1;
    PQclear(r);
    st->prepared = st->pg->gen;
    return 0;
}

/* Like sqlite3_changes: only INSERT, UPDATE, DELETE (and COPY) count; a SELECT leaves the figure alone. */
static void note_changes(aml_pg *pg, PGresult *r)
{
    const char *tag = PQcmdStatus(r);
    if (strncmp(tag, "INSERT", 6) == 0 || strncmp(tag, "UPDATE", 6) == 0 || strncmp(tag, "DELETE", 6) == 0 ||
        strncmp(tag, "MERGE", 5) == 0 || strncmp(tag, "COPY", 4) == 0)
        pg->changes = strtoll(PQcmdTuples(r), NULL, 10);
}

/* A finished command: its row count, and its rows when it returned some. */
static int take_result(aml_pg_st *st, PGresult *r)
{
    ExecStatusType k = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (k != PGRES_TUPLES_OK && k != PGRES_COMMAND_OK) {
        check(st->pg, r, PGRES_TUPLES_OK);
        return -1;
    }
    note_changes(st->pg, r);
    st->pg->sqlstate[0] = '\0';
    st->res = r;
    st->row = -1;
    return 0;
}

static int fetch(aml_pg_st *st)
{
    char sql[64];
    snprintf(sql, sizeof sql, "FETCH FORWARD %d FROM %s", AML_PG_STREAM_BATCH, st->cursor);
    drain(st->pg);
    PQclear(st->res);
    st->res = NULL;
    st->pg->round_trips++;
    if (take_result(st, PQexec(st->pg->conn, sql)))
        return -1;
    st->exhausted = PQntuples(st->res) < AML_PG_STREAM_BATCH;
    return 0;
}

/*
 * A stream declares a cursor. Inside the caller's transaction it is a plain
 * one (rows computed as fetched; it ends with the transaction). Outside any,
 * WITH HOLD: PostgreSQL keeps the result on its side (spilling to disk), so
 * the caller may begin and commit transactions between steps and the client
 * still holds one batch at a time.
 */
static int open_cursor(aml_pg_st *st)
{
    aml_pg *pg = st->pg;
    size_t len = strlen(st->text) + 96;
    char *sql = malloc(len);
    if (!sql) {
        snprintf(pg->errmsg, sizeof pg->errmsg, "out of memory");
        return -1;
    }
    snprintf(st->cursor, sizeof st->cursor, "%s_%u", st->name, ++st->runs);
    snprintf(sql, len, "DECLARE %s NO SCROLL CURSOR %s FOR %s", st->cursor,
             aml_pg_in_tx(pg) ? "WITHOUT HOLD" : "WITH HOLD", st->text);
    pg->round_trips++;
    PGresult *r = PQexecParams(pg->conn, sql, st->nparams, st->types, (const char *const *)st->vals, NULL,
                               NULL, 0);
    free(sql);
    if (check(pg, r, PGRES_COMMAND_OK))
        return -1;
    PQclear(r);
    st->cursor_open = 1;
    return fetch(st);
}

static int execute(aml_pg_st *st)
{
    drain(st->pg);
    st->started = 1;
    if (st->stream)
        return open_cursor(st);
    PGresult *r = take_pre(st);
    if (r) {
        st->exhausted = 1;
        return take_result(st, r);
    }
    st->pg->round_trips++;
    if (st->oneshot) {
        r = PQexecParams(st->pg->conn, st->text, st->nparams, st->types, (const char *const *)st->vals, NULL, NULL,
                         0);
    } else {
        if (prepare(st))
            return -1;
        r = PQexecPrepared(st->pg->conn, st->name, st->nparams, (const char *const *)st->vals, NULL, NULL, 0);
    }
    st->exhausted = 1;
    return take_result(st, r);
}

/*
 * Closes a stream's cursor as soon as the last row is read, or on a reset,
 * if it still exists: the transaction of a plain cursor may have ended
 * meanwhile, and a CLOSE that failed would abort the caller's next one.
 * Not inside a failed transaction (the cursor goes with the rollback, or
 * stays harmlessly under its run's unique name).
 */
static void end_stream(aml_pg_st *st)
{
    aml_pg *pg = st->pg;
    drain(pg);
    if (st->cursor_open && PQtransactionStatus(pg->conn) != PQTRANS_INERROR &&
        PQstatus(pg->conn) == CONNECTION_OK) {
        char sql[200];
        snprintf(sql, sizeof sql,
                 "DO $c$ DECLARE c refcursor := '%s'; BEGIN "
                 "IF EXISTS (SELECT 1 FROM pg_cursors WHERE name = '%s') THEN CLOSE c; END IF; END $c$",
                 st->cursor, st->cursor);
        pg->round_trips++;
        PQclear(PQexec(pg->conn, sql));
    }
    st->cursor_open = 0;
}

static int step_fail(aml_pg_st *st)
{
    if (st->stream)
        end_stream(st);
    return -1;
}

int aml_pg_step(aml_pg_st *st)
{
    if (!st->started && execute(st))
        return step_fail(st);
    if (!st->res)
        return AML_DONE;
    st->row++;
    if (st->row < PQntuples(st->res))
        return AML_ROW;
    if (!st->exhausted) {
        if (fetch(st))
            return step_fail(st);
        st->row = 0;
        if (PQntuples(st->res) > 0)
            return AML_ROW;
    }
    if (st->stream)
        end_stream(st);
    return AML_DONE;
}

void aml_pg_reset(aml_pg_st *st)
{
    PQclear(st->res);
    st->res = NULL;
    if (st->stream)
        end_stream(st);
    st->started = st->exhausted = 0;
    st->row = -1;
}

void aml_pg_clear(aml_pg_st *st)
{
    aml_pg_reset(st);
    clear_binds(st);
}

/* ---- columns ------------------------------------------------------------- */

static const char *cell(aml_pg_st *st, int i)
{
    if (!st->res || st->row < 0 || st->row >= PQntuples(st->res) || i < 0 || i >= PQnfields(st->res) ||
        PQgetisnull(st->res, st->row, i))
        return NULL;
    return PQgetvalue(st->res, st->row, i);
}

#define BOOLOID 16

int aml_pg_col_count(aml_pg_st *st)
{
    return st->res ? PQnfields(st->res) : 0;
}

int aml_pg_col_null(aml_pg_st *st, int i)
{
    return cell(st, i) == NULL;
}

const char *aml_pg_col_text(aml_pg_st *st, int i)
{
    const char *v = cell(st, i);
    if (!v)
        return "";
    if (PQftype(st->res, i) == BOOLOID)
        return *v == 't' ? "1" : "0";
    return v;
}

int64_t aml_pg_col_int(aml_pg_st *st, int i)
{
    const char *v = cell(st, i);
    if (!v)
        return 0;
    if (*v == 't' || *v == 'f')
        return *v == 't';
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    /* A numeric's fraction is dropped (truncation, as SQLite converts a real); exponents and
     * out-of-range values go through double. */
    int exact = errno != ERANGE && end != v && (*end == '\0' || (*end == '.' && !strpbrk(end, "eE")));
    if (!exact) {
        double d = strtod(v, NULL);
        if (isnan(d))
            return 0;
        if (d >= 9223372036854775807.0)
            return INT64_MAX;
        if (d <= -9223372036854775808.0)
            return INT64_MIN;
        return (int64_t)d;
    }
    return n;
}

double aml_pg_col_double(aml_pg_st *st, int i)
{
    const char *v = cell(st, i);
    if (!v)
        return 0;
    if (*v == 't' || *v == 'f')
        return *v == 't';
    return strtod(v, NULL);
}

/* ---- transactions -------------------------------------------------------- */

int aml_pg_exec(aml_pg *pg, const char *sql)
{
    aml_pg_prefetch_end(pg); /* a write or a transaction's end: rows read ahead may be stale */
    pg->round_trips++;
    PGresult *r = PQexec(pg->conn, sql);
    ExecStatusType k = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (k != PGRES_COMMAND_OK && k != PGRES_TUPLES_OK && k != PGRES_EMPTY_QUERY) {
        set_error(pg, r);
        PQclear(r);
        return -1;
    }
    note_changes(pg, r);
    PQclear(r);
    return 0;
}

int aml_pg_begin(aml_pg *pg)
{
    if (aml_pg_in_tx(pg)) {
        snprintf(pg->errmsg, sizeof pg->errmsg, "cannot start a transaction within a transaction");
        return -1;
    }
    return aml_pg_exec(pg, "BEGIN");
}

int aml_pg_commit(aml_pg *pg)
{
    drain(pg);
    if (PQtransactionStatus(pg->conn) == PQTRANS_INERROR) {
        /* COMMIT would answer ROLLBACK with success: say what happened instead. */
        char why[400];
        snprintf(why, sizeof why, "%.399s", pg->errmsg);
        aml_pg_exec(pg, "ROLLBACK");
        snprintf(pg->errmsg, sizeof pg->errmsg, "transaction rolled back after an error: %s", why);
        return -1;
    }
    return aml_pg_exec(pg, "COMMIT");
}

void aml_pg_rollback(aml_pg *pg)
{
    aml_pg_prefetch_end(pg);
    if (aml_pg_in_tx(pg)) {
        pg->round_trips++;
        PQclear(PQexec(pg->conn, "ROLLBACK"));
    }
}

int aml_pg_in_tx(aml_pg *pg)
{
    drain(pg);
    PGTransactionStatusType t = PQtransactionStatus(pg->conn);
    return t == PQTRANS_INTRANS || t == PQTRANS_INERROR || t == PQTRANS_ACTIVE;
}

int64_t aml_pg_changes(aml_pg *pg)
{
    return pg->changes;
}

/* ---- COPY ---------------------------------------------------------------- */

int aml_pg_copy_begin(aml_pg *pg, const char *sql)
{
    if (!pg->copybuf && !(pg->copybuf = malloc(COPY_BLOCK + 64))) {
        snprintf(pg->errmsg, sizeof pg->errmsg, "out of memory");
        return -1;
    }
    pg->copylen = 0;
    pg->copy_field = 0;
    pg->copy_failed = 0;
    aml_pg_prefetch_end(pg);
    pg->round_trips++;
    PGresult *r = PQexec(pg->conn, sql);
    if (check(pg, r, PGRES_COPY_IN))
        return -1;
    PQclear(r);
    return 0;
}

static void copy_flush(aml_pg *pg)
{
    if (pg->copylen && !pg->copy_failed && PQputCopyData(pg->conn, pg->copybuf, (int)pg->copylen) != 1) {
        snprintf(pg->errmsg, sizeof pg->errmsg, "COPY: %s", PQerrorMessage(pg->conn));
        pg->copy_failed = 1;
    }
    pg->copylen = 0;
}

/* Room for m more bytes in the buffer (flushing it when full). */
static void copy_room(aml_pg *pg, size_t m)
{
    if (pg->copylen + m > COPY_BLOCK)
        copy_flush(pg);
}

static void copy_sep(aml_pg *pg)
{
    copy_room(pg, 1);
    if (pg->copy_field++)
        pg->copybuf[pg->copylen++] = '\t';
}

void aml_pg_copy_text(aml_pg *pg, const char *v, size_t n)
{
    if (!v) {
        aml_pg_copy_null(pg);
        return;
    }
    copy_sep(pg);
    for (size_t i = 0; i < n; i++) {
        char c = v[i], esc = 0;
        switch (c) {
        case '\\': esc = '\\'; break;
        case '\t': esc = 't'; break;
        case '\n': esc = 'n'; break;
        case '\r': esc = 'r'; break;
        case '\0': i = n; continue; /* text cannot hold NUL: the value ends there */
        default: break;
        }
        copy_room(pg, 2);
        if (esc) {
            pg->copybuf[pg->copylen++] = '\\';
            c = esc;
        }
        pg->copybuf[pg->copylen++] = c;
    }
}

void aml_pg_copy_int(aml_pg *pg, int64_t v)
{
    copy_sep(pg);
    copy_room(pg, 24);
    pg->copylen += (size_t)snprintf(pg->copybuf + pg->copylen, 24, "%" PRId64, v);
}

void aml_pg_copy_null(aml_pg *pg)
{
    copy_sep(pg);
    copy_room(pg, 2);
    pg->copybuf[pg->copylen++] = '\\';
    pg->copybuf[pg->copylen++] = 'N';
}

int aml_pg_copy_row_end(aml_pg *pg)
{
    copy_room(pg, 1);
    pg->copybuf[pg->copylen++] = '\n';
    pg->copy_field = 0;
    return pg->copy_failed ? -1 : 0;
}

int aml_pg_copy_put(aml_pg *pg, const char *data, size_t n)
{
    copy_flush(pg);
    if (!pg->copy_failed && n && PQputCopyData(pg->conn, data, (int)n) != 1) {
        snprintf(pg->errmsg, sizeof pg->errmsg, "COPY: %s", PQerrorMessage(pg->conn));
        pg->copy_failed = 1;
    }
    return pg->copy_failed ? -1 : 0;
}

int aml_pg_copy_end(aml_pg *pg, const char *abort_why)
{
    if (!abort_why)
        copy_flush(pg);
    int failed = pg->copy_failed;
    char why[sizeof pg->errmsg];
    snprintf(why, sizeof why, "%s", pg->errmsg);
    pg->round_trips++;
    PQputCopyEnd(pg->conn, abort_why ? abort_why : failed ? "the client failed to send" : NULL);
    PGresult *r;
    int rc = 0;
    while ((r = PQgetResult(pg->conn))) {
        if (PQresultStatus(r) == PGRES_COMMAND_OK) {
            pg->changes = strtoll(PQcmdTuples(r), NULL, 10);
        } else {
            set_error(pg, r);
            rc = -1;
        }
        PQclear(r);
    }
    pg->copylen = 0;
    if (failed)
        snprintf(pg->errmsg, sizeof pg->errmsg, "%s", why);
    return rc || failed || abort_why ? -1 : 0;
}
