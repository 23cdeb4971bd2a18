/* mend-acp-requests-private.h — what an ACP agent asks of the client (permissions, files)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-acp-rpc-private.h"

G_BEGIN_DECLS

/* The requests an Agent Client Protocol agent made of its client and
 * that are not answered yet, each under a number of its own (never 0,
 * never reused while kept) for MendAcpAgent::request and
 * mend_acp_agent_respond (). Each request keeps the JSON-RPC connection
 * it came on, to answer it there. */
typedef struct _MendAcpRequests MendAcpRequests;

MendAcpRequests *mend_acp_requests_new                (void);
void             mend_acp_requests_free               (MendAcpRequests *requests);

/* What the requests hold: kept for the owner, answers not written to
 * the agent yet, their bytes; and how many requests were answered at
 * once (refused) or not at all (dropped) for being past the bounds. */
typedef struct
{
  guint   n_kept;
  guint   n_unwritten;
  gsize   bytes;
  guint64 n_refused;
  guint64 n_dropped;
} MendAcpBacklog;

/* Keeps a request; @params is its parameters as JSON text. Returns its
 * number; 0 when it is past MEND_ACP_AGENT_MAX_REQUESTS or
 * MEND_ACP_AGENT_MAX_REQUEST_BYTES in flight: answered at once with a
 * JSON-RPC error then, or, while the agent has not taken as many answers
 * again, not at all. */
guint            mend_acp_requests_add                (MendAcpRequests *requests,
                                                       MendAcpRpc      *rpc,
                                                       JsonNode        *id,
                                                       const char      *method,
                                                       const char      *params);
/* Answers request @serial with @result_json and forgets it. %FALSE when
 * it is not kept, or @result_json is not JSON (it is kept then, to be
 * answered again). */
gboolean         mend_acp_requests_reply              (MendAcpRequests *requests,
                                                       guint            serial,
                                                       const char      *result_json);
/* Answers request @serial as the client answers what it does not
 * handle: a permission request with its reject option (or as cancelled),
 * anything else with a JSON-RPC error; forgets it. %FALSE when it is not
 * kept. */
gboolean         mend_acp_requests_deny               (MendAcpRequests *requests,
                                                       guint            serial);
/* Answers every permission request kept as cancelled. */
void             mend_acp_requests_cancel_permissions (MendAcpRequests *requests);
/* Forgets, unanswered, the requests that came on @rpc: its agent is
 * gone. */
void             mend_acp_requests_forget_rpc         (MendAcpRequests *requests,
                                                       MendAcpRpc      *rpc);
/* Forgets every request, unanswered. */
void             mend_acp_requests_clear              (MendAcpRequests *requests);
void             mend_acp_requests_get_backlog        (MendAcpRequests *requests,
                                                       MendAcpBacklog  *backlog);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendAcpRequests, mend_acp_requests_free)

G_END_DECLS
