/* mend-acp-agent-private.h — subagents in ACP updates, for MendAcpAgent
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-acp-agent.h"
#include "mend-acp-requests-private.h"
#include "mend-subagent-retry.h"

G_BEGIN_DECLS

/* The most of an agent's error text held back from the output. */
#define MEND_ACP_AGENT_MAX_HELD_BYTES 8192
/* The most of an agent's words its retry status quotes. */
#define MEND_ACP_AGENT_MAX_STATUS_BYTES 200

/* What a session/update tells the chat's subagent retry. Keeps the Task
 * calls seen (id → description), bounded. */
typedef struct _MendAcpSubagents MendAcpSubagents;

MendAcpSubagents *mend_acp_subagents_new  (void);
void              mend_acp_subagents_free (MendAcpSubagents *subagents);
void              mend_acp_subagents_feed (MendAcpSubagents    *subagents,
                                           MendSubagentRetry   *retry,
                                           JsonObject          *params,
                                           JsonObject          *update);
/* An update of another session than the chat's: a subagent's own, as
 * claude-agent-acp sends its words (TRUE), or none of ours (FALSE). */
gboolean          mend_acp_subagents_feed_session (MendAcpSubagents *subagents,
                                                   const char       *session_id,
                                                   JsonObject       *update);

/* Whether an update is the agent's output for the turn. */
gboolean          mend_acp_update_is_output (JsonObject *update);
/* Whether an update is what a subagent wrote: not the turn's answer. */
gboolean          mend_acp_update_is_subagents (JsonObject *update);

/* For tests: what the agent's requests hold now. */
void              mend_acp_agent_get_request_backlog (MendAcpAgent   *self,
                                                      MendAcpBacklog *backlog);

/* For tests: how many times a started agent took its session up again
 * with session/load, and how many times a Stop sent session/cancel. */
guint             mend_acp_agent_get_n_loads         (MendAcpAgent   *self);
guint             mend_acp_agent_count_cancels       (MendAcpAgent   *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendAcpSubagents, mend_acp_subagents_free)

G_END_DECLS
