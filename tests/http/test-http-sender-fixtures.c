/* test-http-sender-fixtures.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Recorded answers of the providers (tests/data/http, each with its source
 * in SOURCES.md there) served from a SoupServer on 127.0.0.1 through a
 * MendChat whose MendHttpSender speaks the answer's format: one row per
 * answer, with the outcome it implies — the text the text-delta signal
 * gave, the answer's text and tool calls as the transcript keeps them, or
 * the failure's kind, reason and server hint. Then the hints a server
 * gives for its rate limits: Retry-After, OpenAI's x-ratelimit-reset-*
 * headers and Google's RetryInfo. Waits run in virtual time.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-server.h"

/* The chat over a scripted SoupServer (tests/support/mend-test-server.c). */
typedef MendTestHttpChat Fixture;
typedef MendTestHttpReply Reply;

#define CHAT "/v1/chat/completions"
#define RESPONSES "/v1/responses"
#define GEMINI "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
#define SSE "text/event-stream"
#define JSON "application/json"

typedef enum
{
  SUCCEEDS,  /* the turn succeeds at once */
  RETRIED,   /* the first attempt fails and a retry waits */
  GIVES_UP,  /* the first attempt fails and nothing is retried */
} Outcome;

typedef struct
{
  const char      *name;
  const char      *path;      /* the endpoint, which names the format */
  const char      *file;      /* tests/data/http/…, or NULL for body */
  const char      *body;
  guint            status;
  const char      *type;
  const char      *headers;
  Outcome          outcome;
  /* SUCCEEDS: the text the text-delta signal gave (its head, its tail and
   * its length in bytes), which is the answer's text; the tool calls the
   * transcript keeps, "name(id) input; …" or NULL for none. */
  const char      *head;
  const char      *tail;
  gsize            bytes;
  const char      *tools;
  /* RETRIED, GIVES_UP: the failure. */
  MendFailureKind  kind;
  MendReason       reason;
  gint64           hint;      /* the server's hint in ms, or -1 */
  gboolean         partial;
} Row;

/* An OpenAI 429 whose message says no wait ("Rate limit reached for
 * requests", https://platform.openai.com/docs/guides/error-codes). */
#define OPENAI_429_NO_HINT \
  "{\"error\":{\"message\":\"Rate limit reached for requests\",\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}"

/* Google's RetryInfo in an error inside a 200 stream, the delay with a
 * fraction (the shape of gemini-cli's googleQuotaErrors.test.ts). */
#define GEMINI_STREAM_RETRY_INFO \
  "data: {\"error\":{\"code\":429,\"message\":\"Resource has been exhausted (e.g. check quota).\"," \
  "\"status\":\"RESOURCE_EXHAUSTED\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\"," \
  "\"retryDelay\":\"1.5s\"}]}}\r\n\r\n"

/* The refusals of a whole (not streamed) answer, in the shapes of the
 * API reference's chat.completion and response objects. */
#define CHAT_WHOLE_REFUSAL \
  "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1727346172,\"model\":\"gpt-4o-2024-08-06\"," \
  "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null," \
  "\"refusal\":\"I'm sorry, I can't assist with that request.\"},\"logprobs\":null,\"finish_reason\":\"stop\"}]}"
#define RESPONSES_WHOLE_REFUSAL \
  "{\"id\":\"resp_123\",\"object\":\"response\",\"status\":\"completed\",\"output\":[{\"id\":\"msg_123\"," \
  "\"type\":\"message\",\"role\":\"assistant\",\"status\":\"completed\"," \
  "\"content\":[{\"type\":\"refusal\",\"refusal\":\"I cannot help with that.\"}]}]}"

static const Row rows[] = {
  /* Chat Completions: OpenAI's own recordings (openai-python) */
  { "chat-completions/openai-text-usage-done", CHAT, "chat-completions/openai-text-usage-done.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "I'm unable to provide real-time weather updates.", "a reliable weather website or a weather app.", 159, NULL },
  { "chat-completions/openai-finish-length", CHAT, "chat-completions/openai-length.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "{\"", "{\"", 2, NULL },
  { "chat-completions/openai-tool-call", CHAT, "chat-completions/openai-tool-call.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "", "", 0, "GetWeatherArgs(call_c91SqDXlYFuETYv8mUHzz6pp) {\"city\":\"Edinburgh\",\"country\":\"UK\",\"units\":\"c\"}" },
  { "chat-completions/openai-two-tool-calls", CHAT, "chat-completions/openai-two-tool-calls.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "", "", 0,
    "GetWeatherArgs(call_JMW1whyEaYG438VE1OIflxA2) {\"city\":\"Edinburgh\",\"country\":\"GB\",\"units\":\"c\"}; "
    "get_stock_price(call_DNYTawLBoN8fj3KN6qU9N1Ou) {\"ticker\":\"AAPL\",\"exchange\":\"NASDAQ\"}" },
  /* A refusal is the model's answer, in delta.refusal. */
  { "chat-completions/openai-refusal", CHAT, "chat-completions/openai-refusal.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "I'm sorry, I can't assist with that request.", "I'm sorry, I can't assist with that request.", 44, NULL },
  { "chat-completions/whole-refusal", CHAT, NULL, CHAT_WHOLE_REFUSAL, 200, JSON, NULL,
    SUCCEEDS, "I'm sorry, I can't assist with that request.", "I'm sorry, I can't assist with that request.", 44, NULL },
  { "chat-completions/content-filter-after-text", CHAT, "chat-completions/content-filter-after-text.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "{\"", "{\"", 2, NULL },
  /* Ollama, llama.cpp's server, OpenRouter, vLLM */
  { "chat-completions/ollama-one-chunk-no-done", CHAT, "chat-completions/ollama-one-chunk-no-done.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "My name is Ben Dover.", "How can I help you today?", 47, NULL },
  { "chat-completions/ollama-parallel-tool-calls", CHAT, "chat-completions/ollama-parallel-tool-calls.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "", "", 0, "run_command(call_wteop8bt) {\"command\":\"ls\"}; run_command(call_rk2xye1l) {\"command\":\"ls -l\"}" },
  { "chat-completions/llamacpp-tool-call-timings", CHAT, "chat-completions/llamacpp-tool-call-timings.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "", "", 0, "bash(NGxrCcDpxOlNRTiVxV9suR85PGonBmJ5) {\"command\":\"ls -F\"}" },
  { "chat-completions/llamacpp-no-content-timings", CHAT, "chat-completions/llamacpp-no-content-timings.sse", NULL, 200, SSE, NULL,
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_EMPTY, .hint = -1 },
  { "chat-completions/openrouter-error-in-stream", CHAT, "chat-completions/openrouter-error-in-stream.sse", NULL, 200, SSE, NULL,
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_SERVER, .hint = -1 },
  { "chat-completions/llamacpp-503-loading-model", CHAT, "chat-completions/llamacpp-503-loading-model.json", NULL, 503, JSON, NULL,
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_CAPACITY, .hint = -1 },
  { "chat-completions/vllm-400-context-length", CHAT, "chat-completions/vllm-400-context-length.json", NULL, 400, JSON, NULL,
    GIVES_UP, .kind = MEND_FAILURE_PERMANENT, .reason = MEND_REASON_BAD_REQUEST, .hint = -1 },
  { "chat-completions/ollama-404-model-not-found", CHAT, "chat-completions/ollama-404-model-not-found.json", NULL, 404, JSON, NULL,
    GIVES_UP, .kind = MEND_FAILURE_PERMANENT, .reason = MEND_REASON_BAD_REQUEST, .hint = -1 },
  /* OpenAI's error bodies */
  { "chat-completions/openai-401-invalid-api-key", CHAT, "chat-completions/openai-401-invalid-api-key.json", NULL, 401, JSON, NULL,
    GIVES_UP, .kind = MEND_FAILURE_PERMANENT, .reason = MEND_REASON_AUTH, .hint = -1 },
  { "chat-completions/openai-400-context-length", CHAT, "chat-completions/openai-400-context-length.json", NULL, 400, JSON, NULL,
    GIVES_UP, .kind = MEND_FAILURE_PERMANENT, .reason = MEND_REASON_BAD_REQUEST, .hint = -1 },
  { "chat-completions/openai-429-insufficient-quota", CHAT, "chat-completions/openai-429-insufficient-quota.json", NULL, 429, JSON, NULL,
    GIVES_UP, .kind = MEND_FAILURE_LIMIT, .reason = MEND_REASON_BILLING, .hint = -1 },
  { "chat-completions/openai-429-rate-limit-exceeded", CHAT, "chat-completions/openai-429-rate-limit-exceeded.json", NULL, 429, JSON, NULL,
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_RATE_LIMIT, .hint = 26604 },

  /* Responses */
  { "responses/openai-node-text", RESPONSES, "responses/openai-node-text.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "Hello world", "Hello world", 11, NULL },
  { "responses/openai-node-reasoning", RESPONSES, "responses/openai-node-reasoning.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "The answer is 42", "The answer is 42", 16, NULL },
  { "responses/openai-node-refusal", RESPONSES, "responses/openai-node-refusal.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "I cannot help with that.", "I cannot help with that.", 24, NULL },
  { "responses/whole-refusal", RESPONSES, NULL, RESPONSES_WHOLE_REFUSAL, 200, JSON, NULL,
    SUCCEEDS, "I cannot help with that.", "I cannot help with that.", 24, NULL },
  { "responses/prism-function-calls", RESPONSES, "responses/prism-function-calls.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "", "", 0,
    "search(call_GXd80NWdsX8ng3xdeNLeA42o) {\"query\":\"Detroit Tigers game time October 6, 2023\"}; "
    "weather(call_qfdHN9tTntv02109c9RNnGGe) {\"city\":\"Detroit\"}" },
  { "responses/text-then-incomplete", RESPONSES, "responses/text-then-incomplete.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "Hello world", "Hello world", 11, NULL },
  { "responses/reference-incomplete-no-output", RESPONSES, "responses/reference-incomplete-no-output.sse", NULL, 200, SSE, NULL,
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_EMPTY, .hint = -1 },
  { "responses/reference-failed-server-error", RESPONSES, "responses/reference-failed-server-error.sse", NULL, 200, SSE, NULL,
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_SERVER, .hint = -1 },
  { "responses/prism-failed-request-too-large", RESPONSES, "responses/prism-failed-request-too-large.sse", NULL, 200, SSE, NULL,
    GIVES_UP, .kind = MEND_FAILURE_PERMANENT, .reason = MEND_REASON_BAD_REQUEST, .hint = -1 },
  { "responses/prism-error-then-failed", RESPONSES, "responses/prism-error-then-failed.sse", NULL, 200, SSE, NULL,
    GIVES_UP, .kind = MEND_FAILURE_PERMANENT, .reason = MEND_REASON_UNKNOWN, .hint = -1 },

  /* Gemini */
  { "gemini/jsgenai-text-stream", GEMINI, "gemini/jsgenai-text-stream.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "The sky is blue due to a phenomenon called **Rayleigh scattering**.",
    "leading to variations in the blue intensity or even a hazy appearance.", 1879, NULL },
  { "gemini/jsgenai-max-tokens", GEMINI, "gemini/jsgenai-max-tokens.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "The sky is blue primarily due to", "it collides with these gas molecules and particles.", 655, NULL },
  { "gemini/jsgenai-function-call", GEMINI, "gemini/jsgenai-function-call.sse", NULL, 200, SSE, NULL,
    SUCCEEDS, "", "", 0, "customDivide(call_1) {\"denominator\":2,\"numerator\":100}" },
  { "gemini/safety-finish", GEMINI, "gemini/safety-finish.sse", NULL, 200, SSE, NULL,
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_EMPTY, .hint = -1 },
  /* Not retried; the classifier has no rule for a blockReason, so the
   * reason is the one of text it does not know. */
  { "gemini/prompt-blocked-safety", GEMINI, "gemini/prompt-blocked-safety.sse", NULL, 200, SSE, NULL,
    GIVES_UP, .kind = MEND_FAILURE_PERMANENT, .reason = MEND_REASON_UNKNOWN, .hint = -1 },
  { "gemini/jsgenai-404-not-found", GEMINI, "gemini/jsgenai-404-not-found.json", NULL, 404, SSE, NULL,
    GIVES_UP, .kind = MEND_FAILURE_PERMANENT, .reason = MEND_REASON_BAD_REQUEST, .hint = -1 },
  { "gemini/429-retryinfo", GEMINI, "gemini/429-retryinfo.json", NULL, 429, JSON, NULL,
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_RATE_LIMIT, .hint = 26000 },
  { "gemini/429-retryinfo-fractional", GEMINI, "gemini/429-retryinfo-fractional.json", NULL, 429, JSON, NULL,
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_RATE_LIMIT, .hint = 45123 },
  { "gemini/503-unavailable", GEMINI, "gemini/503-unavailable.json", NULL, 503, JSON, NULL,
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_CAPACITY, .hint = -1 },
  { "gemini/400-invalid-argument", GEMINI, "gemini/400-invalid-argument.json", NULL, 400, JSON, NULL,
    GIVES_UP, .kind = MEND_FAILURE_PERMANENT, .reason = MEND_REASON_BAD_REQUEST, .hint = -1 },
  { "gemini/400-api-key-invalid", GEMINI, "gemini/400-api-key-invalid.json", NULL, 400, JSON, NULL,
    GIVES_UP, .kind = MEND_FAILURE_PERMANENT, .reason = MEND_REASON_AUTH, .hint = -1 },
  { "gemini/403-permission-denied", GEMINI, "gemini/403-permission-denied.json", NULL, 403, JSON, NULL,
    GIVES_UP, .kind = MEND_FAILURE_PERMANENT, .reason = MEND_REASON_PERMISSION, .hint = -1 },

  /* Hints: OpenAI's x-ratelimit-reset-* on a 429, the longer of the limits
   * that were hit (sample values of the rate-limits guide), only without
   * Retry-After and without a wait in the body. */
  { "hints/reset-requests-hit", CHAT, NULL, OPENAI_429_NO_HINT, 429, JSON,
    "x-ratelimit-limit-requests: 60\nx-ratelimit-remaining-requests: 0\nx-ratelimit-remaining-tokens: 149984\n"
    "x-ratelimit-reset-requests: 1s\nx-ratelimit-reset-tokens: 6m0s",
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_RATE_LIMIT, .hint = 1000 },
  { "hints/reset-tokens-hit", CHAT, NULL, OPENAI_429_NO_HINT, 429, JSON,
    "x-ratelimit-remaining-requests: 59\nx-ratelimit-remaining-tokens: 0\n"
    "x-ratelimit-reset-requests: 1s\nx-ratelimit-reset-tokens: 20ms",
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_RATE_LIMIT, .hint = 20 },
  { "hints/reset-both-hit-the-longer", CHAT, NULL, OPENAI_429_NO_HINT, 429, JSON,
    "x-ratelimit-remaining-requests: 0\nx-ratelimit-remaining-tokens: 0\n"
    "x-ratelimit-reset-requests: 2.5s\nx-ratelimit-reset-tokens: 20ms",
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_RATE_LIMIT, .hint = 2500 },
  { "hints/reset-requests-left-the-tokens", CHAT, NULL, OPENAI_429_NO_HINT, 429, JSON,
    "x-ratelimit-remaining-requests: 59\nx-ratelimit-remaining-tokens: 149984\n"
    "x-ratelimit-reset-requests: 1s\nx-ratelimit-reset-tokens: 2.5s",
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_RATE_LIMIT, .hint = 2500 },
  /* Six minutes, past the turn's horizon of 60 s: a limit to show, the
   * hint kept. */
  { "hints/reset-beyond-the-horizon", CHAT, NULL, OPENAI_429_NO_HINT, 429, JSON,
    "x-ratelimit-reset-requests: 1s\nx-ratelimit-reset-tokens: 6m0s",
    GIVES_UP, .kind = MEND_FAILURE_LIMIT, .reason = MEND_REASON_RATE_LIMIT, .hint = 360000 },
  { "hints/retry-after-wins-over-reset", CHAT, NULL, OPENAI_429_NO_HINT, 429, JSON,
    "Retry-After: 7\nx-ratelimit-remaining-requests: 0\nx-ratelimit-reset-requests: 1s",
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_RATE_LIMIT, .hint = 7000 },
  { "hints/body-wait-wins-over-reset", CHAT, "chat-completions/openai-429-rate-limit-exceeded.json", NULL, 429, JSON,
    "x-ratelimit-remaining-tokens: 0\nx-ratelimit-reset-tokens: 6m0s",
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_RATE_LIMIT, .hint = 26604 },
  { "hints/reset-only-on-a-429", CHAT, "chat-completions/llamacpp-503-loading-model.json", NULL, 503, JSON,
    "x-ratelimit-remaining-requests: 0\nx-ratelimit-reset-requests: 2.5s",
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_CAPACITY, .hint = -1 },
  { "hints/reset-unreadable", CHAT, NULL, OPENAI_429_NO_HINT, 429, JSON,
    "x-ratelimit-remaining-requests: 0\nx-ratelimit-reset-requests: soon",
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_RATE_LIMIT, .hint = -1 },
  /* Google's RetryInfo inside a stream's error event. */
  { "hints/retryinfo-in-a-stream", GEMINI, NULL, GEMINI_STREAM_RETRY_INFO, 200, SSE, NULL,
    RETRIED, .kind = MEND_FAILURE_TRANSIENT, .reason = MEND_REASON_RATE_LIMIT, .hint = 1500 },
};

typedef struct
{
  MendRetryWait *wait;
  guint          waits;
} Watch;

static void
on_waiting (MendTurn      *turn,
            MendRetryWait *wait,
            Watch         *watch)
{
  watch->waits++;
  g_set_object (&watch->wait, wait);
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Watch    *watch)
{
  g_signal_connect (turn, "waiting", G_CALLBACK (on_waiting), watch);
}

static void
row_set_up (Fixture       *f,
            gconstpointer  data)
{
  const Row *row = data;

  mend_test_http_chat_set_up_at (f, row->path);
}

/* The assistant's tool calls in the transcript's last message, "name(id)
 * input; …", or NULL when it has none. */
static char *
transcript_tools (MendTranscript *transcript)
{
  g_autofree char *json = mend_transcript_to_json (transcript);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GString) tools = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  JsonArray *messages;
  JsonObject *last;
  JsonArray *content;

  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  messages = json_node_get_array (json_parser_get_root (parser));
  g_assert_cmpuint (json_array_get_length (messages), >, 0);
  last = json_array_get_object_element (messages, json_array_get_length (messages) - 1);
  g_assert_cmpstr (json_object_get_string_member (last, "role"), ==, "assistant");
  if (!JSON_NODE_HOLDS_ARRAY (json_object_get_member (last, "content")))
    return NULL;

  content = json_object_get_array_member (last, "content");
  for (guint i = 0; i < json_array_get_length (content); i++)
    {
      JsonObject *block = json_array_get_object_element (content, i);
      g_autofree char *input = NULL;

      if (g_strcmp0 (json_object_get_string_member_with_default (block, "type", NULL), "tool_use") != 0)
        continue;
      input = json_to_string (json_object_get_member (block, "input"), FALSE);
      g_string_append_printf (tools, "%s%s(%s) %s", tools->len > 0 ? "; " : "",
                              json_object_get_string_member (block, "name"),
                              json_object_get_string_member (block, "id"), input);
    }

  return tools->len > 0 ? g_strdup (tools->str) : NULL;
}

static void
test_row (Fixture       *f,
          gconstpointer  data)
{
  const Row *row = data;
  MendTranscript *transcript = mend_http_sender_get_transcript (f->sender);
  Reply script[1] = { { row->status, row->type, NULL, row->headers } };
  Watch watch = { NULL, 0 };
  MendTurn *turn;
  MendFailure *failure;

  script[0].body = row->file != NULL ? mend_test_http_chat_load (f, row->file) : row->body;
  g_signal_connect (f->chat, "turn-started", G_CALLBACK (on_turn_started), &watch);
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));

  switch (row->outcome)
    {
    case SUCCEEDS:
      {
        g_autofree char *tools = NULL;

        mend_test_run_chat_until (f->chat, &f->served, MEND_TURN_SUCCEEDED, 1);
        turn = g_ptr_array_index (f->finished, 0);
        g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_SUCCEEDED);
        g_assert_cmpuint (watch.waits, ==, 0);
        g_assert_cmpuint (f->deltas->len, ==, row->bytes);
        g_assert_true (g_str_has_prefix (f->deltas->str, row->head));
        g_assert_true (g_str_has_suffix (f->deltas->str, row->tail));
        g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, f->deltas->str);
        g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 2);
        tools = transcript_tools (transcript);
        g_assert_cmpstr (tools, ==, row->tools);
        return;
      }

    case RETRIED:
      mend_test_run_chat_until (f->chat, &f->served, MEND_TURN_WAITING, 1);
      turn = mend_chat_get_turn (f->chat);
      failure = mend_turn_get_last_failure (turn);
      g_assert_cmpuint (watch.waits, ==, 1);
      /* The wait is the server's hint, when it gave one (never below the
       * schedule's 250 ms). */
      if (row->hint >= 0)
        {
          g_assert_cmpint (mend_retry_wait_get_delay_ms (watch.wait), ==, MAX (row->hint, 250));
          g_assert_true (mend_retry_wait_get_server_hint (watch.wait) || row->hint <= 250);
        }
      break;

    case GIVES_UP:
    default:
      mend_test_run_chat_until (f->chat, &f->served, MEND_TURN_FAILED, 1);
      turn = g_ptr_array_index (f->finished, 0);
      g_assert_cmpint (mend_turn_get_state (turn), ==, MEND_TURN_FAILED);
      failure = mend_turn_get_last_failure (turn);
      g_assert_cmpuint (watch.waits, ==, 0);
      break;
    }

  g_test_message ("%s: %s/%s, %" G_GINT64_FORMAT " ms: %s", row->name,
                  mend_failure_kind_to_nick (mend_failure_get_kind (failure)),
                  mend_reason_to_nick (mend_failure_get_reason (failure)),
                  mend_failure_get_retry_after_ms (failure), mend_failure_get_message (failure));
  g_assert_cmpstr (mend_failure_kind_to_nick (mend_failure_get_kind (failure)), ==, mend_failure_kind_to_nick (row->kind));
  g_assert_cmpstr (mend_reason_to_nick (mend_failure_get_reason (failure)), ==, mend_reason_to_nick (row->reason));
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, row->hint);
  g_assert_cmpint (mend_failure_get_partial (failure), ==, row->partial);
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 0);

  /* The app's Stop ends a wait. */
  if (row->outcome == RETRIED)
    {
      mend_chat_stop (f->chat);
      g_assert_null (mend_chat_get_turn (f->chat));
      g_assert_cmpuint (f->served, ==, 1);
    }
  g_clear_object (&watch.wait);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *path = g_strdup_printf ("/Mend/HttpFixtures/%s", rows[i].name);

      g_test_add (path, Fixture, &rows[i], row_set_up, test_row, mend_test_http_chat_tear_down);
    }

  return g_test_run ();
}
