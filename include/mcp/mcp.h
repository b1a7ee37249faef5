/*
 * libmcp: the Model Context Protocol in C. Umbrella header.
 *
 *   base.h  status codes, error detail, allocator hooks, buffers, version
 *   json.h  JSON parser (arena documents) and streaming writer
 *   rpc.h   JSON-RPC 2.0 messages
 *   schema.h JSON Schema 2020-12 / draft-07 validation
 *   server.h server: tools, connections (sans I/O), tool results
 *   transport.h stdio (and later HTTP) transports
 */
#ifndef MCP_MCP_H
#define MCP_MCP_H

#include "base.h"
#include "json.h"
#include "rpc.h"
#include "schema.h"
#include "server.h"
#include "transport.h"

#endif /* MCP_MCP_H */
