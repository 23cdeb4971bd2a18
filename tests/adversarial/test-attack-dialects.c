/* test-attack-dialects.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attacks on MendHttpSender's OpenAI dialects, through Mend.Chat, against
 * a SoupServer on 127.0.0.1: hostile or odd streams and whole answers of
 * an OpenAI-compatible server (tool calls by odd indexes, an id and a name
 * in separate chunks, members of the wrong type, error objects of the
 * wrong type, a stream of 100 000 tiny deltas), and request bodies built
 * from a restored transcript of odd shapes. Waits run in virtual time.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-server.h"

/* The chat over a scripted SoupServer (tests/support/mend-test-server.c). */
typedef MendTestHttpChat Fixture;
typedef MendTestHttpReply Reply;


#define CHUNK(delta, finish) \
  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764500000," \
  "\"model\":\"llama3.2\",\"choices\":[{\"index\":0,\"delta\":" delta ",\"finish_reason\":" finish "}]}\n\n"

#define EVENT(type, json) "event: " type "\ndata: {\"type\":\"" type "\"," json "}\n\n"

static const char STREAM_OK[] =
  CHUNK ("{\"role\":\"assistant\",\"content\":\"Hello\"}", "null")
  CHUNK ("{}", "\"stop\"")
  "data: [DONE]\n\n";

static const char RESPONSES_OK[] =
  EVENT ("response.output_text.delta", "\"output_index\":0,\"content_index\":0,\"delta\":\"Hello\"")
  EVENT ("response.completed", "\"response\":{\"id\":\"resp_1\",\"status\":\"completed\"}");


static MendFailure *
last_failure (Fixture *f)
{
  MendTurn *turn = mend_chat_get_turn (f->chat);

  if (turn == NULL)
    turn = g_ptr_array_index (f->finished, f->finished->len - 1);
  return mend_turn_get_last_failure (turn);
}

/* Runs until @requests were served and the turn is no longer running:
 * waiting for a retry, or finished. Returns the turn's state then. */
static MendTurnState
settle (Fixture *f,
        guint    requests)
{
  guint id = g_timeout_add_seconds (20, mend_test_watchdog, (gpointer) g_test_get_path ());
  MendTurnState state;

  for (;;)
    {
      MendTurn *turn = mend_chat_get_turn (f->chat);

      if (f->served >= requests && (turn == NULL || mend_turn_get_state (turn) != MEND_TURN_RUNNING))
        break;
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_remove (id);

  if (mend_chat_get_turn (f->chat) != NULL)
    state = mend_turn_get_state (mend_chat_get_turn (f->chat));
  else
    {
      g_assert_cmpuint (f->finished->len, >, 0);
      state = mend_turn_get_state (g_ptr_array_index (f->finished, f->finished->len - 1));
    }
  if (state == MEND_TURN_WAITING || state == MEND_TURN_FAILED)
    {
      MendFailure *failure = last_failure (f);

      g_test_message ("turn %s: %s%s: %s", state == MEND_TURN_WAITING ? "waits" : "failed",
                      mend_reason_to_nick (mend_failure_get_reason (failure)),
                      mend_failure_get_partial (failure) ? " (partial)" : "",
                      mend_failure_get_message (failure));
    }
  return state;
}

static void
assert_valid_json (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
}

/* Chat Completions: whole answers */

/* "An answer with no text and no tool call is the model's empty response
 * (MEND_REASON_EMPTY, retried), in either format": a whole answer with no
 * choice at all has neither. */
static void
test_chat_whole_answer_with_no_choice_is_empty (Fixture       *f,
                                                gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "application/json", "{\"id\":\"chatcmpl-2\",\"object\":\"chat.completion\",\"choices\":[]}" },
    { 200, "text/event-stream", STREAM_OK },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_failure_get_reason (last_failure (f)), ==, MEND_REASON_EMPTY);
}

/* The same error object that fails a stream, as a whole 200 answer (a
 * server that ignored "stream":true): a failure too, not the answer. */
static void
test_chat_whole_error_object_is_a_failure (Fixture       *f,
                                           gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "application/json",
      "{\"error\":{\"message\":\"The server is overloaded, please try again later\","
      "\"type\":\"server_error\",\"code\":503}}" },
    { 200, "text/event-stream", STREAM_OK },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_WAITING);
  g_assert_null (mend_http_sender_get_answer (f->sender));
}

/* Chat Completions: streams */

/* Servers that serialize every member of their chunk model write
 * "error":null in each healthy chunk: no error is there. */
static void
test_chat_null_error_member_is_no_error (Fixture       *f,
                                         gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream",
      "data: {\"object\":\"chat.completion.chunk\",\"error\":null,\"choices\":[{\"index\":0,"
      "\"delta\":{\"role\":\"assistant\",\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n"
      "data: {\"object\":\"chat.completion.chunk\",\"error\":null,\"choices\":[{\"index\":0,"
      "\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
      "data: [DONE]\n\n" },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Hello");
}

/* Held: error members of other types are still failures (a message of
 * overload retried, one with nothing to read given up), never the answer,
 * and nothing crashes. */
static void
test_chat_error_string_is_a_failure (Fixture       *f,
                                     gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", "data: {\"error\":\"The server is overloaded\"}\n\n" },
    { 200, "text/event-stream", "data: {\"error\":[1,2,{\"message\":5}]}\n\n" },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_WAITING);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  g_assert_cmpint (settle (f, 2), ==, MEND_TURN_FAILED);
  g_assert_null (mend_http_sender_get_answer (f->sender));
}

/* A tool call whose id comes in one chunk and its name in the next (or
 * the other way round) is still the model's tool call: kept, not an
 * empty answer. */
static void
test_chat_tool_call_id_and_name_apart (Fixture       *f,
                                       gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream",
      CHUNK ("{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
             "\"function\":{\"arguments\":\"\"}}]}", "null")
      CHUNK ("{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"read_file\"}}]}", "null")
      CHUNK ("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"path\\\":\\\"build.log\\\"}\"}}]}", "null")
      CHUNK ("{\"tool_calls\":[{\"index\":1,\"function\":{\"name\":\"list_dir\",\"arguments\":\"{}\"}}]}", "null")
      CHUNK ("{\"tool_calls\":[{\"index\":1,\"id\":\"call_2\"}]}", "null")
      CHUNK ("{}", "\"tool_calls\"")
      "data: [DONE]\n\n" },
    { 200, "text/event-stream", STREAM_OK },
  };
  g_autofree char *json = NULL;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_SUCCEEDED);
  json = mend_transcript_to_json (mend_http_sender_get_transcript (f->sender));
  g_assert_nonnull (strstr (json, "\"id\":\"call_1\",\"name\":\"read_file\""));
  g_assert_nonnull (strstr (json, "\"input\":{\"path\":\"build.log\"}"));
  g_assert_nonnull (strstr (json, "\"id\":\"call_2\",\"name\":\"list_dir\""));
}

/* OpenAI's own clients take a data line that starts with [DONE] as the
 * end; a server that pads it does not make a complete answer a failure. */
static void
test_chat_done_with_spaces_ends_the_answer (Fixture       *f,
                                            gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream",
      CHUNK ("{\"role\":\"assistant\",\"content\":\"Hello\"}", "null")
      "data:  [DONE] \n\n" },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Hello");
}

/* A finish_reason and nothing else, no [DONE]: the empty response. */
static void
test_chat_finish_without_content_is_empty (Fixture       *f,
                                           gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", CHUNK ("{\"role\":\"assistant\"}", "\"stop\"") },
    { 200, "text/event-stream", "data: [DONE]\n\n" CHUNK ("{\"content\":\"late\"}", "null") },
    { 200, "text/event-stream", STREAM_OK },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_failure_get_reason (last_failure (f)), ==, MEND_REASON_EMPTY);
  /* [DONE] before any content: empty too; what follows it is not read. */
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  g_assert_cmpint (settle (f, 2), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_failure_get_reason (last_failure (f)), ==, MEND_REASON_EMPTY);
  g_assert_cmpstr (f->deltas->str, ==, "");
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  g_assert_cmpint (settle (f, 3), ==, MEND_TURN_SUCCEEDED);
}

/* Members of the wrong type, choices that are no array, indexes negative,
 * huge, fractional or strings: nothing crashes, the text is kept, the
 * transcript keeps no tool call it could not place, and the next body is
 * JSON. */
static void
test_chat_hostile_shapes (Fixture       *f,
                          gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream",
      "data: {\"choices\":{\"0\":{\"delta\":{\"content\":\"no\"}}}}\n\n"
      "data: {\"choices\":[null,{\"delta\":{\"content\":\"no\"}}]}\n\n"
      "data: {\"choices\":[{\"delta\":\"Hello\"}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":5,\"tool_calls\":{\"index\":0}}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"content\":[\"x\"],\"tool_calls\":[null,5,\"x\",[]]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":-1,\"id\":\"neg\",\"function\":{\"name\":\"rm\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":5000,\"id\":\"far\",\"function\":{\"name\":\"rm\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":2147483646,\"id\":\"edge\",\"function\":{\"name\":\"rm\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":9223372036854775807,\"id\":\"max\",\"function\":{\"name\":\"rm\"}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1e18,\"id\":7,\"function\":{\"name\":{\"x\":1},\"arguments\":{\"a\":1}}}]}}]}\n\n"
      "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"Hello\"},\"finish_reason\":5}]}\n\n"
      "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
      "data: [DONE]\n\n" },
    { 200, "text/event-stream", STREAM_OK },
  };
  g_autofree char *json = NULL;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Hello");
  json = mend_transcript_to_json (mend_http_sender_get_transcript (f->sender));
  g_assert_null (strstr (json, "\"neg\""));
  g_assert_null (strstr (json, "\"far\""));
  g_assert_null (strstr (json, "\"edge\""));
  g_assert_null (strstr (json, "\"max\""));

  g_assert_true (mend_chat_submit (f->chat, "Go on", NULL, NULL));
  g_assert_cmpint (settle (f, 2), ==, MEND_TURN_SUCCEEDED);
  assert_valid_json (g_ptr_array_index (f->bodies, 1));
}

/* 100 000 deltas of one character: all kept, once each. */
/* Enough to show that every delta is kept once and nothing grows out of
 * proportion; small enough for memcheck, and fewer still under the
 * sanitizers, whose slow unwinder costs each allocation. */
#if defined (__SANITIZE_ADDRESS__)
#define TINY_DELTAS 4000
#else
#define TINY_DELTAS 20000
#endif

static void
test_chat_many_tiny_deltas (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(GString) stream = g_string_new (NULL);
  Reply script[1];
  gint64 began;

  for (guint i = 0; i < TINY_DELTAS; i++)
    g_string_append (stream, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n");
  g_string_append (stream, CHUNK ("{}", "\"stop\"") "data: [DONE]\n\n");
  script[0] = (Reply) { 200, "text/event-stream", stream->str };

  began = g_get_monotonic_time ();
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_SUCCEEDED);
  g_test_message ("%u deltas in %" G_GINT64_FORMAT " ms", TINY_DELTAS, (g_get_monotonic_time () - began) / 1000);
  g_assert_cmpuint (strlen (mend_http_sender_get_answer (f->sender)), ==, TINY_DELTAS);
  g_assert_cmpuint (f->deltas->len, ==, TINY_DELTAS);
}

/* A tool call whose arguments never become JSON (here cut short by the
 * token limit) keeps the text the model sent, as the call's input (a
 * string), and the next body gives it back as the call's arguments: it
 * was kept as {} before, the arguments lost. */
static void
test_chat_tool_arguments_not_json_are_kept (Fixture       *f,
                                            gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream",
      CHUNK ("{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
             "\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]}", "null")
      CHUNK ("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"path\\\": \\\"bui\"}}]}", "null")
      CHUNK ("{}", "\"length\"")
      "data: [DONE]\n\n" },
    { 200, "text/event-stream", STREAM_OK },
  };
  g_autofree char *json = NULL;
  const char *body;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_SUCCEEDED);
  json = mend_transcript_to_json (mend_http_sender_get_transcript (f->sender));
  g_test_message ("%s", json);
  g_assert_nonnull (strstr (json, "\"id\":\"call_1\",\"name\":\"read_file\",\"input\":\"{\\\"path\\\": \\\"bui\""));

  g_assert_true (mend_chat_submit (f->chat, "Go on", NULL, NULL));
  g_assert_cmpint (settle (f, 2), ==, MEND_TURN_SUCCEEDED);
  body = g_ptr_array_index (f->bodies, 1);
  assert_valid_json (body);
  g_assert_nonnull (strstr (body, "\"arguments\":\"{\\\"path\\\": \\\"bui\""));
}

/* Text after a tool call is a text block of its own after the call, in
 * the order the model wrote them: it was joined to the text before. */
static void
test_chat_text_after_a_tool_call (Fixture       *f,
                                  gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream",
      CHUNK ("{\"role\":\"assistant\",\"content\":\"Let me look.\"}", "null")
      CHUNK ("{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\","
             "\"function\":{\"name\":\"read_file\",\"arguments\":\"{}\"}}]}", "null")
      CHUNK ("{\"content\":\"\"}", "null")
      CHUNK ("{\"content\":\"Done\"}", "null")
      CHUNK ("{\"tool_calls\":[{\"index\":1,\"id\":\"call_2\",\"type\":\"function\","
             "\"function\":{\"name\":\"list_dir\",\"arguments\":\"{}\"}}]}", "null")
      CHUNK ("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\"}}]}", "null")
      CHUNK ("{\"content\":\".\"}", "\"tool_calls\"")
      "data: [DONE]\n\n" },
  };
  g_autofree char *json = NULL;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Let me look.Done.");
  json = mend_transcript_to_json (mend_http_sender_get_transcript (f->sender));
  g_test_message ("%s", json);
  g_assert_nonnull (strstr (json, "\"content\":[{\"type\":\"text\",\"text\":\"Let me look.\"},"
                                  "{\"type\":\"tool_use\",\"id\":\"call_1\",\"name\":\"read_file\",\"input\":{}},"
                                  "{\"type\":\"text\",\"text\":\"Done\"},"
                                  "{\"type\":\"tool_use\",\"id\":\"call_2\",\"name\":\"list_dir\",\"input\":{}},"
                                  "{\"type\":\"text\",\"text\":\".\"}]"));
}

/* A tool call at an index past the blocks an answer keeps is not kept,
 * and so is no output either: an answer of that alone is the empty
 * response, retried (it counted as output before, and the empty answer
 * after output was not retried). */
static void
test_chat_tool_call_past_the_blocks_is_no_output (Fixture       *f,
                                                  gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream",
      CHUNK ("{\"role\":\"assistant\",\"tool_calls\":[{\"index\":1500,\"id\":\"call_far\",\"type\":\"function\","
             "\"function\":{\"name\":\"rm\",\"arguments\":\"{}\"}}]}", "null")
      CHUNK ("{}", "\"tool_calls\"")
      "data: [DONE]\n\n" },
    { 200, "text/event-stream", STREAM_OK },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_WAITING);
  g_assert_cmpint (mend_failure_get_reason (last_failure (f)), ==, MEND_REASON_EMPTY);
  g_assert_false (mend_failure_get_partial (last_failure (f)));
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  g_assert_cmpint (settle (f, 2), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Hello");
}

/* An `event: error` whose data is no JSON (a proxy's own words) fails the
 * attempt with that text, as in the other formats: it was ignored, and
 * what followed read as the answer. */
static void
test_chat_error_event_not_json (Fixture       *f,
                                gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream",
      "event: error\ndata: Internal Server Error\n\n"
      CHUNK ("{\"role\":\"assistant\",\"content\":\"Hello\"}", "\"stop\"")
      "data: [DONE]\n\n" },
    { 200, "text/event-stream", STREAM_OK },
  };
  MendFailure *failure;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_WAITING);
  failure = last_failure (f);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_SERVER);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "Internal Server Error"));
  g_assert_null (mend_http_sender_get_answer (f->sender));
  g_assert_cmpstr (f->deltas->str, ==, "");
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  g_assert_cmpint (settle (f, 2), ==, MEND_TURN_SUCCEEDED);
}

/* Responses */

/* Deltas beyond the blocks kept are dropped; the rest is the answer. */
static void
test_responses_output_index_beyond_the_blocks (Fixture       *f,
                                               gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream",
      EVENT ("response.output_text.delta", "\"output_index\":5000,\"delta\":\"far\"")
      EVENT ("response.output_text.delta", "\"output_index\":-3,\"delta\":\"neg\"")
      EVENT ("response.output_text.delta", "\"output_index\":\"0\",\"delta\":\"str\"")
      EVENT ("response.output_item.added", "\"output_index\":4096,\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"rm\"}")
      EVENT ("response.function_call_arguments.delta", "\"output_index\":9223372036854775807,\"delta\":\"{}\"")
      EVENT ("response.output_text.delta", "\"output_index\":0,\"delta\":\"Hello\"")
      EVENT ("response.completed", "\"response\":{\"status\":\"completed\"}") },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Hello");
}

/* Held: response.failed with no response member at all, or with data
 * that is not JSON, is a failure, never the answer. */
static void
test_responses_failed_without_response (Fixture       *f,
                                        gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", "event: response.failed\ndata: {\"type\":\"response.failed\"}\n\n" },
    { 200, "text/event-stream", "event: response.failed\ndata: not json\n\n" },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_FAILED);
  g_assert_true (mend_chat_submit (f->chat, "Again", NULL, NULL));
  g_assert_cmpint (settle (f, 2), ==, MEND_TURN_FAILED);
  g_assert_null (mend_http_sender_get_answer (f->sender));
}

/* response.incomplete is complete "with what came" (the class's docs). */
static void
test_responses_incomplete_keeps_its_text (Fixture       *f,
                                          gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream",
      EVENT ("response.output_text.delta", "\"output_index\":0,\"content_index\":0,\"delta\":\"Hel\"")
      EVENT ("response.incomplete", "\"response\":{\"status\":\"incomplete\","
             "\"incomplete_details\":{\"reason\":\"max_output_tokens\"}}") },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Hel");
}

/* A whole response that failed on a quota says so in its error object:
 * a limit, as the same response.failed event in a stream is. */
static void
test_responses_whole_failed_quota_is_a_limit (Fixture       *f,
                                              gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "application/json",
      "{\"id\":\"resp_4\",\"object\":\"response\",\"status\":\"failed\",\"error\":{\"code\":\"insufficient_quota\","
      "\"message\":\"You exceeded your current quota, please check your plan and billing details.\"},\"output\":[]}" },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_FAILED);
  g_assert_cmpint (mend_failure_get_kind (last_failure (f)), ==, MEND_FAILURE_LIMIT);
}

/* A whole response with no output array (a failed one) is no answer. */
static void
test_responses_whole_without_output_is_no_answer (Fixture       *f,
                                                  gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "application/json",
      "{\"id\":\"resp_7\",\"object\":\"response\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\","
      "\"message\":\"The server had an error while processing your request.\"},\"output\":null}" },
    { 200, "text/event-stream", RESPONSES_OK },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_WAITING);
}

/* Bodies from a restored transcript of odd shapes */

static const char ODD_TRANSCRIPT[] =
  "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Read it\"},"
  "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"data\":\"AAAA\"}}]},"
  "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":5},"
  "{\"type\":\"tool_use\",\"id\":7,\"name\":\"read_file\",\"input\":{}},"
  "{\"type\":\"tool_use\",\"id\":\"call_1\",\"name\":\"read_file\",\"input\":\"not an object\"},"
  "{\"type\":\"tool_use\",\"id\":\"call_2\",\"name\":{\"x\":1}},"
  "{\"type\":\"tool_use\",\"id\":\"call_3\",\"name\":\"list\"},"
  "{\"type\":\"text\",\"text\":\"\\u00e9\\ud83d\\ude00 \\\"quoted\\\" \\u0000 nul\"}]},"
  "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"content\":\"no id\"},"
  "{\"type\":\"tool_result\",\"tool_use_id\":5,\"content\":\"id of a number\"},"
  "{\"type\":\"tool_result\",\"tool_use_id\":\"call_1\",\"text\":7,"
  "\"content\":[{\"type\":\"tool_result\",\"content\":[{\"type\":\"tool_result\",\"content\":[{\"type\":\"text\",\"text\":\"deep\"}]}]},"
  "{\"type\":\"text\",\"text\":null},5,null,[]]},"
  "{\"type\":\"tool_result\",\"tool_use_id\":\"call_3\",\"content\":{\"type\":\"text\",\"text\":\"object\"}}]},"
  "{\"role\":\"assistant\",\"content\":\"\"},"
  "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"call_2\",\"content\":\"\"}]}]";

static void
test_bodies_from_an_odd_transcript (Fixture       *f,
                                    gconstpointer  data)
{
  static const Reply chat_script[] = { { 200, "text/event-stream", STREAM_OK } };
  static const Reply responses_script[] = { { 200, "text/event-stream", RESPONSES_OK } };
  g_autoptr(GError) error = NULL;
  const char *body;

  g_assert_true (mend_transcript_load_json (mend_http_sender_get_transcript (f->sender), ODD_TRANSCRIPT, &error));
  g_assert_no_error (error);

  if (mend_http_sender_get_dialect (f->sender) == MEND_HTTP_DIALECT_RESPONSES)
    mend_test_http_chat_start (f, responses_script, 1);
  else
    mend_test_http_chat_start (f, chat_script, 1);
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_SUCCEEDED);
  body = g_ptr_array_index (f->bodies, 0);
  g_test_message ("%s", body);
  assert_valid_json (body);
  g_assert_nonnull (strstr (body, "deep"));
}

/* Handlers of the sender's signals that change the world under it */

typedef enum
{
  ON_DELTA_STOP,        /* stops the chat */
  ON_DELTA_CLEAR,       /* clears the transcript */
  ON_DELTA_TRIM,        /* trims the transcript to nothing */
  ON_DELTA_DROP,        /* lets go of the test's sender */
  ON_DELTA_RESTORE,     /* loads another transcript */
} OnDelta;

typedef struct
{
  Fixture *f;
  OnDelta  what;
  guint    seen;        /* deltas after the first */
  gboolean done;
  GString *stream;      /* served, until the test ends */
  Reply    script[2];
} Reentry;

static void
on_delta_reenter (MendHttpSender *sender,
                  const char     *delta,
                  Reentry        *r)
{
  if (r->done)
    {
      r->seen++;
      return;
    }
  r->done = TRUE;
  switch (r->what)
    {
    case ON_DELTA_STOP:
      mend_chat_stop (r->f->chat);
      break;
    case ON_DELTA_CLEAR:
      mend_transcript_clear (mend_http_sender_get_transcript (sender));
      break;
    case ON_DELTA_TRIM:
      mend_transcript_trim (mend_http_sender_get_transcript (sender), 0);
      break;
    case ON_DELTA_DROP:
      /* The chat still holds it; the test's own reference goes. */
      g_object_unref (g_steal_pointer (&r->f->sender));
      break;
    case ON_DELTA_RESTORE:
      {
        g_autoptr(GError) error = NULL;

        g_assert_true (mend_transcript_load_json (mend_http_sender_get_transcript (sender),
                                                  "[{\"role\":\"user\",\"content\":\"old\"},"
                                                  "{\"role\":\"assistant\",\"content\":\"answer\"}]",
                                                  &error));
        g_assert_no_error (error);
      }
      break;
    default:
      g_assert_not_reached ();
    }
}

static void
reentry_clear (Reentry *r)
{
  if (r->stream != NULL)
    g_string_free (r->stream, TRUE);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Reentry, reentry_clear)

/* Many deltas in one chunk of the stream: the handler of the first acts
 * while the sender is in the middle of the chunk. */
static void
run_reentry (Fixture *f,
             OnDelta  what,
             Reentry *r)
{
  r->stream = g_string_new (NULL);
  for (guint i = 0; i < 20; i++)
    g_string_append (r->stream, CHUNK ("{\"content\":\"x\"}", "null"));
  g_string_append (r->stream, CHUNK ("{}", "\"stop\"") "data: [DONE]\n\n");
  r->script[0] = (Reply) { 200, "text/event-stream", r->stream->str };
  r->script[1] = r->script[0];

  r->f = f;
  r->what = what;
  g_signal_connect (f->sender, "text-delta", G_CALLBACK (on_delta_reenter), r);
  mend_test_http_chat_start (f, r->script, G_N_ELEMENTS (r->script));
}

/* Stop is the end of the attempt at once: no delta of the chunk it came
 * in is emitted after it, and the turn is stopped. */
static void
test_reentry_stop_in_text_delta (Fixture       *f,
                                 gconstpointer  data)
{
  g_auto(Reentry) r = { 0 };

  run_reentry (f, ON_DELTA_STOP, &r);
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_STOPPED);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (r.seen, ==, 0);
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (f->sender)), ==, 0);
}

static void
on_content_stop (MendHttpSender *sender,
                 MendTurn       *turn,
                 const char     *data,
                 Fixture        *f)
{
  mend_chat_stop (f->chat);
}

/* Stop in a ::content handler: not even the text of that event follows. */
static void
test_reentry_stop_in_content (Fixture       *f,
                              gconstpointer  data)
{
  g_auto(Reentry) r = { 0 };

  g_signal_connect (f->sender, "content", G_CALLBACK (on_content_stop), f);
  run_reentry (f, ON_DELTA_STOP, &r);
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_STOPPED);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_false (r.done);
  g_assert_cmpstr (f->deltas->str, ==, "");
}

/* The transcript changed under a request in flight: the turn still ends,
 * its exchange is kept after what is left, and the next body is valid. */
static void
check_after_change (Fixture *f,
                    guint    expected_messages)
{
  MendTranscript *transcript = mend_http_sender_get_transcript (f->sender);
  g_autofree char *json = NULL;

  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, expected_messages);
  json = mend_transcript_to_json (transcript);
  g_test_message ("%s", json);
  g_assert_true (mend_chat_submit (f->chat, "And now?", NULL, NULL));
  g_assert_cmpint (settle (f, 2), ==, MEND_TURN_SUCCEEDED);
  assert_valid_json (g_ptr_array_index (f->bodies, 1));
  g_assert_nonnull (strstr (g_ptr_array_index (f->bodies, 1), "Summarize the build logs"));
}

static void
test_reentry_clear_in_text_delta (Fixture       *f,
                                  gconstpointer  data)
{
  g_auto(Reentry) r = { 0 };

  run_reentry (f, ON_DELTA_CLEAR, &r);
  check_after_change (f, 2);
}

static void
test_reentry_trim_in_text_delta (Fixture       *f,
                                 gconstpointer  data)
{
  g_auto(Reentry) r = { 0 };

  run_reentry (f, ON_DELTA_TRIM, &r);
  check_after_change (f, 2);
}

static void
test_reentry_restore_in_text_delta (Fixture       *f,
                                    gconstpointer  data)
{
  g_auto(Reentry) r = { 0 };

  run_reentry (f, ON_DELTA_RESTORE, &r);
  check_after_change (f, 4);
  g_assert_nonnull (strstr (g_ptr_array_index (f->bodies, 1), "\"old\""));
}

/* The test's reference to the sender goes in its own handler: the chat's
 * keeps it, and the attempt its own. */
static void
test_reentry_drop_sender_in_text_delta (Fixture       *f,
                                        gconstpointer  data)
{
  g_auto(Reentry) r = { 0 };
  MendHttpSender *sender;

  run_reentry (f, ON_DELTA_DROP, &r);
  sender = MEND_HTTP_SENDER (mend_chat_get_sender (f->chat));
  g_object_add_weak_pointer (G_OBJECT (sender), (gpointer *) &sender);
  g_assert_cmpint (settle (f, 1), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_http_sender_get_answer (sender), ==, "xxxxxxxxxxxxxxxxxxxx");
  /* The teardown finalizes the sender with the chat. */
  f->sender = g_object_ref (sender);
  g_object_remove_weak_pointer (G_OBJECT (sender), (gpointer *) &sender);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);

#define ADD(path, func) \
  g_test_add ("/Mend/AttackDialects/chat-completions/" path, Fixture, NULL, mend_test_http_chat_set_up, func, mend_test_http_chat_tear_down)

  ADD ("whole-answer-with-no-choice-is-empty", test_chat_whole_answer_with_no_choice_is_empty);
  ADD ("whole-error-object-is-a-failure", test_chat_whole_error_object_is_a_failure);
  ADD ("null-error-member-is-no-error", test_chat_null_error_member_is_no_error);
  ADD ("error-of-another-type-is-a-failure", test_chat_error_string_is_a_failure);
  ADD ("tool-call-id-and-name-in-separate-chunks", test_chat_tool_call_id_and_name_apart);
  ADD ("done-with-spaces-ends-the-answer", test_chat_done_with_spaces_ends_the_answer);
  ADD ("finish-or-done-without-content-is-empty", test_chat_finish_without_content_is_empty);
  ADD ("hostile-shapes-and-indexes", test_chat_hostile_shapes);
  ADD ("many-tiny-deltas", test_chat_many_tiny_deltas);
  ADD ("tool-arguments-not-json-are-kept", test_chat_tool_arguments_not_json_are_kept);
  ADD ("text-after-a-tool-call-is-a-block-after-it", test_chat_text_after_a_tool_call);
  ADD ("tool-call-past-the-blocks-is-no-output", test_chat_tool_call_past_the_blocks_is_no_output);
  ADD ("error-event-not-json-fails-with-its-text", test_chat_error_event_not_json);
  ADD ("body-from-an-odd-transcript", test_bodies_from_an_odd_transcript);
  ADD ("reentry/stop-in-text-delta", test_reentry_stop_in_text_delta);
  ADD ("reentry/stop-in-content", test_reentry_stop_in_content);
  ADD ("reentry/clear-in-text-delta", test_reentry_clear_in_text_delta);
  ADD ("reentry/trim-in-text-delta", test_reentry_trim_in_text_delta);
  ADD ("reentry/load-in-text-delta", test_reentry_restore_in_text_delta);
  ADD ("reentry/drop-sender-in-text-delta", test_reentry_drop_sender_in_text_delta);

#undef ADD
#define ADD(path, func) \
  g_test_add ("/Mend/AttackDialects/responses/" path, Fixture, "/v1/responses", mend_test_http_chat_set_up, func, mend_test_http_chat_tear_down)

  ADD ("output-index-beyond-the-blocks", test_responses_output_index_beyond_the_blocks);
  ADD ("failed-without-a-response-member", test_responses_failed_without_response);
  ADD ("incomplete-keeps-its-text", test_responses_incomplete_keeps_its_text);
  ADD ("whole-failed-quota-is-a-limit", test_responses_whole_failed_quota_is_a_limit);
  ADD ("whole-without-output-is-no-answer", test_responses_whole_without_output_is_no_answer);
  ADD ("body-from-an-odd-transcript", test_bodies_from_an_odd_transcript);

#undef ADD

  return g_test_run ();
}
