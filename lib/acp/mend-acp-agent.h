/* mend-acp-agent.h — MendAcpAgent: a sender that drives an Agent Client Protocol agent
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <gio/gio.h>

#include "mend-acp-profile.h"
#include "mend-agent.h"
#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

/**
 * MEND_ACP_AGENT_PROTOCOL_VERSION:
 *
 * The version of the Agent Client Protocol that [class@Mend.AcpAgent]
 * asks for in `initialize`.
 */
#define MEND_ACP_AGENT_PROTOCOL_VERSION 1

/**
 * MEND_ACP_AGENT_CANCEL_GRACE_MS:
 *
 * The default of [property@Mend.AcpAgent:cancel-grace-ms]: how long, in
 * milliseconds, an agent has to answer a prompt cancelled on a Stop.
 */
#define MEND_ACP_AGENT_CANCEL_GRACE_MS 10000

/**
 * MEND_ACP_AGENT_MAX_REQUESTS:
 *
 * How many requests of an agent's may be in flight at once: emitted as
 * [signal@Mend.AcpAgent::request] and not answered yet, or answered and
 * not yet taken by the agent. A request past it is answered at once with
 * a JSON-RPC error, without a signal; when the agent reads none of those
 * answers either, later requests go unanswered, so that an agent that
 * floods requests and never reads holds a bounded amount of memory.
 */
#define MEND_ACP_AGENT_MAX_REQUESTS 64

/**
 * MEND_ACP_AGENT_MAX_REQUEST_BYTES:
 *
 * How many bytes the requests in flight (their parameters, and the
 * answers the agent did not take yet) may hold at once; a request past
 * it is answered at once with a JSON-RPC error, as past
 * %MEND_ACP_AGENT_MAX_REQUESTS.
 */
#define MEND_ACP_AGENT_MAX_REQUEST_BYTES (1024 * 1024)

#define MEND_TYPE_ACP_AGENT (mend_acp_agent_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendAcpAgent, mend_acp_agent, MEND, ACP_AGENT, MendAgent)

MEND_AVAILABLE_IN_0_2
MendAcpAgent       *mend_acp_agent_new             (const char * const *argv);
MEND_AVAILABLE_IN_0_2
MendAcpAgent       *mend_acp_agent_new_claude_code (const char         *path);
MEND_AVAILABLE_IN_0_2
const char         *mend_acp_agent_get_stop_reason (MendAcpAgent       *self);
MEND_AVAILABLE_IN_0_2
MendAcpProfile     *mend_acp_agent_get_profile         (MendAcpAgent   *self);
MEND_AVAILABLE_IN_0_2
void                mend_acp_agent_set_profile         (MendAcpAgent   *self,
                                                        MendAcpProfile *profile);
MEND_AVAILABLE_IN_0_2
guint               mend_acp_agent_get_cancel_grace_ms (MendAcpAgent   *self);
MEND_AVAILABLE_IN_0_2
void                mend_acp_agent_set_cancel_grace_ms (MendAcpAgent   *self,
                                                        guint           cancel_grace_ms);
MEND_AVAILABLE_IN_0_2
gboolean            mend_acp_agent_respond         (MendAcpAgent       *self,
                                                    guint               request,
                                                    const char         *result_json);

G_END_DECLS
