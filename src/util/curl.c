/*
 * libcurl, loaded on first use and set up once for the whole library: the
 * key fetcher and the introspection client (auth/), the OAuth client
 * (client/) and the HTTP client transport (transport/) each call
 * mcp__curl_init() before their first transfer, and give every handle
 * mcp__curl_defaults(). Why it is loaded rather than linked: curl_api.h.
 */
#include "util/util.h"
#include "util/curl_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* libcurl's ABI name (the same soname since 7.16). */
#define CURL_SONAME "libcurl.so.4"

static pthread_once_t g_load_once = PTHREAD_ONCE_INIT;
static mcp__curl_api g_api;
static char g_why[256];

/* Stand-ins for a library that could not be loaded: every call fails. */
static CURLcode no_global_init(long flags)
{
    (void)flags;
    return CURLE_FAILED_INIT;
}
static CURL *no_easy_init(void)
{
    return NULL;
}
static CURLcode no_easy_setopt(CURL *c, CURLoption o, ...)
{
    (void)c, (void)o;
    return CURLE_FAILED_INIT;
}
static CURLcode no_easy_perform(CURL *c)
{
    (void)c;
    return CURLE_FAILED_INIT;
}
static void no_easy_cleanup(CURL *c)
{
    (void)c;
}
static CURLcode no_easy_getinfo(CURL *c, CURLINFO i, ...)
{
    (void)c, (void)i;
    return CURLE_FAILED_INIT;
}
static const char *no_strerror(CURLcode rc)
{
    (void)rc;
    return g_why;
}
static void no_free(void *p)
{
    (void)p;
}
static CURLM *no_multi_init(void)
{
    return NULL;
}
static CURLMcode no_multi_handle(CURLM *m, CURL *c)
{
    (void)m, (void)c;
    return CURLM_BAD_HANDLE;
}
static CURLMcode no_multi_cleanup(CURLM *m)
{
    (void)m;
    return CURLM_BAD_HANDLE;
}
static CURLMsg *no_multi_info_read(CURLM *m, int *left)
{
    (void)m;
    if (left)
        *left = 0;
    return NULL;
}
static CURLMcode no_multi_perform(CURLM *m, int *running)
{
    (void)m;
    if (running)
        *running = 0;
    return CURLM_BAD_HANDLE;
}
static CURLMcode no_multi_poll(CURLM *m, struct curl_waitfd fds[], unsigned n, int ms, int *ret)
{
    (void)m, (void)fds, (void)n, (void)ms;
    if (ret)
        *ret = 0;
    return CURLM_BAD_HANDLE;
}
static const char *no_multi_strerror(CURLMcode rc)
{
    (void)rc;
    return g_why;
}
static CURLMcode no_multi_wakeup(CURLM *m)
{
    (void)m;
    return CURLM_BAD_HANDLE;
}
static struct curl_slist *no_slist_append(struct curl_slist *l, const char *s)
{
    (void)l, (void)s;
    return NULL;
}
static void no_slist_free_all(struct curl_slist *l)
{
    (void)l;
}
static CURLU *no_url(void)
{
    return NULL;
}
static void no_url_cleanup(CURLU *u)
{
    (void)u;
}
/* curl_url_get's handle became const in later libcurl versions; the stand-in
 * takes it without, and the table casts. */
static CURLUcode no_url_get(CURLU *u, CURLUPart what, char **part, unsigned flags)
{
    (void)u, (void)what, (void)flags;
    if (part)
        *part = NULL;
    return CURLUE_OUT_OF_MEMORY;
}
static CURLUcode no_url_set(CURLU *u, CURLUPart what, const char *part, unsigned flags)
{
    (void)u, (void)what, (void)part, (void)flags;
    return CURLUE_OUT_OF_MEMORY;
}

static const mcp__curl_api g_missing = {
    no_global_init, no_easy_init,     no_easy_setopt,   no_easy_perform,    no_easy_cleanup, no_easy_getinfo,
    no_strerror,    no_free,          no_multi_init,    no_multi_handle,    no_multi_handle, no_multi_cleanup,
    no_multi_info_read, no_multi_perform, no_multi_poll, no_multi_strerror, no_multi_wakeup, no_slist_append,
    no_slist_free_all, no_url,        no_url_cleanup,   (__typeof__(g_api.url_get))no_url_get,         no_url_set,
};

/* dlopen()s libcurl and looks up every function of the table; on any
 * failure the stand-ins answer, and g_why says what went wrong. */
static void load_once(void)
{
    void *h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
    const char *missing = NULL;
    void *sym;
    if (h) {
#define MCP__CURL_LOAD(n)                                                                                              \
    if (!missing) {                                                                                                    \
        if ((sym = dlsym(h, "curl_" #n)))                                                                              \
            memcpy(&g_api.n, &sym, sizeof sym);                                                                        \
        else                                                                                                           \
            missing = "curl_" #n;                                                                                      \
    }
        MCP__CURL_FNS(MCP__CURL_LOAD)
#undef MCP__CURL_LOAD
        if (!missing)
            return;
        snprintf(g_why, sizeof g_why, "libcurl (%s) lacks %s: version 7.68 or later is needed", CURL_SONAME, missing);
        dlclose(h);
    } else {
        const char *e = dlerror();
        snprintf(g_why, sizeof g_why, "libcurl could not be loaded (install libcurl4): %s", e ? e : CURL_SONAME);
    }
    g_api = g_missing;
}

const mcp__curl_api *mcp__curl_api_get(void)
{
    pthread_once(&g_load_once, load_once);
    return &g_api;
}

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static CURLcode g_init;

static void init_once(void)
{
    g_init = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int mcp__curl_init(void)
{
    pthread_once(&g_once, init_once);
    return (int)g_init;
}

int mcp__curl_defaults(void *easy)
{
    CURL *c = easy;
    CURLcode rc = curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    if (rc == CURLE_OK)
        rc = curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    return (int)rc;
}
