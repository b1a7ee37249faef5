/*
 * libcurl, loaded on first use (curl.c). libmcp does not link libcurl: a
 * server that never fetches a JWKS, introspects a token or acts as a
 * client never maps it, nor OpenSSL's TLS, Kerberos, LDAP, SSH and the
 * rest of its tree (about 2 MB of resident memory in an HTTP server).
 * The first curl call of the process dlopen()s libcurl.so.4; if it is
 * missing, every call fails cleanly (no handle, CURLE_FAILED_INIT) and
 * curl_easy_strerror() says why.
 *
 * Include this header instead of <curl/curl.h>: it routes the curl_*
 * names the library uses through the table of the loaded library.
 */
#ifndef MCP_UTIL_CURL_API_H
#define MCP_UTIL_CURL_API_H

/* The type-checking wrappers of <curl/typecheck-gcc.h> are macros around
 * the function names, which become table lookups below. */
#ifndef CURL_DISABLE_TYPECHECK
#define CURL_DISABLE_TYPECHECK 1
#endif
#include <curl/curl.h>

#define MCP__CURL_FNS(X)                                                                                               \
    X(global_init)                                                                                                     \
    X(easy_init)                                                                                                       \
    X(easy_setopt)                                                                                                     \
    X(easy_perform)                                                                                                    \
    X(easy_cleanup)                                                                                                    \
    X(easy_getinfo)                                                                                                    \
    X(easy_strerror)                                                                                                   \
    X(free)                                                                                                            \
    X(multi_init)                                                                                                      \
    X(multi_add_handle)                                                                                                \
    X(multi_remove_handle)                                                                                             \
    X(multi_cleanup)                                                                                                   \
    X(multi_info_read)                                                                                                 \
    X(multi_perform)                                                                                                   \
    X(multi_poll)                                                                                                      \
    X(multi_strerror)                                                                                                  \
    X(multi_wakeup)                                                                                                    \
    X(slist_append)                                                                                                    \
    X(slist_free_all)                                                                                                  \
    X(url)                                                                                                             \
    X(url_cleanup)                                                                                                     \
    X(url_get)                                                                                                         \
    X(url_set)

typedef struct mcp__curl_api {
#define MCP__CURL_FIELD(n) __typeof__(&curl_##n) n;
    MCP__CURL_FNS(MCP__CURL_FIELD)
#undef MCP__CURL_FIELD
} mcp__curl_api;

/* The loaded library's functions, or stand-ins that fail when it could not
 * be loaded; loads it on the first call (thread-safe). Never NULL. */
const mcp__curl_api *mcp__curl_api_get(void);

/* <curl/curl.h> wraps these two in pass-through macros of its own. */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_global_init (mcp__curl_api_get()->global_init)
#define curl_easy_init (mcp__curl_api_get()->easy_init)
#define curl_easy_setopt (mcp__curl_api_get()->easy_setopt)
#define curl_easy_perform (mcp__curl_api_get()->easy_perform)
#define curl_easy_cleanup (mcp__curl_api_get()->easy_cleanup)
#define curl_easy_getinfo (mcp__curl_api_get()->easy_getinfo)
#define curl_easy_strerror (mcp__curl_api_get()->easy_strerror)
#define curl_free (mcp__curl_api_get()->free)
#define curl_multi_init (mcp__curl_api_get()->multi_init)
#define curl_multi_add_handle (mcp__curl_api_get()->multi_add_handle)
#define curl_multi_remove_handle (mcp__curl_api_get()->multi_remove_handle)
#define curl_multi_cleanup (mcp__curl_api_get()->multi_cleanup)
#define curl_multi_info_read (mcp__curl_api_get()->multi_info_read)
#define curl_multi_perform (mcp__curl_api_get()->multi_perform)
#define curl_multi_poll (mcp__curl_api_get()->multi_poll)
#define curl_multi_strerror (mcp__curl_api_get()->multi_strerror)
#define curl_multi_wakeup (mcp__curl_api_get()->multi_wakeup)
#define curl_slist_append (mcp__curl_api_get()->slist_append)
#define curl_slist_free_all (mcp__curl_api_get()->slist_free_all)
#define curl_url (mcp__curl_api_get()->url)
#define curl_url_cleanup (mcp__curl_api_get()->url_cleanup)
#define curl_url_get (mcp__curl_api_get()->url_get)
#define curl_url_set (mcp__curl_api_get()->url_set)

#endif
