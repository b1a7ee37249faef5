/*
 * The resource server's token verifier (auth.h): options, the key set
 * and its refreshes, JWT and introspection checks, the verified-token
 * cache, principals, the RFC 9728 metadata and the WWW-Authenticate
 * challenges. The JOSE parsing lives in auth_jwt.c, HTTP in auth_fetch.c,
 * the principals' accessors and scope lists in principal.c.
 *
 * Threads: verifications run on any thread at once. The key set is an
 * immutable, reference-counted object swapped under `keys_mu`; one fetch
 * runs at a time (`fetch_mu`), and fetches are spaced at least
 * `jwks_min_interval_s` apart (checked atomically before that lock, so an
 * unknown kid never waits behind a fetch), so a stream of tokens with
 * made-up key ids cannot turn the server into a flood against its issuer.
 * The cache has its own lock, and so has introspection (`intro_mu`): the
 * tokens it refused lately, and the questions under way, one per token.
 * Principals are immutable once built.
 */
#include "auth/auth_internal.h"
#include "util/abi.h"
#include "util/util.h"
#include "util/crypto_api.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define DEFAULT_MIN_INTERVAL_S 30u
#define DEFAULT_MAX_AGE_S 3600u
#define DEFAULT_LEEWAY_S 60
#define DEFAULT_INTROSPECTION_CACHE_S 30
#define DEFAULT_TOKEN_CACHE 1024
#define DEFAULT_MAX_TOKEN 8192u
#define DEFAULT_MAX_JWKS ((size_t)256 << 10)
#define DEFAULT_MAX_KEYS 32u
#define DEFAULT_TIMEOUT_MS 5000u
#define MAX_INTROSPECTION_BYTES ((size_t)64 << 10)
#define NEG_SLOTS 256u          /* refused tokens remembered (a fixed table: bounded in entries and bytes) */
#define NEG_TTL_S 30            /* at most this long (and no longer than introspection_cache_s) */
#define WELL_KNOWN "/.well-known/oauth-protected-resource"

/* What the resource URI gives: set once, then read without a lock. */
typedef struct resinfo {
    char *resource;             /* as configured */
    char *metadata_url;         /* the RFC 9728 well-known URL for it */
    char *path;                 /* its path ("" for a bare origin) */
} resinfo;

/* One remembered verification, keyed by the token's SHA-256. */
typedef struct cslot {
    unsigned char h[32];        /* SHA-256 of the token */
    mcp_principal *p;           /* a reference, or NULL for an empty slot */
    int64_t until;              /* reuse it until then (Unix seconds) */
    uint64_t gen;               /* key-set generation + 1 for a JWT; 0 for introspection */
} cslot;

/* One token the introspection endpoint refused, keyed by its SHA-256 (never the token). */
typedef struct nslot {
    unsigned char h[32];        /* SHA-256 of the token */
    int64_t until;              /* refuse it without asking until then; 0 for an empty slot */
    char msg[120];              /* why it was refused */
} nslot;

/* An introspection under way: later verifications of the same token wait for it. */
typedef struct flight {
    unsigned char h[32];        /* SHA-256 of the token */
    struct flight *next;        /* in mcp_auth.flights */
    unsigned users;             /* the thread asking plus those waiting; the last frees it */
    int done;                   /* the answer below is in */
    mcp_status st;              /* its outcome */
    mcp_auth_error why;
    mcp_principal *p;           /* a reference when st is MCP_OK */
    mcp_error e;                /* the error when it is not */
} flight;

struct mcp_auth {
    /* Options, immutable after mcp_auth_new. */
    char *audience;             /* accepted `aud` values, or NULL for the resource */
    char *issuers;              /* accepted `iss` values, or NULL */
    char *as_list;              /* authorization_servers for the metadata */
    char *jwks_file;            /* or NULL */
    char *jwks_url;             /* or NULL */
    char *introspect_url;       /* or NULL */
    char *client_user;          /* form-encoded client id, or NULL */
    char *client_pass;          /* form-encoded client secret, or NULL */
    char *scopes_supported;     /* "" when none */
    char *required;             /* "" when none */
    char **hier;                /* hierarchy lines "BROAD NARROW...", normalised */
    size_t nhier;               /* how many */
    char *ca_file;              /* or NULL */
    unsigned algs;              /* MCP__ALG_* allowed */
    int require_at_jwt;         /* JWTs must declare typ at+jwt */
    uint64_t min_interval_ms;   /* between JWKS fetches */
    uint64_t max_age_ms;        /* refresh fetched keys after this */
    int64_t leeway;             /* seconds */
    int intro_cache_s;          /* seconds an introspection answer is reused (<= 0: never) */
    size_t max_token;           /* bytes */
    size_t max_jwks;            /* bytes */
    unsigned max_keys;          /* keys per set */
    unsigned timeout_ms;        /* per HTTP request */
    int has_keys;               /* some JWKS source is configured */
    _Atomic(resinfo *) res;     /* the resource, once known */

    /* Keys. */
    pthread_mutex_t keys_mu;    /* guards the fields below */
    mcp__keyset *keys;          /* the keys in use, or NULL before the first load */
    uint64_t loaded_ms;         /* when they were loaded (monotonic) */
    atomic_uint_fast64_t attempt_ms; /* when the last fetch began (monotonic, at least 1); 0: never */
    atomic_uint_fast64_t gen;   /* bumped when the key set changes (cached JWTs lapse) */
    pthread_mutex_t fetch_mu;   /* one fetch at a time */

    /* Verified tokens. */
    pthread_mutex_t cache_mu;   /* guards the slots */
    cslot *cache;               /* or NULL when off */
    unsigned cache_mask;        /* slots - 1 */

    /* Introspection: refused tokens and questions under way. */
    pthread_mutex_t intro_mu;   /* guards the fields below */
    pthread_cond_t intro_cv;    /* a flight landed */
    nslot *neg;                 /* NEG_SLOTS slots, or NULL without introspection or reuse */
    flight *flights;            /* introspections under way */
};

static int64_t wall_s(void)
{
    return (int64_t)time(NULL);
}

/* ------------------------------------------------------------------------ */
/* Resource URIs                                                             */

/*
 * Splits an absolute http(s) URI: the end of "scheme://authority" and the
 * start of the path (or query). 0 when it is not one, or has a fragment.
 */
static int split_uri(const char *u, size_t len, size_t *auth_end)
{
    size_t s;
    if (len >= 8 && strncasecmp(u, "https://", 8) == 0)
        s = 8;
    else if (len >= 7 && strncasecmp(u, "http://", 7) == 0)
        s = 7;
    else
        return 0;
    if (memchr(u, '#', len))
        return 0;
    size_t e = s;
    while (e < len && u[e] != '/' && u[e] != '?')
        e++;
    if (e == s)
        return 0;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)u[i] <= 0x20 || u[i] == '"' || u[i] == '\\' || u[i] == 0x7f)
            return 0;
    *auth_end = e;
    return 1;
}

/*
 * Compares two resource identifiers as RFC 8707 audiences: scheme and host
 * case-insensitively (the spec asks servers to accept uppercase ones), the
 * rest exactly, and "https://h/" the same as "https://h". Identifiers that
 * are not http(s) URIs compare exactly.
 */
static int same_resource(const char *a, size_t al, const char *b, size_t bl)
{
    size_t ea, eb;
    if (!split_uri(a, al, &ea) || !split_uri(b, bl, &eb))
        return al == bl && memcmp(a, b, al) == 0;
    if (al == ea + 1 && a[ea] == '/')
        al = ea;
    if (bl == eb + 1 && b[eb] == '/')
        bl = eb;
    return ea == eb && al == bl && strncasecmp(a, b, ea) == 0 && memcmp(a + ea, b + eb, al - ea) == 0;
}

static void resinfo_free(resinfo *r)
{
    if (!r)
        return;
    mcp_free(r->resource);
    mcp_free(r->metadata_url);
    mcp_free(r->path);
    mcp_free(r);
}

static mcp_status resinfo_new(const char *uri, resinfo **out)
{
    size_t len = strlen(uri), ae;
    if (!split_uri(uri, len, &ae))
        return MCP_ERR_INVALID_ARG;
    resinfo *r = mcp__calloc(1, sizeof *r);
    if (!r)
        return MCP_ERR_NOMEM;
    /* The path and query after the authority; a lone "/" counts as none. */
    const char *rest = uri + ae;
    size_t rl = len - ae;
    if (rl == 1 && rest[0] == '/')
        rl = 0;
    size_t pl = 0;
    while (pl < rl && rest[pl] != '?')
        pl++;
    mcp_buf m;
    mcp_buf_init(&m, 0);
    int ok = mcp_buf_append(&m, uri, ae) == MCP_OK && mcp_buf_append(&m, WELL_KNOWN, strlen(WELL_KNOWN)) == MCP_OK &&
             mcp_buf_append(&m, rest, rl) == MCP_OK;
    r->metadata_url = ok ? mcp_buf_take(&m, NULL) : NULL;
    mcp_buf_cleanup(&m);
    r->resource = mcp__strndup(uri, len);
    r->path = mcp__strndup(rest, pl);
    if (!r->metadata_url || !r->resource || !r->path) {
        resinfo_free(r);
        return MCP_ERR_NOMEM;
    }
    *out = r;
    return MCP_OK;
}

static resinfo *res_get(const mcp_auth *a)
{
    return atomic_load_explicit(&((mcp_auth *)a)->res, memory_order_acquire);
}

mcp_status mcp__auth_default_resource(mcp_auth *a, const char *uri)
{
    if (res_get(a))
        return MCP_OK;
    resinfo *r;
    mcp_status st = resinfo_new(uri, &r);
    if (st)
        return st;
    resinfo *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&a->res, &expected, r, memory_order_acq_rel, memory_order_acquire))
        resinfo_free(r); /* another caller set it first */
    return MCP_OK;
}

const char *mcp__auth_resource_path(const mcp_auth *a)
{
    resinfo *r = a ? res_get(a) : NULL;
    return r ? r->path : "";
}

const char *mcp_auth_resource(const mcp_auth *a)
{
    resinfo *r = a ? res_get(a) : NULL;
    return r ? r->resource : NULL;
}

const char *mcp_auth_metadata_url(const mcp_auth *a)
{
    resinfo *r = a ? res_get(a) : NULL;
    return r ? r->metadata_url : NULL;
}

/* ------------------------------------------------------------------------ */
/* Building principals (the accessors are in principal.c)                    */

/* Appends a word to a joined list unless present; 0 when full. */
static int add_word(mcp_buf *b, const char *w, size_t n, size_t *count)
{
    if (mcp__list_has(b->data, w, n))
        return 1;
    if (*count >= MCP__SCOPES_MAX)
        return 0;
    if ((b->len && mcp_buf_append(b, " ", 1)) || mcp_buf_append(b, w, n))
        return -1;
    (*count)++;
    return 1;
}

/*
 * Builds the held scopes: the granted ones and, through the hierarchy,
 * every scope they imply (to a fixed point, bounded by MCP__SCOPES_MAX).
 */
static mcp_status expand_scopes(const mcp_auth *a, const char *granted, char **out)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    size_t count = 0;
    const char *p = granted, *w;
    size_t n;
    int r = mcp_buf_append(&b, "", 0) == MCP_OK ? 1 : -1;
    while (r > 0 && mcp__next_word(&p, &w, &n))
        r = add_word(&b, w, n, &count);
    for (int changed = 1; changed && r > 0;) {
        changed = 0;
        for (size_t i = 0; i < a->nhier && r > 0; i++) {
            const char *line = a->hier[i], *bw;
            size_t bn;
            if (!mcp__next_word(&line, &bw, &bn) || !mcp__list_has(b.data, bw, bn))
                continue;
            while (r > 0 && mcp__next_word(&line, &w, &n)) {
                if (!mcp__list_has(b.data, w, n)) {
                    r = add_word(&b, w, n, &count);
                    changed |= r > 0;
                }
            }
        }
    }
    if (r < 0) {
        mcp_buf_cleanup(&b);
        return MCP_ERR_NOMEM;
    }
    *out = mcp_buf_take(&b, NULL);
    return *out ? MCP_OK : MCP_ERR_NOMEM;
}

/* ------------------------------------------------------------------------ */
/* Claims                                                                    */

typedef struct verdict {
    mcp_auth_error why;         /* classification */
    int64_t until;              /* how long the result may be reused */
} verdict;

static mcp_status refuse(mcp_error *err, mcp_auth_error *why, mcp_auth_error kind, const char *msg)
{
    if (why)
        *why = kind;
    return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "%s", msg);
}

/* A NumericDate member: 1 with *v set, 0 when absent, -1 when not a number. */
static int numeric_date(const mcp_json *root, const char *name, double *v)
{
    const mcp_json *x = mcp_json_get(root, name);
    if (!x)
        return 0;
    mcp_json_type t = mcp_json_typeof(x);
    if (t != MCP_JSON_INT && t != MCP_JSON_REAL)
        return -1;
    *v = mcp_json_number(x);
    return *v == *v ? 1 : -1; /* NaN cannot come from JSON, but be sure */
}

static int aud_accepted(const mcp_auth *a, const char *aud, size_t n)
{
    if (a->audience) {
        const char *p = a->audience, *w;
        size_t wl;
        while (mcp__next_word(&p, &w, &wl))
            if (same_resource(w, wl, aud, n))
                return 1;
        return 0;
    }
    resinfo *r = res_get(a);
    return r && same_resource(r->resource, strlen(r->resource), aud, n);
}

/* Appends a word to a space-separated list. */
static mcp_status append_word(mcp_buf *b, const char *w, size_t n)
{
    mcp_status st = b->len ? mcp_buf_append(b, " ", 1) : MCP_OK;
    return st ? st : mcp_buf_append(b, w, n);
}

/* A string claim, checked: NULL when absent; sets *bad when present but not a string. */
static const char *str_claim(const mcp_json *root, const char *name, int *bad)
{
    const mcp_json *v = mcp_json_get(root, name);
    if (v && mcp_json_typeof(v) != MCP_JSON_STRING)
        *bad = 1;
    return mcp_json_str(v, NULL);
}

/*
 * Checks the claims of a verified JWT (jwt = 1) or of an introspection
 * answer, and builds the principal, which takes over `doc` on success.
 */
static mcp_status check_claims(mcp_auth *a, mcp_json_doc *doc, int jwt, mcp_principal **out, verdict *v,
                               mcp_error *err)
{
    const mcp_json *c = mcp_json_doc_root(doc);
    int64_t now = wall_s();
    v->why = MCP_AUTH_INVALID_TOKEN;
    const mcp_json *iss = mcp_json_get(c, "iss");
    if (a->issuers) {
        size_t il;
        const char *is = mcp_json_str(iss, &il);
        if (!iss && jwt)
            return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token has no iss claim");
        if (iss && (!is || !mcp__list_has(a->issuers, is, il)))
            return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token's issuer (iss) is not accepted here");
    }
    const mcp_json *aud = mcp_json_get(c, "aud");
    if (!aud)
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token has no audience (aud): it is not bound to this resource");
    int aud_ok = 0;
    if (mcp_json_typeof(aud) == MCP_JSON_STRING) {
        size_t n;
        const char *s = mcp_json_str(aud, &n);
        aud_ok = aud_accepted(a, s, n);
    } else if (mcp_json_typeof(aud) == MCP_JSON_ARRAY) {
        for (size_t i = 0; i < mcp_json_len(aud) && !aud_ok; i++) {
            size_t n;
            const char *s = mcp_json_str(mcp_json_at(aud, i), &n);
            aud_ok = s && aud_accepted(a, s, n);
        }
    }
    if (!aud_ok)
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token is for another resource (aud does not name this server)");
    double exp = 0, nbf, iat;
    int has_exp = numeric_date(c, "exp", &exp);
    if (has_exp < 0)
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token's exp is not a number");
    if (!has_exp && jwt)
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token has no expiry (exp)");
    if (has_exp && (double)now > exp + (double)a->leeway)
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token expired");
    int r = numeric_date(c, "nbf", &nbf);
    if (r < 0)
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token's nbf is not a number");
    if (r && nbf > (double)(now + a->leeway))
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token is not valid yet (nbf)");
    r = numeric_date(c, "iat", &iat);
    if (r < 0)
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token's iat is not a number");
    if (r && iat > (double)(now + a->leeway))
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token was issued in the future (iat)");
    int bad = 0;
    const char *sub = str_claim(c, "sub", &bad);
    const char *cid = str_claim(c, "client_id", &bad);
    const char *azp = str_claim(c, "azp", &bad);
    const char *scope = str_claim(c, "scope", &bad);
    if (bad)
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token's sub, client_id, azp or scope is not a string");
    /* Scopes: `scope` (RFC 9068, space-separated) or `scp` (an array, as some issuers send). */
    mcp_buf g;
    mcp_buf_init(&g, 0);
    mcp_status st = mcp_buf_append(&g, "", 0);
    if (scope) {
        const char *p = scope, *w;
        size_t n;
        while (!st && mcp__next_word(&p, &w, &n))
            st = append_word(&g, w, n);
    } else {
        const mcp_json *scp = mcp_json_get(c, "scp");
        if (mcp_json_typeof(scp) == MCP_JSON_STRING) {
            size_t n;
            const char *s = mcp_json_str(scp, &n);
            st = mcp_buf_append(&g, s, n);
        } else if (mcp_json_typeof(scp) == MCP_JSON_ARRAY) {
            for (size_t i = 0; i < mcp_json_len(scp) && !st; i++) {
                size_t n;
                const char *s = mcp_json_str(mcp_json_at(scp, i), &n);
                if (!s || memchr(s, ' ', n)) {
                    mcp_buf_cleanup(&g);
                    return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token's scp is not a list of scope strings");
                }
                st = append_word(&g, s, n);
            }
        } else if (scp) {
            mcp_buf_cleanup(&g);
            return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token's scp is not a list of scope strings");
        }
    }
    mcp_principal *p = st ? NULL : mcp__calloc(1, sizeof *p);
    if (!p) {
        mcp_buf_cleanup(&g);
        v->why = MCP_AUTH_OK;
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    p->scopes = mcp_buf_take(&g, NULL);
    if (expand_scopes(a, p->scopes, &p->held) != MCP_OK) {
        mcp_free(p->scopes);
        mcp_free(p);
        v->why = MCP_AUTH_OK;
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    atomic_init(&p->refs, 1);
    p->sub = sub;
    p->client_id = cid ? cid : azp;
    p->iss = mcp_json_str(iss, NULL);
    p->exp = has_exp ? (exp > 9.2e18 ? INT64_MAX : (int64_t)exp) : 0;
    p->claims = doc;
    /* Reuse: a JWT until it expires; an introspection answer briefly. */
    int64_t until = has_exp ? (p->exp > INT64_MAX - a->leeway ? INT64_MAX : p->exp + a->leeway) : INT64_MAX;
    if (!jwt) {
        int64_t lim = a->intro_cache_s > 0 ? now + a->intro_cache_s : now - 1;
        if (lim < until)
            until = lim;
    }
    v->until = until;
    v->why = MCP_AUTH_OK;
    *out = p;
    return MCP_OK;
}

/* ------------------------------------------------------------------------ */
/* Keys                                                                      */

static mcp_status read_file(const char *path, size_t max, mcp_buf *out, mcp_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return mcp__fail(err, MCP_ERR_IO, 0, 0, "cannot open the JWKS file %.200s: %s", path, strerror(errno));
    char chunk[4096];
    size_t n;
    mcp_status st = MCP_OK;
    while (!st && (n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (out->len + n > max)
            st = mcp__fail(err, MCP_ERR_LIMIT, 0, 0, "the JWKS file is larger than %zu bytes", max);
        else if (mcp_buf_append(out, chunk, n))
            st = mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    if (!st && ferror(f))
        st = mcp__fail(err, MCP_ERR_IO, 0, 0, "cannot read the JWKS file %.200s", path);
    fclose(f);
    return st;
}

/* Installs a new key set; bumps the generation when the keys changed. */
static void keys_install(mcp_auth *a, mcp__keyset *ks)
{
    pthread_mutex_lock(&a->keys_mu);
    mcp__keyset *old = a->keys;
    if (old && memcmp(old->digest, ks->digest, sizeof ks->digest) == 0) {
        old = ks; /* the same document: keep the keys in use */
    } else {
        a->keys = ks;
        atomic_fetch_add(&a->gen, 1);
    }
    a->loaded_ms = mcp__mono_ms();
    pthread_mutex_unlock(&a->keys_mu);
    mcp__keyset_release(old);
}

/* Reads the file or fetches the URL and installs the keys. */
static mcp_status load_keys(mcp_auth *a, mcp_error *err)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_status st;
    if (a->jwks_url) {
        long code = 0;
        mcp_error ferr;
        st = mcp__auth_http(a->jwks_url, NULL, NULL, NULL, a->ca_file, a->timeout_ms, a->max_jwks, &b, &code, &ferr);
        if (st)
            st = mcp__fail(err, st, 0, 0, "fetching the JWKS failed: %s", ferr.message);
        else if (code != 200)
            st = mcp__fail(err, MCP_ERR_IO, 0, 0, "fetching the JWKS failed: HTTP status %ld", code);
    } else if (a->jwks_file) {
        st = read_file(a->jwks_file, a->max_jwks, &b, err);
    } else {
        st = mcp__fail(err, MCP_ERR_STATE, 0, 0, "no JWKS file or URL to load keys from");
    }
    mcp__keyset *ks = NULL;
    if (!st)
        st = mcp__jwks_parse(b.data ? b.data : "", b.len, a->algs, a->max_jwks, a->max_keys, &ks, err);
    mcp_buf_cleanup(&b);
    if (!st)
        keys_install(a, ks);
    return st;
}

/*
 * Refreshes the keys unless one began less than min_interval ago (then
 * MCP_ERR_BUSY at once, and nothing is fetched) or `force`. The interval
 * is checked and claimed atomically before `fetch_mu` is taken, so a
 * token with an unknown kid never waits behind a fetch under way: within
 * the interval it fails at once (only a first load is waited for, in
 * keys_get).
 */
static mcp_status refresh(mcp_auth *a, int force, mcp_error *err)
{
    if (!a->jwks_url && !a->jwks_file)
        return mcp__fail(err, MCP_ERR_STATE, 0, 0, "the keys come from jwks_json: nothing to refresh");
    uint64_t now = mcp__mono_ms();
    if (now == 0)
        now = 1; /* 0 means never */
    uint64_t last = atomic_load(&a->attempt_ms);
    if (force)
        atomic_store(&a->attempt_ms, now);
    else if ((last && now - last < a->min_interval_ms) || !atomic_compare_exchange_strong(&a->attempt_ms, &last, now))
        return MCP_ERR_BUSY; /* recent, or another thread just claimed this fetch */
    pthread_mutex_lock(&a->fetch_mu);
    mcp_status st = load_keys(a, err);
    pthread_mutex_unlock(&a->fetch_mu);
    return st;
}

mcp_status mcp_auth_refresh(mcp_auth *a, mcp_error *err)
{
    if (!a)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "auth is required");
    return refresh(a, 1, err);
}

/* The keys in use (a reference), loading them first when they are missing
 * or older than max_age. *failed is set when a load was tried and failed. */
static mcp__keyset *keys_get(mcp_auth *a, int *failed)
{
    pthread_mutex_lock(&a->keys_mu);
    int stale = (a->jwks_url || a->jwks_file) &&
                (!a->keys || (a->jwks_url && mcp__mono_ms() - a->loaded_ms >= a->max_age_ms));
    pthread_mutex_unlock(&a->keys_mu);
    if (stale) {
        mcp_status st = refresh(a, 0, NULL);
        if (st && st != MCP_ERR_BUSY)
            *failed = 1;
    }
    pthread_mutex_lock(&a->keys_mu);
    int none = !a->keys;
    pthread_mutex_unlock(&a->keys_mu);
    if (stale && none) {
        /* No keys at all yet: wait for the first load under way. */
        pthread_mutex_lock(&a->fetch_mu);
        pthread_mutex_unlock(&a->fetch_mu);
    }
    pthread_mutex_lock(&a->keys_mu);
    mcp__keyset *ks = a->keys;
    if (ks)
        atomic_fetch_add(&ks->refs, 1);
    pthread_mutex_unlock(&a->keys_mu);
    return ks;
}

/* ------------------------------------------------------------------------ */
/* Verification                                                              */

static mcp_status verify_jwt(mcp_auth *a, const char *t, size_t len, mcp_principal **out, verdict *v,
                             uint64_t *gen, mcp_error *err)
{
    mcp__jwt *j = mcp_malloc(sizeof *j); /* holds a 1 KiB signature: keep it off small stacks */
    if (!j)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    mcp_status st = mcp__jwt_parse(t, len, a->algs, j, err);
    if (!st && a->require_at_jwt && !j->at_jwt) {
        mcp__jwt_cleanup(j);
        st = mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token's typ is not at+jwt (RFC 9068): not an access token");
    }
    if (st) {
        mcp_free(j);
        v->why = st == MCP_ERR_AUTH ? MCP_AUTH_INVALID_TOKEN : MCP_AUTH_OK;
        return st;
    }
    int failed = 0, refreshed = 0, verified = 0, candidates = 0, wrong_alg = 0;
    mcp__keyset *ks = keys_get(a, &failed);
    *gen = atomic_load(&a->gen); /* a cached verdict lapses when the keys change after this */
    for (;;) {
        candidates = wrong_alg = 0;
        for (size_t i = 0; ks && i < ks->n && !verified; i++) {
            const mcp__jwk *k = &ks->keys[i];
            if (j->kid && (!k->kid || strcmp(k->kid, j->kid) != 0))
                continue;
            if (!(k->algs & j->alg)) {
                wrong_alg = 1;
                continue;
            }
            candidates++;
            verified = mcp__jwt_verify(j, k);
        }
        /* An unknown key id may be a key the issuer just rotated in: fetch
         * the set again (rate-limited) and look once more. */
        if (verified || candidates || refreshed || wrong_alg || (!j->kid && ks && ks->n) ||
            (!a->jwks_url && !a->jwks_file))
            break;
        refreshed = 1;
        mcp__keyset_release(ks);
        mcp_status rs = refresh(a, 0, NULL);
        if (rs && rs != MCP_ERR_BUSY)
            failed = 1;
        ks = keys_get(a, &failed);
        *gen = atomic_load(&a->gen);
    }
    mcp__keyset_release(ks);
    if (!verified) {
        mcp_status r;
        v->why = MCP_AUTH_INVALID_TOKEN;
        if (candidates)
            r = mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token's signature does not verify");
        else if (failed && !wrong_alg)
            r = refuse(err, &v->why, MCP_AUTH_UNAVAILABLE,
                       "no key for this token, and the issuer's keys (JWKS) could not be loaded");
        else if (wrong_alg)
            r = mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the signing key does not allow the token's algorithm");
        else if (j->kid)
            r = mcp__fail(err, MCP_ERR_AUTH, 0, 0, "unknown key id (kid): no such key in the issuer's JWKS");
        else
            r = mcp__fail(err, MCP_ERR_AUTH, 0, 0, "no key in the issuer's JWKS for the token's algorithm");
        mcp__jwt_cleanup(j);
        mcp_free(j);
        return r;
    }
    mcp_json_doc *claims = j->claims;
    j->claims = NULL;
    mcp__jwt_cleanup(j);
    mcp_free(j);
    st = check_claims(a, claims, 1, out, v, err);
    if (st)
        mcp_json_doc_free(claims);
    return st;
}

static mcp_status introspect(mcp_auth *a, const char *t, size_t len, mcp_principal **out, verdict *v, mcp_error *err)
{
    mcp_buf form, resp;
    mcp_buf_init(&form, 0);
    mcp_buf_init(&resp, 0);
    mcp_status st = mcp_buf_append(&form, "token=", 6);
    if (!st)
        st = mcp__form_encode(&form, t, len);
    if (!st)
        st = mcp_buf_append(&form, "&token_type_hint=access_token", 29);
    long code = 0;
    mcp_error herr;
    if (!st)
        st = mcp__auth_http(a->introspect_url, form.data, a->client_user, a->client_pass, a->ca_file, a->timeout_ms,
                            MAX_INTROSPECTION_BYTES, &resp, &code, &herr);
    /* The form holds the token: wipe it before the memory goes back. */
    if (form.data)
        OPENSSL_cleanse(form.data, form.len);
    mcp_buf_cleanup(&form);
    if (st == MCP_ERR_NOMEM) {
        mcp_buf_cleanup(&resp);
        v->why = MCP_AUTH_OK;
        return mcp__fail(err, st, 0, 0, "out of memory");
    }
    if (st || code != 200) {
        mcp_buf_cleanup(&resp);
        v->why = MCP_AUTH_UNAVAILABLE;
        if (st)
            return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the introspection endpoint could not be reached");
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the introspection endpoint answered HTTP %ld", code);
    }
    static const mcp_json_parse_opts po = {0, 32, MCP_JSON_REJECT_DUPLICATES};
    mcp_json_doc *doc = NULL;
    st = mcp_json_parse(&doc, resp.data ? resp.data : "", resp.len, &po, NULL);
    mcp_buf_cleanup(&resp);
    if (st == MCP_ERR_NOMEM) {
        v->why = MCP_AUTH_OK;
        return mcp__fail(err, st, 0, 0, "out of memory");
    }
    if (st || mcp_json_typeof(mcp_json_doc_root(doc)) != MCP_JSON_OBJECT) {
        mcp_json_doc_free(doc);
        v->why = MCP_AUTH_UNAVAILABLE;
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the introspection response is not a JSON object");
    }
    if (mcp_json_typeof(mcp_json_get(mcp_json_doc_root(doc), "active")) != MCP_JSON_BOOL ||
        !mcp_json_bool(mcp_json_get(mcp_json_doc_root(doc), "active"))) {
        mcp_json_doc_free(doc);
        v->why = MCP_AUTH_INVALID_TOKEN;
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "the token is not active (introspection)");
    }
    st = check_claims(a, doc, 0, out, v, err);
    if (st)
        mcp_json_doc_free(doc);
    return st;
}

/* RFC 6750 token68: ALPHA DIGIT - . _ ~ + / then any number of '='. */
static int token68(const char *t, size_t n)
{
    size_t i = 0;
    for (; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
              c == '_' || c == '~' || c == '+' || c == '/'))
            break;
    }
    if (i == 0)
        return 0;
    while (i < n && t[i] == '=')
        i++;
    return i == n;
}

static mcp_principal *cache_get(mcp_auth *a, const unsigned char *h, int64_t now)
{
    uint64_t idx;
    memcpy(&idx, h, sizeof idx);
    uint64_t gen = atomic_load(&a->gen) + 1;
    mcp_principal *p = NULL;
    pthread_mutex_lock(&a->cache_mu);
    cslot *s = &a->cache[idx & a->cache_mask];
    if (s->p && memcmp(s->h, h, 32) == 0 && now <= s->until && (s->gen == 0 || s->gen == gen))
        p = mcp__principal_ref(s->p);
    pthread_mutex_unlock(&a->cache_mu);
    return p;
}

static void cache_put(mcp_auth *a, const unsigned char *h, mcp_principal *p, int64_t until, uint64_t gen)
{
    uint64_t idx;
    memcpy(&idx, h, sizeof idx);
    mcp__principal_ref(p);
    pthread_mutex_lock(&a->cache_mu);
    cslot *s = &a->cache[idx & a->cache_mask];
    mcp_principal *old = s->p;
    memcpy(s->h, h, 32);
    s->p = p;
    s->until = until;
    s->gen = gen;
    pthread_mutex_unlock(&a->cache_mu);
    mcp_principal_free(old);
}

/* How long a refusal from the introspection endpoint is remembered (0: not at all). */
static int64_t neg_ttl(const mcp_auth *a)
{
    return a->intro_cache_s <= 0 ? 0 : a->intro_cache_s < NEG_TTL_S ? a->intro_cache_s : NEG_TTL_S;
}

/*
 * Introspects a token once for everyone: a token refused a moment ago is
 * refused again without asking (the negative cache), and threads that ask
 * about a token while a question about it is out wait for that answer
 * instead of asking too (single flight). `h` is the token's SHA-256.
 */
static mcp_status introspect_once(mcp_auth *a, const char *t, size_t len, const unsigned char *h,
                                  mcp_principal **out, verdict *v, mcp_error *err)
{
    uint64_t idx;
    memcpy(&idx, h, sizeof idx);
    pthread_mutex_lock(&a->intro_mu);
    nslot *ns = a->neg ? &a->neg[idx & (NEG_SLOTS - 1)] : NULL;
    if (ns && ns->until && memcmp(ns->h, h, 32) == 0 && wall_s() <= ns->until) {
        char msg[sizeof ns->msg];
        memcpy(msg, ns->msg, sizeof msg);
        pthread_mutex_unlock(&a->intro_mu);
        v->why = MCP_AUTH_INVALID_TOKEN;
        return mcp__fail(err, MCP_ERR_AUTH, 0, 0, "%s", msg);
    }
    flight *f = a->flights;
    while (f && memcmp(f->h, h, 32) != 0)
        f = f->next;
    if (f) {
        f->users++;
        while (!f->done)
            pthread_cond_wait(&a->intro_cv, &a->intro_mu);
        mcp_status st = f->st;
        v->why = f->why;
        v->until = 0; /* the asking thread cached it */
        if (!st)
            *out = mcp__principal_ref(f->p);
        else if (err)
            *err = f->e;
        int last = --f->users == 0;
        pthread_mutex_unlock(&a->intro_mu);
        if (last) {
            mcp_principal_free(f->p);
            mcp_free(f);
        }
        return st;
    }
    f = mcp__calloc(1, sizeof *f);
    if (!f) {
        pthread_mutex_unlock(&a->intro_mu);
        return introspect(a, t, len, out, v, err);
    }
    memcpy(f->h, h, 32);
    f->users = 1;
    f->next = a->flights;
    a->flights = f;
    pthread_mutex_unlock(&a->intro_mu);

    mcp_error e;
    memset(&e, 0, sizeof e);
    mcp_status st = introspect(a, t, len, out, v, &e);

    pthread_mutex_lock(&a->intro_mu);
    for (flight **pp = &a->flights; *pp; pp = &(*pp)->next)
        if (*pp == f) {
            *pp = f->next;
            break;
        }
    f->done = 1;
    f->st = st;
    f->why = v->why;
    f->e = e;
    if (!st)
        f->p = mcp__principal_ref(*out);
    int64_t ttl = neg_ttl(a);
    if (st == MCP_ERR_AUTH && v->why == MCP_AUTH_INVALID_TOKEN && ns && ttl > 0) {
        memcpy(ns->h, h, 32);
        ns->until = wall_s() + ttl;
        size_t n = strnlen(e.message, sizeof ns->msg - 1);
        memcpy(ns->msg, e.message, n);
        ns->msg[n] = '\0';
    }
    int last = --f->users == 0;
    pthread_cond_broadcast(&a->intro_cv);
    pthread_mutex_unlock(&a->intro_mu);
    if (last) {
        mcp_principal_free(f->p);
        mcp_free(f);
    }
    if (st && err)
        *err = e;
    return st;
}

mcp_status mcp_auth_verify(mcp_auth *a, const char *t, size_t len, mcp_principal **out, mcp_auth_error *why,
                           mcp_error *err)
{
    if (why)
        *why = MCP_AUTH_OK;
    if (!a || !out || (!t && len))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "auth, token and out are required");
    if (len == 0)
        return refuse(err, why, MCP_AUTH_INVALID_TOKEN, "the token is empty");
    if (len > a->max_token)
        return refuse(err, why, MCP_AUTH_INVALID_TOKEN, "the token is longer than this server accepts");
    if (!token68(t, len))
        return refuse(err, why, MCP_AUTH_INVALID_TOKEN, "malformed token: characters outside RFC 6750's token68");
    unsigned char h[32];
    int hashed = (a->cache || a->introspect_url) && EVP_Digest(t, len, h, NULL, EVP_sha256(), NULL) == 1;
    if (hashed && a->cache) {
        mcp_principal *p = cache_get(a, h, wall_s());
        if (p) {
            *out = p;
            return MCP_OK;
        }
    }
    verdict v = {MCP_AUTH_INVALID_TOKEN, 0};
    mcp_principal *p = NULL;
    uint64_t gen = 0;
    mcp_status st;
    int jwt = 0;
    if (a->has_keys && mcp__jwt_shaped(t, len)) {
        jwt = 1;
        st = verify_jwt(a, t, len, &p, &v, &gen, err);
    } else if (a->introspect_url) {
        st = hashed ? introspect_once(a, t, len, h, &p, &v, err) : introspect(a, t, len, &p, &v, err);
    } else {
        st = mcp__fail(err, MCP_ERR_AUTH, 0, 0,
                       "malformed token: not a JWT, and this server has no introspection endpoint for opaque tokens");
    }
    if (st) {
        if (why)
            *why = st == MCP_ERR_AUTH ? v.why : MCP_AUTH_OK;
        return st;
    }
    if (hashed && a->cache && v.until >= wall_s())
        cache_put(a, h, p, v.until, jwt ? gen + 1 : 0);
    *out = p;
    return MCP_OK;
}

/* 1 when verifying a JWT could fetch the issuer's keys now: none loaded
 * yet, stale, or its key id unknown while a refresh is allowed. */
static int jwks_may_fetch(mcp_auth *a, const char *t, size_t len)
{
    if (!a->jwks_url && !a->jwks_file)
        return 0;
    uint64_t now = mcp__mono_ms();
    pthread_mutex_lock(&a->keys_mu);
    int stale = !a->keys || (a->jwks_url && now - a->loaded_ms >= a->max_age_ms);
    mcp__keyset *ks = a->keys;
    if (ks)
        atomic_fetch_add(&ks->refs, 1);
    pthread_mutex_unlock(&a->keys_mu);
    uint64_t last = atomic_load(&a->attempt_ms);
    int may_refresh = !last || now - last >= a->min_interval_ms;
    int fetch = stale && may_refresh;
    mcp__jwt *j = !fetch && may_refresh && ks ? mcp_malloc(sizeof *j) : NULL;
    if (j && mcp__jwt_parse(t, len, a->algs, j, NULL) == MCP_OK) {
        int known = 0;
        for (size_t i = 0; i < ks->n && !known; i++)
            known = !j->kid || (ks->keys[i].kid && strcmp(ks->keys[i].kid, j->kid) == 0);
        fetch = !known;
        mcp__jwt_cleanup(j);
    }
    mcp_free(j);
    mcp__keyset_release(ks);
    return fetch || (stale && !ks && !may_refresh); /* no keys, a first load under way: it waits */
}

int mcp__auth_may_block(mcp_auth *a, const char *header)
{
    const char *t = NULL, *msg;
    size_t len = 0;
    if (!a || !header || strlen(header) > a->max_token + 64 ||
        mcp__auth_parse_bearer(header, &t, &len, &msg) != MCP_AUTH_OK || len == 0 || len > a->max_token ||
        !token68(t, len))
        return 0; /* refused at once */
    unsigned char h[32];
    int hashed = (a->cache || a->introspect_url) && EVP_Digest(t, len, h, NULL, EVP_sha256(), NULL) == 1;
    if (hashed && a->cache) {
        mcp_principal *p = cache_get(a, h, wall_s());
        if (p) {
            mcp_principal_free(p);
            return 0;
        }
    }
    if (a->has_keys && mcp__jwt_shaped(t, len))
        return jwks_may_fetch(a, t, len);
    if (!a->introspect_url)
        return 0;
    int refused = 0;
    if (hashed) {
        uint64_t idx;
        memcpy(&idx, h, sizeof idx);
        pthread_mutex_lock(&a->intro_mu);
        nslot *ns = a->neg ? &a->neg[idx & (NEG_SLOTS - 1)] : NULL;
        refused = ns && ns->until && memcmp(ns->h, h, 32) == 0 && wall_s() <= ns->until;
        pthread_mutex_unlock(&a->intro_mu);
    }
    return !refused;
}

mcp_auth_error mcp__auth_parse_bearer(const char *h, const char **tok, size_t *len, const char **why)
{
    *why = "this server requires a bearer token (Authorization: Bearer ...)";
    if (!h)
        return MCP_AUTH_NO_TOKEN;
    while (*h == ' ' || *h == '\t')
        h++;
    size_t sl = strcspn(h, " \t");
    if (sl != 6 || strncasecmp(h, "Bearer", 6) != 0)
        return MCP_AUTH_NO_TOKEN; /* another scheme (Basic, ...) or none */
    const char *p = h + 6;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = strlen(p);
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    if (n == 0) {
        *why = "malformed Authorization header: Bearer without a token";
        return MCP_AUTH_INVALID_REQUEST;
    }
    if (!token68(p, n)) {
        *why = "malformed Authorization header: the token is not one RFC 6750 token68";
        return MCP_AUTH_INVALID_REQUEST;
    }
    *tok = p;
    *len = n;
    return MCP_AUTH_OK;
}

mcp_status mcp_auth_check_header(mcp_auth *a, const char *header, mcp_principal **out, mcp_auth_error *why,
                                 mcp_error *err)
{
    if (why)
        *why = MCP_AUTH_OK;
    if (!a || !out)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "auth and out are required");
    if (header && strlen(header) > a->max_token + 64)
        return refuse(err, why, MCP_AUTH_INVALID_TOKEN, "the token is longer than this server accepts");
    const char *tok = NULL, *msg;
    size_t len = 0;
    mcp_auth_error k = mcp__auth_parse_bearer(header, &tok, &len, &msg);
    if (k != MCP_AUTH_OK)
        return refuse(err, why, k, msg);
    mcp_principal *p;
    mcp_status st = mcp_auth_verify(a, tok, len, &p, why, err);
    if (st)
        return st;
    if (!mcp_principal_has_scopes(p, a->required)) {
        mcp_principal_free(p);
        return refuse(err, why, MCP_AUTH_INSUFFICIENT_SCOPE, "the token lacks a scope this server requires");
    }
    *out = p;
    return MCP_OK;
}

/* ------------------------------------------------------------------------ */
/* Metadata and challenges                                                   */

static void write_list(mcp_jw *w, const char *list)
{
    mcp_jw_array_begin(w);
    const char *p = list, *x;
    size_t n;
    while (p && mcp__next_word(&p, &x, &n))
        mcp_jw_stringn(w, x, n);
    mcp_jw_array_end(w);
}

mcp_status mcp_auth_metadata(const mcp_auth *a, mcp_buf *out)
{
    if (!a || !out)
        return MCP_ERR_INVALID_ARG;
    resinfo *r = res_get(a);
    if (!r)
        return MCP_ERR_STATE;
    size_t start = out->len;
    mcp_jw w;
    mcp_jw_init(&w, out);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "resource");
    mcp_jw_string(&w, r->resource);
    mcp_jw_key(&w, "authorization_servers");
    write_list(&w, a->as_list);
    if (*a->scopes_supported) {
        mcp_jw_key(&w, "scopes_supported");
        write_list(&w, a->scopes_supported);
    }
    mcp_jw_key(&w, "bearer_methods_supported");
    mcp_jw_array_begin(&w);
    mcp_jw_string(&w, "header");
    mcp_jw_array_end(&w);
    mcp_jw_object_end(&w);
    mcp_status st = mcp_jw_finish(&w);
    if (st && out->data) {
        out->len = start;
        out->data[start] = '\0';
    }
    return st;
}

const char *mcp_auth_error_code(mcp_auth_error why)
{
    switch (why) {
    case MCP_AUTH_INVALID_REQUEST:
        return "invalid_request";
    case MCP_AUTH_INVALID_TOKEN:
        return "invalid_token";
    case MCP_AUTH_INSUFFICIENT_SCOPE:
        return "insufficient_scope";
    case MCP_AUTH_UNAVAILABLE:
        return "temporarily_unavailable";
    default:
        return NULL;
    }
}

/* A quoted-string parameter value may not hold '"' or '\' here (none is escaped). */
static int quotable(const char *s)
{
    for (; s && *s; s++)
        if (*s == '"' || *s == '\\' || (unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

mcp_status mcp_auth_challenge(const mcp_auth *a, mcp_auth_error why, const char *scope, const char *description,
                              mcp_buf *out)
{
    if (!a || !out || !quotable(scope) || !quotable(description))
        return MCP_ERR_INVALID_ARG;
    const char *code = why == MCP_AUTH_NO_TOKEN ? NULL : mcp_auth_error_code(why);
    const char *url = mcp_auth_metadata_url(a);
    size_t start = out->len;
    const char *sep = " ";
    mcp_status st = mcp_buf_append(out, "Bearer", 6);
#define PARAM(name, value)                                                                                         \
    do {                                                                                                           \
        if (!st && (value) && *(value)) {                                                                          \
            st = mcp_buf_append(out, sep, strlen(sep));                                                            \
            if (!st)                                                                                               \
                st = mcp_buf_append(out, name "=\"", sizeof name + 1);                                             \
            if (!st)                                                                                               \
                st = mcp_buf_append(out, (value), strlen(value));                                                  \
            if (!st)                                                                                               \
                st = mcp_buf_append(out, "\"", 1);                                                                 \
            sep = ", ";                                                                                            \
        }                                                                                                          \
    } while (0)
    PARAM("error", code);
    PARAM("resource_metadata", url);
    PARAM("scope", scope);
    PARAM("error_description", description);
#undef PARAM
    if (st && out->data) {
        out->len = start;
        out->data[start] = '\0';
    }
    return st;
}

const char *mcp_auth_required_scopes(const mcp_auth *a)
{
    return a ? a->required : "";
}

const char *mcp_auth_scopes_supported(const mcp_auth *a)
{
    return a ? a->scopes_supported : "";
}

/* ------------------------------------------------------------------------ */
/* Lifetime                                                                  */

void mcp_auth_free(mcp_auth *a)
{
    if (!a)
        return;
    mcp_free(a->audience);
    mcp_free(a->issuers);
    mcp_free(a->as_list);
    mcp_free(a->jwks_file);
    mcp_free(a->jwks_url);
    mcp_free(a->introspect_url);
    if (a->client_pass)
        OPENSSL_cleanse(a->client_pass, strlen(a->client_pass));
    mcp_free(a->client_user);
    mcp_free(a->client_pass);
    mcp_free(a->scopes_supported);
    mcp_free(a->required);
    for (size_t i = 0; i < a->nhier; i++)
        mcp_free(a->hier[i]);
    mcp_free(a->hier);
    mcp_free(a->ca_file);
    resinfo_free(atomic_load(&a->res));
    mcp__keyset_release(a->keys);
    if (a->cache) {
        for (size_t i = 0; i <= a->cache_mask; i++)
            mcp_principal_free(a->cache[i].p);
        mcp_free(a->cache);
    }
    pthread_mutex_destroy(&a->keys_mu);
    pthread_mutex_destroy(&a->fetch_mu);
    pthread_mutex_destroy(&a->cache_mu);
    mcp_free(a->neg); /* no flight can be out: nobody may verify while the verifier is freed */
    pthread_mutex_destroy(&a->intro_mu);
    pthread_cond_destroy(&a->intro_cv);
    mcp_free(a);
}

/* A form-encoded copy (RFC 6749 section 2.3.1 encodes client credentials so). */
static char *form_dup(const char *s)
{
    mcp_buf b;
    mcp_buf_init(&b, 0);
    if (mcp_buf_append(&b, "", 0) || mcp__form_encode(&b, s, strlen(s))) {
        mcp_buf_cleanup(&b);
        return NULL;
    }
    return mcp_buf_take(&b, NULL);
}

/* Parses the algorithms option into MCP__ALG_* bits. */
static mcp_status parse_algs(const char *list, unsigned *out, mcp_error *err)
{
    if (!list) {
        *out = MCP__ALG_ALL;
        return MCP_OK;
    }
    unsigned bits = 0;
    const char *p = list, *w;
    size_t n;
    while (mcp__next_word(&p, &w, &n)) {
        if (n == 4 && strncasecmp(w, "none", 4) == 0)
            return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "algorithms: \"none\" can never be allowed");
        if (n >= 2 && (w[0] == 'H' || w[0] == 'h') && (w[1] == 'S' || w[1] == 's'))
            return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0,
                             "algorithms: HMAC (HS*) can never be allowed: a public key would become a shared secret");
        unsigned b = mcp__alg_from_name(w, n);
        if (!b)
            return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "algorithms: %.*s is not one of RS256 PS256 ES256 EdDSA",
                             (int)(n > 40 ? 40 : n), w);
        bits |= b;
    }
    if (!bits)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "algorithms: the list is empty");
    *out = bits;
    return MCP_OK;
}

/* The options make sense together: a way to check tokens, issuers for
 * JWTs, one key source, URLs that may be fetched, introspection credentials. */
static mcp_status check_opts(const mcp_auth_opts *o, mcp_error *err)
{
    int keys = o->jwks_file || o->jwks_url || o->jwks_json;
    if (!keys && !o->introspection_url)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0,
                         "no way to check tokens: set jwks_file, jwks_url, jwks_json or introspection_url");
    if (keys && (!o->issuers || !*o->issuers))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "issuers is required to check JWTs (the accepted iss values)");
    if ((o->jwks_file != NULL) + (o->jwks_url != NULL) + (o->jwks_json != NULL) > 1)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "set only one of jwks_file, jwks_url and jwks_json");
    if (o->jwks_url && !mcp__auth_url_allowed(o->jwks_url))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "jwks_url must be https (http only to a loopback host)");
    if (o->introspection_url && !mcp__auth_url_allowed(o->introspection_url))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0,
                         "introspection_url must be https (http only to a loopback host)");
    if (o->introspection_url && (!o->client_id || !o->client_secret))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "introspection needs client_id and client_secret");
    return MCP_OK;
}

/* A verifier with the options' limits (defaults for zeros); NULL when out of memory. */
static mcp_auth *auth_alloc(const mcp_auth_opts *o, unsigned algs)
{
    mcp_auth *a = mcp__calloc(1, sizeof *a);
    if (!a)
        return NULL;
    pthread_mutex_init(&a->keys_mu, NULL);
    pthread_mutex_init(&a->fetch_mu, NULL);
    pthread_mutex_init(&a->cache_mu, NULL);
    pthread_mutex_init(&a->intro_mu, NULL);
    pthread_cond_init(&a->intro_cv, NULL);
    atomic_init(&a->gen, 0);
    atomic_init(&a->attempt_ms, 0);
    atomic_init(&a->res, NULL);
    a->algs = algs;
    a->require_at_jwt = o->require_at_jwt;
    a->has_keys = o->jwks_file || o->jwks_url || o->jwks_json;
    a->min_interval_ms = (uint64_t)(o->jwks_min_interval_s ? o->jwks_min_interval_s : DEFAULT_MIN_INTERVAL_S) * 1000u;
    a->max_age_ms = (uint64_t)(o->jwks_max_age_s ? o->jwks_max_age_s : DEFAULT_MAX_AGE_S) * 1000u;
    a->leeway = o->leeway_s > 0 ? o->leeway_s : o->leeway_s == 0 ? DEFAULT_LEEWAY_S : 0;
    a->intro_cache_s = o->introspection_cache_s ? o->introspection_cache_s : DEFAULT_INTROSPECTION_CACHE_S;
    a->max_token = o->max_token_len ? o->max_token_len : DEFAULT_MAX_TOKEN;
    a->max_jwks = o->max_jwks_bytes ? o->max_jwks_bytes : DEFAULT_MAX_JWKS;
    a->max_keys = o->max_keys ? o->max_keys : DEFAULT_MAX_KEYS;
    a->timeout_ms = o->fetch_timeout_ms ? o->fetch_timeout_ms : DEFAULT_TIMEOUT_MS;
    return a;
}

/* The word lists: audience, issuers, authorization servers, scopes. */
static mcp_status copy_lists(mcp_auth *a, const mcp_auth_opts *o, mcp_error *err)
{
    mcp_status st;
    const char *what = NULL;
    if ((st = mcp__words_dup(o->audience, &a->audience)))
        what = "audience";
    else if ((st = mcp__words_dup(o->issuers, &a->issuers)))
        what = "issuers";
    else if ((st = mcp__words_dup(o->authorization_servers ? o->authorization_servers : o->issuers, &a->as_list)))
        what = "authorization_servers";
    else if ((st = mcp__scopes_normalize(o->scopes_supported, &a->scopes_supported)))
        what = "scopes_supported";
    else if ((st = mcp__scopes_normalize(o->required_scopes, &a->required)))
        what = "required_scopes";
    if (st)
        return mcp__fail(err, st == MCP_ERR_NOMEM ? st : MCP_ERR_INVALID_ARG, 0, 0,
                         "%s: %s", what, st == MCP_ERR_NOMEM ? "out of memory" : "invalid characters or too many");
    if ((!a->scopes_supported && !(a->scopes_supported = mcp__strdup(""))) ||
        (!a->required && !(a->required = mcp__strdup(""))))
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    return MCP_OK;
}

/* scope_hierarchy: lines of "BROAD NARROW...", at most 256. */
static mcp_status copy_hierarchy(mcp_auth *a, const mcp_auth_opts *o, mcp_error *err)
{
    if (!o->scope_hierarchy)
        return MCP_OK;
    size_t n = 0;
    while (o->scope_hierarchy[n])
        n++;
    if (n > 256)
        return mcp__fail(err, MCP_ERR_LIMIT, 0, 0, "scope_hierarchy: more than 256 lines");
    a->hier = mcp__calloc(n ? n : 1, sizeof *a->hier);
    if (!a->hier)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    for (size_t i = 0; i < n; i++) {
        mcp_status st = mcp__scopes_normalize(o->scope_hierarchy[i], &a->hier[a->nhier]);
        if (st || !a->hier[a->nhier] || !strchr(a->hier[a->nhier], ' ')) {
            mcp_free(a->hier[a->nhier]); /* NULL when normalising failed */
            a->hier[a->nhier] = NULL;
            return mcp__fail(err, st == MCP_ERR_NOMEM ? st : MCP_ERR_INVALID_ARG, 0, 0,
                             "scope_hierarchy line %zu: want \"BROAD NARROW...\" of scope tokens", i + 1);
        }
        a->nhier++;
    }
    return MCP_OK;
}

/* Where tokens are checked against: the resource, the key source, the
 * introspection endpoint and its credentials, the CA file. */
static mcp_status copy_endpoints(mcp_auth *a, const mcp_auth_opts *o, mcp_error *err)
{
    if (o->resource) {
        resinfo *r;
        mcp_status st = resinfo_new(o->resource, &r);
        if (st)
            return mcp__fail(err, st, 0, 0,
                             st == MCP_ERR_NOMEM ? "out of memory"
                                                 : "resource must be an absolute http(s) URI without a fragment");
        atomic_store(&a->res, r);
    }
    a->jwks_file = mcp__strdup(o->jwks_file);
    a->jwks_url = mcp__strdup(o->jwks_url);
    a->introspect_url = mcp__strdup(o->introspection_url);
    a->ca_file = mcp__strdup(o->ca_file);
    if (o->introspection_url) {
        a->client_user = form_dup(o->client_id);
        a->client_pass = form_dup(o->client_secret);
    }
    if ((o->jwks_file && !a->jwks_file) || (o->jwks_url && !a->jwks_url) ||
        (o->introspection_url && (!a->introspect_url || !a->client_user || !a->client_pass)) ||
        (o->ca_file && !a->ca_file))
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    return MCP_OK;
}

/* The verified-token cache (a power of two, at most 2^20 slots), and the
 * keys that need no fetch: a JWKS given inline or in a file. */
static mcp_status cache_and_keys(mcp_auth *a, const mcp_auth_opts *o, mcp_error *err)
{
    int cache = o->token_cache ? o->token_cache : DEFAULT_TOKEN_CACHE;
    if (cache > 0) {
        unsigned n = 16;
        while (n < (unsigned)cache && n < (1u << 20))
            n <<= 1;
        a->cache = mcp__calloc(n, sizeof *a->cache);
        if (!a->cache)
            return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
        a->cache_mask = n - 1;
    }
    if (o->introspection_url && neg_ttl(a) > 0) {
        a->neg = mcp__calloc(NEG_SLOTS, sizeof *a->neg);
        if (!a->neg)
            return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    }
    if (o->jwks_json) {
        mcp__keyset *ks;
        mcp_status st =
            mcp__jwks_parse(o->jwks_json, strlen(o->jwks_json), a->algs, a->max_jwks, a->max_keys, &ks, err);
        if (st)
            return st;
        keys_install(a, ks);
    } else if (o->jwks_file) {
        uint64_t now = mcp__mono_ms();
        atomic_store(&a->attempt_ms, now ? now : 1);
        return load_keys(a, err);
    }
    return MCP_OK;
}

mcp_status mcp_auth_new_sized(mcp_auth **out, const mcp_auth_opts *o, size_t opts_size, mcp_error *err)
{
    mcp_auth_opts opts_copy;
    mcp_status ost = MCP__OPTS_IN(mcp_auth_opts, &opts_copy, o, opts_size, err);
    if (ost)
        return ost;
    if (o)
        o = &opts_copy;
    if (!out || !o)
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "out and opts are required");
    mcp_status st = check_opts(o, err);
    unsigned algs = 0;
    if (!st)
        st = parse_algs(o->algorithms, &algs, err);
    if (st)
        return st;
    mcp_auth *a = auth_alloc(o, algs);
    if (!a)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    st = copy_lists(a, o, err);
    if (!st)
        st = copy_hierarchy(a, o, err);
    if (!st)
        st = copy_endpoints(a, o, err);
    if (!st)
        st = cache_and_keys(a, o, err);
    if (st) {
        mcp_auth_free(a);
        return st;
    }
    *out = a;
    return MCP_OK;
}

/* ------------------------------------------------------------------------ */
/* Program options                                                           */

mcp_status mcp_auth_parse_arg_sized(mcp_auth_opts *o, size_t opts_size, const char *arg, const char *next,
                                    int *used)
{
    static const char *const names[] = {"--auth-issuer",     "--auth-audience", "--auth-jwks",
                                        "--auth-introspect", "--auth-scopes",   "--resource-url"};
    if (used)
        *used = 0;
    if (!o || !arg || !used)
        return MCP_ERR_INVALID_ARG;
    /* Every field written below is a 0.1.0 one: a size that holds those is
     * enough. A field added later is written only when opts_size covers it. */
    if (MCP__OPTS_SIZE_CHECK(mcp_auth_opts, opts_size, NULL))
        return MCP_ERR_INVALID_ARG;
    size_t which = sizeof names / sizeof names[0];
    const char *value = NULL;
    int n = 2;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t l = strlen(names[i]);
        if (strncmp(arg, names[i], l) == 0 && (arg[l] == '\0' || arg[l] == '=')) {
            which = i;
            value = arg[l] == '=' ? arg + l + 1 : next;
            n = arg[l] == '=' ? 1 : 2;
            break;
        }
    }
    if (which == sizeof names / sizeof names[0])
        return MCP_ERR_NOT_FOUND;
    if (!value || !*value)
        return MCP_ERR_INVALID_ARG;
    switch (which) {
    case 0:
        o->issuers = value;
        break;
    case 1:
        o->audience = value;
        break;
    case 2:
        if (strncasecmp(value, "https://", 8) == 0 || strncasecmp(value, "http://", 7) == 0)
            o->jwks_url = value;
        else
            o->jwks_file = value;
        break;
    case 3:
        o->introspection_url = value;
        o->client_id = getenv("MCP_AUTH_CLIENT_ID");
        o->client_secret = getenv("MCP_AUTH_CLIENT_SECRET");
        break;
    case 4:
        o->scopes_supported = value;
        break;
    default:
        o->resource = value;
        break;
    }
    *used = n;
    return MCP_OK;
}
