/* test-transcript-json.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendTranscript on its own: its JSON, its bounds, and the state a sender
 * saves with it. The conversation through a chat and a loopback server is
 * in test-transcript.c.
 */

#include <string.h>

#include <libmend.h>

/* Transcripts on their own */

static void
on_changed (MendTranscript *transcript,
            guint          *n)
{
  (*n)++;
}

static const char THREE_TURNS[] =
  "[{\"role\":\"user\",\"content\":\"u1\"},"
  "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"a1\"}]},"
  "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"u2\"}]},"
  "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Read\",\"input\":{}}]},"
  "{\"role\":\"assistant\",\"content\":\"a2, again\"},"
  "{\"role\":\"user\",\"content\":\"u3\"},"
  "{\"role\":\"assistant\",\"content\":\"a3\"}]";

static void
test_bound_drops_the_oldest_turns_whole (void)
{
  MendTranscript *transcript = mend_transcript_new ();
  g_autofree char *all = NULL;
  g_autofree char *last_two = NULL;
  g_autofree char *last = NULL;
  guint changed = 0;
  gsize size;

  g_signal_connect (transcript, "changed", G_CALLBACK (on_changed), &changed);
  g_assert_cmpuint (mend_transcript_get_max_messages (transcript), ==, MEND_TRANSCRIPT_DEFAULT_MAX_MESSAGES);
  g_assert_cmpuint (mend_transcript_get_max_bytes (transcript), ==, MEND_TRANSCRIPT_DEFAULT_MAX_BYTES);

  g_assert_true (mend_transcript_load_json (transcript, THREE_TURNS, NULL));
  g_assert_cmpuint (changed, ==, 1);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 7);
  all = mend_transcript_to_json (transcript);
  g_assert_cmpstr (all, ==, THREE_TURNS);

  /* Six is too many by one: the whole first turn goes. */
  mend_transcript_set_max_messages (transcript, 6);
  g_assert_cmpuint (changed, ==, 2);
  last_two = mend_transcript_to_json (transcript);
  g_assert_true (g_str_has_prefix (last_two, "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"u2\"}]},"));
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 5);

  /* Bytes: one byte short of the last two turns leaves the last one. */
  size = strlen (last_two);
  mend_transcript_set_max_bytes (transcript, size);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 5);
  mend_transcript_set_max_bytes (transcript, size - 1);
  last = mend_transcript_to_json (transcript);
  g_assert_cmpstr (last, ==, "[{\"role\":\"user\",\"content\":\"u3\"},{\"role\":\"assistant\",\"content\":\"a3\"}]");

  /* The newest turn stays, whatever the bound. */
  mend_transcript_set_max_bytes (transcript, 2);
  mend_transcript_set_max_messages (transcript, 2);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 2);
  g_assert_cmpuint (changed, ==, 3);

  /* What is loaded is bounded too. */
  mend_transcript_set_max_bytes (transcript, MEND_TRANSCRIPT_DEFAULT_MAX_BYTES);
  mend_transcript_set_max_messages (transcript, 3);
  g_assert_true (mend_transcript_load_json (transcript, THREE_TURNS, NULL));
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 2);

  g_assert_finalize_object (transcript);
}

static void
test_trim_and_clear (void)
{
  MendTranscript *transcript = mend_transcript_new ();
  g_autofree char *json = NULL;
  guint changed = 0;

  g_signal_connect (transcript, "changed", G_CALLBACK (on_changed), &changed);
  g_assert_true (mend_transcript_load_json (transcript, THREE_TURNS, NULL));

  mend_transcript_trim (transcript, 5);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 7);
  g_assert_cmpuint (changed, ==, 1);
  mend_transcript_trim (transcript, 2);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 5);
  mend_transcript_trim (transcript, 1);
  json = mend_transcript_to_json (transcript);
  g_assert_cmpstr (json, ==, "[{\"role\":\"user\",\"content\":\"u3\"},{\"role\":\"assistant\",\"content\":\"a3\"}]");
  g_assert_cmpuint (changed, ==, 3);
  mend_transcript_trim (transcript, 0);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 0);
  g_assert_cmpuint (changed, ==, 4);

  g_assert_true (mend_transcript_load_json (transcript, THREE_TURNS, NULL));
  mend_transcript_clear (transcript);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 0);
  g_clear_pointer (&json, g_free);
  json = mend_transcript_to_json (transcript);
  g_assert_cmpstr (json, ==, "[]");
  g_assert_cmpuint (changed, ==, 6);
  mend_transcript_clear (transcript);
  g_assert_cmpuint (changed, ==, 6);

  g_assert_finalize_object (transcript);
}

static void
test_load_json_refuses_bad_input_and_keeps_the_old (void)
{
  static const struct {
    const char *json;
    const char *says;
  } bad[] = {
    { "[{\"role\":\"user\",\"content\":\"x\"}", "not valid JSON" },
    { "", "not valid JSON" },
    { "{\"role\":\"user\",\"content\":\"x\"}", "not an array of messages" },
    { "\"hello\"", "not an array of messages" },
    { "[1]", "message 1 is not an object" },
    { "[{\"role\":\"user\",\"content\":\"x\"},{\"role\":\"system\",\"content\":\"y\"}]", "message 2 has no role" },
    { "[{\"content\":\"x\"}]", "message 1 has no role" },
    { "[{\"role\":\"assistant\",\"content\":\"x\"}]", "message 1 is not the user" },
    { "[{\"role\":\"user\"}]", "message 1 has no content" },
    { "[{\"role\":\"user\",\"content\":[]}]", "message 1 has no content" },
    { "[{\"role\":\"user\",\"content\":42}]", "neither text nor an array of blocks" },
    { "[{\"role\":\"user\",\"content\":null}]", "neither text nor an array of blocks" },
    { "[{\"role\":\"user\",\"content\":[{\"text\":\"x\"}]}]", "without a type" },
    { "[{\"role\":\"user\",\"content\":[\"x\"]}]", "without a type" },
    { "[{\"role\":\"user\",\"content\":[{\"type\":\"text\"}]}]", "text block without text" },
    { "[{\"role\":\"user\",\"content\":\"x\",\"name\":\"me\"}]", "members other than role and content" },
    { "[{\"role\":\"user\",\"content\":\"x\"} /* c */]", "not valid JSON" },
  };
  MendTranscript *transcript = mend_transcript_new ();
  g_autofree char *before = NULL;
  guint changed = 0;

  g_assert_true (mend_transcript_load_json (transcript, THREE_TURNS, NULL));
  before = mend_transcript_to_json (transcript);
  g_signal_connect (transcript, "changed", G_CALLBACK (on_changed), &changed);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *after = NULL;

      g_test_message ("%s", bad[i].json);
      g_assert_false (mend_transcript_load_json (transcript, bad[i].json, &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
      if (strstr (error->message, bad[i].says) == NULL)
        g_error ("“%s” does not say “%s”", error->message, bad[i].says);
      after = mend_transcript_to_json (transcript);
      g_assert_cmpstr (after, ==, before);
    }
  g_assert_cmpuint (changed, ==, 0);

  /* The last turn is always kept, so it must fit on its own: here it
   * takes 68 bytes. */
  g_assert_true (mend_transcript_load_json (transcript, "[{\"role\":\"user\",\"content\":\"small\"}]", NULL));
  mend_transcript_set_max_bytes (transcript, 67);
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *after = NULL;

    g_assert_false (mend_transcript_load_json (transcript, THREE_TURNS, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
    g_assert_nonnull (strstr (error->message, "its last turn is larger than 67 bytes (max-bytes)"));
    after = mend_transcript_to_json (transcript);
    g_assert_cmpstr (after, ==, "[{\"role\":\"user\",\"content\":\"small\"}]");
  }
  mend_transcript_set_max_bytes (transcript, 68);
  g_assert_true (mend_transcript_load_json (transcript, THREE_TURNS, NULL));
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 2);
  mend_transcript_set_max_bytes (transcript, MEND_TRANSCRIPT_DEFAULT_MAX_BYTES);

  /* An empty array is a valid, empty transcript. */
  g_assert_true (mend_transcript_load_json (transcript, "[]", NULL));
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 0);

  g_assert_finalize_object (transcript);
}

/* A tool call whose input nests @levels arrays deep. */
static char *
nested_input (guint levels)
{
  GString *text = g_string_new ("{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Deep\",\"input\":{\"a\":");

  for (guint i = 0; i < levels; i++)
    g_string_append_c (text, '[');
  for (guint i = 0; i < levels; i++)
    g_string_append_c (text, ']');
  g_string_append (text, "}}");
  return g_string_free (text, FALSE);
}

/* Whatever a transcript takes, from the app or from a model, its sender's
 * saved state restores: nothing nests deeper than a saved state may. */
static void
test_what_is_kept_can_be_saved_and_restored (void)
{
  MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  MendHttpSender *other = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  MendTranscript *transcript = mend_http_sender_get_transcript (sender);
  /* A message is {"role","content":[{…,"input":{"a":[…]}}]}: four levels
   * around the arrays, and the saved state two more around it. */
  g_autofree char *deepest = nested_input (58);
  g_autofree char *too_deep = nested_input (59);
  g_autofree char *fits = g_strdup_printf ("[{\"role\":\"user\",\"content\":\"u\"},"
                                           "{\"role\":\"assistant\",\"content\":[%s]}]", deepest);
  g_autofree char *does_not = g_strdup_printf ("[{\"role\":\"user\",\"content\":\"u\"},"
                                               "{\"role\":\"assistant\",\"content\":[%s]}]", too_deep);
  g_autoptr(GError) error = NULL;
  g_autofree char *state = NULL;
  g_autofree char *json = NULL;

  g_assert_false (mend_transcript_load_json (transcript, does_not, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull (strstr (error->message, "message 2 is nested too deeply"));

  g_assert_true (mend_transcript_load_json (transcript, fits, NULL));
  state = mend_sender_save_state (MEND_SENDER (sender));
  g_assert_true (mend_sender_restore_state (MEND_SENDER (other), state, NULL));
  json = mend_transcript_to_json (mend_http_sender_get_transcript (other));
  g_assert_cmpstr (json, ==, fits);

  g_assert_finalize_object (sender);
  g_assert_finalize_object (other);
}

#if MEND_HAS_AGENTS
/* A sender that keeps nothing yet (an agent process before it has a
 * session): its chat saves no sender state, and one without a session
 * changes nothing. */
static void
test_sender_without_state_saves_none (void)
{
  static const char *const argv[] = { "/bin/false", NULL };
  MendAgentProcess *agent = mend_agent_process_new (argv);
  MendAgentProcess *other = mend_agent_process_new (argv);
  MendChat *chat = mend_chat_new_with_sender (MEND_SENDER (agent), NULL);
  /* An agent feeds one chat: the restored chat has its own. */
  MendChat *restored = mend_chat_new_with_sender (MEND_SENDER (other), NULL);
  g_autofree char *state = mend_chat_save_state (chat);
  g_autofree char *with_sender_state = NULL;

  g_assert_null (mend_sender_save_state (MEND_SENDER (agent)));
  g_assert_null (strstr (state, "senderState"));

  with_sender_state = g_strdup_printf ("%.*s,\"senderState\":\"{}\"}", (int) strlen (state) - 1, state);
  g_assert_true (mend_chat_restore_state (restored, with_sender_state, NULL));

  mend_chat_close (chat);
  mend_chat_close (restored);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (restored);
  g_assert_finalize_object (agent);
  g_assert_finalize_object (other);
}
#endif

static void
test_http_sender_state_is_its_transcript (void)
{
  MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  MendHttpSender *other = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  g_autofree char *empty = mend_sender_save_state (MEND_SENDER (sender));
  g_autofree char *state = NULL;
  g_autofree char *json = NULL;

  g_assert_cmpstr (empty, ==, "{\"messages\":[],\"pending\":[]}");
  g_assert_true (mend_transcript_load_json (mend_http_sender_get_transcript (sender), THREE_TURNS, NULL));
  state = mend_sender_save_state (MEND_SENDER (sender));
  g_assert_true (mend_sender_restore_state (MEND_SENDER (other), state, NULL));
  json = mend_transcript_to_json (mend_http_sender_get_transcript (other));
  g_assert_cmpstr (json, ==, THREE_TURNS);

  g_assert_finalize_object (sender);
  g_assert_finalize_object (other);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/Transcript/bound-drops-the-oldest-turns-whole", test_bound_drops_the_oldest_turns_whole);
  g_test_add_func ("/Mend/Transcript/trim-and-clear", test_trim_and_clear);
  g_test_add_func ("/Mend/Transcript/load-json-refuses-bad-input-and-keeps-the-old",
                   test_load_json_refuses_bad_input_and_keeps_the_old);
  g_test_add_func ("/Mend/Transcript/what-is-kept-can-be-saved-and-restored",
                   test_what_is_kept_can_be_saved_and_restored);
#if MEND_HAS_AGENTS
  g_test_add_func ("/Mend/Transcript/sender-without-state-saves-none", test_sender_without_state_saves_none);
#endif
  g_test_add_func ("/Mend/Transcript/http-sender-state-is-its-transcript", test_http_sender_state_is_its_transcript);

  return g_test_run ();
}
