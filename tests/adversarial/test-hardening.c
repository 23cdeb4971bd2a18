/* test-hardening.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every structure input can grow is capped, and each cap says which it is
 * when it holds; secrets never reach messages, records or logs.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-stream-observer-private.h"
#include "mend-subagent-retry-private.h"

#define WALL_START 1764500000000000

static const char * const secrets[] = {
  "sk-ant-api03-AbCdEf0123456789_-xyz",
  "eyJhbGciOiJIUzI1NiJ9.payload.signature",
  "sess-0123456789abcdef",
};

static GString *logged;

static void
capture_log (const char     *domain,
             GLogLevelFlags  level,
             const char     *message,
             gpointer        data)
{
  g_string_append_printf (logged, "%s\n", message);
}

static void
assert_no_secret (const char *text)
{
  for (guint i = 0; i < G_N_ELEMENTS (secrets); i++)
    if (text != NULL && strstr (text, secrets[i]) != NULL)
      g_error ("a secret leaked: %s", text);
}

static void
test_cap_queue_items (void)
{
  MendQueue *queue = mend_queue_new (NULL);
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < MEND_QUEUE_DEFAULT_MAX_ITEMS; i++)
    g_assert_nonnull (mend_queue_push (queue, "x", NULL, NULL));
  g_assert_null (mend_queue_push (queue, "one more", NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_FULL);
  g_assert_nonnull (strstr (error->message, "16"));
  g_assert_cmpuint (mend_queue_get_length (queue), ==, MEND_QUEUE_DEFAULT_MAX_ITEMS);
  g_assert_finalize_object (queue);
}

static void
test_cap_queue_item_bytes (void)
{
  MendQueue *queue = mend_queue_new (NULL);
  g_autofree char *fits = g_strnfill (MEND_QUEUE_DEFAULT_MAX_ITEM_BYTES, 'x');
  g_autofree char *over = g_strnfill (MEND_QUEUE_DEFAULT_MAX_ITEM_BYTES + 1, 'x');
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (mend_queue_push (queue, fits, NULL, NULL));
  g_assert_null (mend_queue_push (queue, over, NULL, &error));
  g_assert_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_TOO_LARGE);
  g_assert_nonnull (strstr (error->message, "262144"));
  g_assert_finalize_object (queue);
}

static void
test_cap_failed_subagents (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);

  g_assert_cmpuint (mend_subagent_retry_get_max_failed (retry), ==, MEND_SUBAGENT_RETRY_DEFAULT_MAX_FAILED);
  for (guint i = 0; i < MEND_SUBAGENT_RETRY_DEFAULT_MAX_FAILED + 1; i++)
    {
      g_autofree char *id = g_strdup_printf ("agent-%u", i);
      g_autoptr(MendFailure) failure = mend_failure_new_from_text ("API Error: 400 invalid_request_error");

      mend_subagent_retry_note_started (retry, id, id, id);
      mend_subagent_retry_note_failed (retry, id, failure);
    }
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (retry)), ==, MEND_SUBAGENT_RETRY_DEFAULT_MAX_FAILED);
  g_assert_null (mend_subagent_retry_lookup (retry, "agent-0"));

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
test_cap_observer_line_length (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  MendStreamObserver *observer = mend_stream_observer_new (chat);
  guint cap = 1000;
  g_autoptr(GString) line = g_string_new ("{\"type\":\"system\",\"subtype\":\"init\",\"p\":\"");

  mend_stream_observer_set_max_line_bytes (observer, cap);
  while (line->len < cap - 2)
    g_string_append_c (line, 'x');
  g_string_append (line, "\"}");
  g_assert_cmpuint (line->len, ==, cap);
  g_assert_true (mend_stream_observer_feed_line (observer, line->str, line->len));
  mend_chat_end_external_turn (chat);

  g_string_insert_c (line, 40, 'x');
  g_assert_false (mend_stream_observer_feed_line (observer, line->str, line->len));
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (observer), ==, 1);
  g_assert_false (mend_chat_get_external_turn (chat));

  g_assert_finalize_object (observer);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static char *
nested (guint depth)
{
  GString *json = g_string_new ("{\"delays\":");

  for (guint i = 1; i < depth; i++)
    g_string_append_c (json, '[');
  for (guint i = 1; i < depth; i++)
    g_string_append_c (json, ']');
  g_string_append_c (json, '}');
  return g_string_free (json, FALSE);
}

static void
test_cap_json_depth (void)
{
  g_autofree char *at_cap = nested (64);
  g_autofree char *over = nested (65);
  g_autoptr(GError) error = NULL;

  /* 64 levels parse (and are then refused for what they hold)… */
  g_assert_null (mend_error_policy_new_from_json (at_cap, &error));
  g_assert_nonnull (strstr (error->message, "delays"));
  g_clear_error (&error);

  /* …65 are refused before the parser sees them, naming the cap. */
  g_assert_null (mend_error_policy_new_from_json (over, &error));
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "64"));
}

static void
test_cap_failure_message (void)
{
  g_autofree char *fits = g_strnfill (MEND_FAILURE_MAX_MESSAGE_BYTES, 'x');
  g_autofree char *over = g_strnfill (MEND_FAILURE_MAX_MESSAGE_BYTES + 1, 'x');
  MendFailure *a = mend_failure_new_from_text (fits);
  MendFailure *b = mend_failure_new_from_text (over);

  g_assert_cmpstr (mend_failure_get_message (a), ==, fits);
  g_assert_cmpuint (strlen (mend_failure_get_message (b)), <=, MEND_FAILURE_MAX_MESSAGE_BYTES);
  g_assert_true (g_str_has_suffix (mend_failure_get_message (b), "…"));

  g_assert_finalize_object (a);
  g_assert_finalize_object (b);
}

static void
test_cap_subagent_name_in_prompt (void)
{
  g_autofree char *name = g_strnfill (MEND_SUBAGENT_NAME_MAX_CHARS + 1, 'n');
  g_autofree char *fits = g_strnfill (MEND_SUBAGENT_NAME_MAX_CHARS, 'n');
  g_autofree char *prompt = mend_subagent_retry_build_prompt (name, "agent-1");
  g_autofree char *whole = mend_subagent_retry_build_prompt (fits, "agent-1");
  g_autofree char *quoted = g_strdup_printf ("“%s…”", fits);
  g_autofree char *quoted_whole = g_strdup_printf ("“%s”", fits);

  g_assert_nonnull (strstr (prompt, quoted));
  g_assert_nonnull (strstr (whole, quoted_whole));
}

static void
test_cap_subagent_ids_and_names (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  MendSubagentRetry *retry = mend_chat_get_subagents (chat);
  g_autofree char *id_fits = g_strnfill (MEND_SUBAGENT_MAX_ID_BYTES, 'i');
  g_autofree char *id_over = g_strnfill (MEND_SUBAGENT_MAX_ID_BYTES + 1, 'i');
  g_autofree char *name = g_strnfill (MEND_SUBAGENT_MAX_NAME_BYTES + 1, 'n');
  g_autoptr(MendFailure) failure = mend_failure_new_from_text ("API Error: 503 overloaded");
  MendSubagent *sub;

  sub = mend_subagent_retry_note_started (retry, id_fits, id_fits, name);
  g_assert_nonnull (sub);
  g_assert_cmpuint (strlen (mend_subagent_get_name (sub)), ==, MEND_SUBAGENT_MAX_NAME_BYTES);

  g_assert_null (mend_subagent_retry_note_started (retry, id_over, "agent", "x"));
  g_assert_null (mend_subagent_retry_note_started (retry, "id", id_over, "x"));
  mend_subagent_retry_note_failed (retry, id_over, failure);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (retry)), ==, 1);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
test_secrets_never_reach_messages (void)
{
  g_autofree char *text = g_strdup_printf ("API Error: 401 invalid x-api-key: %s", secrets[0]);
  g_autofree char *bearer = g_strdup_printf ("upstream refused Authorization: Bearer %s", secrets[1]);
  g_autofree char *body = g_strdup_printf ("{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\","
                                           "\"message\":\"key %s is invalid; request had api_key=%s\"}}",
                                           secrets[0], secrets[2]);
  g_autoptr(GBytes) bytes = g_bytes_new (body, strlen (body));
  g_autoptr(GError) gerror = g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED, "x-api-key=%s", secrets[2]);
  MendFailure *failures[4];

  failures[0] = mend_failure_new_from_text (text);
  failures[1] = mend_failure_new_from_text (bearer);
  failures[2] = mend_failure_new_from_http (401, NULL, bytes);
  failures[3] = mend_failure_new_from_error (gerror);

  for (guint i = 0; i < G_N_ELEMENTS (failures); i++)
    {
      g_test_message ("%s", mend_failure_get_message (failures[i]));
      assert_no_secret (mend_failure_get_message (failures[i]));
      g_assert_nonnull (strstr (mend_failure_get_message (failures[i]), "[redacted]"));
      g_assert_cmpint (mend_failure_get_reason (failures[i]), !=, MEND_REASON_TRANSPORT);
      g_assert_finalize_object (failures[i]);
    }
}

static void
on_record (GObject    *source,
           const char *json,
           GString    *out)
{
  g_string_append_printf (out, "%s\n", json);
}

static void
test_secrets_never_reach_records_or_logs (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  MendStreamObserver *observer = mend_stream_observer_new (chat);
  g_autoptr(GString) records = g_string_new (NULL);
  g_autofree char *result = g_strdup_printf ("{\"type\":\"result\",\"is_error\":true,\"api_error_status\":529,"
                                             "\"result\":\"overloaded (Authorization: Bearer %s)\"}", secrets[1]);
  g_autofree char *bad = g_strdup_printf ("{\"type\":\"system\",\"x-api-key\":\"%s\", broken", secrets[0]);
  g_autofree char *saved = NULL;
  guint handler;

  logged = g_string_new (NULL);
  handler = g_log_set_handler ("Mend", G_LOG_LEVEL_DEBUG | G_LOG_LEVEL_INFO | G_LOG_LEVEL_MESSAGE,
                               capture_log, NULL);
  g_signal_connect (chat, "record", G_CALLBACK (on_record), records);
  g_signal_connect (mend_chat_get_subagents (chat), "record", G_CALLBACK (on_record), records);

  g_assert_true (mend_chat_submit (chat, "hello", NULL, NULL));
  g_assert_true (mend_stream_observer_feed_line (observer, result, -1));
  g_assert_false (mend_stream_observer_feed_line (observer, bad, -1));
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (observer), ==, 1);
  saved = mend_chat_save_state (chat);

  g_assert_cmpuint (records->len, >, 0);
  /* The bad line was logged, redacted. */
  g_assert_nonnull (strstr (logged->str, "Stream line ignored"));
  g_assert_nonnull (strstr (logged->str, "[redacted]"));
  assert_no_secret (records->str);
  assert_no_secret (logged->str);
  assert_no_secret (saved);
  assert_no_secret (mend_failure_get_message (mend_turn_get_last_failure (mend_chat_get_turn (chat))));

  g_log_remove_handler ("Mend", handler);
  g_string_free (logged, TRUE);
  logged = NULL;
  g_assert_finalize_object (observer);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

int
main (int   argc,
      char *argv[])
{
  /* libmend's debug messages are built only when someone listens. */
  g_setenv ("G_MESSAGES_DEBUG", "Mend", TRUE);
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/Hardening/cap/queue-items-16", test_cap_queue_items);
  g_test_add_func ("/Mend/Hardening/cap/queue-item-bytes-262144", test_cap_queue_item_bytes);
  g_test_add_func ("/Mend/Hardening/cap/failed-subagents-32", test_cap_failed_subagents);
  g_test_add_func ("/Mend/Hardening/cap/observer-line-length", test_cap_observer_line_length);
  g_test_add_func ("/Mend/Hardening/cap/json-depth-64", test_cap_json_depth);
  g_test_add_func ("/Mend/Hardening/cap/failure-message-4096-bytes", test_cap_failure_message);
  g_test_add_func ("/Mend/Hardening/cap/subagent-name-in-prompt-80-chars", test_cap_subagent_name_in_prompt);
  g_test_add_func ("/Mend/Hardening/cap/subagent-ids-256-and-names-1024-bytes", test_cap_subagent_ids_and_names);
  g_test_add_func ("/Mend/Hardening/secrets-never-reach-messages", test_secrets_never_reach_messages);
  g_test_add_func ("/Mend/Hardening/secrets-never-reach-records-or-logs", test_secrets_never_reach_records_or_logs);

  return g_test_run ();
}
