/*
 * Counters per key for the HTTP server's quotas on what a client holds at
 * once (requests in flight, open streams): a take that would pass the
 * limit is refused, a give returns one. Keys are short strings (a kind
 * letter and a client address or principal key); an entry lives while its
 * count is above zero, so the table holds at most one entry per request
 * in flight. Buckets are chained, the hash seeded per table.
 */
#include "util/util.h"
#include "transport/http_internal.h"
#include "util/crypto_api.h"

#include <pthread.h>
#include <string.h>

#define QUOTA_BUCKETS 1024u

typedef struct qentry {
    struct qentry *next;
    unsigned count;
    size_t len;
    char key[];
} qentry;

struct mcp__quota {
    pthread_mutex_t mu;
    uint64_t seed;
    size_t entries;
    qentry *buckets[QUOTA_BUCKETS];
};

mcp_status mcp__quota_new(mcp__quota **out)
{
    mcp__quota *q = mcp__calloc(1, sizeof *q);
    if (!q)
        return MCP_ERR_NOMEM;
    if (mcp__random(&q->seed, sizeof q->seed) != 0 && RAND_bytes((unsigned char *)&q->seed, sizeof q->seed) != 1)
        q->seed = (uint64_t)(uintptr_t)q ^ mcp__mono_ns();
    pthread_mutex_init(&q->mu, NULL);
    *out = q;
    return MCP_OK;
}

void mcp__quota_free(mcp__quota *q)
{
    if (!q)
        return;
    for (unsigned b = 0; b < QUOTA_BUCKETS; b++)
        while (q->buckets[b]) {
            qentry *e = q->buckets[b];
            q->buckets[b] = e->next;
            mcp_free(e);
        }
    pthread_mutex_destroy(&q->mu);
    mcp_free(q);
}

/* FNV-1a over the seed and the key. */
static uint64_t hash_of(const mcp__quota *q, const char *key, size_t len)
{
    uint64_t h = 1469598103934665603ull ^ q->seed;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)key[i];
        h *= 1099511628211ull;
    }
    return h ^ (h >> 29);
}

static unsigned bucket_of(const mcp__quota *q, const char *key, size_t len)
{
    return (unsigned)(hash_of(q, key, len) % QUOTA_BUCKETS);
}

uint64_t mcp__quota_hash(const mcp__quota *q, const char *key)
{
    uint64_t h = hash_of(q, key, strlen(key));
    return h ? h : 1;
}

static qentry **find_locked(mcp__quota *q, const char *key, size_t len)
{
    qentry **pp = &q->buckets[bucket_of(q, key, len)];
    while (*pp && !((*pp)->len == len && memcmp((*pp)->key, key, len) == 0))
        pp = &(*pp)->next;
    return pp;
}

int mcp__quota_take(mcp__quota *q, const char *key, unsigned limit)
{
    size_t len = strlen(key);
    int ok = 0;
    pthread_mutex_lock(&q->mu);
    qentry **pp = find_locked(q, key, len);
    if (*pp) {
        if ((*pp)->count < limit) {
            (*pp)->count++;
            ok = 1;
        }
    } else if (limit > 0) {
        qentry *e = mcp__calloc(1, sizeof *e + len + 1);
        if (e) {
            e->count = 1;
            e->len = len;
            memcpy(e->key, key, len + 1);
            *pp = e;
            q->entries++;
            ok = 1;
        }
    }
    pthread_mutex_unlock(&q->mu);
    return ok;
}

void mcp__quota_give(mcp__quota *q, const char *key)
{
    size_t len = strlen(key);
    pthread_mutex_lock(&q->mu);
    qentry **pp = find_locked(q, key, len);
    qentry *e = *pp;
    if (e && --e->count == 0) {
        *pp = e->next;
        q->entries--;
        mcp_free(e);
    }
    pthread_mutex_unlock(&q->mu);
}

unsigned mcp__quota_count(mcp__quota *q, const char *key)
{
    size_t len = strlen(key);
    pthread_mutex_lock(&q->mu);
    qentry *e = *find_locked(q, key, len);
    unsigned n = e ? e->count : 0;
    pthread_mutex_unlock(&q->mu);
    return n;
}

size_t mcp__quota_entries(mcp__quota *q)
{
    pthread_mutex_lock(&q->mu);
    size_t n = q->entries;
    pthread_mutex_unlock(&q->mu);
    return n;
}
