/*
 * One screening index per process (see lists.h): every engine run (the
 * scan's threads, assessCase calls) searches the same read-only index
 * instead of building its own. It is keyed by the store's current list
 * versions, so loading a new version makes the next acquire build a new
 * index; the old one is freed when its last user releases it.
 */
#include "screen/lists.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct shared_ix {
    aml_screening sc;             /* first: a screening pointer is the entry's */
    char key[AML_LISTS_KEY_MAX];  /* the list versions it was built from */
    int refs;                     /* users, plus one while it is the current index */
} shared_ix;

static pthread_mutex_t shared_mu = PTHREAD_MUTEX_INITIALIZER;
static shared_ix *shared_cur; /* the newest index built, or NULL */

int aml_lists_key(aml_store *s, char key[AML_LISTS_KEY_MAX], aml_err *err)
{
    key[0] = '\0';
    aml_st *st = aml_stmt(s, "SELECT v.list_name, v.version_id, v.file_sha256 FROM screening_list_versions v "
                             "WHERE v.version_id = (SELECT max(w.version_id) FROM screening_list_versions w "
                             "WHERE w.list_name = v.list_name) ORDER BY v.list_name");
    if (!st)
        return aml_errf(err, "%s", aml_errmsg(s));
    mcp_buf b;
    mcp_buf_init(&b, 0);
    while (aml_step(st) == AML_ROW)
        aml_buf_printf(&b, "%s:%lld:%s;", aml_col_text(st, 0), (long long)aml_col_int(st, 1), aml_col_text(st, 2));
    aml_reset(st);
    if (b.len)
        aml_sha256_hex(b.data, b.len, key);
    mcp_buf_cleanup(&b);
    return 0;
}

static void shared_unref(shared_ix *x)
{
    if (x && --x->refs == 0) {
        aml_screening_free(&x->sc);
        free(x);
    }
}

const aml_screening *aml_screening_acquire(aml_store *s, const char *key, aml_err *err)
{
    pthread_mutex_lock(&shared_mu);
    shared_ix *x = shared_cur;
    if (!x || strcmp(x->key, key) != 0) {
        x = calloc(1, sizeof *x);
        if (!x || aml_screening_load(s, &x->sc, err)) {
            if (!x)
                aml_errf(err, "out of memory");
            free(x);
            pthread_mutex_unlock(&shared_mu);
            return NULL;
        }
        snprintf(x->key, sizeof x->key, "%s", key);
        x->refs = 1;
        shared_unref(shared_cur);
        shared_cur = x;
    }
    x->refs++;
    pthread_mutex_unlock(&shared_mu);
    return &x->sc;
}

void aml_screening_release(const aml_screening *sc)
{
    if (!sc)
        return;
    pthread_mutex_lock(&shared_mu);
    shared_unref((shared_ix *)(void *)sc);
    pthread_mutex_unlock(&shared_mu);
}
