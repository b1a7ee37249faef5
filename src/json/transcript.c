/*
 * The transcript format shared by the server's and the client's
 * --transcript files: one JSON line per frame, {"time","dir","msg"} with the
 * frame embedded when it is JSON, "raw" as a string when it is not, and
 * "rawBase64" when it is not even UTF-8; a frame that came over HTTP with
 * W3C trace context headers also has "traceparent" (and "tracestate").
 */
#include "util/util.h"
#include "json/json_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

FILE *mcp__transcript_open(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "a");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}

void mcp__transcript_line(FILE *f, pthread_mutex_t *mu, const char *dir, const char *frame, size_t len,
                          const mcp_json_parse_opts *popts)
{
    mcp__transcript_line_trace(f, mu, dir, frame, len, popts, NULL, NULL);
}

/* The line's W3C trace context from the HTTP headers, when there is one. */
static void put_trace(mcp_jw *w, const char *traceparent, const char *tracestate)
{
    if (!traceparent)
        return;
    mcp_jw_key(w, "traceparent");
    mcp_jw_string(w, traceparent);
    if (tracestate) {
        mcp_jw_key(w, "tracestate");
        mcp_jw_string(w, tracestate);
    }
}

void mcp__transcript_line_trace(FILE *f, pthread_mutex_t *mu, const char *dir, const char *frame, size_t len,
                                const mcp_json_parse_opts *popts, const char *traceparent, const char *tracestate)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[96];
    snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
    /* A frame that is JSON is embedded as is; anything else as a string. */
    mcp_buf b;
    mcp_buf_init(&b, 0);
    mcp_jw w;
    mcp_jw_init(&w, &b);
    mcp_jw_object_begin(&w);
    mcp_jw_key(&w, "time");
    mcp_jw_string(&w, when);
    mcp_jw_key(&w, "dir");
    mcp_jw_string(&w, dir);
    put_trace(&w, traceparent, tracestate);
    mcp_json_doc *doc = NULL;
    if (mcp_json_parse(&doc, frame, len, popts, NULL) == MCP_OK) {
        mcp_jw_key(&w, "msg");
        mcp_jw_value(&w, mcp_json_doc_root(doc));
        mcp_json_doc_free(doc);
    } else {
        mcp_jw_key(&w, "raw");
        if (mcp_jw_stringn(&w, frame, len) != MCP_OK) {
            /* Not UTF-8 either: record the bytes as base64. */
            mcp_buf_cleanup(&b);
            mcp_buf_init(&b, 0);
            mcp_jw_init(&w, &b);
            mcp_jw_object_begin(&w);
            mcp_jw_key(&w, "time");
            mcp_jw_string(&w, when);
            mcp_jw_key(&w, "dir");
            mcp_jw_string(&w, dir);
            put_trace(&w, traceparent, tracestate);
            mcp_jw_key(&w, "rawBase64");
            mcp_jw_base64(&w, frame, len);
        }
    }
    mcp_jw_object_end(&w);
    if (mcp_jw_finish(&w) == MCP_OK) {
        pthread_mutex_lock(mu);
        fwrite(b.data, 1, b.len, f);
        fputc('\n', f);
        fflush(f);
        pthread_mutex_unlock(mu);
    }
    mcp_buf_cleanup(&b);
}
