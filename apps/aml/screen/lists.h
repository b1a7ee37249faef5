/*
 * Screening lists in the case store (their own migration): importing a list
 * version from FollowTheMoney JSON lines or the screening CSV, showing
 * the lists and their versions, building the in-memory index from the
 * store, and the reviewed false hits ("dismissals").
 *
 * Callers sharing the store between threads hold aml_store_lock().
 */
#ifndef AML_SCREEN_LISTS_H
#define AML_SCREEN_LISTS_H

#include "screen/screen.h"
#include "store/store.h"

#define AML_LIST_NAME_MAX 64          /* bytes of a list name: [A-Za-z0-9_.-] */
#define AML_LIST_LINE_MAX (8u << 20)  /* bytes of one FtM line */
#define AML_LIST_MAX_LISTS 1000       /* lists one index serves */

/* What an import did. */
typedef struct aml_list_stats {
    uint64_t entities;  /* screened entities stored */
    uint64_t other;     /* FtM entities of other schemata (Sanction, Address, ...) left out */
    uint64_t skipped;   /* entities without a name, duplicate ids */
    int64_t version_id; /* the new version */
    char sha256[65];    /* of the file */
} aml_list_stats;

/** 1 when `name` is a usable list name. */
int aml_list_name_ok(const char *name);

/**
 * Loads `path` as a new version of list `list`: its entities replace the
 * list's, the version (time, format, file name and SHA-256, counts) is
 * kept. All or nothing: a malformed FtM line or CSV record fails the
 * import naming the line, and the store is left as it was.
 * @param format "ftm" or "csv".
 */
int aml_lists_import(aml_store *s, const char *list, const char *format, const char *path, aml_list_stats *st,
                     aml_err *err);

/** Writes {"lists": [{"name", "entities", "versions": [...]}]} . */
int aml_lists_show(aml_store *s, mcp_jw *w, aml_err *err);

/** The newest version id over all lists (0 when none): an index built at
 *  an older one is stale. */
int64_t aml_lists_version(aml_store *s);

/* An index over the store's lists. */
typedef struct aml_screening {
    aml_sc_index *ix;
    int64_t version;                              /* aml_lists_version() when built */
    char (*lists)[AML_LIST_NAME_MAX + 1];         /* list number -> name */
    size_t nlists;
} aml_screening;

/** Builds the index of every stored entity. entity user = entity_no. */
int aml_screening_load(aml_store *s, aml_screening *out, aml_err *err);
void aml_screening_free(aml_screening *sc);
/** The list number of a name, or -1. */
int aml_screening_list_no(const aml_screening *sc, const char *name);

/** Writes the stored FtM properties of an entity (raw JSON) as the value
 *  of the current key; {} when missing. */
void aml_lists_write_properties(aml_store *s, int64_t entity_no, mcp_jw *w);

/**
 * Records that entity `entity_id` of `list` is not `subject` (a
 * normalised name or a case subject id), reviewed by `actor` for
 * `reason`. Idempotent (a second review updates who and why).
 */
int aml_lists_dismiss(aml_store *s, const char *subject, const char *list, const char *entity_id,
                      const char *actor, const char *reason, aml_err *err);
/** 1 when that pair was dismissed. */
int aml_lists_dismissed(aml_store *s, const char *subject, const char *list, const char *entity_id);

/* ---- one index per process (shared.c) ---------------------------------- */

#define AML_LISTS_KEY_MAX 65 /* a lists key: SHA-256 hex and its NUL */

/**
 * The key of the store's current list versions: a digest of each list's
 * name, newest version id and file SHA-256, in list order; "" when no
 * list is loaded. Stores holding the same versions have the same key.
 * @return 0, or -1 on a store error.
 */
int aml_lists_key(aml_store *s, char key[AML_LISTS_KEY_MAX], aml_err *err);

/**
 * The process's index of the lists with `key` (aml_lists_key of `s`,
 * not ""): built from `s` on first use, and again when the key changes.
 * Read-only; several threads may search it at once, each with its own
 * scratch. Every acquire is paired with a release.
 * Thread-safe (a mutex; a build runs under it).
 * @return the index, or NULL on a store error or out of memory (err).
 */
const aml_screening *aml_screening_acquire(aml_store *s, const char *key, aml_err *err);
/** Gives back an index from aml_screening_acquire (NULL is harmless). */
void aml_screening_release(const aml_screening *sc);

#endif /* AML_SCREEN_LISTS_H */
