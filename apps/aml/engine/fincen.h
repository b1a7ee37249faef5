/*
 * FinCEN SAR XML: a draftSar result written as a BSA E-Filing batch
 * (EFL_SARXBatchSchema.xsd 1.2, namespace www.fincen.gov/base, form type
 * SARX) with one Activity: transmitter, transmitter contact, filing
 * institution, contact office, transaction location and the subjects as
 * parties, the suspicious activity with its classifications, and the
 * narrative in blocks. Every value comes from the draft (itself built from
 * the case data) or from the filer settings the operator set
 * (`filer.*`, store/config.h); a missing filer detail refuses the XML,
 * naming what is missing, and is never filled in.
 */
#ifndef AML_FINCEN_H
#define AML_FINCEN_H

#include "engine/cases.h"

/* The batch narrative: at most 17,000 characters, in blocks of at most 4,000 (ActivityNarrativeInformation). */
#define AML_FINCEN_NARRATIVE_MAX 17000
#define AML_FINCEN_NARRATIVE_BLOCK 4000

/* One filer setting. */
typedef struct aml_filer_key {
    const char *key;         /* "filer.name", ... */
    const char *what;        /* what it is, for messages and docs */
    int required;            /* needed for the XML */
} aml_filer_key;

/** The filer settings (NULL-terminated). */
const aml_filer_key *aml_filer_keys(void);

/**
 * Checks a value for a filer key before it is stored.
 * @return 0, or -1 with the reason in msg ("unknown key", "TIN must be 9 digits", ...).
 */
int aml_filer_check(const char *key, const char *value, char *msg, size_t n);

/**
 * Lists the required filer settings that are not set, comma-separated
 * (with what each is when `described`), into `missing`.
 * @return how many are missing (0: complete), or -1.
 */
int aml_filer_missing(aml_store *s, int described, mcp_buf *missing);

/**
 * Sets a fictitious filer marked as demo data (filer.demo = "true") when no
 * filer name is set yet: what `gen --db` and the in-memory demo bank carry
 * so that their drafts validate out of the box. @return 0 or -1.
 */
int aml_filer_set_demo(aml_store *s, aml_err *err);

/**
 * Writes the batch XML for a draftSar result (the JSON of a draft with
 * status "draft") into xml, with `filing_time` as the filing date.
 * @return 0; 1 when filer settings are missing (their list in err); -1 on
 *         another error (err says why: not a draft, narrative too long, ...).
 */
int aml_fincen_xml(aml_store *s, const char *draft_json, size_t n, int64_t filing_time, mcp_buf *xml,
                   aml_err *err);

#endif /* AML_FINCEN_H */
