/*
 * SAR drafts: a FinCEN-style draft built only from the case data and its
 * assessment (subject, activity period and amounts, activity codes, and a
 * narrative in introduction/body/conclusion form that answers who, what,
 * when, where, why and how, citing evidence transactions). Every sentence
 * is a template filled with stored facts; nothing is generated freely, so a
 * draft is reproducible from (assessment, template version).
 */
#ifndef AML_SAR_H
#define AML_SAR_H

#include "engine/cases.h"

#define AML_SAR_TEMPLATE_VERSION "1.0.0"
/* Narrative limit: 17,000 characters, the FinCEN SAR batch XML limit (five blocks of up to 4,000; docs/aml.md). */
#define AML_SAR_NARRATIVE_MAX 17000

/**
 * Builds the draftSar result for an assessed case: writes the structured
 * result to `w`, the narrative (for the text block) to `text`, and stores
 * the draft (sar_drafts; the version increases only when the content
 * changes). A case with no matched typology gives status "not_warranted"
 * and no narrative.
 * @return 0, or -1 on a store error.
 */
int aml_sar_build(aml_store *s, const aml_case *c, const aml_assessment *a, const aml_recommendation *r,
                  const char *actor, mcp_jw *w, mcp_buf *text, aml_err *err);

#endif /* AML_SAR_H */
