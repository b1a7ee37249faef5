/*
 * The verifier's HTTP: fetching a JWKS and asking an RFC 7662
 * introspection endpoint, with libcurl. Small, bounded and strict: https
 * only (http to a loopback host, for development and tests), no
 * redirects (a token must not wander), a time limit, and a cap on the
 * body so a hostile or broken server cannot make the verifier grow.
 */
#include "auth/auth_internal.h"
#include "util/util.h"

#include "util/curl_api.h"
#include <string.h>
#include <strings.h>

int mcp__auth_url_allowed(const char *url)
{
    if (!url)
        return 0;
    if (strncasecmp(url, "https://", 8) == 0)
        return url[8] != '\0' && url[8] != '/';
    if (strncasecmp(url, "http://", 7) != 0)
        return 0;
    static const char *const loopback[] = {"127.0.0.1", "localhost", "[::1]"};
    const char *h = url + 7;
    for (size_t i = 0; i < sizeof loopback / sizeof loopback[0]; i++) {
        size_t n = strlen(loopback[i]);
        if (strncasecmp(h, loopback[i], n) == 0 && (h[n] == '\0' || h[n] == ':' || h[n] == '/'))
            return 1;
    }
    return 0;
}

mcp_status mcp__form_encode(mcp_buf *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char e[3];
        mcp_status st;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~') {
            st = mcp_buf_append(out, &s[i], 1);
        } else if (c == ' ') {
            st = mcp_buf_append(out, "+", 1);
        } else {
            e[0] = '%';
            e[1] = hex[c >> 4];
            e[2] = hex[c & 15];
            st = mcp_buf_append(out, e, 3);
        }
        if (st)
            return st;
    }
    return MCP_OK;
}

typedef struct sink {
    mcp_buf *out;   /* where the body goes */
    size_t start;   /* its length before this request */
    size_t max;     /* cap on the body */
    int over;       /* the cap was hit */
    int nomem;      /* an append failed */
} sink;

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
    sink *s = ud;
    size_t len = size * n;
    if (s->out->len - s->start + len > s->max) {
        s->over = 1;
        return 0; /* aborts the transfer */
    }
    if (mcp_buf_append(s->out, p, len) != MCP_OK) {
        s->nomem = 1;
        return 0;
    }
    return len;
}

mcp_status mcp__auth_http(const char *url, const char *post, const char *user, const char *pass, const char *ca_file,
                          unsigned timeout_ms, size_t max_bytes, mcp_buf *out, long *status, mcp_error *err)
{
    if (!mcp__auth_url_allowed(url))
        return mcp__fail(err, MCP_ERR_INVALID_ARG, 0, 0, "only https URLs (or http to a loopback host) are fetched");
    CURLcode init = (CURLcode)mcp__curl_init();
    if (init != CURLE_OK)
        return mcp__fail(err, MCP_ERR_IO, 0, 0, "libcurl could not be initialised: %s", curl_easy_strerror(init));
    CURL *c = curl_easy_init();
    if (!c)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    sink s = {out, out->len, max_bytes, 0, 0};
    struct curl_slist *hdrs = curl_slist_append(NULL, "Accept: application/json");
    CURLcode rc = hdrs ? CURLE_OK : CURLE_OUT_OF_MEMORY;
#define SET(opt, val)                                                                                              \
    do {                                                                                                           \
        if (rc == CURLE_OK)                                                                                        \
            rc = curl_easy_setopt(c, opt, val);                                                                    \
    } while (0)
    SET(CURLOPT_URL, url);
    if (rc == CURLE_OK)
        rc = (CURLcode)mcp__curl_defaults(c);
    SET(CURLOPT_TIMEOUT_MS, (long)timeout_ms);
    SET(CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
    SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_bytes);
    SET(CURLOPT_WRITEFUNCTION, on_body);
    SET(CURLOPT_WRITEDATA, &s);
    SET(CURLOPT_HTTPHEADER, hdrs);
    if (ca_file)
        SET(CURLOPT_CAINFO, ca_file);
    if (post) {
        SET(CURLOPT_POSTFIELDS, post);
        SET(CURLOPT_POSTFIELDSIZE, (long)strlen(post));
    }
    if (user) {
        SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        SET(CURLOPT_USERNAME, user);
        SET(CURLOPT_PASSWORD, pass ? pass : "");
    }
#undef SET
    if (rc == CURLE_OK)
        rc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    curl_slist_free_all(hdrs);
    if (s.nomem || rc == CURLE_OUT_OF_MEMORY)
        return mcp__fail(err, MCP_ERR_NOMEM, 0, 0, "out of memory");
    if (s.over || rc == CURLE_FILESIZE_EXCEEDED)
        return mcp__fail(err, MCP_ERR_LIMIT, 0, 0, "the response is larger than %zu bytes", max_bytes);
    if (rc != CURLE_OK)
        return mcp__fail(err, MCP_ERR_IO, 0, 0, "request failed: %s", curl_easy_strerror(rc));
    *status = code;
    return MCP_OK;
}
