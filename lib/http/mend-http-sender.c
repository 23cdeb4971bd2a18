/* mend-http-sender.c — MendHttpSender: a sender that speaks the Messages API over libsoup
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-owner-private.h"
#include "mend-clock.h"
#include "mend-enum-types.h"
#include "mend-failure-private.h"
#include "mend-http-sender.h"
#include "mend-http-sender-private.h"
#include "mend-http-answer-private.h"
#include "mend-http-failures-private.h"
#include "mend-http-headers-private.h"
#include "mend-http-dialect-private.h"
#include "mend-i18n-private.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"
#include "mend-sse-private.h"
#include "mend-sender.h"
#include "mend-transcript-private.h"
#include "mend-turn.h"

/**
 * MendHttpSender:
 *
 * Runs a turn's attempts against an HTTP model API with libsoup.
 *
 * It speaks four wire formats, its [property@Mend.HttpSender:dialect]:
 * the Anthropic Messages API, the OpenAI Chat Completions format that
 * OpenAI, Ollama, llama.cpp's server, vLLM, LM Studio, OpenRouter, Groq,
 * Mistral and DeepSeek speak (`/v1/chat/completions`), and the OpenAI
 * Responses API (`/v1/responses`), and the Gemini API
 * (`/v1beta/models/MODEL:streamGenerateContent?alt=sse`, the key in
 * `x-goog-api-key`: `contents` and `parts`, `candidates[0]`, a
 * `finishReason`, `promptFeedback.blockReason` for a refused prompt), each
 * chosen by its path or set. Ollama's native `/api/chat` is not spoken;
 * point the sender at Ollama's `/v1/chat/completions` instead.
 *
 * In Responses, an attempt sends `{"model","max_output_tokens","stream":true,"input":[…]}`
 * (tool calls and their results as `function_call` and
 * `function_call_output` items) and reads `response.output_text.delta`
 * (and a refusal's `response.refusal.delta`),
 * `response.output_item.added` and `response.function_call_arguments.delta`,
 * ending with `response.completed` or `response.incomplete`;
 * `response.failed` and `error` events are failures read from their
 * error object.
 *
 * In Chat Completions, an attempt sends
 * `{"model","max_tokens","stream":true,"stream_options":{"include_usage":true},"messages":[…]}`
 * with each message's text as its `content`, an assistant's tool calls as
 * `tool_calls` and their results as messages of role `tool`; it reads
 * `choices[0].delta` (text, a refusal's text, and tool calls, in the
 * order they come: text after a tool call is a block of its own after
 * it), `finish_reason` (or Ollama's `done_reason`), `data: [DONE]`, an
 * `error` object inside the stream and an `event: error` (whatever its
 * data), or one JSON answer (`choices[0].message`). Set the key with
 * `mend_http_sender_set_header (sender, "Authorization", "Bearer …", NULL)`.
 * An answer with no text and no tool call is the model's empty response
 * (%MEND_REASON_EMPTY, retried), in every format; a stream that said how
 * it finished and then closed without `[DONE]` is complete.
 *
 * In Messages, each attempt POSTs the turn's prompt with the conversation
 * so far as `{"model","max_tokens","stream":true,"messages":[…]}`, whose messages are
 * the sender's [property@Mend.HttpSender:transcript] followed by the turn's
 * user message; connect to [signal@Mend.HttpSender::build-message] to add
 * authentication or build another body (from
 * [method@Mend.HttpSender.build_messages]) — with the same body and the
 * same `Idempotency-Key` on every attempt of a turn, so that a server can
 * tell a retry from a new request. A turn that succeeds adds its user
 * message and the assistant's answer to the transcript, once; see
 * [class@Mend.Transcript] for turns that give up or are stopped.
 *
 * The answer is read as server-sent events when it is `text/event-stream`:
 * each content event (a text delta, a tool call) is emitted as
 * [signal@Mend.HttpSender::content] (its text also as
 * [signal@Mend.HttpSender::text-delta]) and marks the turn's output as
 * seen; an `error` event (such as `overloaded_error` inside a 200 stream)
 * or the end of the stream before `message_stop` is a failure — transient
 * when nothing was emitted yet, partial (not retried) after. An answer
 * keeps at most 1 024 content blocks; an event for a block past them is
 * dropped and is no output. A response of
 * another type succeeds when its body is not empty; a Messages answer in
 * one JSON body (`{"content":[…]}`) gives its text as one text-delta. The
 * text of the answer that succeeded is [property@Mend.HttpSender:answer].
 * A non-2xx response becomes a [class@Mend.Failure] with its status,
 * `Retry-After`, `retry-after-ms`, `x-should-retry` and JSON error body
 * (with the wait it names, such as Google's `RetryInfo` `retryDelay`). A
 * 429 with none of these waits but OpenAI's `x-ratelimit-reset-requests`
 * and `x-ratelimit-reset-tokens` headers waits for the longer reset of the
 * limits that were hit (those whose `x-ratelimit-remaining-*` is 0).
 * A `Retry-After` date is read against the response's `Date` header, so a
 * server whose clock is off this machine's gets the wait it asked for;
 * without a `Date` header, a date beyond the turn policy's
 * [property@Mend.ErrorPolicy:retry-after-max-ms] by this machine's clock is
 * no hint (the policy's backoff applies), never a usage limit.
 *
 * [property@Mend.HttpSender:timeout-ms] bounds each attempt, measured on the
 * turn's clock. Header values are never logged.
 *
 * Example:
 *
 * ```c
 * g_autoptr(MendHttpSender) sender = mend_http_sender_new ("https://api.anthropic.com/v1/messages");
 * g_autoptr(GError) error = NULL;
 *
 * if (!mend_http_sender_set_header (sender, "x-api-key", api_key, &error))
 *   g_warning ("%s", error->message);  // a value HTTP cannot carry
 * mend_http_sender_set_header (sender, "anthropic-version", "2023-06-01", NULL);
 * mend_http_sender_set_timeout_ms (sender, 120000);
 *
 * MendChat *chat = mend_chat_new_with_sender (MEND_SENDER (sender), NULL);
 * ```
 */

struct _MendHttpSender
{
  GObject      parent_instance;
  MendOwner    owner;       /* its thread: see mend-owner-private.h */

  char        *uri;
  SoupSession *session;
  guint        timeout_ms;
  char        *model;
  guint        max_tokens;
  GPtrArray   *headers;   /* name, value, name, value… */
  MendSecretSet *secrets; /* values registered with the redactor */
  guint        max_body_bytes;
  guint        max_line_bytes;
  guint        max_event_bytes;
  char        *answer;
  MendTranscript *transcript;
  MendHttpDialect dialect;
  const MendHttpDialectClass *wire;   /* the dialect spoken: never AUTO */

  /* The body around its messages, for frame_model and frame_max_tokens */
  GString     *frame_head;
  GString     *frame_tail;
  char        *frame_model;
  guint        frame_max_tokens;
};

enum {
  PROP_0,
  PROP_URI,
  PROP_SESSION,
  PROP_TIMEOUT_MS,
  PROP_MODEL,
  PROP_MAX_TOKENS,
  PROP_MAX_BODY_BYTES,
  PROP_MAX_LINE_BYTES,
  PROP_MAX_EVENT_BYTES,
  PROP_ANSWER,
  PROP_TRANSCRIPT,
  PROP_DIALECT,
  N_PROPS
};

enum {
  BUILD_MESSAGE,
  CONTENT,
  TEXT_DELTA,
  N_SIGNALS
};

static void sender_iface_init (MendSenderInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (MendHttpSender, mend_http_sender, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (MEND_TYPE_SENDER, sender_iface_init))

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void
on_timeout (gpointer data)
{
  MendHttpAttempt *attempt = data;

  attempt->timeout_id = 0;
  attempt->timed_out = TRUE;
  g_cancellable_cancel (attempt->cancellable);
}

/* A 1xx answer. The attempt's timeout counts here too, in real time:
 * its timer cannot fire while libsoup reads them. */
static void
on_informational (SoupMessage     *message,
                  MendHttpAttempt *attempt)
{
  gint64 now = g_get_monotonic_time ();

  if (attempt->n_interim++ == 0)
    attempt->interim_us = now;
  if (attempt->timeout_ms > 0 && now - attempt->started_us >= (gint64) attempt->timeout_ms * 1000)
    attempt->timed_out = TRUE;
  else if (attempt->n_interim > MEND_HTTP_MAX_INTERIM ||
           now - attempt->interim_us > (gint64) MEND_HTTP_MAX_INTERIM_MS * 1000)
    attempt->interim_flood = TRUE;
  else
    return;
  g_cancellable_cancel (attempt->cancellable);
}

static void
on_outer_cancelled (GCancellable *outer,
                    GCancellable *inner)
{
  g_cancellable_cancel (inner);
}

/* The session: the app's, or one of the sender's own, made when it is
 * first needed (an idle chat that never sent keeps none: a SoupSession
 * and its features are 1.6 kB). */
static SoupSession *
ensure_session (MendHttpSender *self)
{
  if (self->session == NULL)
    self->session = soup_session_new_with_options ("user-agent", "libmend/" PACKAGE_VERSION,
                                                   "timeout", 0,
                                                   NULL);
  return self->session;
}

/* The body of @request: the frame (made again when the model or
 * max_tokens changed), and each message as written for the last request,
 * or written now. */
static char *
write_body (MendHttpSender        *self,
            MendTranscriptRequest *request,
            gsize                 *length)
{
  if (self->frame_model == NULL || !g_str_equal (self->frame_model, self->model) ||
      self->frame_max_tokens != self->max_tokens)
    {
      /* Made with the first body: a chat that never sends keeps none. */
      if (self->frame_head == NULL)
        {
          self->frame_head = g_string_new (NULL);
          self->frame_tail = g_string_new (NULL);
        }
      g_free (self->frame_model);
      self->frame_model = g_strdup (self->model);
      self->frame_max_tokens = self->max_tokens;
      self->wire->write_frame (self->model, self->max_tokens, self->frame_head, self->frame_tail);
    }
  return mend_http_dialect_write_body (self->wire, self->frame_head, self->frame_tail, request, length);
}

/* The request body an attempt sends when no build-message handler
 * set one. */
char *
mend_http_sender_build_body (MendHttpSender *self,
                             MendTurn       *turn)
{
  g_autoptr(MendTranscriptRequest) request = NULL;

  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);
  g_return_val_if_fail (MEND_IS_TURN (turn), NULL);

  request = mend_transcript_request_for (self->transcript, turn, FALSE);
  return write_body (self, request, NULL);
}

/**
 * mend_http_sender_build_messages:
 * @self: a sender
 * @turn: a turn
 *
 * Builds the messages the default body sends for @turn, as a JSON array:
 * the [property@Mend.HttpSender:transcript], then one user message with
 * the turn's prompt (after the prompts of turns that gave up, if any).
 * A [signal@Mend.HttpSender::build-message] handler that builds a body of
 * its own starts from these. Every attempt of a turn gives the same
 * messages.
 *
 * Returns: (transfer full): the JSON text
 */
char *
mend_http_sender_build_messages (MendHttpSender *self,
                                 MendTurn       *turn)
{
  g_autoptr(MendTranscriptRequest) request = NULL;
  char *json;
  char *end;

  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);
  g_return_val_if_fail (MEND_IS_TURN (turn), NULL);

  request = mend_transcript_request_for (self->transcript, turn, FALSE);
  json = g_malloc (mend_transcript_request_prepare (request, MEND_TRANSCRIPT_SHAPE_OWN, NULL, NULL) + 3);
  json[0] = '[';
  end = mend_transcript_request_copy (request, MEND_TRANSCRIPT_SHAPE_OWN, json + 1);
  end[0] = ']';
  end[1] = '\0';
  return json;
}

static void
mend_http_sender_send_async (MendSender          *sender,
                             MendTurn            *turn,
                             guint                attempt_number,
                             int                  io_priority,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  MendHttpSender *self = MEND_HTTP_SENDER (sender);
  g_autoptr(MendTranscriptRequest) request = NULL;
  g_autofree char *body = NULL;
  g_autofree char *key = NULL;
  g_autoptr(GBytes) bytes = NULL;
  SoupMessageHeaders *headers;
  MendHttpAttempt *attempt;
  gsize length;
  GTask *task;

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, mend_http_sender_send_async);

  attempt = g_new0 (MendHttpAttempt, 1);
  attempt->self = g_object_ref (self);
  attempt->turn = g_object_ref (turn);
  attempt->clock = g_object_ref (mend_turn_get_clock (turn));
  attempt->cancellable = g_cancellable_new ();
  attempt->io_priority = io_priority;
  attempt->answer = mend_http_answer_new ();
  g_task_set_priority (task, io_priority);
  attempt->transcript = g_object_ref (self->transcript);
  attempt->wire = self->wire;
  attempt->timeout_ms = self->timeout_ms;
  attempt->max_body_bytes = self->max_body_bytes;
  attempt->max_line_bytes = self->max_line_bytes;
  attempt->max_event_bytes = self->max_event_bytes;
  attempt->content_signal = signals[CONTENT];
  attempt->text_delta_signal = signals[TEXT_DELTA];
  g_task_set_task_data (task, attempt, (GDestroyNotify) mend_http_attempt_free);

  attempt->message = soup_message_new ("POST", self->uri);
  if (attempt->message == NULL)
    {
      g_autoptr(GError) error = g_error_new (G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                                             _("“%s” is not an HTTP address"), self->uri);
      MendFailure *failure = mend_failure_new_from_error (error);

      /* Not something a retry can mend. */
      mend_http_attempt_finish (task, failure);
      return;
    }

  headers = soup_message_get_request_headers (attempt->message);
  key = g_strdup_printf ("mend-%s", mend_turn_get_id (turn));
  soup_message_headers_replace (headers, "Idempotency-Key", key);
  soup_message_headers_replace (headers, "Accept", "text/event-stream, application/json");
  for (guint i = 0; i + 1 < self->headers->len; i += 2)
    soup_message_headers_replace (headers,
                                  g_ptr_array_index (self->headers, i),
                                  g_ptr_array_index (self->headers, i + 1));

  /* From here on the transcript follows the turn, to its end. */
  request = mend_transcript_request_for (self->transcript, turn, TRUE);
  body = write_body (self, request, &length);
  bytes = g_bytes_new_take (g_steal_pointer (&body), length);
  soup_message_set_request_body_from_bytes (attempt->message, "application/json", bytes);
  /* A redirect would take the credentials and the prompt somewhere else,
   * or turn the POST into a GET that drops the prompt: a 3xx fails the
   * attempt instead. */
  soup_message_add_flags (attempt->message, SOUP_MESSAGE_NO_REDIRECT);
  g_signal_emit (self, signals[BUILD_MESSAGE], 0, attempt->message, turn, attempt_number);
  soup_message_add_flags (attempt->message, SOUP_MESSAGE_NO_REDIRECT);
  mend_http_secrets_remember_headers (self->secrets, soup_message_get_request_headers (attempt->message));

  if (cancellable != NULL)
    {
      attempt->outer = g_object_ref (cancellable);
      attempt->outer_id = g_cancellable_connect (cancellable, G_CALLBACK (on_outer_cancelled),
                                                 attempt->cancellable, NULL);
    }
  if (self->timeout_ms > 0)
    attempt->timeout_id = mend_clock_add_timeout (attempt->clock, self->timeout_ms,
                                                  on_timeout, attempt, NULL);
  attempt->started_us = g_get_monotonic_time ();
  g_signal_connect (attempt->message, "got-informational", G_CALLBACK (on_informational), attempt);

  soup_session_send_async (ensure_session (self), attempt->message, attempt->io_priority,
                           attempt->cancellable, mend_http_attempt_on_sent, task);
}

static MendFailure *
mend_http_sender_send_finish (MendSender    *sender,
                              GAsyncResult  *result,
                              GError       **error)
{
  MendHttpSender *self = MEND_HTTP_SENDER (sender);
  MendHttpAttempt *attempt;

  g_return_val_if_fail (g_task_is_valid (result, sender), NULL);

  /* The answer of an attempt that succeeded. */
  attempt = g_task_get_task_data (G_TASK (result));
  if (attempt->answer_text != NULL)
    {
      g_free (self->answer);
      self->answer = g_steal_pointer (&attempt->answer_text);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ANSWER]);
    }

  /* A cancelled task propagates G_IO_ERROR_CANCELLED. */
  return g_task_propagate_pointer (G_TASK (result), error);
}

static char *
mend_http_sender_save_state (MendSender *sender)
{
  return mend_transcript_save (MEND_HTTP_SENDER (sender)->transcript);
}

static gboolean
mend_http_sender_restore_state (MendSender  *sender,
                                const char  *state,
                                GError     **error)
{
  return mend_transcript_restore (MEND_HTTP_SENDER (sender)->transcript, state, error);
}

static void
sender_iface_init (MendSenderInterface *iface)
{
  iface->send_async = mend_http_sender_send_async;
  iface->send_finish = mend_http_sender_send_finish;
  iface->save_state = mend_http_sender_save_state;
  iface->restore_state = mend_http_sender_restore_state;
}

static void
mend_http_sender_finalize (GObject *object)
{
  MendHttpSender *self = (MendHttpSender *) object;

  g_clear_pointer (&self->uri, g_free);
  g_clear_pointer (&self->model, g_free);
  g_clear_pointer (&self->answer, g_free);
  g_clear_object (&self->transcript);
  if (self->frame_head != NULL)
    g_string_free (self->frame_head, TRUE);
  if (self->frame_tail != NULL)
    g_string_free (self->frame_tail, TRUE);
  g_free (self->frame_model);
  g_clear_pointer (&self->headers, g_ptr_array_unref);
  g_clear_pointer (&self->secrets, mend_secret_set_free);
  g_clear_object (&self->session);

  mend_owner_clear (&self->owner);
  G_OBJECT_CLASS (mend_http_sender_parent_class)->finalize (object);
}

static void
mend_http_sender_constructed (GObject *object)
{
  MendHttpSender *self = (MendHttpSender *) object;

  G_OBJECT_CLASS (mend_http_sender_parent_class)->constructed (object);

  mend_http_secrets_remember_uri (self->secrets, self->uri);
  self->wire = mend_http_dialect_lookup (self->dialect, self->uri);

  if (self->transcript == NULL)
    self->transcript = mend_transcript_new ();

}


static void
mend_http_sender_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  MendHttpSender *self = MEND_HTTP_SENDER (object);

  switch (prop_id)
    {
    case PROP_URI:
      g_value_set_string (value, self->uri);
      break;
    case PROP_SESSION:
      g_value_set_object (value, ensure_session (self));
      break;
    case PROP_TIMEOUT_MS:
      g_value_set_uint (value, self->timeout_ms);
      break;
    case PROP_MODEL:
      g_value_set_string (value, self->model);
      break;
    case PROP_MAX_TOKENS:
      g_value_set_uint (value, self->max_tokens);
      break;
    case PROP_MAX_BODY_BYTES:
      g_value_set_uint (value, self->max_body_bytes);
      break;
    case PROP_MAX_LINE_BYTES:
      g_value_set_uint (value, self->max_line_bytes);
      break;
    case PROP_MAX_EVENT_BYTES:
      g_value_set_uint (value, self->max_event_bytes);
      break;
    case PROP_ANSWER:
      g_value_set_string (value, self->answer);
      break;
    case PROP_TRANSCRIPT:
      g_value_set_object (value, self->transcript);
      break;
    case PROP_DIALECT:
      g_value_set_enum (value, mend_http_sender_get_dialect (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_uint (MendHttpSender *self,
          guint          *field,
          const GValue   *value,
          GParamSpec     *pspec)
{
  if (*field != g_value_get_uint (value))
    {
      *field = g_value_get_uint (value);
      g_object_notify_by_pspec (G_OBJECT (self), pspec);
    }
}

static void
mend_http_sender_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  MendHttpSender *self = MEND_HTTP_SENDER (object);

  switch (prop_id)
    {
    case PROP_URI:
      self->uri = g_value_dup_string (value);
      break;
    case PROP_SESSION:
      self->session = g_value_dup_object (value);
      break;
    case PROP_TRANSCRIPT:
      self->transcript = g_value_dup_object (value);
      break;
    case PROP_DIALECT:
      self->dialect = g_value_get_enum (value);
      break;
    case PROP_TIMEOUT_MS:
      mend_http_sender_set_timeout_ms (self, g_value_get_uint (value));
      break;
    case PROP_MODEL:
      mend_http_sender_set_model (self, g_value_get_string (value));
      break;
    case PROP_MAX_TOKENS:
      set_uint (self, &self->max_tokens, value, pspec);
      break;
    case PROP_MAX_BODY_BYTES:
      mend_http_sender_set_max_body_bytes (self, g_value_get_uint (value));
      break;
    case PROP_MAX_LINE_BYTES:
      mend_http_sender_set_max_line_bytes (self, g_value_get_uint (value));
      break;
    case PROP_MAX_EVENT_BYTES:
      mend_http_sender_set_max_event_bytes (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_http_sender_class_init (MendHttpSenderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = mend_http_sender_constructed;
  object_class->finalize = mend_http_sender_finalize;
  object_class->get_property = mend_http_sender_get_property;
  object_class->set_property = mend_http_sender_set_property;

  mend_i18n_init ();

  /**
   * MendHttpSender:uri:
   *
   * The endpoint each attempt is POSTed to.
   */
  properties[PROP_URI] =
    g_param_spec_string ("uri", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendHttpSender:session:
   *
   * The libsoup session, made when not given.
   */
  properties[PROP_SESSION] =
    g_param_spec_object ("session", NULL, NULL,
                         SOUP_TYPE_SESSION,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendHttpSender:timeout-ms:
   *
   * The most an attempt may take, on the turn's clock, in milliseconds; 0
   * for no limit. An attempt past it fails with %MEND_REASON_TIMEOUT.
   */
  properties[PROP_TIMEOUT_MS] =
    g_param_spec_uint ("timeout-ms", NULL, NULL, 0, 86400000, 600000,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendHttpSender:model:
   *
   * The model named in the default request body.
   */
  properties[PROP_MODEL] =
    g_param_spec_string ("model", NULL, NULL, "claude-sonnet-4-5",
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendHttpSender:max-tokens:
   *
   * The `max_tokens` of the default request body.
   */
  properties[PROP_MAX_TOKENS] =
    g_param_spec_uint ("max-tokens", NULL, NULL, 1, G_MAXINT, 4096,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendHttpSender:max-body-bytes:
   *
   * The most bytes of a successful answer that are read, counted after
   * decompression: a whole body, or a whole event stream. An answer past
   * it fails the attempt (%MEND_FAILURE_PERMANENT), with a message that
   * names this property, and the rest is not read. A change holds from
   * the next attempt.
   */
  properties[PROP_MAX_BODY_BYTES] =
    g_param_spec_uint ("max-body-bytes", NULL, NULL, 1, G_MAXUINT,
                       MEND_HTTP_SENDER_DEFAULT_MAX_BODY_BYTES,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendHttpSender:max-line-bytes:
   *
   * The most bytes of one line of an event stream. A longer line fails
   * the attempt, with a message that names this property. A change holds
   * from the next attempt.
   */
  properties[PROP_MAX_LINE_BYTES] =
    g_param_spec_uint ("max-line-bytes", NULL, NULL, 1, G_MAXUINT,
                       MEND_HTTP_SENDER_DEFAULT_MAX_LINE_BYTES,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendHttpSender:max-event-bytes:
   *
   * The most bytes of the data of one server-sent event, over all its
   * `data:` lines. A larger event fails the attempt, with a message that
   * names this property. A change holds from the next attempt.
   */
  properties[PROP_MAX_EVENT_BYTES] =
    g_param_spec_uint ("max-event-bytes", NULL, NULL, 1, G_MAXUINT,
                       MEND_HTTP_SENDER_DEFAULT_MAX_EVENT_BYTES,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendHttpSender:answer:
   *
   * The text of the assistant's message in the answer of the last attempt
   * that succeeded: its text blocks joined, "" when it had none (only tool
   * calls, or an answer that is not a Messages one); %NULL before the
   * first. Set, and notified, when the attempt's result is read with
   * mend_sender_send_finish(), as a turn does at once, so that a handler of
   * the turn's end reads it: once for every attempt that succeeds, even
   * when the text is the same.
   */
  properties[PROP_ANSWER] =
    g_param_spec_string ("answer", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendHttpSender:transcript:
   *
   * The conversation sent with each turn, and kept as turns succeed: a new
   * empty one when not given. Saved and restored with a chat's state.
   */
  properties[PROP_TRANSCRIPT] =
    g_param_spec_object ("transcript", NULL, NULL,
                         MEND_TYPE_TRANSCRIPT,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendHttpSender:dialect:
   *
   * The wire format of the endpoint: how the request is written and the
   * answer read. %MEND_HTTP_DIALECT_AUTO, the default, takes it from the
   * path of [property@Mend.HttpSender:uri]; read back, the property is the
   * format spoken, never AUTO. See [enum@Mend.HttpDialect].
   */
  properties[PROP_DIALECT] =
    g_param_spec_enum ("dialect", NULL, NULL,
                       MEND_TYPE_HTTP_DIALECT, MEND_HTTP_DIALECT_AUTO,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * MendHttpSender::build-message:
   * @self: the sender
   * @message: the request, with the default body and headers
   * @turn: the turn
   * @attempt: the number of the attempt, from 1
   *
   * Adjusts or replaces each request before it is sent: authentication
   * headers, another body (built from
   * [method@Mend.HttpSender.build_messages], or from the
   * [property@Mend.HttpSender:transcript]'s JSON). Keep the body the same
   * for every attempt of a turn.
   */
  signals[BUILD_MESSAGE] =
    g_signal_new ("build-message", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 3, SOUP_TYPE_MESSAGE, MEND_TYPE_TURN, G_TYPE_UINT);

  /**
   * MendHttpSender::content:
   * @self: the sender
   * @turn: the turn
   * @event: the content event's JSON data (or the whole body of an answer
   *   that is not a stream), valid during the emission
   *
   * Output arrived: a text delta or a tool call.
   *
   * The sender looks for handlers of this signal and of the turn's
   * [signal@Mend.Turn::text-delta] as it reads each part of the stream,
   * not at each event: a handler connected by a handler of the same
   * stream's signals is called from the next part read.
   */
  signals[CONTENT] =
    g_signal_new ("content", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, MEND_TYPE_TURN, G_TYPE_STRING | G_SIGNAL_TYPE_STATIC_SCOPE);

  /**
   * MendHttpSender::text-delta:
   * @self: the sender
   * @delta: the piece of text, valid during the emission
   *
   * The assistant's text grew by @delta: emitted for each `text_delta` of
   * a streamed answer, and once with the whole text of an answer that is
   * one JSON message. Pieces of an attempt that fails are emitted too (the
   * turn then knows output was seen); those of the attempt that succeeds
   * join to [property@Mend.HttpSender:answer].
   */
  signals[TEXT_DELTA] =
    g_signal_new ("text-delta", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_STRING | G_SIGNAL_TYPE_STATIC_SCOPE);
}

static void
mend_http_sender_init (MendHttpSender *self)
{
  mend_owner_init (&self->owner);
  self->timeout_ms = 600000;
  self->model = g_strdup ("claude-sonnet-4-5");
  self->max_tokens = 4096;
  self->headers = g_ptr_array_new_with_free_func (g_free);
  self->secrets = mend_secret_set_new ();
  self->max_body_bytes = MEND_HTTP_SENDER_DEFAULT_MAX_BODY_BYTES;
  self->max_line_bytes = MEND_HTTP_SENDER_DEFAULT_MAX_LINE_BYTES;
  self->max_event_bytes = MEND_HTTP_SENDER_DEFAULT_MAX_EVENT_BYTES;
}

/**
 * mend_http_sender_new:
 * @uri: the endpoint, such as `https://api.anthropic.com/v1/messages`
 *
 * Creates a sender with a session of its own.
 *
 * Returns: (transfer full): a new sender
 */
MendHttpSender *
mend_http_sender_new (const char *uri)
{
  g_return_val_if_fail (uri != NULL, NULL);

  return g_object_new (MEND_TYPE_HTTP_SENDER, "uri", uri, NULL);
}

/**
 * mend_http_sender_get_uri:
 * @self: a sender
 *
 * Gets the endpoint.
 *
 * Returns: the URI
 */
const char *
mend_http_sender_get_uri (MendHttpSender *self)
{
  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->uri;
}

/**
 * mend_http_sender_get_dialect:
 * @self: a sender
 *
 * Gets the wire format the sender speaks: the one it was made with, or
 * the one of its endpoint's path.
 *
 * Returns: the format, never %MEND_HTTP_DIALECT_AUTO
 */
MendHttpDialect
mend_http_sender_get_dialect (MendHttpSender *self)
{
  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), MEND_HTTP_DIALECT_MESSAGES);

  return self->wire != NULL ? self->wire->dialect : MEND_HTTP_DIALECT_MESSAGES;
}

/**
 * mend_http_sender_get_session:
 * @self: a sender
 *
 * Gets the libsoup session.
 *
 * Returns: (transfer none): the session
 */
SoupSession *
mend_http_sender_get_session (MendHttpSender *self)
{
  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return ensure_session (self);
}

/**
 * mend_http_sender_get_timeout_ms:
 * @self: a sender
 *
 * Gets [property@Mend.HttpSender:timeout-ms].
 *
 * Returns: the per-attempt timeout in milliseconds, 0 for none
 */
guint
mend_http_sender_get_timeout_ms (MendHttpSender *self)
{
  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->timeout_ms;
}

/**
 * mend_http_sender_set_timeout_ms:
 * @self: a sender
 * @timeout_ms: the per-attempt timeout in milliseconds, 0 for none
 *
 * Sets [property@Mend.HttpSender:timeout-ms].
 */
void
mend_http_sender_set_timeout_ms (MendHttpSender *self,
                                 guint           timeout_ms)
{
  g_return_if_fail (MEND_IS_HTTP_SENDER (self));
  mend_return_if_not_owner (&self->owner, self);

  if (self->timeout_ms != timeout_ms)
    {
      self->timeout_ms = timeout_ms;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TIMEOUT_MS]);
    }
}

/**
 * mend_http_sender_get_model:
 * @self: a sender
 *
 * Gets [property@Mend.HttpSender:model].
 *
 * Returns: the model
 */
const char *
mend_http_sender_get_model (MendHttpSender *self)
{
  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->model;
}

/**
 * mend_http_sender_set_model:
 * @self: a sender
 * @model: the model named in the default body
 *
 * Sets [property@Mend.HttpSender:model].
 */
void
mend_http_sender_set_model (MendHttpSender *self,
                            const char     *model)
{
  g_return_if_fail (MEND_IS_HTTP_SENDER (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (model != NULL);

  if (g_strcmp0 (self->model, model) != 0)
    {
      g_free (self->model);
      self->model = g_strdup (model);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MODEL]);
    }
}

/**
 * mend_http_sender_get_max_tokens:
 * @self: a sender
 *
 * Gets [property@Mend.HttpSender:max-tokens].
 *
 * Returns: the `max_tokens` of the default body
 */
guint
mend_http_sender_get_max_tokens (MendHttpSender *self)
{
  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->max_tokens;
}

/**
 * mend_http_sender_set_max_tokens:
 * @self: a sender
 * @max_tokens: the most tokens the model may answer with, at least 1
 *
 * Sets [property@Mend.HttpSender:max-tokens].
 */
void
mend_http_sender_set_max_tokens (MendHttpSender *self,
                                 guint           max_tokens)
{
  g_return_if_fail (MEND_IS_HTTP_SENDER (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (max_tokens > 0 && max_tokens <= G_MAXINT);

  if (self->max_tokens != max_tokens)
    {
      self->max_tokens = max_tokens;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_TOKENS]);
    }
}

/**
 * mend_http_sender_get_transcript:
 * @self: a sender
 *
 * Gets [property@Mend.HttpSender:transcript].
 *
 * Returns: (transfer none): the conversation
 */
MendTranscript *
mend_http_sender_get_transcript (MendHttpSender *self)
{
  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->transcript;
}

/**
 * mend_http_sender_get_answer:
 * @self: a sender
 *
 * Gets [property@Mend.HttpSender:answer]: the text of the assistant's
 * message in the last attempt that succeeded.
 *
 * Returns: (nullable): the text, or %NULL before the first success
 */
const char *
mend_http_sender_get_answer (MendHttpSender *self)
{
  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  return self->answer;
}

/**
 * mend_http_sender_set_header:
 * @self: a sender
 * @name: a header name, such as `x-api-key`
 * @value: (nullable): its value, or %NULL to remove it
 * @error: return location for a %G_IO_ERROR_INVALID_ARGUMENT
 *
 * Sets a header sent with every request. Values are never logged, and a
 * value is redacted from every failure message, record and log line while
 * the sender lives, in whatever shape a server echoes it back.
 *
 * A name that is not an HTTP token, or a value with a line break or
 * another control character, is refused with an error, and the sender's
 * headers are unchanged. The error for a bad value names the header; the
 * error for a bad name gives the position of the first byte a name may
 * not hold, never the name itself, which may be a misplaced credential.
 *
 * Returns: %TRUE if the header was set or removed
 */
gboolean
mend_http_sender_set_header (MendHttpSender  *self,
                             const char      *name,
                             const char      *value,
                             GError         **error)
{
  gsize bad_offset;

  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  /* The name is not quoted: a misplaced credential ("x-api-key: …" as
   * the name, or name and value swapped) would come back in the error. */
  if (!mend_http_header_name_is_valid (name, &bad_offset))
    {
      if (*name == '\0')
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                             _("An HTTP header name cannot be empty"));
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                     _("Byte %u of the HTTP header name is not allowed: a header "
                       "name holds only letters, digits and !#$%%&'*+-.^_`|~"),
                     (guint) MIN (bad_offset + 1, G_MAXUINT));
      return FALSE;
    }
  if (value != NULL && !mend_http_header_value_is_valid (value))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   _("The value of the header “%s” holds a line break or a control character"), name);
      return FALSE;
    }

  for (guint i = 0; i + 1 < self->headers->len; i += 2)
    if (g_ascii_strcasecmp (g_ptr_array_index (self->headers, i), name) == 0)
      {
        /* A replaced credential may still be echoed for a while. */
        mend_http_secrets_unpin_header (self->secrets, g_ptr_array_index (self->headers, i),
                                        g_ptr_array_index (self->headers, i + 1));
        g_ptr_array_remove_range (self->headers, i, 2);
        break;
      }

  if (value != NULL)
    {
      g_ptr_array_add (self->headers, g_strdup (name));
      g_ptr_array_add (self->headers, g_strdup (value));
    }

  /* The app's own credentials stay registered for the sender's life,
   * whatever a request brings (another header may hold the value that
   * was let go). */
  for (guint i = 0; i + 1 < self->headers->len; i += 2)
    mend_http_secrets_pin_header (self->secrets, g_ptr_array_index (self->headers, i),
                                  g_ptr_array_index (self->headers, i + 1));

  return TRUE;
}

/**
 * mend_http_sender_get_max_body_bytes:
 * @self: a sender
 *
 * Gets [property@Mend.HttpSender:max-body-bytes].
 *
 * Returns: the most bytes of an answer, decoded
 */
guint
mend_http_sender_get_max_body_bytes (MendHttpSender *self)
{
  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), 0);

  return self->max_body_bytes;
}

/**
 * mend_http_sender_set_max_body_bytes:
 * @self: a sender
 * @value: the most bytes of an answer, decoded
 *
 * Sets [property@Mend.HttpSender:max-body-bytes].
 */
void
mend_http_sender_set_max_body_bytes (MendHttpSender *self,
                                     guint           value)
{
  g_return_if_fail (MEND_IS_HTTP_SENDER (self));
  g_return_if_fail (value > 0);

  if (self->max_body_bytes != value)
    {
      self->max_body_bytes = value;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_BODY_BYTES]);
    }
}

/**
 * mend_http_sender_get_max_line_bytes:
 * @self: a sender
 *
 * Gets [property@Mend.HttpSender:max-line-bytes].
 *
 * Returns: the most bytes of a line of an event stream
 */
guint
mend_http_sender_get_max_line_bytes (MendHttpSender *self)
{
  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), 0);

  return self->max_line_bytes;
}

/**
 * mend_http_sender_set_max_line_bytes:
 * @self: a sender
 * @value: the most bytes of a line of an event stream
 *
 * Sets [property@Mend.HttpSender:max-line-bytes].
 */
void
mend_http_sender_set_max_line_bytes (MendHttpSender *self,
                                     guint           value)
{
  g_return_if_fail (MEND_IS_HTTP_SENDER (self));
  g_return_if_fail (value > 0);

  if (self->max_line_bytes != value)
    {
      self->max_line_bytes = value;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_LINE_BYTES]);
    }
}

/**
 * mend_http_sender_get_max_event_bytes:
 * @self: a sender
 *
 * Gets [property@Mend.HttpSender:max-event-bytes].
 *
 * Returns: the most bytes of one event's data
 */
guint
mend_http_sender_get_max_event_bytes (MendHttpSender *self)
{
  g_return_val_if_fail (MEND_IS_HTTP_SENDER (self), 0);

  return self->max_event_bytes;
}

/**
 * mend_http_sender_set_max_event_bytes:
 * @self: a sender
 * @value: the most bytes of one event's data
 *
 * Sets [property@Mend.HttpSender:max-event-bytes].
 */
void
mend_http_sender_set_max_event_bytes (MendHttpSender *self,
                                      guint           value)
{
  g_return_if_fail (MEND_IS_HTTP_SENDER (self));
  g_return_if_fail (value > 0);

  if (self->max_event_bytes != value)
    {
      self->max_event_bytes = value;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_EVENT_BYTES]);
    }
}
