/* mend-chat-host.c — the table a chat lends its sender and the parsers of its agent's output
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-chat-private.h"
#include "mend-subagent-retry-private.h"
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

static gboolean
host_subagent_started (gpointer    chat,
                       const char *id,
                       const char *agent_id,
                       const char *name)
{
  return mend_subagent_retry_note_started (mend_chat_get_subagents (chat), id, agent_id, name) != NULL;
}

static gboolean
host_subagent_ended (gpointer           chat,
                     const char        *id,
                     const char        *agent_id,
                     const char        *name,
                     MendSubagentState  state,
                     MendFailure       *failure)
{
  return mend_subagent_retry_task_ended (mend_chat_get_subagents (chat), id, agent_id, name,
                                         state, failure);
}

static void
host_subagent_resumed (gpointer    chat,
                       const char *agent_id)
{
  mend_subagent_retry_note_resumed (mend_chat_get_subagents (chat), agent_id);
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
  .subagent_started = host_subagent_started,
  .subagent_ended = host_subagent_ended,
  .subagent_resumed = host_subagent_resumed,
};
