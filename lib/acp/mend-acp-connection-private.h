/* mend-acp-connection-private.h — the JSON-RPC connection to an ACP agent, and its callbacks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-acp-requests-private.h"
#include "mend-failure.h"

G_BEGIN_DECLS

/* One run of an Agent Client Protocol agent: the JSON-RPC connection on
 * its standard streams, the session it opens, the prompts sent in it. It knows nothing of its owner: what happens is reported
 * through the events handed in at the start, until the owner closes it.
 * The async calls hold the connection, not the owner. */
typedef struct _MendAcpConnection MendAcpConnection;

typedef struct
{
  /* The session's id, as session/new answered it, or %NULL when the
   * session to load could not be (a new one is opened then). */
  void (*session)  (gpointer     user_data,
                    const char  *session_id);
  /* The agent answered initialize: its agentInfo.name, or %NULL. */
  void (*agent)    (gpointer     user_data,
                    const char  *name);
  /* The session to load could not be: the agent said why in @failure. A
   * new one opens (session () tells its id), without the history. */
  void (*lost)     (gpointer     user_data,
                    MendFailure *failure);
  /* The session is open, loaded with session/load when @loaded: a prompt
   * may go. */
  void (*ready)    (gpointer     user_data,
                    gboolean     loaded);
  /* A session/update notification's parameters. Not the history that
   * session/load replays. */
  void (*update)   (gpointer     user_data,
                    JsonObject  *params);
  /* A request of the agent's, kept in the requests under @serial until
   * the owner answers it. */
  void (*request)  (gpointer     user_data,
                    const char  *method,
                    const char  *params,
                    guint        serial);
  /* Prompt @prompt was answered: with its stopReason (which may be
   * %NULL), or with a JSON-RPC error, as @failure. Another prompt may go
   * now. */
  void (*answered) (gpointer     user_data,
                    guint        prompt,
                    const char  *stop_reason,
                    MendFailure *failure);
  /* The agent sent a message past the parser's bounds, unread; the run
   * goes on. */
  void (*refused)  (gpointer     user_data,
                    MendFailure *failure);
  /* The run is over: the agent is gone (@failure %NULL), or the session
   * could not open, for the reason in @failure. The owner closes the
   * connection. */
  void (*ended)    (gpointer     user_data,
                    MendFailure *failure);
} MendAcpConnectionEvents;

/* Speaks to the agent whose standard output is @output and standard
 * input @input, and opens a session: loads @session_id when it is set and
 * the agent offers loadSession, or opens a new one. Its requests are kept
 * in @requests. */
MendAcpConnection *mend_acp_connection_start          (GInputStream                  *output,
                                                       GOutputStream                 *input,
                                                       const char                    *cwd,
                                                       const char                    *session_id,
                                                       MendAcpRequests               *requests,
                                                       const MendAcpConnectionEvents *events,
                                                       gpointer                       user_data,
                                                       GError                       **error);
/* Whether a prompt may go now: the session is open and no prompt waits
 * for its answer. */
gboolean           mend_acp_connection_can_prompt     (MendAcpConnection             *conn);
/* Sends @text as a session/prompt in @session_id; returns the prompt's
 * number for the answered event. */
guint              mend_acp_connection_prompt         (MendAcpConnection             *conn,
                                                       const char                    *session_id,
                                                       const char                    *text);
/* Sends session/cancel for @session_id, and answers the permission
 * requests kept as cancelled. */
void               mend_acp_connection_cancel         (MendAcpConnection             *conn,
                                                       const char                    *session_id);
/* Ends the run: forgets its requests, detaches the owner (no event
 * comes after) and drops the owner's reference. The owner ends the
 * agent's process. */
void               mend_acp_connection_close          (MendAcpConnection             *conn);

G_END_DECLS
