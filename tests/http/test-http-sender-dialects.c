/* test-http-sender-dialects.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendHttpSender speaking the OpenAI Chat Completions format, through
 * Mend.Chat, against a SoupServer on 127.0.0.1 with a script per test.
 * The stream and answer shapes are those of OpenAI's API reference
 * (https://platform.openai.com/docs/api-reference/chat-streaming: chunks
 * of "chat.completion.chunk", a usage chunk with no choice when
 * stream_options.include_usage is set, then `data: [DONE]`), which Ollama,
 * llama.cpp's server and vLLM copy. Waits run in virtual time.
 */

#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-server.h"

/* The chat over a scripted SoupServer (tests/support/mend-test-server.c). */
typedef MendTestHttpChat Fixture;
typedef MendTestHttpReply Reply;


#define CHUNK(delta, finish) \
  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764500000," \
  "\"model\":\"llama3.2\",\"choices\":[{\"index\":0,\"delta\":" delta ",\"finish_reason\":" finish "}]}\n\n"

static const char STREAM_OK[] =
  CHUNK ("{\"role\":\"assistant\",\"content\":\"\"}", "null")
  CHUNK ("{\"content\":\"Hello\"}", "null")
  CHUNK ("{\"content\":\", world\"}", "null")
  CHUNK ("{}", "\"stop\"")
  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[],"
  "\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3,\"total_tokens\":12}}\n\n"
  "data: [DONE]\n\n";

/* A server that sends no [DONE] after the last chunk. */
static const char STREAM_NO_DONE[] =
  CHUNK ("{\"role\":\"assistant\",\"content\":\"Hello\"}", "null")
  CHUNK ("{}", "\"stop\"");

static const char STREAM_EMPTY[] =
  CHUNK ("{\"role\":\"assistant\",\"content\":\"\"}", "null")
  CHUNK ("{}", "\"stop\"")
  "data: [DONE]\n\n";

/* An error object inside a 200 stream, as vLLM and OpenRouter send. */
static const char STREAM_ERROR_FIRST[] =
  "data: {\"error\":{\"message\":\"The server is overloaded, please try again later\","
  "\"type\":\"server_error\",\"code\":503}}\n\n";

static const char STREAM_ERROR_AFTER_TEXT[] =
  CHUNK ("{\"role\":\"assistant\",\"content\":\"Hel\"}", "null")
  "data: {\"error\":{\"message\":\"The server is overloaded, please try again later\","
  "\"type\":\"server_error\",\"code\":503}}\n\n";

static const char STREAM_TOOL_CALL[] =
  CHUNK ("{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,\"id\":\"call_1\","
         "\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"arguments\":\"\"}}]}", "null")
  CHUNK ("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"path\\\":\"}}]}", "null")
  CHUNK ("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"build.log\\\"}\"}}]}", "null")
  CHUNK ("{}", "\"tool_calls\"")
  "data: [DONE]\n\n";

static const char WHOLE_OK[] =
  "{\"id\":\"chatcmpl-2\",\"object\":\"chat.completion\",\"created\":1764500000,\"model\":\"llama3.2\","
  "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello, world\"},"
  "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3,\"total_tokens\":12}}";

/* OpenAI's error body for a refused key. */
static const char INVALID_KEY[] =
  "{\"error\":{\"message\":\"Incorrect API key provided: sk-proj-****. You can find your API key "
  "at https://platform.openai.com/account/api-keys.\",\"type\":\"invalid_request_error\","
  "\"param\":null,\"code\":\"invalid_api_key\"}}";

/* The Responses API's events, after its streaming reference
 * (https://platform.openai.com/docs/api-reference/responses-streaming). */
#define EVENT(type, json) "event: " type "\ndata: {\"type\":\"" type "\"," json "}\n\n"

static const char RESPONSES_OK[] =
  EVENT ("response.created", "\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]}")
  EVENT ("response.output_item.added", "\"sequence_number\":1,\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}")
  EVENT ("response.output_text.delta", "\"sequence_number\":2,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"Hello\"")
  EVENT ("response.output_text.delta", "\"sequence_number\":3,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\", world\"")
  EVENT ("response.completed", "\"sequence_number\":4,\"response\":{\"id\":\"resp_1\",\"status\":\"completed\"}");

static const char RESPONSES_EMPTY[] =
  EVENT ("response.created", "\"sequence_number\":0,\"response\":{\"id\":\"resp_2\",\"status\":\"in_progress\",\"output\":[]}")
  EVENT ("response.completed", "\"sequence_number\":1,\"response\":{\"id\":\"resp_2\",\"status\":\"completed\",\"output\":[]}");

static const char RESPONSES_SERVER_ERROR[] =
  EVENT ("response.created", "\"sequence_number\":0,\"response\":{\"id\":\"resp_3\",\"status\":\"in_progress\",\"output\":[]}")
  EVENT ("response.failed", "\"sequence_number\":1,\"response\":{\"id\":\"resp_3\",\"status\":\"failed\","
         "\"error\":{\"code\":\"server_error\",\"message\":\"The server had an error while processing your request. Sorry about that!\"}}");

static const char RESPONSES_QUOTA[] =
  EVENT ("response.failed", "\"sequence_number\":1,\"response\":{\"id\":\"resp_4\",\"status\":\"failed\","
         "\"error\":{\"code\":\"insufficient_quota\",\"message\":\"You exceeded your current quota, please check your plan and billing details.\"}}");

static const char RESPONSES_TOOL_CALL[] =
  EVENT ("response.output_item.added", "\"sequence_number\":1,\"output_index\":0,\"item\":{\"id\":\"fc_1\",\"type\":\"function_call\",\"call_id\":\"call_9\",\"name\":\"read_file\",\"arguments\":\"\"}")
  EVENT ("response.function_call_arguments.delta", "\"sequence_number\":2,\"item_id\":\"fc_1\",\"output_index\":0,\"delta\":\"{\\\"path\\\":\\\"build.log\\\"}\"")
  EVENT ("response.completed", "\"sequence_number\":3,\"response\":{\"id\":\"resp_5\",\"status\":\"completed\"}");

static const char RESPONSES_WHOLE[] =
  "{\"id\":\"resp_6\",\"object\":\"response\",\"status\":\"completed\",\"output\":[{\"id\":\"msg_6\","
  "\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Hello, world\","
  "\"annotations\":[]}]}]}";

/* Gemini's chunks, after https://ai.google.dev/api/generate-content: no
 * end marker, the last chunk has a finishReason. */
#define GEMINI_PATH "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
#define GEMINI_CHUNK(parts, finish) \
  "data: {\"candidates\":[{\"content\":{\"parts\":" parts ",\"role\":\"model\"}" finish ",\"index\":0}]," \
  "\"modelVersion\":\"gemini-2.5-flash\"}\r\n\r\n"

static const char GEMINI_OK[] =
  GEMINI_CHUNK ("[{\"text\":\"Hello\"}]", "")
  GEMINI_CHUNK ("[{\"text\":\", world\"}]", ",\"finishReason\":\"STOP\"");

static const char GEMINI_EMPTY[] =
  "data: {\"candidates\":[{\"finishReason\":\"SAFETY\",\"index\":0}]}\r\n\r\n";

/* Gemini's overload, as its API answers in a stream. */
static const char GEMINI_OVERLOADED[] =
  "data: {\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please try again later.\","
  "\"status\":\"UNAVAILABLE\"}}\r\n\r\n";

static const char GEMINI_BLOCKED[] =
  "data: {\"promptFeedback\":{\"blockReason\":\"PROHIBITED_CONTENT\"},\"usageMetadata\":{\"promptTokenCount\":9}}\r\n\r\n";

static const char GEMINI_CALL[] =
  GEMINI_CHUNK ("[{\"functionCall\":{\"name\":\"read_file\",\"args\":{\"path\":\"build.log\"}}}]",
                ",\"finishReason\":\"STOP\"");


/* The user message of the turn after a give-up: both prompts, apart. */
#define RESPONSES_PROMPTS_APART \
  "{\"role\":\"user\",\"content\":\"Summarize the build logs\\n\\nAnd the tests?\"}"
#define GEMINI_PROMPTS_APART \
  "{\"role\":\"user\",\"parts\":[{\"text\":\"Summarize the build logs\\n\\nAnd the tests?\"}]}"

static void
run_until (Fixture       *f,
           MendTurnState  state,
           guint          requests)
{
  mend_test_run_chat_until (f->chat, &f->served, state, requests);
}

static MendTurn *
last_finished (Fixture *f)
{
  g_assert_cmpuint (f->finished->len, >, 0);
  return g_ptr_array_index (f->finished, f->finished->len - 1);
}

static void
test_dialect_from_the_path (void)
{
  g_autoptr(MendHttpSender) chat = mend_http_sender_new ("http://127.0.0.1:11434/v1/chat/completions");
  g_autoptr(MendHttpSender) messages = mend_http_sender_new ("https://api.anthropic.com/v1/messages");
  g_autoptr(MendHttpSender) responses = mend_http_sender_new ("https://api.openai.com/v1/responses?x=1");
  g_autoptr(MendHttpSender) forced = g_object_new (MEND_TYPE_HTTP_SENDER,
                                                   "uri", "http://127.0.0.1:8080/generate",
                                                   "dialect", MEND_HTTP_DIALECT_CHAT_COMPLETIONS,
                                                   NULL);
  MendHttpDialect read;

  g_assert_cmpint (mend_http_sender_get_dialect (chat), ==, MEND_HTTP_DIALECT_CHAT_COMPLETIONS);
  g_assert_cmpint (mend_http_sender_get_dialect (messages), ==, MEND_HTTP_DIALECT_MESSAGES);
  g_assert_cmpint (mend_http_sender_get_dialect (responses), ==, MEND_HTTP_DIALECT_RESPONSES);
  g_assert_cmpint (mend_http_sender_get_dialect (forced), ==, MEND_HTTP_DIALECT_CHAT_COMPLETIONS);
  g_object_get (chat, "dialect", &read, NULL);
  g_assert_cmpint (read, ==, MEND_HTTP_DIALECT_CHAT_COMPLETIONS);
}

/* A healthy server's streamed answer succeeds on the first request, its
 * text streamed and kept, and the next turn sends it back as history. */
static void
test_a_streamed_answer_succeeds_at_once (Fixture       *f,
                                         gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", STREAM_OK },
    { 200, "text/event-stream", STREAM_OK },
  };
  const char *first;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpint (mend_turn_get_state (last_finished (f)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (f->deltas->str, ==, "Hello, world");
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Hello, world");
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (f->sender)), ==, 2);

  first = g_ptr_array_index (f->bodies, 0);
  g_assert_nonnull (strstr (first, "\"model\":\"llama3.2\""));
  g_assert_nonnull (strstr (first, "\"stream\":true"));
  g_assert_nonnull (strstr (first, "\"stream_options\":{\"include_usage\":true}"));
  g_assert_nonnull (strstr (first, "\"messages\":[{\"role\":\"user\",\"content\":\"Summarize the build logs\"}]"));

  g_assert_true (mend_chat_submit (f->chat, "And the tests?", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_nonnull (strstr (g_ptr_array_index (f->bodies, 1),
                            "{\"role\":\"assistant\",\"content\":\"Hello, world\"},"
                            "{\"role\":\"user\",\"content\":\"And the tests?\"}"));
}

static void
test_an_answer_without_done_after_its_finish_succeeds (Fixture       *f,
                                                       gconstpointer  data)
{
  static const Reply script[] = { { 200, "text/event-stream", STREAM_NO_DONE } };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_cmpint (mend_turn_get_state (last_finished (f)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Hello");
}

static void
test_a_whole_answer_succeeds (Fixture       *f,
                              gconstpointer  data)
{
  static const Reply script[] = { { 200, "application/json", WHOLE_OK } };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_cmpstr (f->deltas->str, ==, "Hello, world");
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (f->sender)), ==, 2);
}

static void
test_503_twice_then_success (Fixture       *f,
                             gconstpointer  data)
{
  static const Reply script[] = {
    { 503, "application/json", "{\"error\":{\"message\":\"no slots available\",\"type\":\"unavailable_error\",\"code\":503}}" },
    { 503, "application/json", "{\"error\":{\"message\":\"no slots available\",\"type\":\"unavailable_error\",\"code\":503}}" },
    { 200, "text/event-stream", STREAM_OK },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  for (guint i = 1; i <= 2; i++)
    {
      run_until (f, MEND_TURN_WAITING, i);
      mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
    }
  run_until (f, MEND_TURN_SUCCEEDED, 3);
  g_assert_cmpint (mend_turn_get_state (last_finished (f)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpstr (g_ptr_array_index (f->bodies, 0), ==, g_ptr_array_index (f->bodies, 2));
}

/* No text and no tool call: the model's empty response, retried. */
static void
test_an_empty_answer_is_retried (Fixture       *f,
                                 gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", STREAM_EMPTY },
    { 200, "text/event-stream", STREAM_OK },
  };
  MendTurn *turn;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  turn = mend_chat_get_turn (f->chat);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==, MEND_REASON_EMPTY);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
}

static void
test_a_stream_error_before_output_is_retried (Fixture       *f,
                                              gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", STREAM_ERROR_FIRST },
    { 200, "text/event-stream", STREAM_OK },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
}

static void
test_a_stream_error_after_text_is_not_retried (Fixture       *f,
                                               gconstpointer  data)
{
  static const Reply script[] = { { 200, "text/event-stream", STREAM_ERROR_AFTER_TEXT } };
  MendTurn *turn;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_FAILED, 1);
  turn = last_finished (f);
  g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
  g_assert_true (mend_failure_get_partial (mend_turn_get_last_failure (turn)));
  g_assert_cmpstr (f->deltas->str, ==, "Hel");
}

static void
test_a_refused_key_gives_up_at_once (Fixture       *f,
                                     gconstpointer  data)
{
  static const Reply script[] = { { 401, "application/json", INVALID_KEY } };
  MendTurn *turn;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_FAILED, 1);
  turn = last_finished (f);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (turn)), ==, MEND_REASON_AUTH);
  g_assert_cmpuint (f->served, ==, 1);
}

/* A prompt that gave up goes with the next one, in the next turn's user
 * message: in a format that takes one string, the two stay apart, a
 * blank line between them, never glued into one sentence. */
static void
check_a_prompt_that_gave_up_stays_apart (Fixture    *f,
                                         const char *answer,
                                         const char *message)
{
  const Reply script[] = {
    { 401, "application/json", INVALID_KEY },
    { 200, "text/event-stream", answer },
  };
  const char *second;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_FAILED, 1);
  g_assert_true (mend_chat_submit (f->chat, "And the tests?", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 2);

  second = g_ptr_array_index (f->bodies, 1);
  g_assert_nonnull (strstr (second, message));
  g_assert_null (strstr (second, "logsAnd"));
  g_assert_null (strstr (second, "logs And"));
}

static void
test_a_prompt_that_gave_up_stays_apart (Fixture       *f,
                                        gconstpointer  data)
{
  check_a_prompt_that_gave_up_stays_apart (f, STREAM_OK,
                                           "{\"role\":\"user\",\"content\":"
                                           "\"Summarize the build logs\\n\\nAnd the tests?\"}");
}

/* A tool call is content: kept in the transcript, and sent back as the
 * assistant's tool_calls. */
static void
test_a_tool_call_is_kept_in_the_history (Fixture       *f,
                                         gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", STREAM_TOOL_CALL },
    { 200, "text/event-stream", STREAM_OK },
  };
  g_autofree char *json = NULL;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  json = mend_transcript_to_json (mend_http_sender_get_transcript (f->sender));
  g_assert_nonnull (strstr (json, "\"type\":\"tool_use\",\"id\":\"call_1\",\"name\":\"read_file\""));
  g_assert_nonnull (strstr (json, "\"input\":{\"path\":\"build.log\"}"));

  g_assert_true (mend_chat_submit (f->chat, "Go on", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_nonnull (strstr (g_ptr_array_index (f->bodies, 1),
                            "\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
                            "\"function\":{\"name\":\"read_file\",\"arguments\":\"{\\\"path\\\":\\\"build.log\\\"}\"}}]"));
}

/* Responses */

static void
test_responses_a_streamed_answer_succeeds_at_once (Fixture       *f,
                                                   gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", RESPONSES_OK },
    { 200, "text/event-stream", RESPONSES_OK },
  };
  const char *first;

  g_assert_cmpint (mend_http_sender_get_dialect (f->sender), ==, MEND_HTTP_DIALECT_RESPONSES);
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpstr (f->deltas->str, ==, "Hello, world");
  first = g_ptr_array_index (f->bodies, 0);
  g_assert_nonnull (strstr (first, "\"max_output_tokens\":"));
  g_assert_nonnull (strstr (first, "\"input\":[{\"role\":\"user\",\"content\":\"Summarize the build logs\"}]"));

  g_assert_true (mend_chat_submit (f->chat, "And the tests?", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_nonnull (strstr (g_ptr_array_index (f->bodies, 1),
                            "{\"role\":\"assistant\",\"content\":\"Hello, world\"},"
                            "{\"role\":\"user\",\"content\":\"And the tests?\"}"));
}

static void
test_responses_a_whole_answer_succeeds (Fixture       *f,
                                        gconstpointer  data)
{
  static const Reply script[] = { { 200, "application/json", RESPONSES_WHOLE } };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_cmpstr (f->deltas->str, ==, "Hello, world");
}

static void
test_responses_an_empty_answer_is_retried (Fixture       *f,
                                           gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", RESPONSES_EMPTY },
    { 200, "text/event-stream", RESPONSES_OK },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (mend_chat_get_turn (f->chat))),
                   ==, MEND_REASON_EMPTY);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
}

static void
test_responses_a_failed_response_is_retried (Fixture       *f,
                                             gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", RESPONSES_SERVER_ERROR },
    { 200, "text/event-stream", RESPONSES_OK },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
}

static void
test_responses_a_quota_is_a_limit (Fixture       *f,
                                   gconstpointer  data)
{
  static const Reply script[] = { { 200, "text/event-stream", RESPONSES_QUOTA } };
  MendTurn *turn;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_FAILED, 1);
  turn = last_finished (f);
  g_assert_cmpint (mend_failure_get_kind (mend_turn_get_last_failure (turn)), ==, MEND_FAILURE_LIMIT);
  g_assert_cmpuint (f->served, ==, 1);
}

static void
test_responses_a_tool_call_is_kept_in_the_history (Fixture       *f,
                                                   gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", RESPONSES_TOOL_CALL },
    { 200, "text/event-stream", RESPONSES_OK },
  };
  g_autofree char *json = NULL;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  json = mend_transcript_to_json (mend_http_sender_get_transcript (f->sender));
  g_assert_nonnull (strstr (json, "\"input\":{\"path\":\"build.log\"}"));
  g_assert_true (mend_chat_submit (f->chat, "Go on", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_nonnull (strstr (g_ptr_array_index (f->bodies, 1),
                            "{\"type\":\"function_call\",\"call_id\":\"call_9\",\"name\":\"read_file\","
                            "\"arguments\":\"{\\\"path\\\":\\\"build.log\\\"}\"}"));
}

/* Gemini */

static void
test_gemini_a_streamed_answer_succeeds_at_once (Fixture       *f,
                                                gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", GEMINI_OK },
    { 200, "text/event-stream", GEMINI_OK },
  };
  const char *first;

  g_assert_cmpint (mend_http_sender_get_dialect (f->sender), ==, MEND_HTTP_DIALECT_GEMINI);
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpstr (f->deltas->str, ==, "Hello, world");
  first = g_ptr_array_index (f->bodies, 0);
  g_assert_nonnull (strstr (first, "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Summarize the build logs\"}]}],"
                                   "\"generationConfig\":{\"maxOutputTokens\":"));

  g_assert_true (mend_chat_submit (f->chat, "And the tests?", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_nonnull (strstr (g_ptr_array_index (f->bodies, 1),
                            "{\"role\":\"model\",\"parts\":[{\"text\":\"Hello, world\"}]},"
                            "{\"role\":\"user\",\"parts\":[{\"text\":\"And the tests?\"}]}"));
}

static void
test_gemini_an_empty_answer_is_retried (Fixture       *f,
                                        gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", GEMINI_EMPTY },
    { 200, "text/event-stream", GEMINI_OK },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (mend_chat_get_turn (f->chat))),
                   ==, MEND_REASON_EMPTY);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
}

static void
test_gemini_an_overload_in_the_stream_is_retried (Fixture       *f,
                                                  gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", GEMINI_OVERLOADED },
    { 200, "text/event-stream", GEMINI_OK },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_WAITING, 1);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
}

static void
test_gemini_a_blocked_prompt_gives_up (Fixture       *f,
                                       gconstpointer  data)
{
  static const Reply script[] = { { 200, "text/event-stream", GEMINI_BLOCKED } };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_FAILED, 1);
  g_assert_cmpint (mend_turn_get_state (last_finished (f)), ==, MEND_TURN_FAILED);
  g_assert_cmpuint (f->served, ==, 1);
}

static void
test_gemini_a_function_call_is_kept_in_the_history (Fixture       *f,
                                                    gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", GEMINI_CALL },
    { 200, "text/event-stream", GEMINI_OK },
  };
  g_autofree char *json = NULL;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  json = mend_transcript_to_json (mend_http_sender_get_transcript (f->sender));
  g_assert_nonnull (strstr (json, "\"name\":\"read_file\""));
  g_assert_nonnull (strstr (json, "\"input\":{\"path\":\"build.log\"}"));
  g_assert_true (mend_chat_submit (f->chat, "Go on", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_nonnull (strstr (g_ptr_array_index (f->bodies, 1),
                            "{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"read_file\","
                            "\"args\":{\"path\":\"build.log\"}}}]}"));
}

static void
test_responses_a_prompt_that_gave_up_stays_apart (Fixture       *f,
                                                  gconstpointer  data)
{
  check_a_prompt_that_gave_up_stays_apart (f, RESPONSES_OK, RESPONSES_PROMPTS_APART);
}

static void
test_gemini_a_prompt_that_gave_up_stays_apart (Fixture       *f,
                                               gconstpointer  data)
{
  check_a_prompt_that_gave_up_stays_apart (f, GEMINI_OK, GEMINI_PROMPTS_APART);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);

#define ADD(path, func) \
  g_test_add ("/Mend/HttpDialect/chat-completions/" path, Fixture, NULL, mend_test_http_chat_set_up, func, mend_test_http_chat_tear_down)

  g_test_add_func ("/Mend/HttpDialect/from-the-path-or-forced", test_dialect_from_the_path);
  ADD ("a-streamed-answer-succeeds-at-once", test_a_streamed_answer_succeeds_at_once);
  ADD ("an-answer-without-done-after-its-finish-succeeds", test_an_answer_without_done_after_its_finish_succeeds);
  ADD ("a-whole-answer-succeeds", test_a_whole_answer_succeeds);
  ADD ("503-twice-then-success", test_503_twice_then_success);
  ADD ("an-empty-answer-is-retried", test_an_empty_answer_is_retried);
  ADD ("a-stream-error-before-output-is-retried", test_a_stream_error_before_output_is_retried);
  ADD ("a-stream-error-after-text-is-not-retried", test_a_stream_error_after_text_is_not_retried);
  ADD ("a-refused-key-gives-up-at-once", test_a_refused_key_gives_up_at_once);
  ADD ("a-prompt-that-gave-up-stays-apart", test_a_prompt_that_gave_up_stays_apart);
  ADD ("a-tool-call-is-kept-in-the-history", test_a_tool_call_is_kept_in_the_history);

#undef ADD
#define ADD(path, func) \
  g_test_add ("/Mend/HttpDialect/responses/" path, Fixture, "/v1/responses", mend_test_http_chat_set_up, func, mend_test_http_chat_tear_down)

  ADD ("a-streamed-answer-succeeds-at-once", test_responses_a_streamed_answer_succeeds_at_once);
  ADD ("a-whole-answer-succeeds", test_responses_a_whole_answer_succeeds);
  ADD ("an-empty-answer-is-retried", test_responses_an_empty_answer_is_retried);
  ADD ("a-failed-response-is-retried", test_responses_a_failed_response_is_retried);
  ADD ("a-quota-is-a-limit", test_responses_a_quota_is_a_limit);
  ADD ("a-prompt-that-gave-up-stays-apart", test_responses_a_prompt_that_gave_up_stays_apart);
  ADD ("a-tool-call-is-kept-in-the-history", test_responses_a_tool_call_is_kept_in_the_history);

#undef ADD
#define ADD(path, func) \
  g_test_add ("/Mend/HttpDialect/gemini/" path, Fixture, GEMINI_PATH, mend_test_http_chat_set_up, func, mend_test_http_chat_tear_down)

  ADD ("a-streamed-answer-succeeds-at-once", test_gemini_a_streamed_answer_succeeds_at_once);
  ADD ("an-empty-answer-is-retried", test_gemini_an_empty_answer_is_retried);
  ADD ("an-overload-in-the-stream-is-retried", test_gemini_an_overload_in_the_stream_is_retried);
  ADD ("a-blocked-prompt-gives-up", test_gemini_a_blocked_prompt_gives_up);
  ADD ("a-prompt-that-gave-up-stays-apart", test_gemini_a_prompt_that_gave_up_stays_apart);
  ADD ("a-function-call-is-kept-in-the-history", test_gemini_a_function_call_is_kept_in_the_history);

#undef ADD

  return g_test_run ();
}
