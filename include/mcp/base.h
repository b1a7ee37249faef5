/*
 * libmcp base: status codes, error detail, allocator hooks, growable
 * buffers and the library version.
 *
 * Everything else in libmcp builds on this header. It compiles as C99 and
 * as C++.
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
 * Filling it never allocates.
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
 * no-op. `user_data` is passed to each hook.
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
 * @param a the hooks to copy, or NULL to restore malloc/realloc/free.
 * @return MCP_OK, or MCP_ERR_INVALID_ARG when a hook in `a` is NULL.
 * Thread-safety: not thread-safe; call while no other thread uses libmcp.
 */
MCP_API mcp_status mcp_set_allocator(const mcp_allocator *a);

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
 * it fails with MCP_ERR_LIMIT and leaves the buffer unchanged.
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
