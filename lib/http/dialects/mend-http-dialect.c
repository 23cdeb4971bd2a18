/* mend-http-dialect.c — what the four dialects of MendHttpSender share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The writers of a request's frame and messages, the body built around a
 * transcript, and the readers of the blocks every format has in some
 * shape. The dialects call these; these call no dialect.
 */

#include "config.h"

#include <string.h>

#include "mend-http-dialect-private.h"
#include "mend-json-private.h"

void
mend_http_write_streamed_frame (const char *model,
                                const char *max_name,
                                guint       max_tokens,
                                gboolean    include_usage,
                                const char *list_name,
                                GString    *head,
                                GString    *tail)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
  g_autofree char *text = NULL;
  gsize length;

  g_assert (model != NULL);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "model");
  json_builder_add_string_value (builder, model);
  json_builder_set_member_name (builder, max_name);
  json_builder_add_int_value (builder, max_tokens);
  json_builder_set_member_name (builder, "stream");
  json_builder_add_boolean_value (builder, TRUE);
  if (include_usage)
    {
      json_builder_set_member_name (builder, "stream_options");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "include_usage");
      json_builder_add_boolean_value (builder, TRUE);
      json_builder_end_object (builder);
    }
  json_builder_set_member_name (builder, list_name);
  json_builder_begin_array (builder);
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  /* The list is the last member: the body ends with "[]}". */
  text = mend_json_builder_finish (builder);
  length = strlen (text);
  g_assert (length >= 3 && strcmp (text + length - 3, "[]}") == 0);
  g_string_truncate (head, 0);
  g_string_append_len (head, text, length - 2);
  g_string_assign (tail, "]}");
}

void
mend_http_begin_item (GString *out,
                      gsize    start)
{
  if (out->len > start)
    g_string_append_c (out, ',');
}

char *
mend_http_dialect_write_body (const MendHttpDialectClass *wire,
                              GString                    *head,
                              GString                    *tail,
                              MendTranscriptRequest      *request,
                              gsize                      *length)
{
  gsize n = mend_transcript_request_prepare (request, wire->shape, wire->write_message, &wire->write_prompt);
  char *body = g_malloc (head->len + n + tail->len + 1);
  char *end;

  /* Each piece copied once, to where it goes. */
  memcpy (body, head->str, head->len);
  end = mend_transcript_request_copy (request, wire->shape, body + head->len);
  memcpy (end, tail->str, tail->len);
  end += tail->len;
  *end = '\0';
  if (length != NULL)
    *length = end - body;
  return body;
}

char *
mend_http_dialect_build_body (const MendHttpDialectClass *wire,
                              const char                 *model,
                              guint                       max_tokens,
                              JsonNode                   *messages)
{
  g_autoptr(GString) head = g_string_new (NULL);
  g_autoptr(GString) tail = g_string_new (NULL);
  g_autoptr(MendTranscriptRequest) request = NULL;

  g_assert (messages != NULL && JSON_NODE_HOLDS_ARRAY (messages));

  request = mend_transcript_request_new_from_array (json_node_get_array (messages));
  wire->write_frame (model, max_tokens, head, tail);
  return mend_http_dialect_write_body (wire, head, tail, request, NULL);
}

gboolean
mend_http_has_error (JsonObject *object)
{
  JsonNode *error = object != NULL ? json_object_get_member (object, "error") : NULL;

  return error != NULL && !JSON_NODE_HOLDS_NULL (error);
}

JsonObject *
mend_http_block_at (JsonArray *blocks,
                    guint      i)
{
  JsonNode *element = json_array_get_element (blocks, i);

  return JSON_NODE_HOLDS_OBJECT (element) ? json_node_get_object (element) : NULL;
}

char *
mend_http_tool_arguments (JsonObject *block)
{
  JsonNode *input = json_object_get_member (block, "input");

  /* Arguments that were never JSON are kept as the text the model sent. */
  if (input != NULL && JSON_NODE_HOLDS_VALUE (input) && json_node_get_value_type (input) == G_TYPE_STRING)
    return g_strdup (json_node_get_string (input));
  return input != NULL ? mend_json_to_string (input) : g_strdup ("{}");
}

typedef void (*PieceFunc) (const char *piece,
                           gpointer    data);

/* Each piece of the text of @content, in order: a string, or its text
 * blocks and the text of its tool results (the pieces of their content
 * when they have no text). */
static void
content_pieces (JsonNode  *content,
                PieceFunc  func,
                gpointer   data)
{
  if (content != NULL && JSON_NODE_HOLDS_VALUE (content) &&
      json_node_get_value_type (content) == G_TYPE_STRING)
    func (json_node_get_string (content), data);
  else if (content != NULL && JSON_NODE_HOLDS_ARRAY (content))
    {
      JsonArray *blocks = json_node_get_array (content);

      for (guint i = 0; i < json_array_get_length (blocks); i++)
        {
          JsonObject *block = mend_http_block_at (blocks, i);
          const char *type = mend_json_get_string (block, "type");
          const char *value = mend_json_get_string (block, "text");

          if (value != NULL && (g_strcmp0 (type, "text") == 0 || g_strcmp0 (type, "tool_result") == 0))
            func (value, data);
          else if (g_strcmp0 (type, "tool_result") == 0)
            content_pieces (json_object_get_member (block, "content"), func, data);
        }
    }
}

/* Pieces of text a format takes as one string stay apart, a blank line
 * between them: two prompts (one that gave up, and the next) are never
 * glued into one sentence. */
static void
append_piece (const char *piece,
              gpointer    data)
{
  GString *text = data;

  if (piece[0] == '\0')
    return;
  if (text->len > 0)
    g_string_append (text, "\n\n");
  g_string_append (text, piece);
}

static char *
content_text (JsonNode *content)
{
  GString *text = g_string_new (NULL);

  content_pieces (content, append_piece, text);
  return g_string_free (text, FALSE);
}

typedef struct
{
  const char *first;
  guint       n;
} Pieces;

static void
count_piece (const char *piece,
             gpointer    data)
{
  Pieces *pieces = data;

  if (piece[0] == '\0')
    return;
  if (pieces->n++ == 0)
    pieces->first = piece;
}

gboolean
mend_http_write_content_text (GString  *out,
                              JsonNode *content,
                              gboolean  empty_too)
{
  Pieces pieces = { "", 0 };
  g_autofree char *text = NULL;

  /* One piece, the common case, is written as it is, not copied first. */
  content_pieces (content, count_piece, &pieces);
  if (pieces.n == 0 && !empty_too)
    return FALSE;
  if (pieces.n <= 1)
    mend_json_write_string (out, pieces.first);
  else
    {
      text = content_text (content);
      mend_json_write_string (out, text);
    }
  return TRUE;
}

gboolean
mend_http_dialect_scan (const MendHttpDialectClass *wire,
                        MendHttpAnswer             *answer,
                        MendJsonTemplate           *memo,
                        const char                 *name,
                        const char                 *data,
                        gsize                       length,
                        GString                    *scratch,
                        MendHttpEvent              *event,
                        const char                **text)
{
  guint tag;

  if (mend_json_template_match (memo, name, data, length, scratch, &tag))
    {
      *event = wire->replay_text (answer, tag, scratch->str, text);
      return TRUE;
    }
  return wire->scan_event (answer, name, data, length, scratch, memo, event, text);
}
