/* mend-subagent-scheduler-private.h — turns a subagent's failure into a wait and a resume prompt
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-error-policy.h"
#include "mend-queue.h"
#include "mend-subagent-list-private.h"
#include "mend-subagent-retry-private.h"
#include "mend-verdict-private.h"

G_BEGIN_DECLS

/* The signals of MendSubagentRetry, by the index their ids are handed in. */
typedef enum
{
  MEND_SUBAGENT_SIGNAL_WAITING,
  MEND_SUBAGENT_SIGNAL_FIRED,
  MEND_SUBAGENT_SIGNAL_RESUMED,
  MEND_SUBAGENT_SIGNAL_SKIPPED,
  MEND_SUBAGENT_SIGNAL_EXHAUSTED,
  MEND_SUBAGENT_SIGNAL_RECORD,
  MEND_SUBAGENT_N_SIGNALS
} MendSubagentSignal;

/* Turns subagent failures into resume prompts: plans each wait, sends the
 * prompt through its chat's submit function when the wait fires, follows
 * the prompt by the queue item it is given and then the turn the chat
 * starts from it, and takes it back when it must. Its signals are emitted
 * on @object. */
typedef struct
{
  GObject                *object;
  const guint            *signals;   /* indexed by MendSubagentSignal */
  MendSubagentList        list;
  MendSubagentSubmitFunc  submit;    /* NULL once the retry is disposed */
  gpointer                submit_data;
  gboolean                external_turn;
  gboolean                closed;
  MendQueue              *queue;
  MendClock              *clock;
  MendErrorPolicy        *policy;
  char                   *chat_id;   /* for the stagger */
  GHashTable             *taken_back; /* prompt ids */
  guint                   max_failed;
  guint64                 next_prompt;
  guint64                 next_settled;
  GQueue                  records;   /* char*, made while one is told */
  gboolean                telling;
} MendSubagentScheduler;

void     mend_subagent_scheduler_init    (MendSubagentScheduler *self,
                                          GObject               *object,
                                          const guint           *signals);
void     mend_subagent_scheduler_clear   (MendSubagentScheduler *self);

gboolean mend_subagent_scheduler_is_open (MendSubagentScheduler *self);
/* Whether the prompt @prompt_id was taken back from the queue. */
gboolean mend_subagent_scheduler_was_taken_back (MendSubagentScheduler *self,
                                                 const char            *prompt_id);
/* Something of this subagent's retry is under way: a wait, a prompt held
 * for the agent's own turn, or a prompt out. */
gboolean mend_subagent_scheduler_in_flight (MendSubagentEntry   *entry);
void     mend_subagent_scheduler_settle  (MendSubagentScheduler *self,
                                          MendSubagentEntry     *entry);
/* Forgets the oldest past the caps; see MEND_SUBAGENT_RETRY_MAX_ENDED. */
void     mend_subagent_scheduler_enforce_cap (MendSubagentScheduler *self);
/* Ends whatever retry is under way, for @why. */
void     mend_subagent_scheduler_skip    (MendSubagentScheduler *self,
                                          MendSubagentEntry     *entry,
                                          const char            *why);
/* Judges @failure and decides the subagent's next automatic attempt, in
 * one pass of the policy, as a turn's verdict is reached, at wall-clock
 * @now_us (for a usage limit's reset). */
MendVerdict *mend_subagent_scheduler_decide (MendSubagentScheduler *self,
                                             MendSubagentEntry     *entry,
                                             MendFailure           *failure,
                                             gint64                 now_us,
                                             MendVerdictStep       *step);
/* Plans the next automatic attempt, or gives up after the last: as
 * @verdict decided (@step), or, when it is %NULL, deciding for the
 * subagent's failure, judged transient before. */
void     mend_subagent_scheduler_schedule (MendSubagentScheduler *self,
                                           MendSubagentEntry     *entry,
                                           MendVerdict           *verdict,
                                           MendVerdictStep        step);
/* Sends the resume prompt now, as the next attempt. */
void     mend_subagent_scheduler_send_prompt (MendSubagentScheduler *self,
                                              MendSubagentEntry     *entry);
/* Lets @wait, already set as the subagent's retry, fire the prompt. */
void     mend_subagent_scheduler_connect_wait (MendSubagentEntry *entry,
                                               MendRetryWait     *wait);
/* Drops the pending wait quietly. */
void     mend_subagent_scheduler_clear_wait   (MendSubagentEntry *entry);
/* Whether the resume prompt waits in the chat's queue still: the user may
 * have removed it, and then nothing of it is under way. */
gboolean mend_subagent_scheduler_prompt_queued (MendSubagentScheduler *self,
                                                MendSubagentEntry     *entry);
void     mend_subagent_scheduler_emit_step (MendSubagentScheduler *self,
                                            MendSubagentEntry     *entry,
                                            const char            *outcome,
                                            guint                  attempt,
                                            MendRetryWait         *wait,
                                            const char            *skipped);
/* The longest wait the policy could ask for, stagger included. */
gint64   mend_subagent_scheduler_longest_delay_ms (MendSubagentScheduler *self);

G_END_DECLS
