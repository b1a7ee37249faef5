/*
 * Operator settings kept in the case store (table `settings`, schema
 * migration 2): small key/value pairs such as the filer details of a FinCEN
 * SAR (`filer.*`), each with who set it and when. Set from the command line
 * (`mcp-server-aml config set KEY VALUE`); read by the engine.
 */
#ifndef AML_STORE_CONFIG_H
#define AML_STORE_CONFIG_H

#include "store/store.h"

#define AML_CONFIG_KEY_MAX 64
#define AML_CONFIG_VALUE_MAX 200

/** The value of `key` into out. @return 1 when set, 0 when not, -1 on a store error. */
int aml_config_get(aml_store *s, const char *key, char *out, size_t n);
/** Sets (or replaces) `key`; `actor` is recorded with it. @return 0 or -1. */
int aml_config_set(aml_store *s, const char *key, const char *value, const char *actor, aml_err *err);
/** Removes `key` (no-op when not set). @return 0 or -1. */
int aml_config_unset(aml_store *s, const char *key, aml_err *err);
/**
 * Calls fn for every setting whose key starts with `prefix` ("" for all),
 * in key order. @return 0 or -1.
 */
int aml_config_each(aml_store *s, const char *prefix,
                    void (*fn)(const char *key, const char *value, const char *set_by, const char *set_at, void *ud),
                    void *ud, aml_err *err);

#endif /* AML_STORE_CONFIG_H */
