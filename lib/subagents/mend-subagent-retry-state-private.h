/* mend-subagent-retry-state-private.h — the subagent retry's part of the chat's saved state
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-subagent-scheduler-private.h"

G_BEGIN_DECLS

/* Saved state: the subagents as a JSON array, and back. Restoring checks
 * every entry before it changes anything; pending waits keep their
 * wall-clock deadline (due at once if it passed). */
void     mend_subagent_retry_state_save         (MendSubagentScheduler  *self,
                                                 JsonBuilder            *builder);
gboolean mend_subagent_retry_state_restore      (MendSubagentScheduler  *self,
                                                 JsonArray              *array,
                                                 GError                **error);
/* Whether @array would be restored, if the list were empty: what
 * restoring checks before it changes anything, changing nothing. */
gboolean mend_subagent_retry_state_check        (JsonArray              *array,
                                                 GError                **error);
/* Once the queue is restored too: each subagent's queued resume prompt is
 * followed by its item again. */
void     mend_subagent_retry_state_find_prompts (MendSubagentScheduler  *self);
/* A restored turn that is a subagent's resume prompt, saved while it ran,
 * is followed as that subagent's again. */
void     mend_subagent_retry_state_find_turn    (MendSubagentScheduler  *self,
                                                 MendTurn               *turn);
/* The prompt id that a resume prompt's provenance names, read as JSON, or
 * %NULL: for what comes from outside (saved state, an app's submission),
 * never to follow a prompt the retry sent. */
char    *mend_subagent_retry_state_prompt_id    (const char             *provenance);

G_END_DECLS
