/* test-transcript.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * MendTranscript: the conversation a MendHttpSender sends, driven through
 * a MendChat against a real SoupServer on 127.0.0.1, port 0; the request
 * bodies the server received are parsed and read. Waits between attempts
 * run in virtual time.
 */

#include <string.h>

#include <json-glib/json-glib.h>

#include <libmend.h>

#include "mend-test-utils.h"

#define WALL_START_S 1764500000

typedef struct
{
  guint       status;        /* 0: never answers */
  const char *content_type;
  const char *body;
} Reply;

typedef struct
{
  SoupServer *server;
  char *endpoint;
  const Reply *script;
  guint n_script;
  guint served;
  GPtrArray *bodies;         /* body of each request */
  GPtrArray *hanging;        /* SoupServerMessage* paused */

  MendClock *clock;
  MendErrorPolicy *policy;
  MendChat *chat;
  MendHttpSender *sender;
  guint messages_at_finish;
} Fixture;

/* An answer in text and a tool call, streamed in pieces. */
static const char SSE_TEXT_AND_TOOL[] =
  "event: message_start\n"
  "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"role\":\"assistant\",\"content\":[]}}\n\n"
  "event: content_block_start\n"
  "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Two tests \"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"fail.\"}}\n\n"
  "event: content_block_stop\n"
  "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
  "event: content_block_start\n"
  "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"Read\",\"input\":{}}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\":\"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"ci.log\\\"}\"}}\n\n"
  "event: content_block_stop\n"
  "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
  "event: message_stop\n"
  "data: {\"type\":\"message_stop\"}\n\n";

/* What SSE_TEXT_AND_TOOL adds to the transcript. */
#define ASSISTANT_1 \
  "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Two tests fail.\"}," \
  "{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"Read\",\"input\":{\"path\":\"ci.log\"}}]}"

static const char JSON_ANSWER[] =
  "{\"id\":\"msg_2\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\","
  "\"content\":[{\"type\":\"text\",\"text\":\"The fix is in.\"}],\"stop_reason\":\"end_turn\"}";

#define ASSISTANT_2 \
  "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"The fix is in.\"}]}"

static const char SSE_OK[] =
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Done.\"}}\n\n"
  "event: message_stop\n"
  "data: {\"type\":\"message_stop\"}\n\n";

#define ASSISTANT_OK "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Done.\"}]}"

static const char OVERLOADED[] =
  "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}";

static const char UNAUTHORIZED[] =
  "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}";

static void
server_callback (SoupServer        *server,
                 SoupServerMessage *msg,
                 const char        *path,
                 GHashTable        *query,
                 gpointer           user_data)
{
  Fixture *f = user_data;
  g_autoptr(GBytes) flat = soup_message_body_flatten (soup_server_message_get_request_body (msg));
  const Reply *reply;

  g_ptr_array_add (f->bodies, g_strndup (g_bytes_get_data (flat, NULL), g_bytes_get_size (flat)));
  g_assert_cmpuint (f->served, <, f->n_script);
  reply = &f->script[f->served++];

  if (reply->status == 0)
    {
      soup_server_message_pause (msg);
      g_ptr_array_add (f->hanging, g_object_ref (msg));
      return;
    }

  soup_server_message_set_status (msg, reply->status, NULL);
  soup_server_message_set_response (msg, reply->content_type, SOUP_MEMORY_STATIC,
                                    reply->body, strlen (reply->body));
}

/* A chat and its sender, new, against the fixture's server. */
static void
make_chat (Fixture *f)
{
  f->sender = mend_http_sender_new (f->endpoint);
  mend_http_sender_set_timeout_ms (f->sender, 5000);
  f->chat = g_object_new (MEND_TYPE_CHAT,
                          "clock", f->clock,
                          "policy", f->policy,
                          "sender", f->sender,
                          "id", "transcript-test",
                          NULL);
}

static void
drop_chat (Fixture *f)
{
  mend_chat_close (f->chat);
  g_assert_finalize_object (f->chat);
  /* The session may hold the message of a cancelled attempt for a moment. */
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (f->sender);
  f->chat = NULL;
  f->sender = NULL;
}

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  GSList *uris;

  f->bodies = g_ptr_array_new_with_free_func (g_free);
  f->hanging = g_ptr_array_new_with_free_func (g_object_unref);

  f->server = soup_server_new (NULL, NULL);
  soup_server_add_handler (f->server, "/v1/messages", server_callback, f, NULL);
  g_assert_true (soup_server_listen_local (f->server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error));
  g_assert_no_error (error);
  uris = soup_server_get_uris (f->server);
  f->endpoint = g_strdup_printf ("http://127.0.0.1:%d/v1/messages", g_uri_get_port (uris->data));
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  f->clock = mend_manual_clock_new ((gint64) WALL_START_S * G_USEC_PER_SEC);
  f->policy = mend_error_policy_new ();
  mend_error_policy_set_jitter (f->policy, MEND_JITTER_NONE);
  make_chat (f);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  drop_chat (f);
  g_assert_finalize_object (f->policy);
  g_assert_finalize_object (f->clock);

  for (guint i = 0; i < f->hanging->len; i++)
    soup_server_message_unpause (g_ptr_array_index (f->hanging, i));
  soup_server_disconnect (f->server);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_ptr_array_unref (f->hanging);
  g_assert_finalize_object (f->server);
  g_ptr_array_unref (f->bodies);
  g_free (f->endpoint);
}

/* Runs the loop until the server saw @requests requests and the chat's
 * turn is in @state. */
static void
run_until (Fixture       *f,
           MendTurnState  state,
           guint          requests)
{
  mend_test_run_chat_until (f->chat, &f->served, state, requests);
}

static void
play (Fixture     *f,
      const Reply *script,
      guint        n)
{
  f->script = script;
  f->n_script = n;
}

/* The messages of the server's request @i, each written back as compact
 * JSON. */
static GStrv
request_messages (Fixture *f,
                  guint    i)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  JsonObject *body;
  JsonArray *messages;

  g_assert_cmpuint (i, <, f->bodies->len);
  g_assert_true (json_parser_load_from_data (parser, g_ptr_array_index (f->bodies, i), -1, NULL));
  body = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (body, "model"), ==, "claude-sonnet-4-5");
  g_assert_true (json_object_get_boolean_member (body, "stream"));
  messages = json_object_get_array_member (body, "messages");

  for (guint j = 0; j < json_array_get_length (messages); j++)
    {
      g_autoptr(JsonGenerator) generator = json_generator_new ();
      g_autofree char *text = NULL;

      json_generator_set_root (generator, json_array_get_element (messages, j));
      text = json_generator_to_data (generator, NULL);
      g_strv_builder_add (builder, text);
    }

  return g_strv_builder_end (builder);
}

/* The request's messages are exactly @expected, in order: each one once. */
static void
assert_messages (Fixture    *f,
                 guint       request,
                 const char *const *expected)
{
  g_auto(GStrv) messages = request_messages (f, request);

  for (guint i = 0; expected[i] != NULL || messages[i] != NULL; i++)
    {
      g_assert_nonnull (messages[i]);
      g_assert_cmpstr (messages[i], ==, expected[i]);
    }
}

#define USER(text) "{\"role\":\"user\",\"content\":\"" text "\"}"

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Fixture  *f)
{
  /* By the time the turn is announced finished, its exchange is kept. */
  f->messages_at_finish = mend_transcript_get_n_messages (mend_http_sender_get_transcript (f->sender));
}

/* The test the transcript exists for: a turn retried after a 529 is in
 * the next turn's request once, and still once after a restart. */
static void
test_retried_turn_is_in_the_next_request_once_and_survives_a_restore (Fixture       *f,
                                                                       gconstpointer  data)
{
  static const Reply script[] = {
    { 529, "application/json", OVERLOADED },
    { 200, "text/event-stream", SSE_TEXT_AND_TOOL },
    { 200, "application/json", JSON_ANSWER },
    { 200, "text/event-stream", SSE_OK },
  };
  const char *turn_2[] = { USER ("Why is CI red?"), ASSISTANT_1, USER ("Fix it"), NULL };
  const char *turn_3[] = { USER ("Why is CI red?"), ASSISTANT_1, USER ("Fix it"), ASSISTANT_2,
                           USER ("Thanks"), NULL };
  g_autofree char *state = NULL;
  g_autofree char *saved_transcript = NULL;
  g_autofree char *restored_transcript = NULL;

  play (f, script, G_N_ELEMENTS (script));
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
  g_assert_true (mend_chat_submit (f->chat, "Why is CI red?", NULL, NULL));
  run_until (f, MEND_TURN_WAITING, 1);
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (f->clock), 250);
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_cmpuint (f->messages_at_finish, ==, 2);

  /* Both attempts sent the same, the prompt alone. */
  g_assert_cmpstr (g_ptr_array_index (f->bodies, 0), ==, g_ptr_array_index (f->bodies, 1));
  assert_messages (f, 0, (const char *[]) { USER ("Why is CI red?"), NULL });
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Two tests fail.");
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (f->sender)), ==, 2);

  g_assert_true (mend_chat_submit (f->chat, "Fix it", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 3);
  assert_messages (f, 2, turn_2);
  g_assert_cmpuint (mend_test_count_occurrences (g_ptr_array_index (f->bodies, 2), "Why is CI red?"), ==, 1);
  g_assert_cmpuint (mend_test_count_occurrences (g_ptr_array_index (f->bodies, 2), "toolu_01"), ==, 1);

  /* A new chat and sender, from the saved state. */
  state = mend_chat_save_state (f->chat);
  saved_transcript = mend_transcript_to_json (mend_http_sender_get_transcript (f->sender));
  drop_chat (f);
  make_chat (f);
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (f->sender)), ==, 0);
  g_assert_true (mend_chat_restore_state (f->chat, state, NULL));
  restored_transcript = mend_transcript_to_json (mend_http_sender_get_transcript (f->sender));
  g_assert_cmpstr (restored_transcript, ==, saved_transcript);

  g_assert_true (mend_chat_submit (f->chat, "Thanks", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 4);
  assert_messages (f, 3, turn_3);
  g_assert_cmpuint (mend_test_count_occurrences (g_ptr_array_index (f->bodies, 3), "Why is CI red?"), ==, 1);
  g_assert_cmpuint (mend_test_count_occurrences (g_ptr_array_index (f->bodies, 3), "The fix is in."), ==, 1);
  g_assert_cmpuint (mend_transcript_get_n_messages (mend_http_sender_get_transcript (f->sender)), ==, 6);
}

#define PENDING(failed, prompt) \
  "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"" failed "\"}," \
  "{\"type\":\"text\",\"text\":\"" prompt "\"}]}"

static void
test_given_up_prompt_is_sent_before_continue (Fixture       *f,
                                              gconstpointer  data)
{
  static const Reply script[] = {
    { 401, "application/json", UNAUTHORIZED },
    { 200, "text/event-stream", SSE_OK },
    { 200, "text/event-stream", SSE_OK },
  };
  MendTranscript *transcript = mend_http_sender_get_transcript (f->sender);
  MendQueue *queue = mend_chat_get_queue (f->chat);
  const char *continued[] = { PENDING ("Deploy the fix", "Continue the current turn"), NULL };
  const char *next[] = { PENDING ("Deploy the fix", "Continue the current turn"), ASSISTANT_OK,
                         USER ("Then tag it"), NULL };

  play (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Deploy the fix", NULL, NULL));
  g_assert_true (mend_chat_submit (f->chat, "Then tag it", NULL, NULL));
  run_until (f, MEND_TURN_FAILED, 1);

  /* It gave up: nothing in the transcript, its prompt pending, and the
   * chat's Continue at the head of the queue. */
  g_assert_cmpint (mend_chat_get_lifecycle (f->chat), ==, MEND_LIFECYCLE_ERROR);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 0);
  g_assert_cmpuint (mend_transcript_get_n_pending (transcript), ==, 1);
  g_assert_cmpuint (mend_queue_get_length (queue), ==, 2);

  mend_chat_send_next (f->chat);
  run_until (f, MEND_TURN_SUCCEEDED, 3);

  /* The model saw the failed prompt, then Continue, in one user message;
   * and that message is the one the transcript kept. */
  assert_messages (f, 1, continued);
  assert_messages (f, 2, next);
  g_assert_cmpuint (mend_test_count_occurrences (g_ptr_array_index (f->bodies, 2), "Deploy the fix"), ==, 1);
  g_assert_cmpuint (mend_transcript_get_n_pending (transcript), ==, 0);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 4);
}

/* "Try again" after a give-up sends the same prompt: once, not twice. */
static void
test_given_up_prompt_tried_again_is_sent_once (Fixture       *f,
                                               gconstpointer  data)
{
  static const Reply script[] = {
    { 401, "application/json", UNAUTHORIZED },
    { 401, "application/json", UNAUTHORIZED },
    { 200, "text/event-stream", SSE_OK },
    { 200, "text/event-stream", SSE_OK },
  };
  MendTranscript *transcript = mend_http_sender_get_transcript (f->sender);

  play (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Deploy the fix", NULL, NULL));
  run_until (f, MEND_TURN_FAILED, 1);
  g_assert_true (mend_chat_submit (f->chat, "Deploy the fix", NULL, NULL));
  run_until (f, MEND_TURN_FAILED, 2);
  g_assert_true (mend_chat_submit (f->chat, "Deploy the fix", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 3);
  g_assert_true (mend_chat_submit (f->chat, "Then tag it", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 4);

  for (guint i = 0; i < 3; i++)
    assert_messages (f, i, (const char *[]) { USER ("Deploy the fix"), NULL });
  assert_messages (f, 3, (const char *[]) { USER ("Deploy the fix"), ASSISTANT_OK, USER ("Then tag it"), NULL });
  g_assert_cmpuint (mend_transcript_get_n_pending (transcript), ==, 0);
}

static void
test_stopped_turn_is_not_kept (Fixture       *f,
                               gconstpointer  data)
{
  static const Reply script[] = {
    { 401, "application/json", UNAUTHORIZED },
    { 0 },
    { 200, "text/event-stream", SSE_OK },
    { 0 },
    { 200, "text/event-stream", SSE_OK },
  };
  MendTranscript *transcript = mend_http_sender_get_transcript (f->sender);
  guint id;

  play (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Deploy the fix", NULL, NULL));
  run_until (f, MEND_TURN_FAILED, 1);
  g_assert_cmpuint (mend_transcript_get_n_pending (transcript), ==, 1);

  /* The next prompt carries the one that gave up; the user stops it. */
  g_assert_true (mend_chat_submit (f->chat, "Why did it fail?", NULL, NULL));
  run_until (f, MEND_TURN_RUNNING, 2);
  assert_messages (f, 1, (const char *[]) { PENDING ("Deploy the fix", "Why did it fail?"), NULL });
  mend_chat_stop (f->chat);
  g_assert_null (mend_chat_get_turn (f->chat));
  g_assert_cmpuint (mend_transcript_get_n_pending (transcript), ==, 0);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 0);

  /* Neither comes back. */
  g_assert_true (mend_chat_submit (f->chat, "Start over", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 3);
  assert_messages (f, 2, (const char *[]) { USER ("Start over"), NULL });

  /* A stopped turn with history before it: only the history is sent next. */
  g_assert_true (mend_chat_submit (f->chat, "Run the slow suite", NULL, NULL));
  id = g_timeout_add_seconds (20, mend_test_watchdog, (gpointer) g_test_get_path ());
  while (f->served < 4)
    g_main_context_iteration (NULL, TRUE);
  g_source_remove (id);
  mend_chat_stop (f->chat);
  g_assert_true (mend_chat_submit (f->chat, "Only the fast one", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 5);
  assert_messages (f, 4, (const char *[]) { USER ("Start over"), ASSISTANT_OK,
                                            USER ("Only the fast one"), NULL });
}

static void
test_bound_drops_the_oldest_turns_through_the_chat (Fixture       *f,
                                                    gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", SSE_OK },
    { 200, "text/event-stream", SSE_OK },
    { 200, "text/event-stream", SSE_OK },
    { 200, "text/event-stream", SSE_OK },
  };
  MendTranscript *transcript = mend_http_sender_get_transcript (f->sender);
  const char *prompts[] = { "one", "two", "three", "four" };

  mend_transcript_set_max_messages (transcript, 4);
  play (f, script, G_N_ELEMENTS (script));
  for (guint i = 0; i < G_N_ELEMENTS (prompts); i++)
    {
      g_assert_true (mend_chat_submit (f->chat, prompts[i], NULL, NULL));
      run_until (f, MEND_TURN_SUCCEEDED, i + 1);
    }

  /* Two turns fit: the fourth request carried the second and third. */
  assert_messages (f, 3, (const char *[]) { USER ("two"), ASSISTANT_OK, USER ("three"), ASSISTANT_OK,
                                            USER ("four"), NULL });
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 4);
}

static void
stop_chat (MendHttpSender *sender,
           const char     *delta,
           MendChat       *chat)
{
  mend_chat_stop (chat);
}

static void
test_stop_from_a_text_delta_keeps_nothing (Fixture       *f,
                                           gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", SSE_TEXT_AND_TOOL },
    { 200, "text/event-stream", SSE_OK },
  };
  MendTranscript *transcript = mend_http_sender_get_transcript (f->sender);
  gulong id;

  play (f, script, G_N_ELEMENTS (script));
  id = g_signal_connect (f->sender, "text-delta", G_CALLBACK (stop_chat), f->chat);
  g_assert_true (mend_chat_submit (f->chat, "Why is CI red?", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_signal_handler_disconnect (f->sender, id);

  /* The answer arrived whole, but the user had stopped the turn. */
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_null (mend_http_sender_get_answer (f->sender));
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 0);
  g_assert_cmpuint (mend_transcript_get_n_pending (transcript), ==, 0);

  g_assert_true (mend_chat_submit (f->chat, "Again", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  assert_messages (f, 1, (const char *[]) { USER ("Again"), NULL });
}

static void
test_unreadable_answer_keeps_the_prompt_pending (Fixture       *f,
                                                 gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/plain", "OK" },
    { 200, "text/event-stream", SSE_OK },
  };
  MendTranscript *transcript = mend_http_sender_get_transcript (f->sender);

  play (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Deploy the fix", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 1);

  /* A success, but nothing the transcript could keep as the answer. */
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "");
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 0);
  g_assert_cmpuint (mend_transcript_get_n_pending (transcript), ==, 1);

  g_assert_true (mend_chat_submit (f->chat, "Did it work?", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  assert_messages (f, 1, (const char *[]) { PENDING ("Deploy the fix", "Did it work?"), NULL });
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 2);
}

/* Extended thinking, then text, as the Messages API streams them. */
static const char SSE_THINKING[] =
  "event: content_block_start\n"
  "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"The log \"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"says so.\"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"c2lnbg==\"}}\n\n"
  "event: content_block_stop\n"
  "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
  "event: content_block_start\n"
  "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
  "event: content_block_delta\n"
  "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Flaky.\"}}\n\n"
  "event: content_block_stop\n"
  "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
  "event: message_stop\n"
  "data: {\"type\":\"message_stop\"}\n\n";

static void
test_answer_blocks_are_kept_as_sent (Fixture       *f,
                                     gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", SSE_THINKING },
    /* Deltas with no block start, as some servers send them. */
    { 200, "text/event-stream", SSE_OK },
    { 200, "text/event-stream", SSE_OK },
  };
  const char *expected[] = {
    USER ("Why?"),
    "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"The log says so.\","
    "\"signature\":\"c2lnbg==\"},{\"type\":\"text\",\"text\":\"Flaky.\"}]}",
    USER ("Sure?"), ASSISTANT_OK, USER ("Thanks"), NULL
  };

  play (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Why?", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Flaky.");
  g_assert_true (mend_chat_submit (f->chat, "Sure?", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_true (mend_chat_submit (f->chat, "Thanks", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 3);
  assert_messages (f, 2, expected);
}

static void
test_answer_larger_than_max_bytes_is_not_kept (Fixture       *f,
                                               gconstpointer  data)
{
  static const Reply script[] = {
    { 200, "text/event-stream", SSE_OK },
    { 200, "text/event-stream", SSE_OK },
  };
  MendTranscript *transcript = mend_http_sender_get_transcript (f->sender);

  /* The answer's content, [{"type":"text","text":"Done."}], is 32 bytes. */
  mend_transcript_set_max_bytes (transcript, 31);
  play (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Deploy", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_cmpstr (mend_http_sender_get_answer (f->sender), ==, "Done.");
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 0);
  g_assert_cmpuint (mend_transcript_get_n_pending (transcript), ==, 1);

  mend_transcript_set_max_bytes (transcript, 32);
  g_assert_true (mend_chat_submit (f->chat, "Again", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 2);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 2);
  g_assert_cmpuint (mend_transcript_get_n_pending (transcript), ==, 0);
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

static void
test_answer_too_deep_to_save_keeps_the_prompt_pending (Fixture       *f,
                                                       gconstpointer  data)
{
  g_autofree char *deep = nested_input (59);
  g_autofree char *body = g_strdup_printf ("{\"role\":\"assistant\",\"content\":[%s]}", deep);
  Reply script[] = {
    { 200, "application/json", body },
  };
  MendTranscript *transcript = mend_http_sender_get_transcript (f->sender);
  g_autofree char *state = NULL;

  play (f, script, G_N_ELEMENTS (script));
  g_assert_true (mend_chat_submit (f->chat, "Go deep", NULL, NULL));
  run_until (f, MEND_TURN_SUCCEEDED, 1);
  g_assert_cmpuint (mend_transcript_get_n_messages (transcript), ==, 0);
  g_assert_cmpuint (mend_transcript_get_n_pending (transcript), ==, 1);

  /* The chat's state restores. */
  state = mend_chat_save_state (f->chat);
  drop_chat (f);
  make_chat (f);
  g_assert_true (mend_chat_restore_state (f->chat, state, NULL));
  g_assert_cmpuint (mend_transcript_get_n_pending (mend_http_sender_get_transcript (f->sender)), ==, 1);
}

/* Saved state */

static void
test_state_without_a_sender_state_still_loads (Fixture       *f,
                                               gconstpointer  data)
{
  /* As a chat saved before senders had state wrote it. */
  static const char old_state[] =
    "{\"version\":1,\"chatId\":\"transcript-test\",\"lifecycle\":\"ready\","
    "\"queue\":[{\"id\":\"q1\",\"text\":\"queued\",\"provenance\":null,\"queuedAt\":1764500000000}],"
    "\"turn\":null,\"subagents\":[]}";
  MendTranscript *transcript = mend_http_sender_get_transcript (f->sender);
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;

  g_assert_true (mend_transcript_load_json (transcript, "[{\"role\":\"user\",\"content\":\"kept\"}]", NULL));
  before = mend_transcript_to_json (transcript);
  g_assert_true (mend_chat_restore_state (f->chat, old_state, NULL));
  g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 1);
  after = mend_transcript_to_json (transcript);
  g_assert_cmpstr (after, ==, before);
}

static void
test_bad_sender_state_is_an_error_and_changes_nothing (Fixture       *f,
                                                       gconstpointer  data)
{
  static const char *bad[] = {
    /* Not text. */
    "{\"messages\":[]}",
    /* Text, but not what the sender wrote. */
    "\"[not json\"",
    "\"{\\\"messages\\\":[{\\\"role\\\":\\\"assistant\\\",\\\"content\\\":\\\"x\\\"}],\\\"pending\\\":[]}\"",
    "\"{\\\"messages\\\":[],\\\"pending\\\":[{\\\"type\\\":\\\"image\\\"}]}\"",
    "\"{\\\"pending\\\":[]}\"",
  };
  MendTranscript *transcript = mend_http_sender_get_transcript (f->sender);
  g_autofree char *before = NULL;

  g_assert_true (mend_transcript_load_json (transcript, "[{\"role\":\"user\",\"content\":\"kept\"}]", NULL));
  before = mend_transcript_to_json (transcript);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *state = g_strdup_printf (
        "{\"version\":1,\"chatId\":\"transcript-test\",\"lifecycle\":\"ready\","
        "\"queue\":[{\"id\":\"q1\",\"text\":\"queued\",\"provenance\":null,\"queuedAt\":1764500000000}],"
        "\"turn\":null,\"subagents\":[],\"senderState\":%s}", bad[i]);
      g_autofree char *after = NULL;

      g_test_message ("%s", state);
      g_assert_false (mend_chat_restore_state (f->chat, state, &error));
      g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
      g_test_message ("%s", error->message);
      /* Nothing of the rest came in, and the sender kept its own. */
      g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (f->chat)), ==, 0);
      after = mend_transcript_to_json (transcript);
      g_assert_cmpstr (after, ==, before);
    }

  /* A good sender state in a state whose subagents are refused: the
   * sender gets its own back. */
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *after = NULL;
    static const char state[] =
      "{\"version\":1,\"chatId\":\"transcript-test\",\"lifecycle\":\"ready\",\"queue\":[],"
      "\"turn\":null,\"subagents\":[42],"
      "\"senderState\":\"{\\\"messages\\\":[{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"new\\\"}],\\\"pending\\\":[]}\"}";

    g_test_message ("%s", state);
    g_assert_false (mend_chat_restore_state (f->chat, state, &error));
    g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
    after = mend_transcript_to_json (transcript);
    g_assert_cmpstr (after, ==, before);
  }
}

int
main (int   argc,
      char *argv[])
{
  /* The isolated test directories hold no GSettings schemas: no system
   * proxy settings to read on loopback. */
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", TRUE);
  g_setenv ("GSETTINGS_BACKEND", "memory", TRUE);
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("/Mend/Transcript/retried-turn-is-in-the-next-request-once-and-survives-a-restore",
       test_retried_turn_is_in_the_next_request_once_and_survives_a_restore);
  ADD ("/Mend/Transcript/given-up-prompt-is-sent-before-continue", test_given_up_prompt_is_sent_before_continue);
  ADD ("/Mend/Transcript/given-up-prompt-tried-again-is-sent-once", test_given_up_prompt_tried_again_is_sent_once);
  ADD ("/Mend/Transcript/stopped-turn-is-not-kept", test_stopped_turn_is_not_kept);
  ADD ("/Mend/Transcript/bound-drops-the-oldest-turns-through-the-chat",
       test_bound_drops_the_oldest_turns_through_the_chat);
  ADD ("/Mend/Transcript/stop-from-a-text-delta-keeps-nothing", test_stop_from_a_text_delta_keeps_nothing);
  ADD ("/Mend/Transcript/unreadable-answer-keeps-the-prompt-pending",
       test_unreadable_answer_keeps_the_prompt_pending);
  ADD ("/Mend/Transcript/answer-blocks-are-kept-as-sent", test_answer_blocks_are_kept_as_sent);
  ADD ("/Mend/Transcript/answer-larger-than-max-bytes-is-not-kept", test_answer_larger_than_max_bytes_is_not_kept);
  ADD ("/Mend/Transcript/state-without-a-sender-state-still-loads", test_state_without_a_sender_state_still_loads);
  ADD ("/Mend/Transcript/bad-sender-state-is-an-error-and-changes-nothing",
       test_bad_sender_state_is_an_error_and_changes_nothing);
  ADD ("/Mend/Transcript/answer-too-deep-to-save-keeps-the-prompt-pending",
       test_answer_too_deep_to_save_keeps_the_prompt_pending);

#undef ADD

  return g_test_run ();
}
