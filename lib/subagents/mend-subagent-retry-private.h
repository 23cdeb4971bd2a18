/* mend-subagent-retry-private.h — what the chat tells its subagent retry, and how it sends its prompts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-clock.h"
#include "mend-error-policy.h"
#include "mend-queue.h"
#include "mend-queue-item.h"
#include "mend-subagent-retry.h"
#include "mend-turn.h"

G_BEGIN_DECLS

/* Sends a resume prompt, as the chat that owns the retry does: runs it as
 * the chat's turn now when nothing runs, else queues it in the room kept
 * for resume prompts. Its queue item is set in @item before anyone hears
 * of it (see mend_queue_add_prompt()): a turn that starts from it is told
 * to mend_subagent_retry_prompt_started() before anyone else hears of it. */
typedef gboolean (*MendSubagentSubmitFunc) (const char     *text,
                                            const char     *provenance,
                                            MendQueueItem **item,
                                            gpointer        user_data,
                                            GError        **error);

/* Made by the chat that owns it, which the retry never calls but through
 * @submit; @user_data (the chat) is not referenced. Until it is disposed,
 * the retry sends its prompts through @submit. */
MendSubagentRetry *mend_subagent_retry_new (MendQueue              *queue,
                                            MendClock              *clock,
                                            MendErrorPolicy        *resume_policy,
                                            const char             *chat_id,
                                            MendSubagentSubmitFunc  submit,
                                            gpointer                user_data);

/* Whether the agent runs a turn of its own: a prompt due then is held
 * until mend_subagent_retry_release_held(). */
void     mend_subagent_retry_set_external_turn (MendSubagentRetry *self,
                                                gboolean           external_turn);

/* What the chat tells its subagent retry, each before the chat's own
 * signal for it: a turn started from a queue item (any item: the retry
 * knows its own), a turn ended, Stop, close, the agent's own turn ended. */
void     mend_subagent_retry_prompt_started (MendSubagentRetry *self,
                                             MendQueueItem     *item,
                                             MendTurn          *turn);
/* A turn restored from saved state started (see mend_chat_restore_turn()):
 * a resume prompt's, saved while it ran, is followed again. */
void     mend_subagent_retry_restored_turn_started (MendSubagentRetry *self,
                                                    MendTurn          *turn);
void     mend_subagent_retry_turn_finished  (MendSubagentRetry *self,
                                             MendTurn          *turn);
void     mend_subagent_retry_chat_stopped   (MendSubagentRetry *self);
void     mend_subagent_retry_chat_closed    (MendSubagentRetry *self);
/* Sends the resume prompts held for the agent's own turn, if none runs. */
void     mend_subagent_retry_release_held   (MendSubagentRetry *self);
/* Whether @provenance, from an app's submission, names a resume prompt
 * this retry took back: it is refused, as the prompt itself would be. */
gboolean mend_subagent_retry_was_taken_back (MendSubagentRetry *self,
                                             const char        *provenance);

/* A task of the agent ended, as a reader of its output saw it: @state,
 * FAILED with @failure (else %NULL). The subagent is found by @agent_id,
 * else by @id. One never seen started that failed is made when @id names
 * it, as if it had started (@id, @agent_id, @name: no agent id, nothing
 * to resume it by, when the line names none); not when an id is longer
 * than MEND_SUBAGENT_MAX_ID_BYTES. Returns whether the subagents
 * changed. */
gboolean mend_subagent_retry_task_ended (MendSubagentRetry *self,
                                         const char        *id,
                                         const char        *agent_id,
                                         const char        *name,
                                         MendSubagentState  state,
                                         MendFailure       *failure);

/* Ended subagents kept for the list, and entries kept in all: past these
 * the oldest are forgotten. */
#define MEND_SUBAGENT_RETRY_MAX_ENDED   32
#define MEND_SUBAGENT_RETRY_MAX_ENTRIES 1024

/* Saved state: the subagents as a JSON array, and back. Restoring checks
 * every entry before it changes anything; pending waits keep their
 * wall-clock deadline (due at once if it passed). Once the queue is back,
 * mend_subagent_retry_find_restored_prompts() follows the resume prompts
 * in it again. */
void     mend_subagent_retry_save    (MendSubagentRetry *self,
                                      JsonBuilder       *builder);
gboolean mend_subagent_retry_restore (MendSubagentRetry *self,
                                      JsonArray         *array,
                                      GError           **error);
/* What restoring @array checks before it changes anything, changing
 * nothing. */
gboolean mend_subagent_retry_check   (JsonArray         *array,
                                      GError           **error);
void     mend_subagent_retry_find_restored_prompts (MendSubagentRetry *self);

/* The resume prompt, from a translatable template (mend-subagent-scheduler.c).
 * The name comes from the agent's output, so it is stripped of control
 * characters and quotes and cut to MEND_SUBAGENT_NAME_MAX_CHARS characters;
 * the agent id keeps only letters, digits and `-_.:`. */
char    *mend_subagent_retry_build_prompt (const char *name,
                                           const char *agent_id);

G_END_DECLS
