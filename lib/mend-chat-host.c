/* mend-chat-host.c — the table a chat lends its sender and the parsers of its agent's output
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-chat-private.h"
#include "mend-subagent.h"
#include "mend-subagent-retry.h"
#include "mend-turn-private.h"

/* See mend-agent-host-private.h. Everything an agent reports reaches the
 * chat through here, and from here goes one way: to the chat's turn, its
 * agent's own turn, or its subagent retry. */

static MendTurn *
running_turn (MendChat *chat)
{
  MendTurn *turn = mend_chat_get_turn (chat);

  return turn != NULL && mend_turn_get_state (turn) == MEND_TURN_RUNNING ? turn : NULL;
}

static MendTurn *
host_get_turn (gpointer chat)
{
  return mend_chat_get_turn (chat);
}

static void
host_output_seen (gpointer chat)
{
  MendTurn *turn = running_turn (chat);

  if (turn != NULL)
    mend_turn_note_output (turn);
}

static void
host_agent_status (gpointer    chat,
                   const char *text)
{
  MendTurn *turn = running_turn (chat);

  if (turn != NULL)
    mend_turn_set_agent_status (turn, text);
}

static void
host_reader_attached (gpointer chat,
                      gboolean attached)
{
  mend_chat_reader_attached (chat, attached);
}

static const char *
host_continue_prompt (gpointer chat)
{
  return mend_chat_get_continue_prompt (chat);
}

static gboolean
host_get_own_turn (gpointer chat)
{
  return mend_chat_get_external_turn (chat);
}

static void
host_own_turn_began (gpointer chat)
{
  mend_chat_begin_external_turn (chat);
}

static void
host_own_turn_ended (gpointer chat)
{
  mend_chat_end_external_turn (chat);
}

/* What a subagent looks like before a change, to tell whether it changed. */
typedef struct
{
  MendSubagent      *subagent;
  MendSubagentState  state;
  MendRetryWait     *retry;
  gboolean           retryable;
} Snapshot;

static void
snapshot_take (Snapshot          *snapshot,
               MendSubagentRetry *subagents,
               const char        *id)
{
  MendSubagent *subagent = mend_subagent_retry_lookup (subagents, id);

  snapshot->subagent = subagent ? g_object_ref (subagent) : NULL;
  snapshot->state = subagent ? mend_subagent_get_state (subagent) : MEND_SUBAGENT_RUNNING;
  snapshot->retry = subagent ? mend_subagent_get_retry (subagent) : NULL;
  snapshot->retryable = subagent ? mend_subagent_get_retryable (subagent) : FALSE;
}

/* Compares with the subagent as it is now, and drops the snapshot. */
static gboolean
snapshot_changed (Snapshot          *snapshot,
                  MendSubagentRetry *subagents,
                  const char        *id)
{
  Snapshot now;
  gboolean changed;

  snapshot_take (&now, subagents, id);
  changed = now.subagent != snapshot->subagent ||
            now.state != snapshot->state ||
            now.retry != snapshot->retry ||
            now.retryable != snapshot->retryable;
  g_clear_object (&now.subagent);
  g_clear_object (&snapshot->subagent);

  return changed;
}

static gboolean
host_subagent_known (gpointer    chat,
                     const char *id)
{
  return mend_subagent_retry_lookup (mend_chat_get_subagents (chat), id) != NULL;
}

static gboolean
host_subagent_started (gpointer    chat,
                       const char *id,
                       const char *agent_id,
                       const char *name)
{
  return mend_subagent_retry_started (mend_chat_get_subagents (chat), id, agent_id, name) != NULL;
}

static gboolean
host_subagent_failed (gpointer     chat,
                      const char  *id,
                      MendFailure *failure)
{
  g_autoptr(MendSubagentRetry) subagents = g_object_ref (mend_chat_get_subagents (chat));
  Snapshot before;

  snapshot_take (&before, subagents, id);
  mend_subagent_retry_failed (subagents, id, failure);
  return snapshot_changed (&before, subagents, id);
}

static gboolean
host_subagent_ended (gpointer           chat,
                     const char        *id,
                     MendSubagentState  state)
{
  g_autoptr(MendSubagentRetry) subagents = g_object_ref (mend_chat_get_subagents (chat));
  Snapshot before;

  snapshot_take (&before, subagents, id);
  mend_subagent_retry_ended (subagents, id, state);
  return snapshot_changed (&before, subagents, id);
}

static void
host_subagent_resumed (gpointer    chat,
                       const char *agent_id)
{
  mend_subagent_retry_resumed (mend_chat_get_subagents (chat), agent_id);
}

const MendAgentHost mend_chat_agent_host = {
  .get_turn = host_get_turn,
  .output_seen = host_output_seen,
  .agent_status = host_agent_status,
  .reader_attached = host_reader_attached,
  .continue_prompt = host_continue_prompt,
  .get_own_turn = host_get_own_turn,
  .own_turn_began = host_own_turn_began,
  .own_turn_ended = host_own_turn_ended,
  .subagent_known = host_subagent_known,
  .subagent_started = host_subagent_started,
  .subagent_failed = host_subagent_failed,
  .subagent_ended = host_subagent_ended,
  .subagent_resumed = host_subagent_resumed,
};
