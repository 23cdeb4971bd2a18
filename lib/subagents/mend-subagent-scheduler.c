/* mend-subagent-scheduler.c — turns a subagent's failure into a wait and a resume prompt
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * From a subagent's failure to its resume prompt: the wait, the prompt
 * sent through the chat's submit function, the prompt followed by its
 * queue item and then the turn the chat starts from it, and the prompt
 * taken back.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-clock.h"
#include "mend-error-policy-private.h"
#include "mend-failure-private.h"
#include "mend-i18n-private.h"
#include "mend-enum-types.h"
#include "mend-json-private.h"
#include "mend-queue-private.h"
#include "mend-queue-item-private.h"
#include "mend-redact-private.h"
#include "mend-retry-wait-private.h"
#include "mend-subagent-private.h"
#include "mend-subagent-scheduler-private.h"
#include "mend-verdict-private.h"

void
mend_subagent_scheduler_init (MendSubagentScheduler *self,
                              GObject               *object,
                              const guint           *signals)
{
  self->object = object;
  self->signals = signals;
  mend_subagent_list_init (&self->list, object);
  self->max_failed = MEND_SUBAGENT_RETRY_DEFAULT_MAX_FAILED;
}

void
mend_subagent_scheduler_clear (MendSubagentScheduler *self)
{
  mend_subagent_list_clear (&self->list);
  g_clear_pointer (&self->taken_back, g_hash_table_unref);
  g_queue_clear_full (&self->records, g_free);
  g_clear_pointer (&self->chat_id, g_free);
  g_clear_object (&self->queue);
  g_clear_object (&self->clock);
  g_clear_object (&self->policy);
}

gboolean
mend_subagent_scheduler_was_taken_back (MendSubagentScheduler *self,
                                        const char            *prompt_id)
{
  return self->taken_back != NULL && g_hash_table_contains (self->taken_back, prompt_id);
}

gboolean
mend_subagent_scheduler_is_open (MendSubagentScheduler *self)
{
  return self->submit != NULL && !self->closed;
}

void
mend_subagent_scheduler_emit_step (MendSubagentScheduler *self,
                                   MendSubagentEntry     *entry,
                                   const char            *outcome,
                                   guint                  attempt,
                                   MendRetryWait         *wait,
                                   const char            *skipped)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
  g_autofree char *json = NULL;
  MendSubagent *sub = entry->subagent;
  MendFailure *failure = mend_subagent_get_failure (sub);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, "subagent_retry");
  json_builder_set_member_name (builder, "subagentId");
  json_builder_add_string_value (builder, mend_subagent_get_id (sub));
  json_builder_set_member_name (builder, "agentId");
  if (mend_subagent_get_agent_id (sub) != NULL)
    json_builder_add_string_value (builder, mend_subagent_get_agent_id (sub));
  else
    json_builder_add_null_value (builder);
  mend_json_add_nick (builder, "reason", MEND_TYPE_REASON,
                      failure ? mend_failure_get_reason (failure) : MEND_REASON_UNKNOWN);
  json_builder_set_member_name (builder, "outcome");
  json_builder_add_string_value (builder, outcome);
  json_builder_set_member_name (builder, "attempt");
  json_builder_add_int_value (builder, attempt);
  json_builder_set_member_name (builder, "of");
  json_builder_add_int_value (builder, self->submit != NULL ? mend_error_policy_get_max_retries (self->policy) : 0);
  if (wait != NULL)
    {
      json_builder_set_member_name (builder, "nextAt");
      json_builder_add_int_value (builder, mend_retry_wait_get_next_at (wait) / 1000);
    }
  if (entry->prompt_id != NULL && g_strcmp0 (outcome, "scheduled") != 0)
    {
      json_builder_set_member_name (builder, "promptId");
      json_builder_add_string_value (builder, entry->prompt_id);
    }
  if (skipped != NULL)
    {
      json_builder_set_member_name (builder, "skipped");
      json_builder_add_string_value (builder, skipped);
    }
  json_builder_end_object (builder);

  /* One stream of records per chat: the chat's, its subagents' too (the
   * chat re-tells each, its handler the first). Each is told before the
   * next: a step that a handler takes while one is told waits for it, so
   * that both streams keep one order. */
  g_queue_push_tail (&self->records, mend_json_builder_finish (builder));
  if (self->telling)
    return;

  /* A handler of the chat's may drop the last reference to the chat. */
  g_object_ref (self->object);
  self->telling = TRUE;
  while ((json = g_queue_pop_head (&self->records)) != NULL)
    {
      g_signal_emit (self->object, self->signals[MEND_SUBAGENT_SIGNAL_RECORD], 0, json);
      g_clear_pointer (&json, g_free);
    }
  self->telling = FALSE;
  g_object_unref (self->object);
}

gboolean
mend_subagent_scheduler_prompt_queued (MendSubagentScheduler *self,
                                       MendSubagentEntry     *entry)
{
  return entry->prompt_item != NULL && self->queue != NULL &&
         mend_queue_has_item (self->queue, entry->prompt_item);
}

gboolean
mend_subagent_scheduler_in_flight (MendSubagentEntry *entry)
{
  return mend_subagent_get_retry (entry->subagent) != NULL ||
         entry->held ||
         entry->sending ||
         mend_subagent_scheduler_prompt_queued (entry->owner, entry) ||
         entry->prompt_turn != NULL;
}

void
mend_subagent_scheduler_clear_wait (MendSubagentEntry *entry)
{
  MendRetryWait *wait = mend_subagent_get_retry (entry->subagent);

  if (wait == NULL)
    return;

  /* Disconnected first: only a wait cancelled from outside reaches
   * on_wait_cancelled(). */
  g_signal_handlers_disconnect_by_data (wait, entry);
  mend_retry_wait_cancel (wait);
  mend_subagent_set_retry (entry->subagent, NULL);
}

/* Takes back a resume prompt that has not started: out of the queue, and
 * marked so that the chat never starts it, even when it was on its way.
 * One already started is the agent's to answer. */
static void
take_back_prompt (MendSubagentScheduler *self,
                  MendSubagentEntry     *entry)
{
  g_autoptr(MendQueueItem) item = g_steal_pointer (&entry->prompt_item);

  if (entry->prompt_id == NULL)
    return;

  /* Made with the first prompt taken back: most chats never take one. */
  if (self->taken_back == NULL)
    self->taken_back = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_hash_table_add (self->taken_back, g_strdup (entry->prompt_id));
  if (item == NULL)
    return;

  mend_queue_item_set_withdrawn (item);
  if (mend_queue_has_item (self->queue, item))
    mend_queue_remove (self->queue, mend_queue_item_get_id (item), NULL);
}

static gboolean
is_ended (MendSubagentEntry *entry)
{
  MendSubagentState state = mend_subagent_get_state (entry->subagent);

  return state == MEND_SUBAGENT_COMPLETED || state == MEND_SUBAGENT_CANCELLED;
}

/* Forgets the oldest settled failed subagents past max-failed, the oldest
 * ended ones past MEND_SUBAGENT_RETRY_MAX_ENDED, and the oldest of all
 * past MEND_SUBAGENT_RETRY_MAX_ENTRIES, so that a long session's list and
 * its look-ups stay bounded. */
void
mend_subagent_scheduler_enforce_cap (MendSubagentScheduler *self)
{
  /* Its handlers may drop the last reference to the chat, and with it to
   * the subagent retry. */
  g_autoptr(GObject) alive = g_object_ref (self->object);
  GPtrArray *entries = self->list.entries;

  for (;;)
    {
      g_autoptr(MendSubagentEntry) victim = NULL;
      MendSubagentEntry *oldest_failed = NULL;
      MendSubagentEntry *oldest_ended = NULL;
      guint failed = 0;
      guint ended = 0;

      for (guint i = 0; i < entries->len; i++)
        {
          MendSubagentEntry *entry = g_ptr_array_index (entries, i);

          if (mend_subagent_scheduler_in_flight (entry))
            continue;
          if (mend_subagent_get_state (entry->subagent) == MEND_SUBAGENT_FAILED)
            {
              failed++;
              if (oldest_failed == NULL || entry->settled < oldest_failed->settled)
                oldest_failed = entry;
            }
          else if (is_ended (entry))
            {
              ended++;
              if (oldest_ended == NULL || entry->settled < oldest_ended->settled)
                oldest_ended = entry;
            }
        }

      if (failed > self->max_failed && oldest_failed != NULL)
        victim = mend_subagent_entry_ref (oldest_failed);
      else if (ended > MEND_SUBAGENT_RETRY_MAX_ENDED && oldest_ended != NULL)
        victim = mend_subagent_entry_ref (oldest_ended);
      else if (entries->len > MEND_SUBAGENT_RETRY_MAX_ENTRIES)
        victim = mend_subagent_entry_ref (g_ptr_array_index (entries, 0));
      else
        return;

      /* Told while it is still in the list. */
      mend_subagent_set_retryable (victim->subagent, FALSE);
      /* A handler may have forgotten it already. */
      if (!victim->gone)
        {
          mend_subagent_scheduler_skip (self, victim, "forgotten");
          mend_subagent_list_remove (&self->list, victim);
        }
    }
}

void
mend_subagent_scheduler_settle (MendSubagentScheduler *self,
                                MendSubagentEntry     *entry)
{
  entry->settled = ++self->next_settled;
}

/* Ends whatever retry is under way, for @why: "stopped", "closed",
 * "resumed", "ended", "replaced", "cancelled" (its wait was cancelled from
 * outside) or "forgotten" (past the caps). */
void
mend_subagent_scheduler_skip (MendSubagentScheduler *self,
                              MendSubagentEntry     *entry,
                              const char            *why)
{
  MendRetryWait *wait = mend_subagent_get_retry (entry->subagent);
  /* Something would still go out later, a prompt being sent too (a
   * handler of its fired): a started prompt is the agent's. */
  gboolean had = wait != NULL || entry->held || entry->sending ||
                 mend_subagent_scheduler_prompt_queued (self, entry);
  guint attempt = mend_subagent_get_attempts (entry->subagent);

  if (wait != NULL)
    attempt = mend_retry_wait_get_attempt (wait);

  mend_subagent_scheduler_clear_wait (entry);
  entry->held = FALSE;
  take_back_prompt (self, entry);
  /* A started prompt is the agent's to answer; its end plans nothing. */
  g_clear_object (&entry->prompt_turn);

  if (!had)
    return;

  mend_subagent_scheduler_emit_step (self, entry, "skipped", attempt, NULL, why);
  g_signal_emit (self->object, self->signals[MEND_SUBAGENT_SIGNAL_SKIPPED], 0, entry->subagent, why);
}

static void
exhaust (MendSubagentScheduler *self,
         MendSubagentEntry     *entry)
{
  gboolean told = entry->exhausted;

  entry->exhausted = TRUE;
  mend_subagent_set_retry (entry->subagent, NULL);
  mend_subagent_set_retryable (entry->subagent, mend_subagent_scheduler_is_open (self));
  mend_subagent_scheduler_settle (self, entry);
  /* The agent repeated the failure it was given up on (a handler of
   * exhausted may do so at once): it is not told twice. */
  if (told)
    return;
  mend_subagent_scheduler_emit_step (self, entry, "exhausted", mend_subagent_get_attempts (entry->subagent), NULL, NULL);
  g_signal_emit (self->object, self->signals[MEND_SUBAGENT_SIGNAL_EXHAUSTED], 0, entry->subagent);
}

gint64
mend_subagent_scheduler_longest_delay_ms (MendSubagentScheduler *self)
{
  return MAX ((gint64) mend_error_policy_get_max_delay_ms (self->policy),
              (gint64) mend_error_policy_get_retry_after_max_ms (self->policy))
         + mend_error_policy_get_stagger_for (self->policy, self->chat_id);
}

/* The subagent's next automatic attempt, decided as a turn's is: the
 * schedule, the server's hint and its horizon, the stagger. */
MendVerdict *
mend_subagent_scheduler_decide (MendSubagentScheduler *self,
                                MendSubagentEntry     *entry,
                                MendFailure           *failure,
                                gint64                 now_us,
                                MendVerdictStep       *step)
{
  return mend_verdict_reach (self->policy, failure, -1, mend_subagent_get_attempts (entry->subagent) + 1,
                             self->chat_id, now_us, step);
}

/* Whether @wait is still the subagent's, and pending. */
static gboolean
wait_is_pending (MendSubagentEntry *entry,
                 MendRetryWait     *wait)
{
  return !entry->gone && mend_subagent_get_retry (entry->subagent) == wait &&
         mend_retry_wait_get_state (wait) == MEND_RETRY_WAIT_PENDING;
}

void
mend_subagent_scheduler_schedule (MendSubagentScheduler *self,
                                  MendSubagentEntry     *entry,
                                  MendVerdict           *decided,
                                  MendVerdictStep        step)
{
  g_autoptr(MendVerdict) verdict = decided ? g_object_ref (decided) : NULL;
  guint of = mend_error_policy_get_max_retries (self->policy);
  guint attempt;
  MendRetryWait *wait;

  entry->stopped = FALSE;

  /* A failure judged transient before: the rest of its verdict. */
  if (verdict == NULL)
    verdict = mend_verdict_reach (self->policy, mend_subagent_get_failure (entry->subagent),
                                  MEND_FAILURE_TRANSIENT, mend_subagent_get_attempts (entry->subagent) + 1,
                                  self->chat_id, mend_clock_get_real_time (self->clock), &step);
  attempt = mend_verdict_get_attempt (verdict);
  /* A retry, or a usage limit's reset (continue-at-reset on the resume
   * policy): a resume waits for it. */
  if (step != MEND_VERDICT_RETRY && step != MEND_VERDICT_AT_RESET)
    {
      exhaust (self, entry);
      return;
    }

  wait = mend_retry_wait_new_for_verdict (verdict, self->clock, attempt, of, step == MEND_VERDICT_AT_RESET);
  mend_subagent_scheduler_connect_wait (entry, wait);
  mend_subagent_set_retry (entry->subagent, wait);

  /* A handler may have stopped it already, a handler of its record too:
   * no countdown for a wait that is over. */
  if (wait_is_pending (entry, wait))
    mend_subagent_scheduler_emit_step (self, entry, "scheduled", attempt, wait, NULL);
  if (wait_is_pending (entry, wait))
    g_signal_emit (self->object, self->signals[MEND_SUBAGENT_SIGNAL_WAITING], 0, entry->subagent, wait);
  g_object_unref (wait);
}

static char *
sanitize (const char *text,
          guint       max_chars,
          gboolean    id_chars_only)
{
  GString *out = g_string_new (NULL);
  g_autofree char *valid = NULL;
  gboolean space = FALSE;
  guint chars = 0;

  if (text == NULL)
    return g_string_free (out, FALSE);

  valid = g_utf8_make_valid (text, -1);
  for (const char *p = valid; *p != '\0' && chars < max_chars; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (id_chars_only)
        {
          if (c < 128 && (g_ascii_isalnum (c) || strchr ("-_.:", (int) c) != NULL))
            {
              g_string_append_c (out, (char) c);
              chars++;
            }
          continue;
        }

      /* Quotes could end the quoting the prompt puts the name in; control
       * characters could forge lines. */
      if (g_unichar_iscntrl (c) || g_unichar_isspace (c) ||
          g_unichar_type (c) == G_UNICODE_FORMAT ||
          c == '"' || c == '\'' || c == '`' || c == '\\' ||
          c == 0x201C || c == 0x201D || c == 0x201E || c == 0x2018 ||
          c == 0x2019 || c == 0x201A || c == 0x00AB || c == 0x00BB ||
          c == 0x2039 || c == 0x203A)
        {
          space = out->len > 0;
          continue;
        }

      if (space)
        {
          g_string_append_c (out, ' ');
          chars++;
          space = FALSE;
        }
      g_string_append_unichar (out, c);
      chars++;
    }

  if (!id_chars_only && g_utf8_strlen (valid, -1) > max_chars)
    g_string_append (out, "…");

  return g_string_free (out, FALSE);
}

char *
mend_subagent_retry_build_prompt (const char *name,
                                  const char *agent_id)
{
  g_autofree char *safe_name = sanitize (name, MEND_SUBAGENT_NAME_MAX_CHARS, FALSE);
  g_autofree char *safe_id = sanitize (agent_id, 128, TRUE);

  g_return_val_if_fail (agent_id != NULL, NULL);

  mend_i18n_init ();

  if (*safe_name == '\0')
    {
      g_free (safe_name);
      safe_name = g_strdup (_("unnamed"));
    }

  /* Translators: sent to the AI agent, not shown to people. The first %s
   * is a subagent's name, the second and third its agent id. Keep
   * “SendMessage” as it is: it is the name of the agent's tool. */
  return g_strdup_printf (_("The subagent “%s” (agent id %s) stopped on a temporary upstream error. "
                            "If it is not running again, resume it with SendMessage to %s. "
                            "Start a new subagent for the same task only if that resume fails. "
                            "If it already runs again, do nothing."),
                          safe_name, safe_id, safe_id);
}

static char *
prompt_provenance (MendSubagentEntry *entry,
                   guint              attempt)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, "subagent_retry");
  json_builder_set_member_name (builder, "subagentId");
  json_builder_add_string_value (builder, mend_subagent_get_id (entry->subagent));
  json_builder_set_member_name (builder, "agentId");
  json_builder_add_string_value (builder, mend_subagent_get_agent_id (entry->subagent));
  json_builder_set_member_name (builder, "attempt");
  json_builder_add_int_value (builder, attempt);
  json_builder_set_member_name (builder, "promptId");
  json_builder_add_string_value (builder, entry->prompt_id);
  json_builder_end_object (builder);

  return mend_json_builder_finish (builder);
}

void
mend_subagent_scheduler_send_prompt (MendSubagentScheduler *self,
                                     MendSubagentEntry     *entry)
{
  g_autofree char *text = NULL;
  g_autofree char *provenance = NULL;
  g_autofree char *prompt_id = NULL;
  g_autoptr(GError) error = NULL;
  guint attempt = mend_subagent_get_attempts (entry->subagent) + 1;

  mend_subagent_set_attempts (entry->subagent, attempt);
  g_free (entry->prompt_id);
  entry->prompt_id = g_strdup_printf ("sr-%" G_GUINT64_FORMAT, ++self->next_prompt);
  /* This prompt replaces the last one: if that one is on its way out of
   * the queue (a view of the pop called Retry), it never starts. */
  if (entry->prompt_item != NULL)
    mend_queue_item_set_withdrawn (entry->prompt_item);
  g_clear_object (&entry->prompt_item);
  text = mend_subagent_retry_build_prompt (mend_subagent_get_name (entry->subagent),
                                           mend_subagent_get_agent_id (entry->subagent));
  provenance = prompt_provenance (entry, attempt);

  /* Fired is told first: the prompt's turn may run and end inside the
   * submission, and its steps must come after this one. */
  prompt_id = g_strdup (entry->prompt_id);
  entry->sending = TRUE;
  mend_subagent_scheduler_emit_step (self, entry, "fired", attempt, NULL, NULL);
  g_signal_emit (self->object, self->signals[MEND_SUBAGENT_SIGNAL_FIRED], 0, entry->subagent, prompt_id);
  entry->sending = FALSE;
  /* A handler may have taken it back already (the subagent runs again or
   * ended, Stop, close), or replaced or forgotten the subagent. */
  if (entry->gone || g_strcmp0 (entry->prompt_id, prompt_id) != 0 ||
      !mend_subagent_scheduler_is_open (self) ||
      mend_subagent_scheduler_was_taken_back (self, prompt_id))
    return;
  /* Queued behind a running turn, never steered into it. The prompt is
   * followed by its item: the chat says which turn starts from it. */
  if (self->submit (text, provenance, &entry->prompt_item, self->submit_data, &error))
    return;

  mend_debug ("Subagent %s: resume prompt not sent: %s",
              mend_subagent_get_id (entry->subagent), error->message);
  mend_subagent_scheduler_settle (self, entry);
  mend_subagent_scheduler_emit_step (self, entry, "skipped", attempt, NULL, "not_sent");
  g_signal_emit (self->object, self->signals[MEND_SUBAGENT_SIGNAL_SKIPPED], 0, entry->subagent, "not_sent");
}

static void
on_wait_fired (MendRetryWait     *wait,
               MendSubagentEntry *entry)
{
  MendSubagentScheduler *self = entry->owner;
  g_autoptr(GObject) alive = g_object_ref (self->object);
  g_autoptr(MendSubagentEntry) held = mend_subagent_entry_ref (entry);
  GObject *subagent = G_OBJECT (entry->subagent);

  g_signal_handlers_disconnect_by_data (wait, entry);
  /* One change of the subagent, told when it is done. */
  g_object_freeze_notify (subagent);
  mend_subagent_set_retry (entry->subagent, NULL);

  if (!entry->gone && mend_subagent_scheduler_is_open (self))
    {
      if (self->external_turn)
        entry->held = TRUE;   /* sent when the agent's own turn ends */
      else
        mend_subagent_scheduler_send_prompt (self, entry);
    }
  g_object_thaw_notify (subagent);
}

/* The wait was cancelled from outside (mend_retry_wait_cancel(), or
 * run_async()'s cancellable): the retry will not run, and the subagent
 * must not be left as if it would. Like a Stop, it ends the automatic
 * attempts; a person's Retry still works. */
static void
on_wait_cancelled (MendRetryWait     *wait,
                   MendSubagentEntry *entry)
{
  MendSubagentScheduler *self = entry->owner;
  g_autoptr(GObject) alive = g_object_ref (self->object);
  g_autoptr(MendSubagentEntry) held = mend_subagent_entry_ref (entry);
  GObject *subagent = G_OBJECT (entry->subagent);
  guint attempt = mend_retry_wait_get_attempt (wait);

  g_signal_handlers_disconnect_by_data (wait, entry);
  g_object_freeze_notify (subagent);
  mend_subagent_set_retry (entry->subagent, NULL);
  if (!entry->gone)
    {
      entry->stopped = TRUE;
      mend_subagent_scheduler_settle (self, entry);
      mend_subagent_scheduler_emit_step (self, entry, "skipped", attempt, NULL, "cancelled");
      g_signal_emit (self->object, self->signals[MEND_SUBAGENT_SIGNAL_SKIPPED], 0, entry->subagent, "cancelled");
    }
  g_object_thaw_notify (subagent);
  mend_subagent_scheduler_enforce_cap (self);
}

void
mend_subagent_scheduler_connect_wait (MendSubagentEntry *entry,
                                      MendRetryWait     *wait)
{
  g_signal_connect (wait, "fired", G_CALLBACK (on_wait_fired), entry);
  g_signal_connect (wait, "cancelled", G_CALLBACK (on_wait_cancelled), entry);
}
