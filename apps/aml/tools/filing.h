/*
 * draftSar's `format: "fincen-xml"` (docs/aml.md, "Filing a SAR"): the
 * refusal when filer details are missing, and the batch XML as an embedded
 * application/xml resource beside the JSON draft.
 */
#ifndef AML_TOOLS_FILING_H
#define AML_TOOLS_FILING_H

#include "engine/fincen.h"

/** Writes the "format" property of draftSar's input schema. */
void aml_fincen_format_prop(mcp_jw *w);

/**
 * When filer settings are missing: a tool error listing them (and the
 * command that sets them), a short audit detail, and 1. Else 0.
 */
int aml_fincen_refuse_missing(aml_store *s, mcp_call *call, char *detail, size_t ndetail);

/**
 * Builds the batch XML of a draftSar result (its JSON in draft/n) and adds
 * it to the call as an embedded resource; a note goes to the text block.
 * A not-warranted draft gets no XML and a note saying so. @return 0, or 1
 * after a tool error.
 */
int aml_fincen_attach(aml_store *s, mcp_call *call, const char *draft, size_t n, mcp_buf *text, char *detail,
                      size_t ndetail);

#endif /* AML_TOOLS_FILING_H */
