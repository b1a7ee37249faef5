/*
 * libmcp: the Model Context Protocol in C. Umbrella header.
 *
 *   base.h  status codes, error detail, allocator hooks, buffers, version
 *   json.h  JSON parser (arena documents) and streaming writer
 *   rpc.h   JSON-RPC 2.0 messages
 *   schema.h JSON Schema 2020-12 / draft-07 validation
 *   auth.h  authorization: bearer tokens (JWT, introspection), principals
 *   server.h server: tools, connections (sans I/O), tool results
 *   transport.h server transports: stdio and Streamable HTTP
 *   client.h client: stdio and Streamable HTTP, both eras, pending table
 */
#ifndef MCP_MCP_H
#define MCP_MCP_H

#include "base.h"
#include "json.h"
#include "rpc.h"
#include "schema.h"
#include "auth.h"
#include "server.h"
#include "transport.h"
#include "client.h"

#endif /* MCP_MCP_H */
