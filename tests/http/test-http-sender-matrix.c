/* test-http-sender-matrix.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The same chat scenarios in every wire format MendHttpSender speaks —
 * Anthropic Messages, OpenAI Chat Completions, OpenAI Responses, Gemini —
 * each with the format's own bodies (recorded ones from tests/data/http
 * where there are, see SOURCES.md there; the others after the provider's
 * API reference): 503 and 529 twice then success, a give-up that leaves
 * "Continue the current turn" at the head of the queue, Stop during a
 * wait, 401 and 400 given up at once, an empty answer and a stream error
 * before output retried, a stream error after text not retried, a
 * Retry-After of 3 s waited out in virtual time, and a transcript saved
 * after a turn and restored into a fresh chat, whose next request carries
 * the history in the format's shape. The test watches as an app does: the
 * chat's turn-started and turn-finished, each turn's waiting and
 * exhausted, the text-delta of the sender.
 */

#include <string.h>

#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-server.h"

/* The chat over a scripted SoupServer (tests/support/mend-test-server.c). */
typedef MendTestHttpChat Fixture;
typedef MendTestHttpReply Reply;

#define SSE "text/event-stream"
#define JSON "application/json"

/* A format's answers (see body () for the recorded ones). */
typedef struct
{
  const char *name;
  const char *path;
  const char *ok;               /* a streamed answer… */
  const char *answer_head;      /* …whose text starts so… */
  gsize       answer_bytes;     /* …and has so many bytes */
  const char *empty;            /* an answer with nothing in it */
  const char *error_first;      /* a stream's error before any output */
  const char *error_after_text; /* a stream's error after some text… */
  const char *partial_text;     /* …which is this */
  const char *overloaded;       /* the body of a 503 or 529 */
  const char *unauthorized;     /* of a 401 */
  const char *bad_request;      /* of a 400 */
  const char *rate_limited;     /* of a 429, with no wait in it */
  const char *history;          /* how the next request carries the first turn */
} Format;

/* Anthropic Messages, after https://docs.anthropic.com/en/api/messages-streaming
 * and https://docs.anthropic.com/en/api/errors. */
#define ANTHROPIC_EVENT(type, json) "event: " type "\ndata: {\"type\":\"" type "\"" json "}\n\n"
#define ANTHROPIC_START \
  ANTHROPIC_EVENT ("message_start", ",\"message\":{\"id\":\"msg_01\",\"type\":\"message\",\"role\":\"assistant\"," \
                   "\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}")
#define ANTHROPIC_TEXT(text) \
  ANTHROPIC_EVENT ("content_block_delta", ",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" text "\"}")
#define ANTHROPIC_OVERLOADED \
  "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"

static const Format messages = {
  "messages", "/v1/messages",
  ANTHROPIC_START
  ANTHROPIC_EVENT ("content_block_start", ",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}")
  ANTHROPIC_EVENT ("ping", "")
  ANTHROPIC_TEXT ("Hello") ANTHROPIC_TEXT (", world")
  ANTHROPIC_EVENT ("content_block_stop", ",\"index\":0")
  ANTHROPIC_EVENT ("message_delta", ",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":4}")
  ANTHROPIC_EVENT ("message_stop", ""),
  "Hello, world", 12,
  ANTHROPIC_START
  ANTHROPIC_EVENT ("message_delta", ",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":0}")
  ANTHROPIC_EVENT ("message_stop", ""),
  ANTHROPIC_START "event: error\ndata: " ANTHROPIC_OVERLOADED "\n\n",
  ANTHROPIC_START
  ANTHROPIC_EVENT ("content_block_start", ",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}")
  ANTHROPIC_TEXT ("Hel") "event: error\ndata: " ANTHROPIC_OVERLOADED "\n\n",
  "Hel",
  ANTHROPIC_OVERLOADED,
  "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}",
  "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"max_tokens: 128001 > 64000, which is the maximum allowed number of output tokens for claude-sonnet-4-5\"}}",
  "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"}}",
  "\"messages\":[{\"role\":\"user\",\"content\":\"Summarize the build logs\"},"
  "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Hello, world\"}]},"
  "{\"role\":\"user\",\"content\":\"And the tests?\"}]",
};

/* OpenAI's error bodies, as Chat Completions and Responses send them. */
#define OPENAI_503 \
  "{\"error\":{\"message\":\"The engine is currently overloaded, please try again later\",\"type\":\"server_error\",\"param\":null,\"code\":null}}"
#define OPENAI_429_NO_HINT \
  "{\"error\":{\"message\":\"Rate limit reached for requests\",\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}"
#define OPENAI_TEXT \
  "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, " \
  "I recommend checking a reliable weather website or a weather app."

static const Format chat_completions = {
  "chat-completions", "/v1/chat/completions",
  "@file:chat-completions/openai-text-usage-done.sse", "I'm unable to provide real-time weather updates.", 159,
  "@file:chat-completions/llamacpp-no-content-timings.sse",
  "@file:chat-completions/openrouter-error-in-stream.sse",
  "data: {\"id\":\"chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL\",\"object\":\"chat.completion.chunk\",\"created\":1727346168,"
  "\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_5050236cbd\",\"choices\":[{\"index\":0,\"delta\":"
  "{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
  "data: {\"id\":\"chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL\",\"object\":\"chat.completion.chunk\",\"created\":1727346168,"
  "\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_5050236cbd\",\"choices\":[{\"index\":0,\"delta\":"
  "{\"content\":\"I'm\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
  "@file:chat-completions/openrouter-error-in-stream.sse",
  "I'm",
  OPENAI_503,
  "@file:chat-completions/openai-401-invalid-api-key.json",
  "@file:chat-completions/openai-400-context-length.json",
  OPENAI_429_NO_HINT,
  "\"messages\":[{\"role\":\"user\",\"content\":\"Summarize the build logs\"},"
  "{\"role\":\"assistant\",\"content\":\"" OPENAI_TEXT "\"},"
  "{\"role\":\"user\",\"content\":\"And the tests?\"}]",
};

static const Format responses = {
  "responses", "/v1/responses",
  "@file:responses/openai-node-text.sse", "Hello world", 11,
  "@file:responses/reference-incomplete-no-output.sse",
  "@file:responses/reference-failed-server-error.sse",
  "data: {\"content_index\":0,\"delta\":\"Hello \",\"item_id\":\"msg_1\",\"logprobs\":[],\"output_index\":0,"
  "\"sequence_number\":3,\"type\":\"response.output_text.delta\"}\n\n"
  "@file:responses/reference-failed-server-error.sse",
  "Hello ",
  OPENAI_503,
  "@file:chat-completions/openai-401-invalid-api-key.json",
  "@file:chat-completions/openai-400-context-length.json",
  OPENAI_429_NO_HINT,
  "\"input\":[{\"role\":\"user\",\"content\":\"Summarize the build logs\"},"
  "{\"role\":\"assistant\",\"content\":\"Hello world\"},"
  "{\"role\":\"user\",\"content\":\"And the tests?\"}]",
};

/* Gemini, after https://ai.google.dev/api/generate-content and the errors
 * of https://ai.google.dev/gemini-api/docs/troubleshooting. */
#define GEMINI_UNAVAILABLE \
  "data: {\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please try again later.\",\"status\":\"UNAVAILABLE\"}}\r\n\r\n"

static const Format gemini = {
  "gemini", "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse",
  "@file:gemini/jsgenai-text-stream.sse", "The sky is blue due to a phenomenon called **Rayleigh scattering**.", 1879,
  /* A stream whose one part has no text (gemini-cli: "Model stream ended
   * with empty response text"). */
  "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],"
  "\"usageMetadata\":{\"promptTokenCount\":12,\"totalTokenCount\":12}}\r\n\r\n",
  GEMINI_UNAVAILABLE,
  "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"The\"}],\"role\":\"model\"}}],\"modelVersion\":\"gemini-2.0-flash\"}\r\n\r\n"
  GEMINI_UNAVAILABLE,
  "The",
  "@file:gemini/503-unavailable.json",
  "{\"error\":{\"code\":401,\"message\":\"Request had invalid authentication credentials. Expected OAuth 2 access token, "
  "login cookie or other valid authentication credential.\",\"status\":\"UNAUTHENTICATED\"}}",
  "@file:gemini/400-invalid-argument.json",
  "{\"error\":{\"code\":429,\"message\":\"Resource has been exhausted (e.g. check quota).\",\"status\":\"RESOURCE_EXHAUSTED\"}}",
  "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"Summarize the build logs\"}]},"
  "{\"role\":\"model\",\"parts\":[{\"text\":\"The sky is blue due to a phenomenon called **Rayleigh scattering**.",
};

static const Format *formats[] = { &messages, &chat_completions, &responses, &gemini };

/* What an app sees of the turns. */
typedef struct
{
  Fixture        fixture;
  const Format  *format;
  GArray        *delays;     /* gint64: each wait's delay-ms */
  GPtrArray     *waits;
  guint          exhausted;
} Matrix;

typedef void (*Scenario) (Matrix *m);

typedef struct
{
  const Format *format;
  Scenario      scenario;
} Cell;

static void
on_waiting (MendTurn      *turn,
            MendRetryWait *wait,
            Matrix        *m)
{
  gint64 delay = mend_retry_wait_get_delay_ms (wait);

  g_array_append_val (m->delays, delay);
  g_ptr_array_add (m->waits, g_object_ref (wait));
}

static void
on_exhausted (MendTurn    *turn,
              MendFailure *failure,
              Matrix      *m)
{
  m->exhausted++;
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Matrix   *m)
{
  g_signal_connect (turn, "waiting", G_CALLBACK (on_waiting), m);
  g_signal_connect (turn, "exhausted", G_CALLBACK (on_exhausted), m);
}

static void
matrix_set_up (Matrix        *m,
               gconstpointer  data)
{
  const Cell *cell = data;

  mend_test_http_chat_set_up_at (&m->fixture, cell->format->path);
  m->format = cell->format;
  m->delays = g_array_new (FALSE, FALSE, sizeof (gint64));
  m->waits = g_ptr_array_new_with_free_func (g_object_unref);
  g_signal_connect (m->fixture.chat, "turn-started", G_CALLBACK (on_turn_started), m);
}

static void
matrix_tear_down (Matrix        *m,
                  gconstpointer  data)
{
  g_ptr_array_unref (m->waits);
  g_array_unref (m->delays);
  mend_test_http_chat_tear_down (&m->fixture, data);
}

static void
matrix_run (Matrix        *m,
            gconstpointer  data)
{
  const Cell *cell = data;

  cell->scenario (m);
}

/* A format's body: inline text, which may end with "@file:NAME", the
 * recorded answer tests/data/http/NAME. */
#define FILE_MARK "@file:"

static const char *
body (Matrix     *m,
      const char *text)
{
  const char *at = strstr (text, FILE_MARK);
  g_autofree char *head = NULL;
  char *joined;

  if (at == NULL)
    return text;
  head = g_strndup (text, at - text);
  joined = g_strconcat (head, mend_test_http_chat_load (&m->fixture, at + strlen (FILE_MARK)), NULL);
  g_ptr_array_add (m->fixture.loaded, joined);
  return joined;
}

static MendTurn *
last_finished (Matrix *m)
{
  g_assert_cmpuint (m->fixture.finished->len, >, 0);
  return g_ptr_array_index (m->fixture.finished, m->fixture.finished->len - 1);
}

static void
run_until (Matrix        *m,
           MendTurnState  state,
           guint          requests)
{
  mend_test_run_chat_until (m->fixture.chat, &m->fixture.served, state, requests);
}

static void
assert_answered (Matrix *m)
{
  const Format *fmt = m->format;

  g_assert_cmpint (mend_turn_get_state (last_finished (m)), ==, MEND_TURN_SUCCEEDED);
  g_assert_cmpuint (strlen (mend_http_sender_get_answer (m->fixture.sender)), ==, fmt->answer_bytes);
  g_assert_true (g_str_has_prefix (mend_http_sender_get_answer (m->fixture.sender), fmt->answer_head));
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (m->fixture.sender)), ==, 2);
}

static void
transient_twice_then_success (Matrix *m,
                              guint   status)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = {
    { status, JSON, body (m, fmt->overloaded) },
    { status, JSON, body (m, fmt->overloaded) },
    { 200, SSE, body (m, fmt->ok) },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  for (guint i = 1; i <= 2; i++)
    {
      run_until (m, MEND_TURN_WAITING, i);
      g_assert_cmpuint (m->delays->len, ==, i);
      /* The turn defaults without jitter: 250 ms, then 500 ms. */
      g_assert_cmpint (g_array_index (m->delays, gint64, i - 1), ==, 250 << (i - 1));
      g_assert_cmpint (mend_failure_get_reason (mend_turn_get_last_failure (mend_chat_get_turn (f->chat))), ==,
                       MEND_REASON_CAPACITY);
      mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
    }
  run_until (m, MEND_TURN_SUCCEEDED, 3);
  assert_answered (m);
  g_assert_cmpuint (m->exhausted, ==, 0);
  g_assert_cmpuint (f->finished->len, ==, 1);
  /* Every attempt sends the same request. */
  g_assert_cmpstr (g_ptr_array_index (f->bodies, 0), ==, g_ptr_array_index (f->bodies, 2));
}

static void
test_503_twice_then_success (Matrix *m)
{
  transient_twice_then_success (m, 503);
}

/* 529 is Anthropic's overload; served in any format, it is transient. */
static void
test_529_twice_then_success (Matrix *m)
{
  transient_twice_then_success (m, 529);
}

static void
test_503_always_gives_up_with_continue (Matrix *m)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[5];
  MendQueue *queue = mend_chat_get_queue (f->chat);
  g_autoptr(MendQueueItem) second = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (script); i++)
    script[i] = (Reply) { 503, JSON, body (m, fmt->overloaded) };
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Then update the changelog", NULL, NULL));
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);

  for (guint i = 1; i <= 4; i++)
    {
      run_until (m, MEND_TURN_WAITING, i);
      mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
    }
  run_until (m, MEND_TURN_FAILED, 5);

  g_assert_cmpuint (f->served, ==, 5);
  g_assert_cmpuint (m->delays->len, ==, 4);
  g_assert_cmpuint (m->exhausted, ==, 1);
  g_assert_cmpint (mend_turn_get_state (last_finished (m)), ==, MEND_TURN_FAILED);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
  g_assert_null (mend_chat_get_turn (f->chat));
  /* Nothing was popped: Continue heads the queue, the follow-up behind. */
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 2);
  g_assert_cmpstr (mend_queue_item_get_text (mend_queue_peek (queue)), ==, "Continue the current turn");
  second = g_list_model_get_item (G_LIST_MODEL (queue), 1);
  g_assert_cmpstr (mend_queue_item_get_text (second), ==, "Then update the changelog");
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (f->sender)), ==, 0);
}

static void
test_stop_during_a_wait (Matrix *m)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = {
    { 503, JSON, body (m, fmt->overloaded) },
    { 200, SSE, body (m, fmt->ok) },
  };
  MendQueue *queue = mend_chat_get_queue (f->chat);
  MendRetryWait *wait;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Then update the changelog", NULL, NULL));
  run_until (m, MEND_TURN_WAITING, 1);
  wait = g_ptr_array_index (m->waits, 0);

  mend_chat_stop (f->chat);

  g_assert_cmpint (mend_retry_wait_get_state (wait), ==, MEND_RETRY_WAIT_CANCELLED);
  g_assert_cmpint (mend_turn_get_state (last_finished (m)), ==, MEND_TURN_STOPPED);
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_READY);
  g_assert_null (mend_chat_get_turn (f->chat));
  /* No Continue, nothing promoted, and no attempt after the wait's time. */
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);
  g_assert_cmpstr (mend_queue_item_get_text (mend_queue_peek (queue)), ==, "Then update the changelog");
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 60000);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpuint (m->exhausted, ==, 0);
}

static void
given_up_at_once (Matrix     *m,
                  guint       status,
                  const char *text,
                  MendReason  reason)
{
  Fixture *f = &m->fixture;
  Reply script[] = { { status, JSON, body (m, text) } };
  MendFailure *failure;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (m, MEND_TURN_FAILED, 1);
  failure = mend_turn_get_last_failure (last_finished (m));
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpuint (m->delays->len, ==, 0);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpstr (mend_reason_to_nick (mend_failure_get_reason (failure)), ==, mend_reason_to_nick (reason));
  g_assert_cmpint (mend_failure_get_status (failure), ==, status);
}

static void
test_401_gives_up_at_once (Matrix *m)
{
  given_up_at_once (m, 401, m->format->unauthorized, MEND_REASON_AUTH);
}

static void
test_400_gives_up_at_once (Matrix *m)
{
  given_up_at_once (m, 400, m->format->bad_request, MEND_REASON_BAD_REQUEST);
}

/* A first attempt that fails before any output, then an answer. */
static void
retried_then_answered (Matrix     *m,
                       const char *first,
                       MendReason  reason)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = {
    { 200, SSE, body (m, first) },
    { 200, SSE, body (m, fmt->ok) },
  };
  MendFailure *failure;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (m, MEND_TURN_WAITING, 1);
  failure = mend_turn_get_last_failure (mend_chat_get_turn (f->chat));
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpstr (mend_reason_to_nick (mend_failure_get_reason (failure)), ==, mend_reason_to_nick (reason));
  g_assert_false (mend_failure_get_partial (failure));
  g_assert_cmpuint (f->deltas->len, ==, 0);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_until (m, MEND_TURN_SUCCEEDED, 2);
  assert_answered (m);
  g_assert_cmpstr (f->deltas->str, ==, mend_http_sender_get_answer (f->sender));
}

static void
test_an_empty_answer_is_retried (Matrix *m)
{
  retried_then_answered (m, m->format->empty, MEND_REASON_EMPTY);
}

/* The reason is the error's, in each format's words: an overload, or a
 * server error. */
static void
test_a_stream_error_before_output_is_retried (Matrix *m)
{
  MendReason reason = m->format == &chat_completions || m->format == &responses
                      ? MEND_REASON_SERVER : MEND_REASON_CAPACITY;

  retried_then_answered (m, m->format->error_first, reason);
}

/* After output was seen the failure is partial, and the policy's
 * retry-partial (FALSE) makes it permanent: no tool is replayed, no text
 * duplicated. */
static void
test_a_stream_error_after_text_is_partial (Matrix *m)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = { { 200, SSE, body (m, fmt->error_after_text) } };
  MendFailure *failure;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (m, MEND_TURN_FAILED, 1);
  failure = mend_turn_get_last_failure (last_finished (m));
  g_assert_true (mend_failure_get_partial (failure));
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpuint (m->delays->len, ==, 0);
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpstr (f->deltas->str, ==, fmt->partial_text);
  g_assert_true (mend_turn_get_output_seen (last_finished (m)));
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (f->sender)), ==, 0);
}

static void
test_retry_after_is_honoured (Matrix *m)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = {
    { 429, JSON, body (m, fmt->rate_limited), "Retry-After: 3" },
    { 200, SSE, body (m, fmt->ok) },
  };
  MendRetryWait *wait;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (m, MEND_TURN_WAITING, 1);
  wait = g_ptr_array_index (m->waits, 0);
  g_assert_cmpint (mend_retry_wait_get_delay_ms (wait), ==, 3000);
  g_assert_true (mend_retry_wait_get_server_hint (wait));
  g_assert_cmpint (mend_retry_wait_get_reason (wait), ==, MEND_REASON_RATE_LIMIT);

  /* 3 s of virtual time: nothing a millisecond before, the retry at 3 s. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 2999);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (f->served, ==, 1);
  g_assert_cmpint (mend_retry_wait_get_state (wait), ==, MEND_RETRY_WAIT_PENDING);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 1);
  g_assert_cmpint (mend_retry_wait_get_state (wait), ==, MEND_RETRY_WAIT_FIRED);
  run_until (m, MEND_TURN_SUCCEEDED, 2);
  assert_answered (m);
}

/* A fresh chat, its sender on the same endpoint, made from what the first
 * saved: the transcript's JSON, or the chat's whole state. */
static void
restored (Matrix   *m,
          gboolean  whole_state)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = {
    { 200, SSE, body (m, fmt->ok) },
    { 200, SSE, body (m, fmt->ok) },
  };
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *saved = NULL;
  MendHttpSender *sender;
  MendChat *chat;
  const char *next;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (m, MEND_TURN_SUCCEEDED, 1);
  assert_answered (m);
  saved = whole_state ? mend_chat_save_state (f->chat)
                      : mend_transcript_to_json (mend_http_sender_get_transcript (f->sender));

  sender = mend_http_sender_new (f->endpoint);
  mend_http_sender_set_model (sender, "llama3.2");
  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", f->clock, "policy", policy, "sender", sender, NULL);
  if (whole_state)
    g_assert_true (mend_chat_restore_state (chat, saved, &error));
  else
    g_assert_true (mend_transcript_load_json (mend_http_sender_get_transcript (sender), saved, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (sender)), ==, 2);

  g_assert_true (mend_chat_submit (chat, "And the tests?", NULL, &error));
  g_assert_no_error (error);
  mend_test_run_chat_until (chat, &f->served, MEND_TURN_SUCCEEDED, 2);
  next = g_ptr_array_index (f->bodies, 1);
  if (strstr (next, fmt->history) == NULL)
    g_test_message ("the next request: %s", next);
  g_assert_nonnull (strstr (next, fmt->history));
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (sender)), ==, 4);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (sender);
}

static void
test_transcript_restored_into_a_fresh_chat (Matrix *m)
{
  restored (m, FALSE);
}

static void
test_chat_state_restored_into_a_fresh_chat (Matrix *m)
{
  restored (m, TRUE);
}

/* Retry, the chat's state and its text stream (what an app binds to). */

static const char *
request (Matrix *m,
         guint   i)
{
  g_assert_cmpuint (m->fixture.bodies->len, >, i);
  return g_ptr_array_index (m->fixture.bodies, i);
}

static void
on_status (MendChat   *chat,
           GParamSpec *pspec,
           GPtrArray  *statuses)
{
  g_ptr_array_add (statuses, g_strdup (mend_chat_get_status_text (chat)));
}

/* A give-up, then the user's Retry: the same prompt runs as one new turn,
 * and the request carries the user's words once. */
static void
test_retry_after_a_give_up_sends_the_prompt_once (Matrix *m)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = {
    { 401, JSON, body (m, fmt->unauthorized) },
    { 200, SSE, body (m, fmt->ok) },
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *failed_id = NULL;
  MendFailure *failure;

  g_assert_false (mend_chat_get_can_retry (f->chat));
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  /* While it runs, there is nothing to retry. */
  g_assert_false (mend_chat_retry (f->chat, &error));
  g_assert_error (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_BUSY);
  g_clear_error (&error);

  run_until (m, MEND_TURN_FAILED, 1);
  failed_id = g_strdup (mend_turn_get_id (last_finished (m)));
  g_assert_true (mend_chat_get_can_retry (f->chat));
  failure = mend_chat_get_last_failure (f->chat);
  g_assert_nonnull (failure);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_AUTH);
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, "The API key was refused");
  g_assert_null (strstr (mend_chat_get_status_text (f->chat), "{"));

  g_assert_true (mend_chat_retry (f->chat, &error));
  g_assert_no_error (error);
  g_assert_false (mend_chat_get_can_retry (f->chat));
  g_assert_cmpstr (mend_turn_get_retry_of (mend_chat_get_turn (f->chat)), ==, failed_id);
  g_assert_cmpstr (mend_turn_get_prompt (mend_chat_get_turn (f->chat)), ==, "Summarize the build logs");
  run_until (m, MEND_TURN_SUCCEEDED, 2);
  assert_answered (m);

  g_test_message ("%s, the Retry's request: %s", fmt->name, request (m, 1));
  g_assert_cmpuint (mend_test_count_occurrences (request (m, 1), "Summarize the build logs"), ==, 1);
  g_assert_null (strstr (request (m, 1), "Continue the current turn"));
  /* A success clears what the chat showed of the failure. */
  g_assert_null (mend_chat_get_last_failure (f->chat));
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, "");
  g_assert_false (mend_chat_get_can_retry (f->chat));

  /* After a success there is nothing to retry. */
  g_assert_false (mend_chat_retry (f->chat, &error));
  g_assert_error (error, MEND_RETRY_ERROR, MEND_RETRY_ERROR_NOT_RETRYABLE);
}

/* A give-up with a follow-up queued puts Continue at the head; Retry
 * takes it out, runs the prompt again, and the follow-up after it. */
static void
test_retry_takes_out_the_continue_item (Matrix *m)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = {
    { 401, JSON, body (m, fmt->unauthorized) },
    { 200, SSE, body (m, fmt->ok) },
    { 200, SSE, body (m, fmt->ok) },
  };
  MendQueue *queue = mend_chat_get_queue (f->chat);
  g_autoptr(GError) error = NULL;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Then update the changelog", NULL, NULL));
  run_until (m, MEND_TURN_FAILED, 1);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 2);
  g_assert_cmpstr (mend_queue_item_get_provenance (mend_queue_peek (queue)), ==, MEND_CHAT_CONTINUE_PROVENANCE);

  g_assert_true (mend_chat_retry (f->chat, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 1);
  g_assert_cmpstr (mend_queue_item_get_text (mend_queue_peek (queue)), ==, "Then update the changelog");
  run_until (m, MEND_TURN_SUCCEEDED, 3);
  g_assert_cmpuint (f->finished->len, ==, 3);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 0);

  g_test_message ("%s, the Retry's request: %s", fmt->name, request (m, 1));
  g_test_message ("%s, the follow-up's request: %s", fmt->name, request (m, 2));
  for (guint i = 0; i < 3; i++)
    g_assert_null (strstr (request (m, i), "Continue the current turn"));
  g_assert_cmpuint (mend_test_count_occurrences (request (m, 1), "Summarize the build logs"), ==, 1);
  g_assert_cmpuint (mend_test_count_occurrences (request (m, 2), "Summarize the build logs"), ==, 1);
  g_assert_cmpuint (mend_test_count_occurrences (request (m, 2), "Then update the changelog"), ==, 1);
}

/* A give-up, then the user sends the queue on: Continue follows the
 * failed prompt, a separate message (or a blank line apart). */
static void
test_continue_after_a_give_up (Matrix *m)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = {
    { 401, JSON, body (m, fmt->unauthorized) },
    { 200, SSE, body (m, fmt->ok) },
    { 200, SSE, body (m, fmt->ok) },
  };

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Then update the changelog", NULL, NULL));
  run_until (m, MEND_TURN_FAILED, 1);
  g_assert_true (mend_chat_send_next (f->chat));
  run_until (m, MEND_TURN_SUCCEEDED, 3);

  g_test_message ("%s, the Continue's request: %s", fmt->name, request (m, 1));
  g_assert_cmpuint (mend_test_count_occurrences (request (m, 1), "Summarize the build logs"), ==, 1);
  g_assert_cmpuint (mend_test_count_occurrences (request (m, 1), "Continue the current turn"), ==, 1);
  g_assert_null (strstr (request (m, 1), "Summarize the build logsContinue"));
}

/* Stop during a wait, then Retry: the prompt is sent once more, as the
 * stopped turn's pending prompt was dropped with the Stop. */
static void
test_retry_after_a_stop (Matrix *m)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = {
    { 503, JSON, body (m, fmt->overloaded) },
    { 200, SSE, body (m, fmt->ok) },
  };
  g_autoptr(GError) error = NULL;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (m, MEND_TURN_WAITING, 1);
  g_assert_nonnull (mend_chat_get_wait (f->chat));
  g_assert_true (mend_chat_get_wait (f->chat) == mend_turn_get_wait (mend_chat_get_turn (f->chat)));
  mend_chat_stop (f->chat);
  g_assert_null (mend_chat_get_wait (f->chat));
  g_assert_true (mend_chat_get_can_retry (f->chat));
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, "");

  g_assert_true (mend_chat_retry (f->chat, &error));
  g_assert_no_error (error);
  run_until (m, MEND_TURN_SUCCEEDED, 2);
  g_test_message ("%s, the Retry's request: %s", fmt->name, request (m, 1));
  g_assert_cmpuint (mend_test_count_occurrences (request (m, 1), "Summarize the build logs"), ==, 1);
  g_assert_null (strstr (request (m, 1), "Continue the current turn"));
}

/* A quick 503 retry leaves the status alone; a rate limit with no hint
 * waits 10 s (its schedule's second), and the status says so, ticking
 * each second. */
static void
test_status_text_ticks_and_quick_retries_do_not_flash (Matrix *m)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = {
    { 503, JSON, body (m, fmt->overloaded) },
    { 429, JSON, body (m, fmt->rate_limited) },
    { 200, SSE, body (m, fmt->ok) },
  };
  g_autoptr(GPtrArray) statuses = g_ptr_array_new_with_free_func (g_free);

  g_signal_connect (f->chat, "notify::status-text", G_CALLBACK (on_status), statuses);
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (m, MEND_TURN_WAITING, 1);
  g_assert_cmpint (g_array_index (m->delays, gint64, 0), ==, 250);
  g_assert_cmpuint (statuses->len, ==, 0);
  mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
  run_until (m, MEND_TURN_WAITING, 2);
  g_assert_cmpint (mend_failure_get_reason (mend_chat_get_last_failure (f->chat)), ==, MEND_REASON_RATE_LIMIT);
  /* The rate limit's schedule, at its second retry. */
  g_assert_cmpint (g_array_index (m->delays, gint64, 1), ==, 10000);
  g_assert_cmpuint (statuses->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (statuses, 0), ==,
                   "The service is limiting the rate of requests — retrying in 10 s (retry 2 of 4)");
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 1000);
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==,
                   "The service is limiting the rate of requests — retrying in 9 s (retry 2 of 4)");
  g_assert_cmpuint (statuses->len, ==, 2);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 9000);
  run_until (m, MEND_TURN_SUCCEEDED, 3);
  g_assert_cmpstr (mend_chat_get_status_text (f->chat), ==, "");
  g_assert_null (mend_chat_get_wait (f->chat));
  g_signal_handlers_disconnect_by_data (f->chat, statuses);
}

/* The chat's text-delta carries the answer, whatever the format. */
static void
test_text_delta_on_the_chat (Matrix *m)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = {
    { 200, SSE, body (m, fmt->ok) },
  };
  g_autoptr(GString) texts = g_string_new (NULL);

  g_signal_connect (f->chat, "text-delta", G_CALLBACK (mend_test_append_chat_text), texts);
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (m, MEND_TURN_SUCCEEDED, 1);
  assert_answered (m);
  g_assert_cmpstr (texts->str, ==, mend_http_sender_get_answer (f->sender));
  g_signal_handlers_disconnect_by_data (f->chat, texts);
}

/* The default schedule of a rate limit rides out a minute without a
 * hint: 5, 10, 20 and 30 s. */
static void
test_a_hintless_rate_limit_rides_out_a_minute (Matrix *m)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[5];
  gint64 total = 0;

  for (guint i = 0; i < 4; i++)
    script[i] = (Reply) { 429, JSON, body (m, fmt->rate_limited) };
  script[4] = (Reply) { 200, SSE, body (m, fmt->ok) };
  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  for (guint i = 1; i <= 4; i++)
    {
      run_until (m, MEND_TURN_WAITING, i);
      total += g_array_index (m->delays, gint64, i - 1);
      mend_manual_clock_advance_to_next (MEND_MANUAL_CLOCK (f->clock));
    }
  run_until (m, MEND_TURN_SUCCEEDED, 5);
  g_assert_cmpint (total, >=, 60000);
  g_assert_cmpint (g_array_index (m->delays, gint64, 0), ==, 5000);
  assert_answered (m);
}

/* A give-up, the chat saved and restored into a fresh one (a crash, a
 * restart): the new chat can Retry, says what went wrong, and the Retry's
 * request carries the user's words once. */
static void
test_retry_after_a_restore (Matrix *m)
{
  const Format *fmt = m->format;
  Fixture *f = &m->fixture;
  Reply script[] = {
    { 401, JSON, body (m, fmt->unauthorized) },
    { 200, SSE, body (m, fmt->ok) },
  };
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *saved = NULL;
  MendHttpSender *sender;
  MendChat *chat;

  mend_test_http_chat_start (f, script, G_N_ELEMENTS (script));
  run_until (m, MEND_TURN_FAILED, 1);
  saved = mend_chat_save_state (f->chat);
  g_assert_nonnull (strstr (saved, "\"retry\":{"));

  sender = mend_http_sender_new (f->endpoint);
  mend_http_sender_set_model (sender, "llama3.2");
  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  chat = g_object_new (MEND_TYPE_CHAT, "clock", f->clock, "policy", policy, "sender", sender, NULL);
  g_assert_true (mend_chat_restore_state (chat, saved, &error));
  g_assert_no_error (error);
  g_assert_cmpint (mend_chat_get_lifecycle (chat), ==, MEND_LIFECYCLE_ERROR);
  g_assert_true (mend_chat_get_can_retry (chat));
  g_assert_cmpint (mend_failure_get_reason (mend_chat_get_last_failure (chat)), ==, MEND_REASON_AUTH);
  g_assert_cmpstr (mend_chat_get_status_text (chat), ==, "The API key was refused");

  g_assert_true (mend_chat_retry (chat, &error));
  g_assert_no_error (error);
  mend_test_run_chat_until (chat, &f->served, MEND_TURN_SUCCEEDED, 2);
  g_test_message ("%s, the restored Retry's request: %s", fmt->name, request (m, 1));
  g_assert_cmpuint (mend_test_count_occurrences (request (m, 1), "Summarize the build logs"), ==, 1);
  g_assert_false (mend_chat_get_can_retry (chat));

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (sender);
}

static const struct {
  const char *name;
  Scenario    scenario;
} scenarios[] = {
  { "503-twice-then-success", test_503_twice_then_success },
  { "529-twice-then-success", test_529_twice_then_success },
  { "503-always-gives-up-with-continue-at-the-head", test_503_always_gives_up_with_continue },
  { "stop-during-a-wait", test_stop_during_a_wait },
  { "401-gives-up-at-once", test_401_gives_up_at_once },
  { "400-gives-up-at-once", test_400_gives_up_at_once },
  { "an-empty-answer-is-retried", test_an_empty_answer_is_retried },
  { "a-stream-error-before-output-is-retried", test_a_stream_error_before_output_is_retried },
  { "a-stream-error-after-text-is-partial", test_a_stream_error_after_text_is_partial },
  { "retry-after-3-is-honoured", test_retry_after_is_honoured },
  { "transcript-restored-into-a-fresh-chat", test_transcript_restored_into_a_fresh_chat },
  { "chat-state-restored-into-a-fresh-chat", test_chat_state_restored_into_a_fresh_chat },
  { "retry-after-a-give-up-sends-the-prompt-once", test_retry_after_a_give_up_sends_the_prompt_once },
  { "retry-takes-out-the-continue-item", test_retry_takes_out_the_continue_item },
  { "continue-after-a-give-up", test_continue_after_a_give_up },
  { "retry-after-a-stop", test_retry_after_a_stop },
  { "status-text-ticks-and-quick-retries-do-not-flash", test_status_text_ticks_and_quick_retries_do_not_flash },
  { "text-delta-on-the-chat", test_text_delta_on_the_chat },
  { "a-hintless-rate-limit-rides-out-a-minute", test_a_hintless_rate_limit_rides_out_a_minute },
  { "retry-after-a-restore", test_retry_after_a_restore },
};

static Cell cells[G_N_ELEMENTS (formats) * G_N_ELEMENTS (scenarios)];

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);

  for (guint i = 0; i < G_N_ELEMENTS (formats); i++)
    for (guint j = 0; j < G_N_ELEMENTS (scenarios); j++)
      {
        Cell *cell = &cells[i * G_N_ELEMENTS (scenarios) + j];
        g_autofree char *path = g_strdup_printf ("/Mend/HttpMatrix/%s/%s", formats[i]->name, scenarios[j].name);

        cell->format = formats[i];
        cell->scenario = scenarios[j].scenario;
        g_test_add (path, Matrix, cell, matrix_set_up, matrix_run, matrix_tear_down);
      }

  return g_test_run ();
}
