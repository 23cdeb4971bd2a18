/* test-http-sender-bodies.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The request bodies of every wire format, byte for byte. The bodies in
 * tests/data/http-bodies were written by MendHttpSender when it still
 * built each body whole with json-glib (run with --write DIR to write
 * them again); a body spliced from each message's bytes, kept from one
 * request to the next, must be the same, through trims, clears, loads and
 * restores of a transcript that four senders, one of each format, share.
 */

#include <stdio.h>
#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-http-dialect-private.h"
#include "mend-http-sender-private.h"
#include "mend-json-private.h"
#include "mend-transcript-private.h"

static const char *write_dir;

static const char *const uris[] = {
  "http://127.0.0.1:9/v1/messages",
  "http://127.0.0.1:9/v1/chat/completions",
  "http://127.0.0.1:9/v1/responses",
  "http://127.0.0.1:9/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
};

typedef struct
{
  MendTranscript *transcript;
  MendHttpSender *senders[G_N_ELEMENTS (uris)];
  GString        *bodies;   /* "== name\nbody\n" for each body */
} Bodies;

static void
bodies_init (Bodies *b)
{
  b->transcript = mend_transcript_new ();
  mend_transcript_set_max_messages (b->transcript, 10000);
  for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
    b->senders[i] = g_object_new (MEND_TYPE_HTTP_SENDER, "uri", uris[i], "transcript", b->transcript, NULL);
  b->bodies = g_string_new (NULL);
}

/* The bodies of every format for a new turn of @prompt, and the messages. */
static void
add_bodies (Bodies     *b,
            const char *name,
            const char *prompt)
{
  g_autoptr(MendTurn) turn = mend_turn_new (prompt, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
    {
      g_autofree char *body = mend_http_sender_build_body (b->senders[i], turn);
      g_autofree char *again = mend_http_sender_build_body (b->senders[i], turn);

      /* The same bytes every time. */
      g_assert_cmpstr (again, ==, body);
      g_string_append_printf (b->bodies, "== %s %u\n%s\n", name, i, body);
    }
  {
    g_autofree char *messages = mend_http_sender_build_messages (b->senders[0], turn);
    g_autofree char *json = mend_transcript_to_json (b->transcript);

    g_string_append_printf (b->bodies, "== %s messages\n%s\n== %s transcript\n%s\n", name, messages, name, json);
  }
}

static void
bodies_check (Bodies     *b,
              const char *scenario)
{
  g_autofree char *file = g_strdup_printf ("%s.txt", scenario);

  if (write_dir != NULL)
    {
      g_autofree char *path = g_build_filename (write_dir, file, NULL);
      g_autoptr(GError) error = NULL;

      g_file_set_contents (path, b->bodies->str, b->bodies->len, &error);
      g_assert_no_error (error);
    }
  else
    {
      g_autofree char *path = g_build_filename (MEND_TEST_SRCDIR, "data", "http-bodies", file, NULL);
      g_autofree char *expected = NULL;
      g_autoptr(GError) error = NULL;
      g_auto(GStrv) want = NULL;
      g_auto(GStrv) got = NULL;

      g_file_get_contents (path, &expected, NULL, &error);
      g_assert_no_error (error);
      want = g_strsplit (expected, "\n", -1);
      got = g_strsplit (b->bodies->str, "\n", -1);
      for (guint i = 0; want[i] != NULL && got[i] != NULL; i++)
        g_assert_cmpstr (got[i], ==, want[i]);
      g_assert_cmpuint (g_strv_length (got), ==, g_strv_length (want));
    }

  for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
    g_assert_finalize_object (b->senders[i]);
  g_assert_finalize_object (b->transcript);
  g_string_free (b->bodies, TRUE);
}

static void
load (Bodies     *b,
      const char *json)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (mend_transcript_load_json (b->transcript, json, &error));
  g_assert_no_error (error);
}

/* Every byte a prompt may hold, in the strings json-glib escapes. */
static char *
hard_prompt (void)
{
  GString *s = g_string_new ("Quotes \" and \\ and / ");

  for (int c = 1; c < 0x20; c++)
    g_string_append_c (s, (char) c);
  g_string_append (s, "\x7f caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80 </script> \\u0041 end");
  return g_string_free (s, FALSE);
}

static const char ODD_TRANSCRIPT[] =
  "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Read it\"},"
  "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"data\":\"AAAA\"}}]},"
  "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":5},"
  "{\"type\":\"tool_use\",\"id\":7,\"name\":\"read_file\",\"input\":{}},"
  "{\"type\":\"tool_use\",\"id\":\"call_1\",\"name\":\"read_file\",\"input\":\"not an object\"},"
  "{\"type\":\"tool_use\",\"id\":\"call_2\",\"name\":{\"x\":1}},"
  "{\"type\":\"tool_use\",\"id\":\"call_3\",\"name\":\"list\"},"
  "{\"type\":\"text\",\"text\":\"\\u00e9\\ud83d\\ude00 \\\"quoted\\\" \\u001f\\u007f nul\"}]},"
  "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"content\":\"no id\"},"
  "{\"type\":\"tool_result\",\"tool_use_id\":5,\"content\":\"id of a number\"},"
  "{\"type\":\"tool_result\",\"tool_use_id\":\"call_1\",\"text\":7,"
  "\"content\":[{\"type\":\"tool_result\",\"content\":[{\"type\":\"tool_result\",\"content\":[{\"type\":\"text\",\"text\":\"deep\"}]}]},"
  "{\"type\":\"text\",\"text\":null},5,null,[]]},"
  "{\"type\":\"tool_result\",\"tool_use_id\":\"call_3\",\"content\":{\"type\":\"text\",\"text\":\"object\"}}]},"
  "{\"role\":\"assistant\",\"content\":\"\"},"
  "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"call_2\",\"content\":\"\"}]},"
  "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"1.5e300 and 0.1\"},"
  "{\"type\":\"tool_use\",\"id\":\"n\",\"name\":\"calc\",\"input\":{\"x\":0.1,\"y\":-7,\"z\":1e300,\"w\":[true,false,null]}}]}]";

/* Turns with tool calls: the results name calls of the turn before. */
static char *
tool_transcript (guint turns)
{
  GString *s = g_string_new ("[");

  for (guint i = 0; i < turns; i++)
    {
      if (i > 0)
        g_string_append_c (s, ',');
      if (i == 0)
        g_string_append (s, "{\"role\":\"user\",\"content\":\"Fix the build\"}");
      else
        g_string_append_printf (s, "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_%u\","
                                   "\"content\":\"exit status %u\"},{\"type\":\"text\",\"text\":\"Go on %u\"}]}",
                                i - 1, i, i);
      g_string_append_printf (s, ",{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Step %u\\n\"},"
                                 "{\"type\":\"tool_use\",\"id\":\"toolu_%u\",\"name\":\"run_%u\",\"input\":"
                                 "{\"command\":\"make -j%u\"}}]}", i, i, i % 3, i);
    }
  g_string_append_c (s, ']');
  return g_string_free (s, FALSE);
}

static void
test_odd_transcript (void)
{
  Bodies b;
  g_autofree char *prompt = hard_prompt ();

  bodies_init (&b);
  add_bodies (&b, "empty", "Hello");
  add_bodies (&b, "hard-prompt", prompt);
  add_bodies (&b, "empty-prompt", "");
  load (&b, ODD_TRANSCRIPT);
  add_bodies (&b, "odd", "Go on");
  add_bodies (&b, "odd-again", prompt);
  bodies_check (&b, "odd");
}

/* Trims drop the turn of a call whose result stays: Gemini names the
 * result by its call's id then. */
static void
test_tools_and_trims (void)
{
  g_autofree char *json = tool_transcript (6);
  Bodies b;

  bodies_init (&b);
  load (&b, json);
  add_bodies (&b, "six", "Next");
  mend_transcript_trim (b.transcript, 4);
  add_bodies (&b, "trimmed-to-four", "Next");
  mend_transcript_trim (b.transcript, 1);
  add_bodies (&b, "trimmed-to-one", "Next");
  mend_transcript_set_max_messages (b.transcript, 2);
  add_bodies (&b, "bounded", "Next");
  mend_transcript_clear (b.transcript);
  add_bodies (&b, "cleared", "Next");
  load (&b, json);
  add_bodies (&b, "loaded-again", "Next");
  bodies_check (&b, "tools");
}

/* Prompts that gave up, restored, go before the turn's own. */
static void
test_pending_and_restore (void)
{
  g_autofree char *prompt = hard_prompt ();
  g_autofree char *state = NULL;
  g_autofree char *saved = NULL;
  g_autoptr(GError) error = NULL;
  Bodies b;

  bodies_init (&b);
  state = g_strdup_printf ("{\"messages\":%s,\"pending\":[{\"type\":\"text\",\"text\":\"Fix the build\"},"
                           "{\"type\":\"text\",\"text\":\"tab\\there \\u00e9\"}]}", ODD_TRANSCRIPT);
  g_assert_true (mend_transcript_restore (b.transcript, state, &error));
  g_assert_no_error (error);
  add_bodies (&b, "pending", "Continue the current turn");
  add_bodies (&b, "pending-same", "tab\there \xc3\xa9");
  add_bodies (&b, "pending-hard", prompt);
  saved = mend_transcript_save (b.transcript);
  g_string_append_printf (b.bodies, "== saved\n%s\n", saved);
  g_assert_true (mend_transcript_restore (b.transcript, "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"},"
                                          "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"b\"}]}],"
                                          "\"pending\":[]}", &error));
  add_bodies (&b, "restored", "c");
  bodies_check (&b, "pending");
}

/* The frame of the body: the model and max_tokens, as set. */
static void
test_model_and_tokens (void)
{
  Bodies b;

  bodies_init (&b);
  for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
    {
      mend_http_sender_set_model (b.senders[i], "my \"model\"\\\t\xc3\xa9");
      mend_http_sender_set_max_tokens (b.senders[i], 7);
    }
  load (&b, "[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"b\"}]}]");
  add_bodies (&b, "model", "c");
  for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
    {
      mend_http_sender_set_model (b.senders[i], "claude-opus-4-1");
      mend_http_sender_set_max_tokens (b.senders[i], G_MAXINT);
    }
  add_bodies (&b, "model-changed", "c");
  bodies_check (&b, "model");
}

/* A turn in flight sends what it sent first on every attempt, whatever
 * the transcript became since and whatever other bodies were written
 * from it: Gemini names a tool result by its call, which a trim drops. */
static void
test_turn_in_flight_keeps_its_body (void)
{
  g_autofree char *json = tool_transcript (4);
  g_autoptr(MendTurn) turn = mend_turn_new ("Next", NULL);
  g_autoptr(MendTurn) other = mend_turn_new ("Other", NULL);
  Bodies b;

  bodies_init (&b);
  load (&b, json);
  mend_transcript_request_unref (mend_transcript_request_for (b.transcript, turn, TRUE));
  for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
    {
      g_autofree char *first = mend_http_sender_build_body (b.senders[i], turn);
      g_autofree char *trimmed = NULL;
      g_autofree char *again = NULL;

      mend_transcript_trim (b.transcript, 4 - i);
      trimmed = mend_http_sender_build_body (b.senders[i], other);
      again = mend_http_sender_build_body (b.senders[i], turn);
      g_assert_cmpstr (again, ==, first);
      if (i > 0)
        g_assert_cmpstr (trimmed, !=, first);
    }
  for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
    g_assert_finalize_object (b.senders[i]);
  g_assert_finalize_object (b.transcript);
  g_string_free (b.bodies, TRUE);
}

/* The body of @turn's prompt on a transcript of the same messages as
 * @b's, with nothing written before: no cache to go by. */
static char *
fresh_body (Bodies     *b,
            guint       i,
            const char *prompt)
{
  g_autofree char *json = mend_transcript_to_json (b->transcript);
  g_autoptr(MendTranscript) transcript = mend_transcript_new ();
  g_autoptr(MendHttpSender) sender = NULL;
  g_autoptr(MendTurn) turn = mend_turn_new (prompt, NULL);
  g_autoptr(GError) error = NULL;

  mend_transcript_set_max_messages (transcript, 10000);
  g_assert_true (mend_transcript_load_json (transcript, json, &error));
  g_assert_no_error (error);
  sender = g_object_new (MEND_TYPE_HTTP_SENDER, "uri", uris[i], "transcript", transcript, NULL);
  return mend_http_sender_build_body (sender, turn);
}

/* Two requests of one transcript that begin at other messages, their
 * bodies written in turn after each trim: every message written for one
 * is good for the other only when it read the same messages; each body
 * is the one written with nothing kept. */
static void
test_requests_of_other_starts_in_turn (void)
{
  g_autofree char *json = tool_transcript (6);
  g_autoptr(MendTurn) turn = mend_turn_new ("Next", NULL);
  char *first[G_N_ELEMENTS (uris)] = { NULL };
  Bodies b;

  bodies_init (&b);
  load (&b, json);
  mend_transcript_request_unref (mend_transcript_request_for (b.transcript, turn, TRUE));
  for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
    first[i] = mend_http_sender_build_body (b.senders[i], turn);

  for (guint keep = 6; keep > 0; keep--)
    {
      mend_transcript_trim (b.transcript, keep);
      for (guint round = 0; round < 2; round++)
        for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
          {
            g_autoptr(MendTurn) other = mend_turn_new ("Other", NULL);
            g_autofree char *now = mend_http_sender_build_body (b.senders[i], other);
            g_autofree char *fresh = fresh_body (&b, i, "Other");
            g_autofree char *again = mend_http_sender_build_body (b.senders[i], turn);

            g_assert_cmpstr (now, ==, fresh);
            g_assert_cmpstr (again, ==, first[i]);
          }
    }
  for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
    {
      g_free (first[i]);
      first[i] = NULL;
    }
  for (guint i = 0; i < G_N_ELEMENTS (uris); i++)
    g_assert_finalize_object (b.senders[i]);
  g_assert_finalize_object (b.transcript);
  g_string_free (b.bodies, TRUE);
}

/* Every byte json-glib escapes, a character past the BMP and one that
 * ends a line in JavaScript; and, where no transcript goes, bytes that
 * are not UTF-8. */
static char *
hostile (const char *what,
         gboolean    not_utf8)
{
  GString *s = g_string_new (what);

  g_string_append (s, " \" \\ / \\u0041 ");
  for (int c = 1; c < 0x20; c++)
    g_string_append_c (s, (char) c);
  g_string_append (s, "\x7f caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x98\x80 </script>");
  if (not_utf8)
    g_string_append (s, " \xff\xfe \xc3( \xed\xa0\x80 \xf0\x9f\x98");
  return g_string_free (s, FALSE);
}

static void
add_string (JsonBuilder *builder,
            const char  *member,
            const char  *value)
{
  json_builder_set_member_name (builder, member);
  json_builder_add_string_value (builder, value);
}

/* {"role":@role,"content":[…]}, its blocks between begin and end. */
static void
begin_message (JsonBuilder *builder,
               const char  *role)
{
  json_builder_begin_object (builder);
  add_string (builder, "role", role);
  json_builder_set_member_name (builder, "content");
  json_builder_begin_array (builder);
}

static void
end_message (JsonBuilder *builder)
{
  json_builder_end_array (builder);
  json_builder_end_object (builder);
}

/* {"type":@type,@id_name:@id, then the members that follow. */
static void
begin_block (JsonBuilder *builder,
             const char  *type,
             const char  *id_name,
             const char  *id)
{
  json_builder_begin_object (builder);
  add_string (builder, "type", type);
  add_string (builder, id_name, id);
}

static void
add_text_block (JsonBuilder *builder,
                const char  *text)
{
  begin_block (builder, "text", "text", text);
  json_builder_end_object (builder);
}

/* Tool calls and results whose every string is hostile (@not_utf8: with
 * bytes that are not UTF-8, and a role of no format's). */
static JsonNode *
hostile_messages (gboolean not_utf8)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree char *text = hostile ("text", not_utf8);
  g_autofree char *id = hostile ("id", not_utf8);
  g_autofree char *name = hostile ("name", not_utf8);
  g_autofree char *key = hostile ("key", not_utf8);
  g_autofree char *value = hostile ("value", not_utf8);
  g_autofree char *raw = hostile ("{\"raw\": arguments", not_utf8);
  g_autofree char *output = hostile ("output", not_utf8);

  json_builder_begin_array (builder);

  json_builder_begin_object (builder);
  add_string (builder, "role", "user");
  add_string (builder, "content", text);
  json_builder_end_object (builder);

  /* Calls: an object's input, a string's, none; text before and after. */
  begin_message (builder, "assistant");
  add_text_block (builder, text);
  begin_block (builder, "tool_use", "id", id);
  add_string (builder, "name", name);
  json_builder_set_member_name (builder, "input");
  json_builder_begin_object (builder);
  add_string (builder, key, value);
  json_builder_set_member_name (builder, "list");
  json_builder_begin_array (builder);
  json_builder_add_int_value (builder, -7);
  json_builder_add_boolean_value (builder, TRUE);
  json_builder_add_null_value (builder);
  json_builder_begin_object (builder);
  add_string (builder, "deep", value);
  json_builder_end_object (builder);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  begin_block (builder, "tool_use", "id", "call_2");
  add_string (builder, "name", "run");
  add_string (builder, "input", raw);
  json_builder_end_object (builder);
  begin_block (builder, "tool_use", "id", "call_3");
  add_string (builder, "name", name);
  json_builder_end_object (builder);
  add_text_block (builder, "after");
  end_message (builder);

  /* Results: a string, blocks, one naming no call before it; words after. */
  begin_message (builder, "user");
  begin_block (builder, "tool_result", "tool_use_id", id);
  add_string (builder, "content", output);
  json_builder_end_object (builder);
  begin_block (builder, "tool_result", "tool_use_id", "call_2");
  json_builder_set_member_name (builder, "content");
  json_builder_begin_array (builder);
  add_text_block (builder, output);
  add_text_block (builder, "");
  add_text_block (builder, text);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  begin_block (builder, "tool_result", "tool_use_id", key);
  add_string (builder, "content", "");
  json_builder_end_object (builder);
  add_text_block (builder, text);
  end_message (builder);

  begin_message (builder, "assistant");
  begin_block (builder, "tool_use", "id", "call_4");
  add_string (builder, "name", "alone");
  json_builder_set_member_name (builder, "input");
  json_builder_begin_object (builder);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  end_message (builder);

  /* A result alone: no words of the user's. */
  begin_message (builder, "user");
  begin_block (builder, "tool_result", "tool_use_id", "call_4");
  add_string (builder, "content", output);
  json_builder_end_object (builder);
  end_message (builder);

  if (not_utf8)
    {
      /* A role no format has, its own text as the content. */
      begin_message (builder, name);
      add_text_block (builder, text);
      end_message (builder);
    }

  json_builder_end_array (builder);
  return json_builder_get_root (builder);
}

/* Tool calls and results of hostile strings, written as json-glib's
 * JsonBuilder and JsonGenerator wrote them (the file), through a
 * transcript and from messages given by hand; each body of UTF-8 reads
 * back as JSON. */
static void
test_hostile_tools (void)
{
  static const MendHttpDialectClass *wires[] = {
    &mend_http_dialect_messages,
    &mend_http_dialect_chat_completions,
    &mend_http_dialect_responses,
    &mend_http_dialect_gemini,
  };
  g_autoptr(JsonNode) messages = hostile_messages (FALSE);
  g_autoptr(JsonNode) not_utf8 = hostile_messages (TRUE);
  g_autofree char *json = mend_json_to_string (messages);
  g_autofree char *prompt = hostile ("prompt", FALSE);
  Bodies b;

  bodies_init (&b);
  load (&b, json);
  add_bodies (&b, "hostile", prompt);
  mend_transcript_trim (b.transcript, 1);
  add_bodies (&b, "hostile-trimmed", prompt);
  for (guint i = 0; i < G_N_ELEMENTS (wires); i++)
    {
      g_autofree char *body = mend_http_dialect_build_body (wires[i], "model", 1024, messages);
      g_autofree char *bytes = mend_http_dialect_build_body (wires[i], "model", 1024, not_utf8);
      g_autoptr(JsonNode) again = NULL;
      g_autoptr(GError) error = NULL;

      g_string_append_printf (b.bodies, "== by-hand %u\n%s\n== not-utf8 %u\n%s\n", i, body, i, bytes);
      again = mend_json_parse (body, -1, &error);
      g_assert_no_error (error);
      g_assert_true (JSON_NODE_HOLDS_OBJECT (again));
    }
  bodies_check (&b, "hostile-tools");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  if (argc == 3 && g_str_equal (argv[1], "--write"))
    write_dir = argv[2];

  g_test_add_func ("/Mend/HttpBodies/odd-transcript", test_odd_transcript);
  g_test_add_func ("/Mend/HttpBodies/tools-and-trims", test_tools_and_trims);
  g_test_add_func ("/Mend/HttpBodies/requests-of-other-starts-in-turn", test_requests_of_other_starts_in_turn);
  g_test_add_func ("/Mend/HttpBodies/pending-and-restore", test_pending_and_restore);
  g_test_add_func ("/Mend/HttpBodies/model-and-tokens", test_model_and_tokens);
  g_test_add_func ("/Mend/HttpBodies/turn-in-flight-keeps-its-body", test_turn_in_flight_keeps_its_body);
  g_test_add_func ("/Mend/HttpBodies/hostile-tools", test_hostile_tools);

  return g_test_run ();
}
