/*
 * Incremental Server-Sent Events parser; see sse.h for the rules.
 *
 * A line that arrives whole inside one chunk is interpreted in place; only
 * a line split across chunks is copied into p->line first. Data lines are
 * appended to p->data, so an event of N bytes costs O(N) however it is cut.
 */
#include "transport/sse.h"

#include "util/util.h"

#include <stdio.h>
#include <string.h>

#define DEFAULT_MAX ((size_t)64 << 20)
#define KEEP_CAP ((size_t)1 << 20) /* buffers larger than this are released after use */

static const unsigned char BOM[3] = {0xEF, 0xBB, 0xBF};

void mcp__sse_init(mcp__sse *p, size_t max_line, size_t max_data, mcp__sse_event_fn on_event, void *user_data)
{
    memset(p, 0, sizeof *p);
    p->on_event = on_event;
    p->user_data = user_data;
    p->max_line = max_line ? max_line : DEFAULT_MAX;
    p->max_data = max_data ? max_data : DEFAULT_MAX;
    /* The data buffer holds a "\n" after each line: one byte more than the
     * joined data, whose last newline is dropped at dispatch. */
    mcp_buf_init(&p->line, p->max_line);
    mcp_buf_init(&p->data, p->max_data + 1);
    p->retry_ms = -1;
}

void mcp__sse_limits(mcp__sse *p, size_t max_line, size_t max_data)
{
    p->max_line = max_line ? max_line : DEFAULT_MAX;
    p->max_data = max_data ? max_data : DEFAULT_MAX;
    p->line.max = p->max_line;
    p->data.max = p->max_data + 1;
}

/* Drops a large buffer's memory, keeping small ones for the next event. */
static void trim(mcp_buf *b)
{
    if (b->cap > KEEP_CAP)
        mcp_buf_cleanup(b);
    else
        mcp_buf_reset(b);
}

void mcp__sse_reset(mcp__sse *p)
{
    mcp_buf_cleanup(&p->line);
    mcp_buf_cleanup(&p->data);
    p->type[0] = '\0';
    p->type_unknown = 0;
    p->id_pending = 0;
    p->cr = 0;
    p->bom = 0;
    p->error[0] = '\0';
}

void mcp__sse_cleanup(mcp__sse *p)
{
    mcp_buf_cleanup(&p->line);
    mcp_buf_cleanup(&p->data);
}

static mcp_status limit(mcp__sse *p, const char *what, size_t max)
{
    snprintf(p->error, sizeof p->error, "SSE %s longer than %zu bytes", what, max);
    return MCP_ERR_LIMIT;
}

/* A blank line: commit the id, and hand the event over when it has data. */
static mcp_status dispatch(mcp__sse *p)
{
    if (p->id_pending) {
        if (!p->has_id || strcmp(p->last_id, p->id_buf) != 0)
            p->ids++;
        memcpy(p->last_id, p->id_buf, sizeof p->last_id);
        p->has_id = 1;
        p->id_pending = 0;
    }
    mcp_status st = MCP_OK;
    if (p->data.len) {
        /* Every data line appended a "\n"; the joined data has none at the end. */
        size_t len = p->data.len - 1;
        p->data.data[len] = '\0';
        const char *type = p->type_unknown ? "\x01unknown" : p->type[0] ? p->type : "message";
        p->events++;
        st = p->on_event(p->user_data, type, p->data.data, len);
    }
    trim(&p->data);
    p->type[0] = '\0';
    p->type_unknown = 0;
    return st;
}

static int field_is(const char *name, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(name, want, n) == 0;
}

/* One complete line, without its terminator. */
static mcp_status line(mcp__sse *p, const char *s, size_t n)
{
    if (n == 0)
        return dispatch(p);
    if (s[0] == ':')
        return MCP_OK; /* a comment (keep-alives) */
    const char *colon = memchr(s, ':', n);
    size_t fn = colon ? (size_t)(colon - s) : n;
    const char *v = colon ? colon + 1 : s + n;
    size_t vn = (size_t)(s + n - v);
    if (vn && v[0] == ' ') {
        v++;
        vn--;
    }
    if (field_is(s, fn, "data")) {
        mcp_status st = mcp_buf_reserve(&p->data, vn + 1);
        if (st == MCP_ERR_LIMIT)
            return limit(p, "event data", p->max_data);
        if (st)
            return st;
        memcpy(p->data.data + p->data.len, v, vn);
        p->data.len += vn;
        p->data.data[p->data.len++] = '\n';
        p->data.data[p->data.len] = '\0';
    } else if (field_is(s, fn, "event")) {
        if (vn >= sizeof p->type) {
            p->type_unknown = 1;
        } else {
            memcpy(p->type, v, vn);
            p->type[vn] = '\0';
            /* A type with a NUL in it cannot equal any name we look for. */
            p->type_unknown = memchr(v, '\0', vn) != NULL;
        }
    } else if (field_is(s, fn, "id")) {
        if (memchr(v, '\0', vn))
            return MCP_OK; /* the standard says: ignore the field */
        if (vn > MCP__SSE_ID_MAX)
            return limit(p, "event id", MCP__SSE_ID_MAX);
        memcpy(p->id_buf, v, vn);
        p->id_buf[vn] = '\0';
        p->id_pending = 1;
    } else if (field_is(s, fn, "retry")) {
        unsigned long ms = 0;
        if (vn == 0)
            return MCP_OK;
        for (size_t i = 0; i < vn; i++) {
            if (v[i] < '0' || v[i] > '9')
                return MCP_OK; /* not all digits: ignored */
            if (ms <= MCP__SSE_RETRY_MAX)
                ms = ms * 10 + (unsigned long)(v[i] - '0');
        }
        p->retry_ms = (long)(ms > MCP__SSE_RETRY_MAX ? MCP__SSE_RETRY_MAX : ms);
    }
    return MCP_OK;
}

/* Index of the first CR or LF in s[0..n), or n. */
static size_t find_eol(const char *s, size_t n)
{
    const char *lf = memchr(s, '\n', n);
    size_t lim = lf ? (size_t)(lf - s) : n;
    const char *cr = memchr(s, '\r', lim);
    return cr ? (size_t)(cr - s) : lim;
}

mcp_status mcp__sse_feed(mcp__sse *p, const char *bytes, size_t n)
{
    const char *s = bytes, *end = bytes + n;
    p->error[0] = '\0';
    /* Skip a UTF-8 BOM at the very start, even when it arrives split. */
    while (p->bom < 3 && s < end) {
        if ((unsigned char)*s == BOM[p->bom]) {
            p->bom++;
            s++;
            continue;
        }
        /* Not a BOM after all: the bytes matched so far are line content. */
        if (p->bom && mcp_buf_append(&p->line, BOM, (size_t)p->bom) != MCP_OK)
            return MCP_ERR_NOMEM;
        p->bom = 3;
    }
    if (p->cr && s < end) {
        if (*s == '\n')
            s++;
        p->cr = 0;
    }
    while (s < end) {
        size_t k = find_eol(s, (size_t)(end - s));
        if (s + k == end) {
            /* No terminator yet: keep the partial line for the next chunk. */
            mcp_status st = mcp_buf_append(&p->line, s, k);
            if (st == MCP_ERR_LIMIT)
                return limit(p, "line", p->max_line);
            return st;
        }
        mcp_status st;
        if (p->line.len) {
            st = mcp_buf_append(&p->line, s, k);
            if (st == MCP_ERR_LIMIT)
                return limit(p, "line", p->max_line);
            if (st)
                return st;
            st = line(p, p->line.data, p->line.len);
            trim(&p->line);
        } else {
            if (k > p->max_line)
                return limit(p, "line", p->max_line);
            st = line(p, s, k);
        }
        if (st)
            return st;
        s += k;
        if (*s == '\r') {
            s++;
            if (s == end)
                p->cr = 1; /* an LF may start the next chunk */
            else if (*s == '\n')
                s++;
        } else {
            s++;
        }
    }
    return MCP_OK;
}
