/* test-attack-stream-json.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The stream observer fed every recording of the real Claude Code CLI
 * twice: as the CLI wrote it, and written again as other JSON writers
 * would — spaces and tabs around every token, the members of every
 * object in another order ("type" last), a space before the line. JSON
 * says the same either way, so the chat must end the same way: the same
 * turns, states, attempts, failures, records, subagents, statuses and
 * text.
 */

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "mend-test-utils.h"

typedef MendTestRecording Recording;

typedef enum
{
  SPACED,         /* the members in order, blanks around every token */
  REORDERED,      /* and the members of each object reversed */
  ESCAPED,        /* the members in order, each letter of a string a \u escape */
} Rewrite;

static JsonNode *
reversed (JsonNode *node)
{
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *object = json_node_get_object (node);
      g_autoptr(JsonObject) copy = json_object_new ();
      g_autoptr(GList) members = g_list_reverse (json_object_get_members (object));

      for (GList *l = members; l != NULL; l = l->next)
        json_object_set_member (copy, l->data, reversed (json_object_get_member (object, l->data)));
      return json_node_init_object (json_node_alloc (), copy);
    }
  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);
      g_autoptr(JsonArray) copy = json_array_new ();

      for (guint i = 0; i < json_array_get_length (array); i++)
        json_array_add_element (copy, reversed (json_array_get_element (array, i)));
      return json_node_init_array (json_node_alloc (), copy);
    }
  return json_node_copy (node);
}

/* @json with each ASCII letter inside its strings written as a \u
 * escape: "type":"result" as "\u0074\u0079\u0070\u0065":"\u0072…". */
static char *
escape_letters (const char *json)
{
  GString *out = g_string_new (NULL);
  gboolean in_string = FALSE;

  for (const char *p = json; *p != '\0'; p++)
    {
      if (in_string && *p == '\\')
        {
          g_string_append_c (out, *p++);
          g_string_append_c (out, *p);
        }
      else if (in_string && g_ascii_isalpha (*p))
        g_string_append_printf (out, "\\u%04x", (guint) *p);
      else
        {
          if (*p == '"')
            in_string = !in_string;
          g_string_append_c (out, *p);
        }
    }
  return g_string_free (out, FALSE);
}

/* @line written again: pretty-printed with tabs, its line ends (which
 * are between tokens only: a string's are escaped) made spaces. */
static char *
rewrite (const char *line,
         Rewrite     how)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *pretty = NULL;

  if (!json_parser_load_from_data (parser, line, -1, NULL))
    return g_strdup (line);
  root = how == REORDERED ? reversed (json_parser_get_root (parser)) : json_node_copy (json_parser_get_root (parser));
  json_generator_set_root (generator, root);
  if (how == ESCAPED)
    {
      g_autofree char *compact = json_generator_to_data (generator, NULL);

      return escape_letters (compact);
    }
  json_generator_set_pretty (generator, TRUE);
  json_generator_set_indent (generator, 1);
  json_generator_set_indent_char (generator, '\t');
  pretty = json_generator_to_data (generator, NULL);
  g_strdelimit (pretty, "\n", ' ');
  return g_strconcat (" ", pretty, " ", NULL);
}

typedef struct
{
  GString   *text;
  GPtrArray *statuses;
} Seen;

static void
on_status (MendTurn   *turn,
           GParamSpec *pspec,
           Seen       *seen)
{
  const char *status = mend_turn_get_agent_status (turn);

  g_ptr_array_add (seen->statuses, g_strdup (status ? status : "(none)"));
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Seen     *seen)
{
  g_signal_connect (turn, "notify::agent-status", G_CALLBACK (on_status), seen);
}

/* Plays the recording @scenario of CLI @version, rewritten (or not),
 * and says how the chat ended, in one text. */
static char *
play (const char *version,
      const char *scenario,
      gboolean    rewritten,
      Rewrite     how)
{
  Recording f = { 0 };
  Seen seen = { g_string_new (NULL), g_ptr_array_new_with_free_func (g_free) };
  GString *outcome = g_string_new (NULL);
  g_autoptr(GRegex) turn_id = g_regex_new ("\"turnId\":\"[^\"]*\"", 0, 0, NULL);
  MendTurn *running;

  mend_test_recording_set_up (&f, NULL);
  mend_test_recording_load (&f, version, scenario);
  /* Retries at the same instants both times. */
  mend_error_policy_set_jitter (mend_chat_get_policy (f.chat), MEND_JITTER_NONE);
  if (rewritten)
    for (guint i = 0; f.lines[i] != NULL; i++)
      {
        char *line = rewrite (f.lines[i], how);

        g_free (f.lines[i]);
        f.lines[i] = line;
      }
  g_signal_connect (f.chat, "turn-started", G_CALLBACK (on_turn_started), &seen);
  g_signal_connect (f.chat, "text-delta", G_CALLBACK (mend_test_append_chat_text), seen.text);

  mend_test_recording_submit (&f, "Fix the build");
  g_assert_true (mend_test_recording_feed_until (&f, NULL));
  while (g_main_context_iteration (NULL, FALSE))
    ;

  for (guint i = 0; i < f.finished->len; i++)
    {
      MendTurn *turn = g_ptr_array_index (f.finished, i);
      MendFailure *failure = mend_turn_get_last_failure (turn);

      g_string_append_printf (outcome, "turn %u: state %d, attempt %u, failure %s %d %s\n", i,
                              mend_turn_get_state (turn), mend_turn_get_attempt (turn),
                              failure ? mend_failure_get_message (failure) : "-",
                              failure ? (int) mend_failure_get_reason (failure) : -1,
                              failure && mend_failure_get_partial (failure) ? "partial" : "");
    }
  running = mend_chat_get_turn (f.chat);
  if (running != NULL)
    {
      MendFailure *failure = mend_turn_get_last_failure (running);

      g_string_append_printf (outcome, "running: state %d, attempt %u, failure %s\n",
                              mend_turn_get_state (running), mend_turn_get_attempt (running),
                              failure ? mend_failure_get_message (failure) : "-");
    }
  /* Each turn's id is its own, at random. */
  for (guint i = 0; i < f.records->len; i++)
    {
      g_autofree char *record = g_regex_replace (turn_id, g_ptr_array_index (f.records, i), -1, 0,
                                                 "\"turnId\":\"…\"", 0, NULL);

      g_string_append_printf (outcome, "record %s\n", record);
    }
  g_string_append_printf (outcome, "subagents %u\n", mend_test_recording_n_subagents (&f));
  for (guint i = 0; i < seen.statuses->len; i++)
    g_string_append_printf (outcome, "status %s\n", (const char *) g_ptr_array_index (seen.statuses, i));
  g_string_append_printf (outcome, "text %s\n", seen.text->str);

  mend_chat_close (f.chat);
  g_signal_handlers_disconnect_by_data (f.chat, &seen);
  g_signal_handlers_disconnect_by_data (f.chat, seen.text);
  for (guint i = 0; i < f.finished->len; i++)
    g_signal_handlers_disconnect_by_data (g_ptr_array_index (f.finished, i), &seen);
  mend_test_recording_tear_down (&f, NULL);
  g_string_free (seen.text, TRUE);
  g_ptr_array_unref (seen.statuses);
  return g_string_free (outcome, FALSE);
}

static void
test_rewritten_recording_ends_the_same (gconstpointer data)
{
  const char *path = data;
  g_auto(GStrv) parts = g_strsplit (path, "/", 2);

  for (Rewrite how = SPACED; how <= ESCAPED; how++)
    {
      g_autofree char *as_written = play (parts[0], parts[1], FALSE, how);
      g_autofree char *rewritten = play (parts[0], parts[1], TRUE, how);

      if (how == SPACED)
        g_test_message ("%s", as_written);
      g_assert_cmpstr (rewritten, ==, as_written);
    }
}

/* Text deltas and the message after them, as a writer with ", " and
 * ": " separators writes them, or with "type" last: the chat's text is
 * the deltas', once. */
static void
test_text_whatever_the_spacing (void)
{
  static const char *lines[] = {
    "{\"type\": \"stream_event\", \"event\": {\"type\": \"content_block_delta\", \"index\": 0, "
    "\"delta\": {\"type\": \"text_delta\", \"text\": \"Hel\"}}, \"parent_tool_use_id\": null}",
    "{\"parent_tool_use_id\":null,\"event\":{\"index\":0,\"delta\":{\"text\":\"lo\",\"type\":\"text_delta\"},"
    "\"type\":\"content_block_delta\"},\"type\":\"stream_event\"}",
    /* A subagent's delta is not the answer. */
    " { \"type\" : \"stream_event\" , \"parent_tool_use_id\" : \"toolu_1\" , \"event\" : { \"type\" : "
    "\"content_block_delta\" , \"delta\" : { \"type\" : \"text_delta\" , \"text\" : \"not this\" } } }",
    "{\"message\": {\"model\": \"claude-sonnet-4-5\", \"content\": [{\"type\": \"text\", \"text\": \"Hello\"}]}, "
    "\"type\": \"assistant\", \"parent_tool_use_id\": null}",
  };
  Recording f = { 0 };
  g_autoptr(GString) text = g_string_new (NULL);

  mend_test_recording_set_up (&f, NULL);
  g_signal_connect (f.chat, "text-delta", G_CALLBACK (mend_test_append_chat_text), text);
  mend_test_recording_submit (&f, "Say hello");
  for (guint i = 0; i < G_N_ELEMENTS (lines); i++)
    mend_stream_observer_feed_line (f.observer, lines[i], -1);
  g_assert_cmpstr (text->str, ==, "Hello");

  /* A message with no delta before it is the text, spaced or not. */
  mend_chat_stop (f.chat);
  mend_test_recording_submit (&f, "Say it again");
  mend_stream_observer_feed_line (f.observer, lines[3], -1);
  g_assert_cmpstr (text->str, ==, "HelloHello");

  mend_chat_close (f.chat);
  g_signal_handlers_disconnect_by_data (f.chat, text);
  mend_test_recording_tear_down (&f, NULL);
}

/* Escapes that must stay escaped, next to letters that need none: a
 * quote, a backslash, "\\u0041" (a backslash, then "u0041"), a pair and
 * lone surrogates, a NUL. Text that spells a result in escaped quotes
 * is text, not a result; the escaped result after it ends the turn. */
static void
test_escaped_quotes_stay_text (void)
{
  static const char *text_line =
    "{\"type\":\"assistant\",\"parent_tool_use_id\":null,\"message\":{\"content\":[{\"type\":\"t\\u0065xt\","
    "\"text\":\"\\u0022type\\u0022:\\u0022result\\u0022,\\u0022subtype\\u0022:\\u0022success\\u0022 "
    "\\\\u0041 \\u005c\\u0022 \\ud83d\\ude00 end\"}]}}";
  /* Not JSON json-glib reads as it was written: left as it came. */
  static const char *hostile =
    "{\"type\":\"assistant\",\"parent_tool_use_id\":null,\"message\":{\"content\":[{\"type\":\"t\\u0065xt\","
    "\"text\":\"\\ud800 \\udc00 \\u0000 \\u0022type\\u0022:\\u0022result\\u0022\"}]}}";
  static const char *not_escapes =
    "{\"type\":\"assistant\",\"parent_tool_use_id\":null,\"message\":{\"content\":[{\"type\":\"text\","
    "\"text\":\"\\\\u0022type\\\\u0022:\\\\u0022result\\\\u0022\"}]}}";
  static const char *result_line =
    "{\"t\\u0079pe\":\"r\\u0065sult\",\"subtype\":\"success\",\"is_error\":false,"
    "\"result\":\"\\u0022type\\u0022:\\u0022system\\u0022 \\ud83d\\ude00\",\"session_id\":\"s\\u0031\"}";
  MendTestRecording f = { 0 };
  g_autoptr(GString) text = g_string_new (NULL);
  MendTurn *turn;

  mend_test_recording_set_up (&f, NULL);
  g_signal_connect (f.chat, "text-delta", G_CALLBACK (mend_test_append_chat_text), text);
  mend_test_recording_submit (&f, "Say it");
  turn = mend_chat_get_turn (f.chat);
  g_assert_nonnull (turn);
  mend_stream_observer_feed_line (f.observer, hostile, -1);
  mend_stream_observer_feed_line (f.observer, text_line, -1);
  mend_stream_observer_feed_line (f.observer, not_escapes, -1);
  g_assert_true (mend_chat_get_turn (f.chat) == turn);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_RUNNING);
  g_test_message ("%s", text->str);
  g_assert_true (g_str_has_prefix (text->str, "\"type\":\"result\",\"subtype\":\"success\" \\u0041 \\\" \xf0\x9f\x98\x80 end"));
  g_assert_nonnull (strstr (text->str, "\\u0022type\\u0022"));

  mend_stream_observer_feed_line (f.observer, result_line, -1);
  g_assert_null (mend_chat_get_turn (f.chat));
  g_assert_cmpuint (f.finished->len, ==, 1);
  g_assert_cmpint (mend_turn_get_state (g_ptr_array_index (f.finished, 0)), ==, MEND_TURN_SUCCEEDED);

  mend_chat_close (f.chat);
  g_signal_handlers_disconnect_by_data (f.chat, text);
  mend_test_recording_tear_down (&f, NULL);
}

int
main (int   argc,
      char *argv[])
{
  static const char *recordings[] = {
    "2.1.328/401-bad-key", "2.1.328/429-rate-limited", "2.1.328/503-no-accounts", "2.1.328/529-give-up",
    "2.1.328/background-bash", "2.1.328/dropped-mid-stream", "2.1.328/error-after-content",
    "2.1.328/stop-during-retries", "2.1.328/subagent-401", "2.1.328/subagent-503", "2.1.328/success",
    "2.1.332/background-bash-failed", "2.1.332/foreground-bash-failed", "2.1.332/nested-subagent-503",
    "2.1.332/subagent-session-limit",
  };

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (recordings); i++)
    {
      g_autofree char *path = g_strdup_printf ("/Mend/AttackStreamJson/rewritten-recording-ends-the-same/%s",
                                               recordings[i]);

      g_test_add_data_func (path, recordings[i], test_rewritten_recording_ends_the_same);
    }

  g_test_add_func ("/Mend/AttackStreamJson/text-whatever-the-spacing", test_text_whatever_the_spacing);
  g_test_add_func ("/Mend/AttackStreamJson/escaped-quotes-stay-text", test_escaped_quotes_stay_text);

  return g_test_run ();
}
