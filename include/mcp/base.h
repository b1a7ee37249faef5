/*
 * libmcp base: status codes, error detail, allocator hooks, growable
 * buffers and the library version.
 *
 * Everything else in libmcp builds on this header. It compiles as C99 and
 * as C++.
 *
 * Option structs and the ABI (SONAME libmcp.so.0; docs/design.md, "ABI and
 * option structs")
 *
 *   Structs the caller fills in and passes to the library (mcp_server_opts,
 *   mcp_tool_def, mcp_request_opts, every other `*_opts` and `*_def`,
 *   mcp_prompt_arg, mcp_annotations, mcp_allocator) may gain fields at
 *   their end in later releases. So that a program built against an older
 *   or newer header keeps working with the installed library, every
 *   function that takes one is exported as NAME_sized with one extra
 *   `size_t` per struct type, right after the struct pointer: the caller's
 *   sizeof of that struct. NAME itself is a macro in the header that passes
 *   sizeof(TYPE), so C and C++ callers write
 *
 *       mcp_server_opts o = {0};
 *       o.name = "hello";
 *       mcp_server_new(&srv, &o, &err);
 *
 *   and the size their header had travels to the library by itself.
 *   Bindings from other languages call the _sized functions with their own
 *   struct sizes. The library copies the caller's struct into a full-size
 *   one first:
 *   - a smaller size (an older header) gives the fields it lacks their
 *     defaults, as if they were zero;
 *   - a larger size (a newer header) is accepted when every byte past the
 *     struct this library knows is zero (the new fields left at their
 *     defaults), else the call fails with MCP_ERR_UNSUPPORTED and a message
 *     naming the struct ("mcp_server_opts has fields this libmcp 0.1.0 does
 *     not know: update libmcp");
 *   - size 0, or a size smaller than the struct had in libmcp 0.1.0, is
 *     MCP_ERR_INVALID_ARG.
 *   A NULL struct pointer means the defaults whatever the size says. An
 *   array of structs (mcp_prompt_def.args) is walked with the caller's
 *   element size. Functions that only write into a caller's options
 *   (mcp_auth_parse_arg, mcp_http_parse_listen) take the size too and
 *   write only fields it covers.
 *
 *   Zero-initialise such a struct as a whole (`= {0}` or memset), then set
 *   the fields you need: a zero field always means its documented default,
 *   and bytes a newer header added must be zero.
 *
 *   Structs the library hands out by pointer (mcp_call_report, given to a
 *   callback) may also grow at their end: read only the fields your header
 *   has, never copy them by value, never allocate them.
 *
 *   Structs the caller allocates and the library fills or keeps its state
 *   in (mcp_error, mcp_buf, mcp_jw, mcp_rpc_msg, mcp_rpc_id,
 *   mcp_schema_result, mcp_schema_error) are frozen while the SONAME is 0:
 *   their size and layout never change.
 *
 *   Status codes and other enum values are only appended, never renumbered.
 *   The shared library exports exactly the MCP_API functions of these
 *   headers, under the symbol version LIBMCP_0.
 */
#ifndef MCP_BASE_H
#define MCP_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Only symbols marked MCP_API are exported from the shared library. */
#if defined(_WIN32)
#define MCP_API
#elif defined(__GNUC__)
#define MCP_API __attribute__((visibility("default")))
#else
#define MCP_API
#endif

#define MCP_VERSION_MAJOR 0
#define MCP_VERSION_MINOR 1
#define MCP_VERSION_PATCH 0
#define MCP_VERSION_STRING "0.1.0"

/*
 * Status codes. MCP_OK is zero, every error is negative. Values are part of
 * the ABI: they are never renumbered, new ones are only appended.
 */
typedef enum mcp_status {
    MCP_OK = 0,
    MCP_ERR_NOMEM = -1,       /* an allocation failed */
    MCP_ERR_INVALID_ARG = -2, /* the caller passed a bad argument */
    MCP_ERR_PARSE = -3,       /* input is not well-formed JSON */
    MCP_ERR_LIMIT = -4,       /* a configured size, depth or count limit was hit */
    MCP_ERR_INVALID_MSG = -5, /* JSON that is not a valid JSON-RPC 2.0 message */
    MCP_ERR_NOT_FOUND = -6,   /* the named thing does not exist */
    MCP_ERR_TYPE = -7,        /* a value has the wrong JSON type */
    MCP_ERR_STATE = -8,       /* the object is not in a state that allows the call */
    MCP_ERR_IO = -9,          /* an operating-system I/O call failed */
    MCP_ERR_TIMEOUT = -10,    /* a time limit expired */
    MCP_ERR_CANCELLED = -11,  /* the operation was cancelled */
    MCP_ERR_CLOSED = -12,     /* the connection or object was closed */
    MCP_ERR_SCHEMA = -13,     /* a JSON Schema could not be compiled */
    MCP_ERR_UNSUPPORTED = -14, /* the feature, version or dialect is not supported */
    MCP_ERR_BUSY = -15,       /* a bounded queue is full; retry later */
    MCP_ERR_PROTOCOL = -16,   /* the peer answered with a JSON-RPC error */
    MCP_ERR_INTERNAL = -17,   /* a library invariant failed (a bug) */
    MCP_ERR_EXISTS = -18,     /* the name is already registered */
    MCP_ERR_AUTH = -19,       /* authorization failed */
    MCP_ERR_INVALID = -20,    /* the data is invalid for the operation (e.g. schema validation failed) */
    MCP_ERR_INPUT_REQUIRED = -21 /* the request needs client input first (2026-07-28 MRTR round) */
} mcp_status;

/**
 * Returns a short English description of a status code.
 *
 * @param status any value; unknown values give "unknown status".
 * @return a static string, never NULL.
 * Thread-safety: safe from any thread.
 */
MCP_API const char *mcp_status_str(mcp_status status);

/**
 * Returns the symbolic name of a status code, e.g. "MCP_ERR_NOMEM".
 *
 * @return a static string, never NULL ("MCP_ERR_UNKNOWN" for unknown values).
 * Thread-safety: safe from any thread.
 */
MCP_API const char *mcp_status_name(mcp_status status);

/* Sizes of the fixed buffers in mcp_error. */
#define MCP_ERROR_MESSAGE_MAX 256
#define MCP_ERROR_POINTER_MAX 128
#define MCP_ERROR_ID_MAX 80

/*
 * Detail about a failure. Functions that take an `mcp_error *err` fill it
 * when they fail (and leave it alone when they succeed); `err` may be NULL.
 * Filling it never allocates. Frozen for SONAME 0: the caller allocates it,
 * so its size and layout never change.
 */
typedef struct mcp_error {
    mcp_status status;                     /* same value the function returned */
    int rpc_code;                          /* JSON-RPC error code to answer with, 0 if none */
    size_t offset;                         /* byte offset into the input, when it applies */
    char pointer[MCP_ERROR_POINTER_MAX];   /* JSON Pointer of the offending value, "" if none */
    char message[MCP_ERROR_MESSAGE_MAX];   /* human-readable message, NUL-terminated */
    char id[MCP_ERROR_ID_MAX];             /* rpc decode: JSON text of the request id to answer
                                              with, "" when it could not be read (answer null) */
} mcp_error;

/**
 * Clears an error structure to "no error".
 *
 * @param err may be NULL (no-op).
 * Thread-safety: safe on distinct objects.
 */
MCP_API void mcp_error_clear(mcp_error *err);

/*
 * Allocator hooks. All memory the library allocates goes through these.
 * `realloc_fn(NULL, n)` must behave like malloc; `free_fn(NULL)` must be a
 * no-op. `user_data` is passed to each hook. Zero-initialise; may grow at
 * its end (see "Option structs and the ABI" above).
 */
typedef struct mcp_allocator {
    void *(*malloc_fn)(size_t size, void *user_data);             /* allocate */
    void *(*realloc_fn)(void *ptr, size_t size, void *user_data); /* resize */
    void (*free_fn)(void *ptr, void *user_data);                  /* release */
    void *user_data;                                              /* passed to each hook */
} mcp_allocator;

/**
 * Installs the allocator used by every later allocation in the library.
 *
 * Call it before any other libmcp function, or after every libmcp object
 * has been freed: memory must be freed by the allocator that made it.
 *
 * mcp_set_allocator(a) is a macro over mcp_set_allocator_sized(), which
 * also takes the caller's sizeof(mcp_allocator) (see "Option structs and
 * the ABI" above).
 *
 * @param a      the hooks to copy, or NULL to restore malloc/realloc/free.
 * @param a_size sizeof(mcp_allocator) as the caller knows it.
 * @return MCP_OK; MCP_ERR_INVALID_ARG when a hook in `a` is NULL or a_size
 *         is 0 or too small; MCP_ERR_UNSUPPORTED when `a` sets fields this
 *         library does not know.
 * Thread-safety: not thread-safe; call while no other thread uses libmcp.
 */
MCP_API mcp_status mcp_set_allocator_sized(const mcp_allocator *a, size_t a_size);
#define mcp_set_allocator(a) mcp_set_allocator_sized((a), sizeof(mcp_allocator))

/** Allocates through the installed allocator; NULL on failure or size 0. */
MCP_API void *mcp_malloc(size_t size);
/** Resizes through the installed allocator; NULL on failure (ptr unchanged). */
MCP_API void *mcp_realloc(void *ptr, size_t size);
/** Frees memory from mcp_malloc/mcp_realloc or returned by the library; NULL is a no-op. */
MCP_API void mcp_free(void *ptr);

/**
 * Returns the library version string, e.g. "0.1.0".
 * Thread-safety: safe from any thread.
 */
MCP_API const char *mcp_version(void);

/**
 * Returns the library version as (major << 16) | (minor << 8) | patch.
 * Thread-safety: safe from any thread.
 */
MCP_API unsigned mcp_version_number(void);

/*
 * A growable byte buffer. `data` is always NUL-terminated when non-NULL
 * (the terminator is not counted in `len`). `max` caps `len`; appending past
 * it fails with MCP_ERR_LIMIT and leaves the buffer unchanged. Frozen for
 * SONAME 0: the caller allocates it, so its size and layout never change.
 */
typedef struct mcp_buf {
    char *data; /* bytes, NUL-terminated, NULL until the first append */
    size_t len; /* bytes in use */
    size_t cap; /* bytes allocated (excluding nothing; >= len + 1 when data != NULL) */
    size_t max; /* largest allowed len; 0 means SIZE_MAX / 2 */
} mcp_buf;

/**
 * Initialises an empty buffer (no allocation).
 *
 * @param b   the buffer; must not be NULL.
 * @param max the largest length allowed, 0 for no practical limit.
 * Thread-safety: safe on distinct objects.
 */
MCP_API void mcp_buf_init(mcp_buf *b, size_t max);

/**
 * Releases the buffer's memory and leaves it empty and reusable.
 * @param b may be NULL (no-op).
 */
MCP_API void mcp_buf_cleanup(mcp_buf *b);

/**
 * Ensures room for `extra` more bytes (plus the terminator).
 *
 * @return MCP_OK, MCP_ERR_NOMEM, or MCP_ERR_LIMIT when len + extra > max.
 *         On failure the buffer is unchanged.
 */
MCP_API mcp_status mcp_buf_reserve(mcp_buf *b, size_t extra);

/**
 * Appends `n` bytes.
 *
 * @param p may be NULL only when n is 0.
 * @return MCP_OK, MCP_ERR_NOMEM or MCP_ERR_LIMIT; on failure unchanged.
 */
MCP_API mcp_status mcp_buf_append(mcp_buf *b, const void *p, size_t n);

/**
 * Takes the buffer's bytes: returns them (NUL-terminated, free with
 * mcp_free) and leaves the buffer empty. Returns NULL if nothing was ever
 * appended; `*len` (may be NULL) receives the length.
 */
MCP_API char *mcp_buf_take(mcp_buf *b, size_t *len);

/** Sets the length to 0, keeping the allocation. */
MCP_API void mcp_buf_reset(mcp_buf *b);

#ifdef __cplusplus
}
#endif

#endif /* MCP_BASE_H */
