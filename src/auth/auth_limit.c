/*
 * Token buckets for request rate limits (per client address, per token
 * subject). Each key has a bucket holding up to `burst` tokens that refill
 * at `rate` per second; a request takes one or waits.
 *
 * The table is fixed-size: keys are hashed (with a random seed, so a peer
 * cannot aim collisions) into slots, probing a few neighbours. When they
 * are all taken by other keys, the slot whose bucket is fullest is reused:
 * a full bucket is the same as a fresh one, so forgetting it is free, and
 * forgetting a nearly full one only ever errs towards letting a request
 * through. Memory stays bounded whatever the number of peers.
 */
#include "auth/auth_internal.h"
#include "util/util.h"
#include "util/crypto_api.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#define PROBES 8u

typedef struct slot {
    uint64_t hash;      /* key hash; 0 = empty */
    double tokens;      /* tokens left at `last` */
    uint64_t last;      /* monotonic ms of the last refill */
} slot;

struct mcp__ratelimit {
    pthread_mutex_t mu; /* guards the slots */
    double rate;        /* tokens per second */
    double burst;       /* bucket size */
    slot *slots;        /* the table */
    unsigned mask;      /* slots - 1 (a power of two) */
    uint64_t seed;      /* hash seed */
};

mcp_status mcp__ratelimit_new(mcp__ratelimit **out, double rate, double burst, unsigned slots)
{
    if (!out || !(rate > 0) || !isfinite(rate))
        return MCP_ERR_INVALID_ARG;
    unsigned n = 64;
    while (n < slots && n < (1u << 20))
        n <<= 1;
    mcp__ratelimit *rl = mcp__calloc(1, sizeof *rl);
    if (!rl)
        return MCP_ERR_NOMEM;
    rl->slots = mcp__calloc(n, sizeof *rl->slots);
    if (!rl->slots) {
        mcp_free(rl);
        return MCP_ERR_NOMEM;
    }
    if (mcp__random(&rl->seed, sizeof rl->seed) != 0 && RAND_bytes((unsigned char *)&rl->seed, sizeof rl->seed) != 1)
        rl->seed = 0x9E3779B97F4A7C15ull;
    rl->mask = n - 1;
    rl->rate = rate;
    rl->burst = burst >= 1 ? burst : 1;
    pthread_mutex_init(&rl->mu, NULL);
    *out = rl;
    return MCP_OK;
}

void mcp__ratelimit_free(mcp__ratelimit *rl)
{
    if (!rl)
        return;
    pthread_mutex_destroy(&rl->mu);
    mcp_free(rl->slots);
    mcp_free(rl);
}

/* FNV-1a over the seed and the key, then a final mix. Never 0 (0 marks an empty slot). */
static uint64_t key_hash(uint64_t seed, const char *key, size_t len)
{
    uint64_t h = 1469598103934665603ull ^ seed;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)key[i]) * 1099511628211ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h ? h : 1;
}

static double level(const mcp__ratelimit *rl, const slot *s, uint64_t now)
{
    double t = s->tokens + (double)(now - s->last) * rl->rate / 1000.0;
    return t > rl->burst ? rl->burst : t;
}

unsigned mcp__ratelimit_take(mcp__ratelimit *rl, const char *key, size_t len, uint64_t now_ms)
{
    uint64_t h = key_hash(rl->seed, key, len);
    pthread_mutex_lock(&rl->mu);
    slot *s = NULL, *victim = NULL;
    double victim_level = -1;
    for (unsigned i = 0; i < PROBES && !s; i++) {
        slot *c = &rl->slots[(h + i) & rl->mask];
        if (c->hash == h) {
            s = c;
        } else if (c->hash == 0) {
            victim = c;
            victim_level = rl->burst + 1; /* an empty slot beats any bucket */
        } else {
            double l = level(rl, c, now_ms);
            if (l > victim_level) {
                victim = c;
                victim_level = l;
            }
        }
    }
    if (!s) {
        s = victim;
        s->hash = h;
        s->tokens = rl->burst;
        s->last = now_ms;
    }
    double t = level(rl, s, now_ms);
    s->last = now_ms;
    unsigned wait = 0;
    if (t >= 1) {
        s->tokens = t - 1;
    } else {
        s->tokens = t;
        double secs = ceil((1 - t) / rl->rate);
        wait = secs < 1 ? 1 : secs > 3600 ? 3600 : (unsigned)secs;
    }
    pthread_mutex_unlock(&rl->mu);
    return wait;
}
