/* mend-subagent-retry-deprecated.c — MendSubagentRetry's methods under their old, event-like names
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-subagent-retry.h"

/**
 * mend_subagent_retry_started:
 * @self: a subagent retry
 * @id: the subagent's id
 * @agent_id: (nullable): the id the agent resumes it by
 * @name: (nullable): its description
 *
 * Notes that a top-level subagent started.
 *
 * Returns: (transfer none) (nullable): the subagent, or %NULL when an id
 *   was too long
 *
 * Deprecated: 1.0: Use [method@Mend.SubagentRetry.note_started] instead.
 */
MendSubagent *
mend_subagent_retry_started (MendSubagentRetry *self,
                             const char        *id,
                             const char        *agent_id,
                             const char        *name)
{
  return mend_subagent_retry_note_started (self, id, agent_id, name);
}

/**
 * mend_subagent_retry_failed:
 * @self: a subagent retry
 * @id: the subagent's id, or its agent id
 * @failure: what it failed on
 *
 * Notes that a subagent ended failed.
 *
 * Deprecated: 1.0: Use [method@Mend.SubagentRetry.note_failed] instead.
 */
void
mend_subagent_retry_failed (MendSubagentRetry *self,
                            const char        *id,
                            MendFailure       *failure)
{
  mend_subagent_retry_note_failed (self, id, failure);
}

/**
 * mend_subagent_retry_resumed:
 * @self: a subagent retry
 * @agent_id: the agent id of the subagent that runs again
 *
 * Notes that a subagent runs again.
 *
 * Deprecated: 1.0: Use [method@Mend.SubagentRetry.note_resumed] instead.
 */
void
mend_subagent_retry_resumed (MendSubagentRetry *self,
                             const char        *agent_id)
{
  mend_subagent_retry_note_resumed (self, agent_id);
}

/**
 * mend_subagent_retry_ended:
 * @self: a subagent retry
 * @id: the subagent's id, or its agent id
 * @state: how it ended: %MEND_SUBAGENT_COMPLETED or %MEND_SUBAGENT_CANCELLED
 *
 * Notes that a subagent ended other than by failing.
 *
 * Deprecated: 1.0: Use [method@Mend.SubagentRetry.note_ended] instead.
 */
void
mend_subagent_retry_ended (MendSubagentRetry *self,
                           const char        *id,
                           MendSubagentState  state)
{
  mend_subagent_retry_note_ended (self, id, state);
}

/**
 * mend_subagent_retry_retry:
 * @self: a subagent retry
 * @id: the subagent's id, or its agent id
 * @error: return location for a %MEND_RETRY_ERROR
 *
 * Sends the resume prompt now, as one attempt.
 *
 * Returns: %TRUE if the prompt was sent
 *
 * Deprecated: 1.0: Use [method@Mend.SubagentRetry.resume_now] instead.
 */
gboolean
mend_subagent_retry_retry (MendSubagentRetry  *self,
                           const char         *id,
                           GError            **error)
{
  return mend_subagent_retry_resume_now (self, id, error);
}
