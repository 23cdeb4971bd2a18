/* mend-acp-agent-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>
#include <jsonrpc-glib.h>

#include "mend-acp-agent.h"
#include "mend-chat.h"
#include "mend-failure.h"
#include "mend-turn.h"

G_BEGIN_DECLS

/* What a session/update tells the chat about subagents. Keeps the Task
 * calls seen (id → description), bounded. */
typedef struct _MendAcpSubagents MendAcpSubagents;

MendAcpSubagents *mend_acp_subagents_new  (void);
void              mend_acp_subagents_free (MendAcpSubagents *subagents);
void              mend_acp_subagents_feed (MendAcpSubagents *subagents,
                                           MendChat         *chat,
                                           JsonObject       *params,
                                           JsonObject       *update);

/* Whether an update is the agent's output for the turn. */
gboolean          mend_acp_update_is_output (JsonObject *update);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendAcpSubagents, mend_acp_subagents_free)

/* One run of the agent. Async calls hold it, not the MendAcpAgent, so
 * that dropping the agent object ends the run. */
typedef struct
{
  gatomicrefcount    ref_count;
  MendAcpAgent      *self;        /* NULL once detached */
  GSubprocess       *subprocess;
  JsonrpcClient     *client;
  GSocketConnection *stdin_connection;
  GInputStream      *stderr_stream;
  GCancellable      *cancellable;
  gboolean           exited;
  gboolean           can_load;    /* agentCapabilities.loadSession */
} Child;

/* A request of the agent's, until it is answered. */
typedef struct
{
  Child    *child;
  GVariant *id;
  char     *method;
  char     *params;             /* JSON */
} Request;

struct _MendAcpAgent
{
  GObject           parent_instance;

  GStrv             argv;
  GStrv             environ_;
  char             *cwd;
  char             *session_id;
  char             *stop_reason;
  MendChat         *chat;       /* weak */
  MendAcpSubagents *subagents;

  Child            *child;
  gboolean          ready;      /* the session is open */
  gboolean          loading;    /* session/load replays history */
  GByteArray       *stderr_tail;
  guint             n_starts;
  guint             n_loads;
  guint             n_cancels;

  GTask            *task;       /* the attempt in flight */
  MendTurn         *task_turn;
  gulong            cancelled_id;
  gboolean          prompt_sent;
  gboolean          prompt_busy; /* a prompt the agent has not answered */

  GHashTable       *requests;   /* serial → Request */
  guint             last_request;
};

Child        *mend_acp_child_ref             (Child         *child);
void          mend_acp_child_unref           (Child         *child);
void          mend_acp_child_close           (Child         *child);
void          mend_acp_request_free          (Request       *request);
gboolean      mend_acp_request_reply         (Request       *request,
                                              const char    *json);

gboolean      mend_acp_agent_start_child     (MendAcpAgent  *self,
                                              GError       **error);
void          mend_acp_agent_child_exited    (MendAcpAgent  *self,
                                              Child         *child);
void          mend_acp_agent_maybe_prompt    (MendAcpAgent  *self);
void          mend_acp_agent_finish_task     (MendAcpAgent  *self,
                                              MendFailure   *failure,
                                              GError        *error);
void          mend_acp_agent_task_cancelled  (GCancellable  *cancellable,
                                              MendAcpAgent  *self);
void          mend_acp_agent_respond_default (MendAcpAgent  *self,
                                              guint          serial);
char         *mend_acp_agent_stderr_text     (MendAcpAgent  *self);

/* mend-acp-requests.c */
gboolean      mend_acp_agent_handle_call     (JsonrpcClient *client,
                                              const char    *method,
                                              GVariant      *id,
                                              GVariant      *params,
                                              Child         *child);
void          mend_acp_agent_cancel_permissions (MendAcpAgent *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Child, mend_acp_child_unref)

G_END_DECLS
