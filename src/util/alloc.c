/*
 * Allocator hooks. Every allocation in libmcp goes through mcp_malloc,
 * mcp_realloc and mcp_free, so an embedder can count, limit or fail them
 * (the test suite's failing-allocator mode does exactly that).
 */
#include "util/abi.h"
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

static void *default_malloc(size_t size, void *ud)
{
    (void)ud;
    return malloc(size);
}

static void *default_realloc(void *ptr, size_t size, void *ud)
{
    (void)ud;
    return realloc(ptr, size);
}

static void default_free(void *ptr, void *ud)
{
    (void)ud;
    free(ptr);
}

static mcp_allocator g_alloc = {default_malloc, default_realloc, default_free, NULL};

mcp_status mcp_set_allocator_sized(const mcp_allocator *a, size_t a_size)
{
    mcp_allocator a_copy;
    mcp_status ost = MCP__OPTS_IN(mcp_allocator, &a_copy, a, a_size, NULL);
    if (ost)
        return ost;
    if (a)
        a = &a_copy;
    if (!a) {
        g_alloc.malloc_fn = default_malloc;
        g_alloc.realloc_fn = default_realloc;
        g_alloc.free_fn = default_free;
        g_alloc.user_data = NULL;
        return MCP_OK;
    }
    if (!a->malloc_fn || !a->realloc_fn || !a->free_fn)
        return MCP_ERR_INVALID_ARG;
    g_alloc = *a;
    return MCP_OK;
}

void *mcp_malloc(size_t size)
{
    /* A zero-size request would be implementation-defined in malloc; the
     * library never needs one, so it is treated as a failure. */
    if (size == 0)
        return NULL;
    return g_alloc.malloc_fn(size, g_alloc.user_data);
}

void *mcp_realloc(void *ptr, size_t size)
{
    if (size == 0)
        return NULL;
    return g_alloc.realloc_fn(ptr, size, g_alloc.user_data);
}

void mcp_free(void *ptr)
{
    if (ptr)
        g_alloc.free_fn(ptr, g_alloc.user_data);
}

void *mcp__calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    void *p = mcp_malloc(n * size);
    if (p)
        memset(p, 0, n * size);
    return p;
}

char *mcp__strndup(const char *s, size_t n)
{
    if (n == SIZE_MAX)
        return NULL;
    char *p = mcp_malloc(n + 1);
    if (!p)
        return NULL;
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *mcp__strdup(const char *s)
{
    return s ? mcp__strndup(s, strlen(s)) : NULL;
}
