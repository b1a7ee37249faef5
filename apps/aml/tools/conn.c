/*
 * Tool calls' connections (see tools.h): the pool when the server has
 * one, else the single store under its lock (tests and benchmarks that
 * build an aml_app around one connection).
 */
#include "tools/tools.h"

aml_store *aml_app_acquire(aml_app *app)
{
    aml_store *s = app->pool ? aml_pool_acquire(app->pool) : app->store;
    if (!app->pool)
        aml_store_lock(s);
    aml_store_check(s); /* a session the server ended while idle: the call gets a new one */
    return s;
}

void aml_app_release(aml_app *app, aml_store *s)
{
    if (app->pool) {
        aml_pool_release(app->pool, s);
        return;
    }
    aml_store_unlock(app->store);
}

void aml_app_write_lock(aml_app *app, aml_store *s)
{
    if (app->pool)
        aml_pool_write_lock(app->pool, s);
}

void aml_app_write_unlock(aml_app *app)
{
    if (app->pool)
        aml_pool_write_unlock(app->pool);
}
