/* mend-test-utils.c — the loop, turns run by hand, finalizing, the waits fixture and the recordings fixture
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>
#include <unistd.h>

#include "mend-test-utils.h"

/* The loop, turns run by hand, saved state */

void
mend_test_on_attempt_by_hand (MendTurn     *turn,
                              guint         attempt,
                              GCancellable *cancellable,
                              gpointer      data)
{
}

void
mend_test_run_by_hand (MendTurn *turn)
{
  g_signal_connect (turn, "attempt", G_CALLBACK (mend_test_on_attempt_by_hand), NULL);
}

void
mend_test_on_turn_started_by_hand (MendChat *chat,
                                   MendTurn *turn,
                                   gpointer  data)
{
  mend_test_run_by_hand (turn);
}

void
mend_test_run_turns_by_hand (MendChat *chat)
{
  g_signal_connect (chat, "turn-started", G_CALLBACK (mend_test_on_turn_started_by_hand), NULL);
}

MendChat *
mend_test_new_chat_by_hand (MendClock *clock)
{
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  MendChat *chat;

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, "policy", policy, NULL);
  mend_test_run_turns_by_hand (chat);
  return chat;
}

gboolean
mend_test_watchdog (gpointer data)
{
  g_error ("%s did not reach its state in time", (const char *) data);
  return G_SOURCE_REMOVE;
}

gboolean
mend_test_file_nth_line_has (const char *path,
                             const char *marker,
                             guint       n,
                             const char *text)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  guint seen = 0;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return FALSE;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], marker) != NULL && ++seen == n)
      return strstr (lines[i], text) != NULL;
  return FALSE;
}

gsize
mend_test_resident_bytes (void)
{
  g_autofree char *statm = NULL;
  g_auto(GStrv) fields = NULL;

  if (!g_file_get_contents ("/proc/self/statm", &statm, NULL, NULL))
    return 0;
  fields = g_strsplit (statm, " ", -1);
  return (gsize) g_ascii_strtoull (fields[1], NULL, 10) * (gsize) sysconf (_SC_PAGESIZE);
}

guint
mend_test_real_time (guint n)
{
  return RUNNING_ON_VALGRIND ? 5 * n : n;
}

void
mend_test_run_chat_until (MendChat      *chat,
                          const guint   *served,
                          MendTurnState  state,
                          guint          requests)
{
  guint id = g_timeout_add_seconds (20, mend_test_watchdog, (gpointer) g_test_get_path ());

  for (;;)
    {
      MendTurn *turn = mend_chat_get_turn (chat);

      if (*served >= requests &&
          (turn == NULL ? (state == MEND_TURN_SUCCEEDED || state == MEND_TURN_FAILED)
                        : mend_turn_get_state (turn) == state))
        break;
      g_main_context_iteration (NULL, TRUE);
    }

  g_source_remove (id);
}

char *
mend_test_state_with_queued_resume_prompt (MendChat  *chat,
                                           MendClock *clock)
{
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (MEND_TEST_GATEWAY_503);
  char *json;

  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  mend_subagent_retry_note_started (retry, "toolu_1", "agent-a", "Push relay");
  mend_subagent_retry_note_failed (retry, "agent-a", failure);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 30000);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (chat)), ==, 1);

  json = mend_chat_save_state (chat);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  return json;
}

void
mend_test_finalize_eventually (gpointer object)
{
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

  g_object_add_weak_pointer (object, &object);
  g_object_unref (object);
  while (object != NULL && g_get_monotonic_time () < deadline)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  g_assert_null (object);
}

guint
mend_test_count_records (GPtrArray  *records,
                         const char *kind,
                         const char *outcome)
{
  g_autofree char *k = g_strdup_printf ("\"kind\":\"%s\"", kind);
  g_autofree char *o = g_strdup_printf ("\"outcome\":\"%s\"", outcome);
  guint n = 0;

  for (guint i = 0; i < records->len; i++)
    {
      const char *record = g_ptr_array_index (records, i);

      n += strstr (record, k) != NULL && strstr (record, o) != NULL;
    }

  return n;
}

char *
mend_test_queue_head (MendChat *chat)
{
  g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (mend_chat_get_queue (chat)), 0);

  return item ? g_strdup (mend_queue_item_get_text (item)) : NULL;
}

void
mend_test_assert_properties (GType                   type,
                             const MendTestProperty *expected,
                             guint                   n_expected)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (type);
  g_autofree GParamSpec **pspecs = NULL;
  guint n_pspecs = 0;

  pspecs = g_object_class_list_properties (G_OBJECT_CLASS (klass), &n_pspecs);
  g_assert_cmpuint (n_pspecs, ==, n_expected);

  for (guint i = 0; i < n_expected; i++)
    {
      GParamSpec *pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), expected[i].name);

      g_test_message ("property %s", expected[i].name);
      g_assert_nonnull (pspec);
      g_assert_true (g_type_is_a (pspec->value_type, expected[i].type));
      g_assert_true (pspec->owner_type == type);
      g_assert_cmpint (pspec->flags & expected[i].has, ==, expected[i].has);
      g_assert_cmpint (pspec->flags & expected[i].lacks, ==, 0);
    }
}

void
mend_test_submit (MendChat   *chat,
                  const char *text)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_chat_submit (chat, text, NULL, &error));
  g_assert_no_error (error);
}

MendTurn *
mend_test_turn_at (GPtrArray *turns,
                   guint      i)
{
  g_assert_cmpuint (i, <, turns->len);
  return g_ptr_array_index (turns, i);
}

/* A clock and the waits on it */

static void
on_fired (MendRetryWait       *wait,
          MendTestWaitFixture *f)
{
  f->fired++;
}

static void
on_cancelled (MendRetryWait       *wait,
              MendTestWaitFixture *f)
{
  f->cancelled++;
}

void
mend_test_wait_fixture_set_up (MendTestWaitFixture *f,
                               gconstpointer        data)
{
  f->clock = mend_manual_clock_new (MEND_TEST_WALL_START);
  f->log = g_string_new (NULL);
}

void
mend_test_wait_fixture_tear_down (MendTestWaitFixture *f,
                                  gconstpointer        data)
{
  g_string_free (f->log, TRUE);
  g_assert_finalize_object (f->clock);
}

MendRetryWait *
mend_test_wait_new (MendTestWaitFixture *f,
                    guint64              delay_ms)
{
  MendRetryWait *wait = mend_retry_wait_new (f->clock, delay_ms, 2, 4, MEND_REASON_CAPACITY);

  g_signal_connect (wait, "fired", G_CALLBACK (on_fired), f);
  g_signal_connect (wait, "cancelled", G_CALLBACK (on_cancelled), f);
  return wait;
}

void
mend_test_wait_advance (MendTestWaitFixture *f,
                        guint64              ms)
{
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), ms);
}

guint
mend_test_wait_n_pending (MendTestWaitFixture *f)
{
  return mend_manual_clock_get_n_pending (MEND_MANUAL_CLOCK (f->clock));
}

/* A stream observer fed lines the real Claude Code CLI wrote */

static void
on_recording_turn_finished (MendChat          *chat,
                            MendTurn          *turn,
                            MendTestRecording *f)
{
  g_ptr_array_add (f->finished, g_object_ref (turn));
}

static void
on_recording_record (GObject           *source,
                     const char        *json,
                     MendTestRecording *f)
{
  g_ptr_array_add (f->records, g_strdup (json));
}

void
mend_test_recording_set_up (MendTestRecording *f,
                            gconstpointer      data)
{
  f->clock = mend_manual_clock_new (MEND_TEST_WALL_START);
  f->chat = g_object_new (MEND_TYPE_CHAT, "id", "chat-1", "clock", f->clock, NULL);
  f->observer = mend_stream_observer_new (f->chat);
  f->finished = g_ptr_array_new ();
  f->records = g_ptr_array_new_with_free_func (g_free);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_recording_turn_finished), f);
  g_signal_connect (f->chat, "record", G_CALLBACK (on_recording_record), f);
}

void
mend_test_recording_tear_down (MendTestRecording *f,
                               gconstpointer      data)
{
  g_assert_finalize_object (f->observer);
  g_assert_finalize_object (f->chat);
  for (guint i = 0; i < f->finished->len; i++)
    g_assert_finalize_object (g_ptr_array_index (f->finished, i));
  g_ptr_array_unref (f->finished);
  g_ptr_array_unref (f->records);
  g_strfreev (f->lines);
  g_assert_finalize_object (f->clock);
}

void
mend_test_recording_load (MendTestRecording *f,
                          const char        *version,
                          const char        *scenario)
{
  g_autofree char *dir = g_strconcat ("claude-code-", version, NULL);
  g_autofree char *name = g_strconcat (scenario, ".jsonl", NULL);
  g_autofree char *path = g_build_filename (MEND_TEST_SRCDIR, "data", dir, name, NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_get_contents (path, &contents, NULL, &error));
  g_assert_no_error (error);
  g_strchomp (contents);
  g_strfreev (f->lines);
  f->lines = g_strsplit (contents, "\n", -1);
  f->next = 0;
}

gboolean
mend_test_recording_feed_until (MendTestRecording *f,
                                const char        *until)
{
  while (f->lines[f->next] != NULL)
    {
      const char *line = f->lines[f->next++];

      mend_stream_observer_feed_line (f->observer, line, -1);
      if (until != NULL && strstr (line, until) != NULL)
        return TRUE;
    }

  return until == NULL;
}

MendTurn *
mend_test_recording_submit (MendTestRecording *f,
                            const char        *text)
{
  MendTurn *turn;

  mend_test_submit (f->chat, text);
  turn = mend_chat_get_turn (f->chat);
  g_assert_nonnull (turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);
  return turn;
}

MendTurn *
mend_test_recording_last_finished (MendTestRecording *f)
{
  g_assert_cmpuint (f->finished->len, >, 0);
  return g_ptr_array_index (f->finished, f->finished->len - 1);
}

guint
mend_test_recording_n_subagents (MendTestRecording *f)
{
  return g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_subagents (f->chat)));
}

gboolean
mend_test_recording_has_record (MendTestRecording *f,
                                const char        *kind,
                                const char        *outcome)
{
  return mend_test_count_records (f->records, kind, outcome) > 0;
}

guint
mend_test_count_occurrences (const char *haystack,
                             const char *needle)
{
  guint n = 0;

  for (const char *p = strstr (haystack, needle); p != NULL; p = strstr (p + 1, needle))
    n++;
  return n;
}

void
mend_test_append_chat_text (MendChat   *chat,
                            MendTurn   *turn,
                            const char *text,
                            GString    *texts)
{
  g_assert_true (MEND_IS_TURN (turn));
  g_string_append (texts, text);
}
