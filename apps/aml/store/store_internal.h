/*
 * Inside the store: what its files share. The layers above use store.h.
 */
#ifndef AML_STORE_INTERNAL_H
#define AML_STORE_INTERNAL_H

#include "store/store.h"

/** Runs the migrations from schema version `from` to AML_SCHEMA_VERSION (schema.c). */
int aml_store_migrate(aml_store *s, int64_t from, aml_err *err);

/** Finalizes every cached statement (after a rollback that removed tables they use). */
void aml_store_finalize_all(aml_store *s);

#endif /* AML_STORE_INTERNAL_H */
