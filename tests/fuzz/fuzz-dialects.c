/* fuzz-dialects.c: the answers of each wire format MendHttpSender speaks
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Input layout (see corpus/fuzz-dialects, made by make-seeds.py):
 *
 *   byte 0    the dialect: 0 Messages, 1 Chat Completions, 2 Responses
 *             (the byte modulo 3)
 *   byte 1    the chunk size the stream is fed in, 1 to 256
 *   then      the stream, as a server sends it
 *
 * The stream goes through the bounded event reader and the dialect's
 * read_event (), as MendHttpSender's on_event () does, until an event
 * ends the answer; then the same bytes are read as a whole JSON answer by
 * the dialect's read_whole (). Checked besides crashes and leaks:
 * - a text piece read_event () gives is not empty, and the pieces joined
 *   are the answer's text;
 * - the sender's quick way (the dialect's byte scan, else the parse) reads
 *   every event as the parse alone does: the same event, the same piece,
 *   and in the end the same message;
 * - an answer that is not empty has content, and its content is an array
 *   of objects that writes out as JSON;
 * - that content, as the assistant's message of a conversation, makes a
 *   request body of every dialect that is a JSON object.
 */

#include "fuzz-common.h"

#include "mend-http-answer-private.h"
#include "mend-http-dialect-private.h"
#include "mend-json-private.h"
#include "mend-sse-private.h"

#define MAX_LINE  4096
#define MAX_EVENT 16384

typedef struct
{
  const MendHttpDialectClass *wire;
  MendHttpAnswer *answer;
  MendHttpAnswer *scanned;   /* fed the sender's way */
  GString        *scratch;
  MendJsonTemplate memo;      /* the quick way's last text delta */
  GString        *pieces;
  guint           events;
} Reading;

static char *
answer_state (MendHttpAnswer *answer)
{
  g_autoptr(JsonNode) content = mend_http_answer_dup_content (answer);
  g_autofree char *json = content != NULL ? mend_json_to_string (content) : g_strdup ("null");

  return g_strdup_printf ("%s|%d|%u|%s", mend_http_answer_get_text (answer), mend_http_answer_is_empty (answer),
                          mend_http_answer_get_n_blocks (answer), json);
}

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init (argc, argv);
  return 0;
}

static gboolean
on_event (const char *name,
          const char *data,
          gsize       length,
          gpointer    user_data)
{
  Reading *reading = user_data;
  g_autoptr(JsonNode) node = mend_json_parse (data, length, NULL);
  g_autofree char *quick_text = NULL;
  const char *text = NULL;
  MendHttpEvent quick = MEND_HTTP_EVENT_OTHER;
  MendHttpEvent event;

  if (mend_http_dialect_scan (reading->wire, reading->scanned, &reading->memo, name, data, length,
                              reading->scratch, &quick, &text))
    quick_text = g_strdup (text);
  else
    {
      text = NULL;
      quick = reading->wire->read_event (reading->scanned, name, data, length,
                                         node != NULL && JSON_NODE_HOLDS_OBJECT (node)
                                         ? json_node_get_object (node) : NULL,
                                         &text);
      quick_text = g_strdup (text);
    }

  text = NULL;
  event = reading->wire->read_event (reading->answer, name, data, length,
                                     node != NULL && JSON_NODE_HOLDS_OBJECT (node)
                                     ? json_node_get_object (node) : NULL,
                                     &text);
  fuzz_check (quick == event && g_strcmp0 (quick_text, text) == 0,
              "the scan read an event as %d \"%s\", the parse as %d \"%s\"", quick,
              quick_text ? quick_text : "(null)", event, text ? text : "(null)");
  fuzz_check (text == NULL || text[0] != '\0', "an empty text piece");
  fuzz_check (text == NULL || event == MEND_HTTP_EVENT_CONTENT, "a text piece in event %d", event);
  if (text != NULL)
    g_string_append (reading->pieces, text);
  reading->events++;

  return event != MEND_HTTP_EVENT_END && event != MEND_HTTP_EVENT_ERROR;
}

/* Every dialect's body for [user, assistant @content, user]. */
static void
check_bodies (JsonNode *content)
{
  static const MendHttpDialectClass *wires[] = {
    &mend_http_dialect_messages,
    &mend_http_dialect_chat_completions,
    &mend_http_dialect_responses,
    &mend_http_dialect_gemini,
  };
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) messages = NULL;

  json_builder_begin_array (builder);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "role");
  json_builder_add_string_value (builder, "user");
  json_builder_set_member_name (builder, "content");
  json_builder_add_string_value (builder, "Fix the build");
  json_builder_end_object (builder);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "role");
  json_builder_add_string_value (builder, "assistant");
  json_builder_set_member_name (builder, "content");
  json_builder_add_value (builder, json_node_copy (content));
  json_builder_end_object (builder);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "role");
  json_builder_add_string_value (builder, "user");
  json_builder_set_member_name (builder, "content");
  json_builder_add_value (builder, json_node_copy (content));
  json_builder_end_object (builder);
  json_builder_end_array (builder);
  messages = json_builder_get_root (builder);

  for (guint i = 0; i < G_N_ELEMENTS (wires); i++)
    {
      g_autofree char *body = mend_http_dialect_build_body (wires[i], "model", 1024, messages);
      g_autoptr(JsonNode) again = mend_json_parse (body, strlen (body), NULL);

      fuzz_check (again != NULL && JSON_NODE_HOLDS_OBJECT (again),
                  "dialect %u wrote a body that is not a JSON object", i);
    }
}

/* @streamed: put together from events, so made of blocks; a whole answer
 * keeps the server's content as it came, for the transcript to judge. */
static void
check_answer (MendHttpAnswer *answer,
              gboolean        streamed)
{
  g_autoptr(JsonNode) content = mend_http_answer_dup_content (answer);
  g_autofree char *text = NULL;
  g_autoptr(JsonNode) again = NULL;

  fuzz_check (mend_http_answer_is_empty (answer) || content != NULL, "an answer not empty has no content");
  if (content == NULL)
    return;

  fuzz_check (JSON_NODE_HOLDS_ARRAY (content), "the content is not an array");
  for (guint i = 0; streamed && i < json_array_get_length (json_node_get_array (content)); i++)
    fuzz_check (JSON_NODE_HOLDS_OBJECT (json_array_get_element (json_node_get_array (content), i)),
                "block %u of the content is not an object", i);

  /* What the transcript keeps writes out as JSON that reads back (a
   * number past a double does not: the transcript refuses that). */
  text = mend_json_to_string (content);
  fuzz_check (text != NULL && text[0] == '[', "the content does not write out");
  if (!g_utf8_validate (text, -1, NULL) || (again = mend_json_parse (text, strlen (text), NULL)) == NULL)
    return;

  check_bodies (content);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  static const MendHttpDialectClass *wires[] = {
    &mend_http_dialect_messages,
    &mend_http_dialect_chat_completions,
    &mend_http_dialect_responses,
    &mend_http_dialect_gemini,
  };
  Reading reading = { 0 };
  MendSseReader reader;
  MendSseStatus status = MEND_SSE_MORE;
  gsize chunk;

  if (size < 2)
    return 0;

  reading.wire = wires[data[0] % G_N_ELEMENTS (wires)];
  chunk = data[1] + 1;
  data += 2;
  size -= 2;

  /* Streamed. */
  reading.answer = mend_http_answer_new ();
  reading.scanned = mend_http_answer_new ();
  reading.scratch = g_string_new (NULL);
  mend_json_template_init (&reading.memo);
  reading.pieces = g_string_new (NULL);
  mend_sse_reader_init (&reader, MAX_LINE, MAX_EVENT, on_event, &reading);
  for (gsize at = 0; at < size && status == MEND_SSE_MORE; at += chunk)
    status = mend_sse_reader_feed (&reader, (const char *) data + at, MIN (chunk, size - at));
  if (status == MEND_SSE_MORE)
    mend_sse_reader_finish (&reader);
  mend_sse_reader_clear (&reader);

  fuzz_check (g_str_equal (reading.pieces->str, mend_http_answer_get_text (reading.answer)),
              "the pieces joined are not the answer's text");
  check_answer (reading.answer, TRUE);
  {
    g_autofree char *slow = answer_state (reading.answer);
    g_autofree char *quick = answer_state (reading.scanned);

    fuzz_check (g_str_equal (slow, quick), "the scan made another message than the parse");
  }
  mend_http_answer_free (reading.answer);
  mend_http_answer_free (reading.scanned);
  g_string_free (reading.scratch, TRUE);
  mend_json_template_clear (&reading.memo);
  g_string_free (reading.pieces, TRUE);

  /* Whole. */
  {
    g_autoptr(JsonNode) root = mend_json_parse ((const char *) data, size, NULL);
    g_autoptr(MendHttpAnswer) answer = mend_http_answer_new ();

    if (root != NULL && reading.wire->read_whole (answer, root) == MEND_HTTP_EVENT_END)
      check_answer (answer, FALSE);
  }

  return 0;
}
