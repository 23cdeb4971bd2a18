/* test-attack-state.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Lifecycle attacks through saved state: hostile or inconsistent state,
 * and restores re-entered from handlers. Each test names the behaviour it
 * expects; run them under AddressSanitizer too. The live attacks are in
 * test-attack.c.
 */

#include <string.h>

#include <fcntl.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START 1764500000000000
#define GATEWAY_503 "API Error: 503 no non-exhausted claude accounts available (error type server_error, HTTP 503)"

typedef struct
{
  GPtrArray *fired;      /* prompt ids of the resume prompts sent */
} Fired;

static void
on_fired (MendSubagentRetry *retry,
          MendSubagent      *subagent,
          const char        *prompt_id,
          Fired             *f)
{
  g_ptr_array_add (f->fired, g_strdup (prompt_id));
}

static char *
prompt_id_of_item (MendQueueItem *item)
{
  g_autoptr(JsonNode) node = json_from_string (mend_queue_item_get_provenance (item), NULL);

  g_assert_nonnull (node);
  return g_strdup (json_object_get_string_member (json_node_get_object (node), "promptId"));
}

/* A chat busy with the user's turn, a subagent's resume prompt queued
 * behind it. */
static char *
state_with_queued_resume_prompt (MendClock *clock)
{
  return mend_test_state_with_queued_resume_prompt (mend_test_new_chat_by_hand (clock), clock);
}

static void
test_resume_prompt_ids_stay_unique_after_restore (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autofree char *state = state_with_queued_resume_prompt (clock);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(MendFailure) failure = mend_failure_new_from_text (GATEWAY_503);
  MendQueueItem *restored = NULL;
  g_autofree char *restored_id = NULL;
  g_autoptr(GError) error = NULL;
  Fired f = { g_ptr_array_new_with_free_func (g_free) };

  g_assert_true (mend_chat_restore_state (chat, state, &error));
  g_assert_no_error (error);
  restored = mend_queue_peek (mend_chat_get_queue (chat));
  g_assert_nonnull (restored);
  restored_id = prompt_id_of_item (restored);

  /* A second subagent fails after the restart: its prompt queues too. */
  g_signal_connect (retry, "fired", G_CALLBACK (on_fired), &f);
  mend_subagent_retry_note_started (retry, "toolu_2", "agent-b", "Write docs");
  mend_subagent_retry_note_failed (retry, "agent-b", failure);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 30000);
  g_assert_cmpuint (f.fired->len, ==, 1);

  /* Two prompts out at once, one id each. */
  g_assert_cmpstr (g_ptr_array_index (f.fired, 0), !=, restored_id);

  g_ptr_array_unref (f.fired);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

#define FAILURE_503 "{\"reason\":\"capacity\",\"status\":503,\"retryAfterMs\":-1,\"partial\":false,\"message\":\"overloaded\"}"

static char *
saved_subagent_as (const char *id,
                   const char *agent_id,
                   const char *state,
                   gboolean    retryable,
                   const char *prompt_id,
                   gboolean    prompt_queued,
                   const char *retry)
{
  g_autofree char *prompt = prompt_id ? g_strdup_printf ("\"%s\"", prompt_id) : g_strdup ("null");

  return g_strdup_printf ("{\"subagentId\":\"%s\",\"agentId\":\"%s\",\"name\":\"task %s\","
                          "\"state\":\"%s\",\"attempts\":0,\"retryable\":%s,\"manual\":false,"
                          "\"held\":false,\"promptId\":%s,\"promptQueued\":%s,"
                          "\"failure\":" FAILURE_503 ",\"retry\":%s}",
                          id, agent_id, id, state, retryable ? "true" : "false", prompt,
                          prompt_queued ? "true" : "false", retry ? retry : "null");
}

static char *
saved_subagent (const char *id,
                const char *state,
                gboolean    retryable,
                const char *prompt_id,
                gboolean    prompt_queued,
                const char *retry)
{
  g_autofree char *agent_id = g_strdup_printf ("agent-%s", id);

  return saved_subagent_as (id, agent_id, state, retryable, prompt_id, prompt_queued, retry);
}

static char *
saved_chat (const char *subagents)
{
  return g_strdup_printf ("{\"version\":1,\"chatId\":\"c\",\"lifecycle\":\"ready\",\"queue\":[],"
                          "\"turn\":null,\"subagents\":[%s]}", subagents);
}

/* The cap on failed subagents holds for a restored list too. */
static void
test_restore_keeps_at_most_max_failed_subagents (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autoptr(GString) list = g_string_new (NULL);
  g_autofree char *state = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < 200; i++)
    {
      g_autofree char *id = g_strdup_printf ("s%u", i);
      g_autofree char *entry = saved_subagent (id, "failed", TRUE, NULL, FALSE, NULL);

      g_string_append_printf (list, "%s%s", i ? "," : "", entry);
    }
  state = saved_chat (list->str);

  g_assert_true (mend_chat_restore_state (chat, state, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (retry)), <=,
                    mend_subagent_retry_get_max_failed (retry));

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
count_prompt (MendChat *chat,
              MendTurn *turn,
              guint    *n)
{
  (*n)++;
}

/* A subagent that ended is never resumed, whatever the saved state says. */
static void
test_restored_ended_subagent_is_never_resumed (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autofree char *wait = g_strdup_printf ("{\"attempt\":1,\"of\":4,\"reason\":\"capacity\",\"nextAt\":%"
                                           G_GINT64_FORMAT "}", WALL_START / 1000 + 1000);
  g_autofree char *entry = saved_subagent ("done", "completed", TRUE, NULL, FALSE, wait);
  g_autofree char *state = saved_chat (entry);
  g_autoptr(GError) error = NULL;
  MendSubagent *sub;
  guint turns = 0;

  g_signal_connect (chat, "turn-started", G_CALLBACK (count_prompt), &turns);
  if (!mend_chat_restore_state (chat, state, &error))
    {
      /* Refusing the contradiction is as good. */
      g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
      g_clear_error (&error);
    }
  else
    {
      /* No resume prompt goes out for it. */
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 3600 * 1000);
      g_assert_cmpuint (turns, ==, 0);

      sub = mend_subagent_retry_lookup (retry, "done");
      g_assert_nonnull (sub);
      g_assert_cmpint (mend_subagent_get_state (sub), ==, MEND_SUBAGENT_COMPLETED);
      g_assert_false (mend_subagent_get_retryable (sub));
      g_assert_null (mend_subagent_get_retry (sub));
      g_assert_false (mend_subagent_retry_resume_now (retry, "done", &error));
      g_assert_nonnull (error);
      g_assert_cmpuint (turns, ==, 0);
    }

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* A saved prompt said to be queued, with no such prompt in the saved
 * queue, is not under way: the person's Retry works. */
static void
test_restored_prompt_missing_from_queue_does_not_block_retry (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autofree char *entry = saved_subagent ("lost", "failed", TRUE, "sr-7", TRUE, NULL);
  g_autofree char *state = saved_chat (entry);
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_chat_restore_state (chat, state, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (chat)), ==, 0);

  g_assert_true (mend_subagent_retry_resume_now (retry, "lost", &error));
  g_assert_no_error (error);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* A handler that submits while the state is restored (here, on the
 * subagent list's items-changed) does not make the saved turn vanish. */

static void
submit_on_items_changed (GListModel *model,
                         guint       position,
                         guint       removed,
                         guint       added,
                         MendChat   *chat)
{
  g_signal_handlers_disconnect_by_func (model, submit_on_items_changed, chat);
  g_assert_true (mend_chat_submit (chat, "Also update the README", NULL, NULL));
}

static void
test_submit_during_restore_keeps_the_saved_turn (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  g_autofree char *entry = saved_subagent ("s", "failed", TRUE, NULL, FALSE, NULL);
  g_autofree char *state = g_strdup_printf ("{\"version\":1,\"chatId\":\"c\",\"lifecycle\":\"ready\",\"queue\":[],"
                                            "\"turn\":{\"id\":\"t1\",\"prompt\":\"Fix the build\",\"provenance\":null,"
                                            "\"attempt\":1,\"state\":\"running\",\"failure\":null},"
                                            "\"subagents\":[%s]}", entry);
  g_autoptr(GError) error = NULL;
  MendQueue *queue = mend_chat_get_queue (chat);
  gboolean saved_turn_kept = FALSE;

  g_signal_connect (mend_chat_get_subagents (chat), "items-changed", G_CALLBACK (submit_on_items_changed), chat);
  g_assert_true (mend_chat_restore_state (chat, state, &error));
  g_assert_no_error (error);

  /* The saved turn runs, or waits its turn in the queue: it is not lost. */
  if (mend_chat_get_turn (chat) != NULL &&
      g_strcmp0 (mend_turn_get_prompt (mend_chat_get_turn (chat)), "Fix the build") == 0)
    saved_turn_kept = TRUE;
  for (guint i = 0; i < mend_queue_get_length (queue); i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);

      if (g_strcmp0 (mend_queue_item_get_text (item), "Fix the build") == 0)
        saved_turn_kept = TRUE;
    }
  g_assert_true (saved_turn_kept);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* Saved state is bounded like live events: an id past
 * MEND_SUBAGENT_MAX_ID_BYTES is refused there too. */
static void
test_restored_subagent_ids_stay_within_bounds (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autofree char *long_id = g_strnfill (64 * 1024, 'x');
  g_autofree char *entry = saved_subagent (long_id, "failed", TRUE, NULL, FALSE, NULL);
  g_autofree char *state = saved_chat (entry);
  g_autoptr(GError) error = NULL;

  if (mend_chat_restore_state (chat, state, &error))
    {
      for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (retry)); i++)
        {
          g_autoptr(MendSubagent) sub = g_list_model_get_item (G_LIST_MODEL (retry), i);

          g_assert_cmpuint (strlen (mend_subagent_get_id (sub)), <=, MEND_SUBAGENT_MAX_ID_BYTES);
          g_assert_cmpuint (strlen (mend_subagent_get_agent_id (sub)), <=, MEND_SUBAGENT_MAX_ID_BYTES);
        }
    }
  else
    g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* Two saved subagents that claim one agent id: when that agent resumes,
 * neither is resumed again by a prompt. */
static void
test_restored_duplicate_agent_id_is_skipped_on_resume (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autofree char *wait = g_strdup_printf ("{\"attempt\":1,\"of\":4,\"reason\":\"capacity\",\"nextAt\":%"
                                           G_GINT64_FORMAT "}", WALL_START / 1000 + 20000);
  g_autofree char *first = saved_subagent_as ("s1", "agent-x", "failed", TRUE, NULL, FALSE, wait);
  g_autofree char *second = saved_subagent_as ("s2", "agent-x", "failed", TRUE, NULL, FALSE, wait);
  g_autofree char *both = g_strdup_printf ("%s,%s", first, second);
  g_autofree char *state = saved_chat (both);
  g_autoptr(GError) error = NULL;
  guint turns = 0;

  g_signal_connect (chat, "turn-started", G_CALLBACK (count_prompt), &turns);
  if (mend_chat_restore_state (chat, state, &error))
    {
      /* The agent runs again. */
      mend_subagent_retry_note_resumed (retry, "agent-x");
      mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 3600 * 1000);
      g_assert_cmpuint (turns, ==, 0);
    }
  else
    g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* A saved wait far in the future (a clock that jumped, a hostile file) does
 * not hold the chat BUSY past what its policy would ever wait. */
static void
test_restored_turn_waits_no_longer_than_its_policy_allows (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendErrorPolicy *policy = mend_chat_get_policy (chat);
  gint64 ten_years_ms = (gint64) 10 * 365 * 24 * 3600 * 1000;
  g_autofree char *state = g_strdup_printf ("{\"version\":1,\"chatId\":\"c\",\"lifecycle\":\"ready\",\"queue\":[],"
                                            "\"turn\":{\"id\":\"t1\",\"prompt\":\"Fix the build\",\"provenance\":null,"
                                            "\"attempt\":1,\"state\":\"waiting\",\"nextAt\":%" G_GINT64_FORMAT ","
                                            "\"failure\":" FAILURE_503 "},\"subagents\":[]}",
                                            WALL_START / 1000 + ten_years_ms);
  g_autoptr(GError) error = NULL;
  MendRetryWait *wait;
  guint64 longest;

  g_assert_true (mend_chat_restore_state (chat, state, &error));
  g_assert_no_error (error);
  g_assert_nonnull (mend_chat_get_turn (chat));
  wait = mend_turn_get_wait (mend_chat_get_turn (chat));
  g_assert_nonnull (wait);

  longest = MAX (mend_error_policy_get_max_delay_ms (policy),
                 mend_error_policy_get_retry_after_max_ms (policy)) +
            mend_error_policy_get_stagger_ms (policy);
  g_assert_cmpint (mend_retry_wait_get_remaining_ms (wait), <=, (gint64) longest);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* Queue ids stay unique after a restore, even when a saved id is the
 * largest number an id can carry. */
static void
test_queue_ids_stay_unique_after_restoring_the_largest_id (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendQueue *queue = mend_chat_get_queue (chat);
  const char *state =
    "{\"version\":1,\"chatId\":\"c\",\"lifecycle\":\"ready\",\"queue\":["
    "{\"id\":\"q18446744073709551615\",\"text\":\"A\",\"provenance\":null,\"queuedAt\":1764500000000},"
    "{\"id\":\"q1\",\"text\":\"B\",\"provenance\":null,\"queuedAt\":1764500000000}],"
    "\"turn\":null,\"subagents\":[]}";
  g_autoptr(GHashTable) ids = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_chat_restore_state (chat, state, &error));
  g_assert_no_error (error);
  /* A turn runs, so that these queue. */
  mend_chat_begin_external_turn (chat);
  g_assert_true (mend_chat_submit (chat, "C", NULL, NULL));
  g_assert_true (mend_chat_submit (chat, "D", NULL, NULL));
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 4);

  for (guint i = 0; i < mend_queue_get_length (queue); i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);

      g_assert_true (g_hash_table_add (ids, (gpointer) mend_queue_item_get_id (item)));
    }

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* A path whose name is near the longest a directory allows: the save's
 * own file beside it must not have a longer name, which would make a path
 * the file system takes unsavable. */
static void
test_save_to_a_long_name (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  g_autofree char *dir = g_dir_make_tmp ("mend-attack-XXXXXX", NULL);
  g_autofree char *name = g_strnfill (250, 'a');
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autoptr(GError) error = NULL;

  int fd;

  g_assert_nonnull (dir);
  /* The name itself is fine. */
  fd = g_open (path, O_CREAT | O_WRONLY, 0600);
  g_assert_cmpint (fd, >=, 0);
  close (fd);

  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  mend_chat_save_state_to_file (chat, path, &error);
  g_assert_no_error (error);

  g_unlink (path);
  g_rmdir (dir);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* Another chat's state file whose name happens to have the shape of a
 * save's own file beside this chat's path is that chat's good state, not
 * a dead save's leftovers. */
static void
test_save_keeps_a_neighbour_named_like_a_save_file (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = mend_test_new_chat_by_hand (clock);
  MendChat *other = mend_test_new_chat_by_hand (clock);
  g_autofree char *dir = g_dir_make_tmp ("mend-attack-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "chat.json", NULL);
  g_autofree char *neighbour = g_build_filename (dir, "chat.json.backup.saving", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_chat_submit (other, "Keep me", NULL, NULL));
  g_assert_true (mend_chat_save_state_to_file (other, neighbour, &error));
  g_assert_no_error (error);

  g_assert_true (mend_chat_save_state_to_file (chat, path, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_test (neighbour, G_FILE_TEST_EXISTS));

  g_unlink (path);
  g_unlink (neighbour);
  g_rmdir (dir);
  mend_chat_close (other);
  mend_chat_close (chat);
  g_assert_finalize_object (other);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/Mend/Attack/resume-prompt-ids-stay-unique-after-restore",
                   test_resume_prompt_ids_stay_unique_after_restore);
  g_test_add_func ("/Mend/Attack/restore-keeps-at-most-max-failed-subagents",
                   test_restore_keeps_at_most_max_failed_subagents);
  g_test_add_func ("/Mend/Attack/restored-ended-subagent-is-never-resumed",
                   test_restored_ended_subagent_is_never_resumed);
  g_test_add_func ("/Mend/Attack/restored-prompt-missing-from-queue-does-not-block-retry",
                   test_restored_prompt_missing_from_queue_does_not_block_retry);
  g_test_add_func ("/Mend/Attack/submit-during-restore-keeps-the-saved-turn",
                   test_submit_during_restore_keeps_the_saved_turn);
  g_test_add_func ("/Mend/Attack/restored-subagent-ids-stay-within-bounds",
                   test_restored_subagent_ids_stay_within_bounds);
  g_test_add_func ("/Mend/Attack/restored-duplicate-agent-id-is-skipped-on-resume",
                   test_restored_duplicate_agent_id_is_skipped_on_resume);
  g_test_add_func ("/Mend/Attack/restored-turn-waits-no-longer-than-its-policy-allows",
                   test_restored_turn_waits_no_longer_than_its_policy_allows);
  g_test_add_func ("/Mend/Attack/queue-ids-stay-unique-after-restoring-the-largest-id",
                   test_queue_ids_stay_unique_after_restoring_the_largest_id);

  g_test_add_func ("/Mend/Attack/save-to-a-long-name", test_save_to_a_long_name);
  g_test_add_func ("/Mend/Attack/save-keeps-a-neighbour-named-like-a-save-file",
                   test_save_keeps_a_neighbour_named_like_a_save_file);

  return g_test_run ();
}
