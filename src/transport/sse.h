/*
 * Incremental Server-Sent Events parser (the WHATWG "event stream
 * interpretation"), sans-I/O: bytes in, events out through a callback.
 * Used by the HTTP client transport for every text/event-stream body;
 * fuzzed by tests/fuzz/fuzz_sse.c. Internal to libmcp.
 *
 * What it does:
 *   - lines end with CRLF, LF or a lone CR, also when a chunk boundary
 *     falls between the CR and the LF; a UTF-8 BOM at the start is skipped;
 *   - `data` lines are joined with "\n"; `event` sets the type (default
 *     "message"); `id` sets the last event id (ignored when it holds a NUL);
 *     `retry` (ASCII digits only) sets the reconnection delay; lines
 *     starting with ':' are comments; unknown fields are ignored;
 *   - a blank line commits the id and dispatches the event when it had
 *     a data line (a lone "data:" gives an event with empty data, as in
 *     the priming event "id: X\ndata:"; callers skip those);
 *   - an unfinished event at the end of the stream is discarded (nothing
 *     to call).
 * Every size the peer controls is bounded: a line, an event's data and an
 * id; passing a bound fails the feed with MCP_ERR_LIMIT and a message.
 */
#ifndef MCP_SSE_H
#define MCP_SSE_H

#include "mcp/base.h"

#include <stddef.h>

#define MCP__SSE_ID_MAX 256   /* longest event id kept (it is sent back in Last-Event-ID) */
#define MCP__SSE_TYPE_MAX 64  /* longer event types are kept as "unknown" */
#define MCP__SSE_RETRY_MAX 600000ul /* `retry` values above this (10 minutes) are clamped */

/*
 * One complete event. `type` is "message" when the stream named none;
 * `data` is NUL-terminated (data[len] == '\0') and may contain NULs.
 * Both are valid during the call only. Return MCP_OK to go on; any other
 * status stops the feed, which returns it.
 */
typedef mcp_status (*mcp__sse_event_fn)(void *user_data, const char *type, const char *data, size_t len);

typedef struct mcp__sse {
    mcp__sse_event_fn on_event;     /* the event callback */
    void *user_data;                /* passed to it */
    size_t max_line;                /* longest line accepted, without its terminator */
    size_t max_data;                /* largest joined data of one event */
    mcp_buf line;                   /* the line being assembled across chunks */
    mcp_buf data;                   /* data lines of the event being built, each + "\n" */
    char type[MCP__SSE_TYPE_MAX];   /* event type of the event being built ("" = message) */
    int type_unknown;               /* the type was too long to keep: matches nothing */
    char id_buf[MCP__SSE_ID_MAX + 1]; /* id field of the event being built */
    char last_id[MCP__SSE_ID_MAX + 1]; /* committed last event id (at dispatch) */
    int has_id;                     /* last_id was set by the stream (it may be "") */
    int id_pending;                 /* id_buf was set since the last dispatch */
    long retry_ms;                  /* last valid `retry`, or -1 */
    unsigned events;                /* events dispatched (with data), for the caller */
    unsigned ids;                   /* times last_id changed, for the caller */
    int cr;                         /* the previous chunk ended in CR: skip a leading LF */
    int bom;                        /* bytes of the BOM matched so far; 3 when done */
    char error[128];                /* why the last feed failed, "" otherwise */
} mcp__sse;

/*
 * Prepares a parser. `max_line` and `max_data` bound what the peer may
 * send (0 means 64 MiB each). No allocation until bytes arrive.
 */
void mcp__sse_init(mcp__sse *p, size_t max_line, size_t max_data, mcp__sse_event_fn on_event, void *user_data);

/* Changes the bounds (before the first feed of a stream). */
void mcp__sse_limits(mcp__sse *p, size_t max_line, size_t max_data);

/*
 * Parses `n` more bytes of the stream, calling on_event for each complete
 * event. Returns MCP_OK; MCP_ERR_LIMIT (a bound was passed; p->error says
 * which); MCP_ERR_NOMEM; or the first non-OK status on_event returned.
 * After a failure the parser must be reset or cleaned up.
 */
mcp_status mcp__sse_feed(mcp__sse *p, const char *bytes, size_t n);

/*
 * Starts a new stream (a reconnection): drops the partial line and event,
 * keeps the last event id and the retry delay.
 */
void mcp__sse_reset(mcp__sse *p);

/* Frees the parser's buffers. */
void mcp__sse_cleanup(mcp__sse *p);

#endif /* MCP_SSE_H */
