/* mend-agent-host-private.h — what a chat lends its sender: the table an agent's parsers call
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-enums.h"
#include "mend-failure.h"
#include "mend-turn.h"

G_BEGIN_DECLS

/* What a chat lends the sender that runs its agent, and the parsers of
 * that agent's output (MendStreamObserver, the ACP subagent reader): they
 * call nothing of the chat's, or of its subagent retry's, but these. The
 * chat owns the flow; @chat is the chat itself, for the table's calls. */
typedef struct
{
  /* The app's turn whose attempt runs now, or %NULL. */
  MendTurn *(*get_turn)         (gpointer           chat);
  /* Output of the running app turn was seen: a later failure of the
   * attempt is partial. */
  void      (*output_seen)      (gpointer           chat);
  /* The agent's status line for the running app turn (its own retries),
   * or %NULL to clear it. */
  void      (*agent_status)     (gpointer           chat,
                                 const char        *text);
  /* A reader of the agent's output that the app runs itself (a stream
   * observer made for the chat) came or went: while one reads, a turn
   * with no sender is ended by what it reads. */
  void      (*reader_attached)  (gpointer           chat,
                                 gboolean           attached);

  /* The prompt the chat sends to continue a turn that gave up. */
  const char *(*continue_prompt) (gpointer        chat);

  /* The agent runs a turn of its own, not one the app asked for. */
  gboolean  (*get_own_turn)     (gpointer           chat);
  void      (*own_turn_began)   (gpointer           chat);
  void      (*own_turn_ended)   (gpointer           chat);

  /* Subagents. Each change returns whether the chat's subagents changed.
   * A start for an agent id that is known is a resume. */
  gboolean  (*subagent_started) (gpointer           chat,
                                 const char        *id,
                                 const char        *agent_id,
                                 const char        *name);
  /* A subagent ended, @state (FAILED with @failure, else %NULL): found by
   * @agent_id, else by @id, whichever the chat knows; one never seen
   * started that failed is made (see mend_subagent_retry_task_ended()). */
  gboolean  (*subagent_ended)   (gpointer           chat,
                                 const char        *id,
                                 const char        *agent_id,
                                 const char        *name,
                                 MendSubagentState  state,
                                 MendFailure       *failure);
  void      (*subagent_resumed) (gpointer           chat,
                                 const char        *agent_id);
} MendAgentHost;

G_END_DECLS
