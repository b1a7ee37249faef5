/*
 * The connection pool (see pool.h): a stack of free connections under a
 * mutex and a condition variable, and the process's write lock.
 */
#include "store/pool.h"

#include <pthread.h>
#include <stdlib.h>

struct aml_pool {
    pthread_mutex_t mu;        /* guards nfree and freel */
    pthread_cond_t cv;         /* signalled when a connection is released */
    pthread_mutex_t wmu;       /* the write lock */
    unsigned n;                /* connections */
    unsigned nfree;            /* connections in freel */
    unsigned peak;             /* the most connections lent at once */
    aml_store **all;           /* every connection; all[0] is the first */
    aml_store **freel;         /* free connections (a stack) */
};

/* Opens the connections after the first; 0 or -1 with err. */
static int open_rest(aml_pool *p, const char *path, unsigned flags, unsigned size, aml_err *err)
{
    for (unsigned i = 1; i < size; i++) {
        if (aml_store_open(&p->all[i], path, flags & ~AML_OPEN_CHECK, err))
            return -1;
        p->n++;
    }
    return 0;
}

int aml_pool_new(aml_pool **out, aml_store *first, const char *path, unsigned flags, unsigned size, aml_err *err)
{
    *out = NULL;
    if (size < 1 || aml_store_is_memory(first) || !path)
        size = 1;
    if (size > AML_POOL_MAX)
        size = AML_POOL_MAX;
    aml_pool *p = calloc(1, sizeof *p);
    if (p) {
        p->all = calloc(size, sizeof *p->all);
        p->freel = calloc(size, sizeof *p->freel);
    }
    if (!p || !p->all || !p->freel) {
        if (p) {
            free(p->all);
            free(p->freel);
        }
        free(p);
        aml_store_close(first);
        return aml_errf(err, "out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    pthread_mutex_init(&p->wmu, NULL);
    p->all[0] = first;
    p->n = 1;
    if (open_rest(p, path, flags, size, err)) {
        aml_pool_free(p);
        return -1;
    }
    for (unsigned i = 0; i < p->n; i++)
        p->freel[p->nfree++] = p->all[p->n - 1 - i];
    *out = p;
    return 0;
}

void aml_pool_free(aml_pool *p)
{
    if (!p)
        return;
    for (unsigned i = 0; i < p->n; i++)
        aml_store_close(p->all[i]);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->wmu);
    free(p->all);
    free(p->freel);
    free(p);
}

unsigned aml_pool_size(const aml_pool *p)
{
    return p->n;
}

unsigned aml_pool_peak(aml_pool *p)
{
    pthread_mutex_lock(&p->mu);
    unsigned v = p->peak;
    pthread_mutex_unlock(&p->mu);
    return v;
}

aml_store *aml_pool_first(aml_pool *p)
{
    return p->all[0];
}

aml_store *aml_pool_acquire(aml_pool *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->nfree == 0)
        pthread_cond_wait(&p->cv, &p->mu);
    aml_store *s = p->freel[--p->nfree];
    if (p->n - p->nfree > p->peak)
        p->peak = p->n - p->nfree;
    pthread_mutex_unlock(&p->mu);
    return s;
}

void aml_pool_release(aml_pool *p, aml_store *s)
{
    if (!s)
        return;
    aml_store_idle(s);
    pthread_mutex_lock(&p->mu);
    p->freel[p->nfree++] = s;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void aml_pool_write_lock(aml_pool *p, aml_store *s)
{
    pthread_mutex_lock(&p->wmu);
    if (s && !aml_in_tx(s))
        aml_store_idle(s);
}

void aml_pool_write_unlock(aml_pool *p)
{
    pthread_mutex_unlock(&p->wmu);
}
