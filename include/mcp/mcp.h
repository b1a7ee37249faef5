/*
 * libmcp: the Model Context Protocol in C. Umbrella header.
 *
 *   base.h  status codes, error detail, allocator hooks, buffers, version
 *   json.h  JSON parser (arena documents) and streaming writer
 *   rpc.h   JSON-RPC 2.0 messages
 *   schema.h JSON Schema 2020-12 / draft-07 validation
 */
#ifndef MCP_MCP_H
#define MCP_MCP_H

#include "base.h"
#include "json.h"
#include "rpc.h"
#include "schema.h"

#endif /* MCP_MCP_H */
