/*
 * libcurl, set up once for the whole library: the key fetcher and the
 * introspection client (auth/), the OAuth client (client/) and the HTTP
 * client transport (transport/) each call mcp__curl_init() before their
 * first transfer, and give every handle mcp__curl_defaults().
 */
#include "util/util.h"

#include <curl/curl.h>
#include <pthread.h>

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
