/* mend-http-messages.c — the Anthropic Messages API, as MendHttpSender speaks it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The request: {"model","max_tokens","stream":true,"messages":[…]}, the
 * messages as the transcript keeps them. The answer: content_block_start
 * and content_block_delta events per block index, message_stop at the
 * end, an `error` event for a failure inside the stream
 * (https://docs.anthropic.com/en/api/messages-streaming); or one JSON
 * body, {"content":[…]}.
 */

#include "config.h"

#include <string.h>

#include "mend-http-dialect-private.h"
#include "mend-json-private.h"
#include "mend-json-scan-private.h"

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
mend_http_append_items (GString     *out,
                        JsonBuilder *builder)
{
  g_autofree char *text = mend_json_builder_finish (builder);
  gsize length = strlen (text);

  /* "[a,b]": the items, without their brackets. */
  g_assert (length >= 2 && text[0] == '[' && text[length - 1] == ']');
  g_string_append_len (out, text + 1, length - 2);
}

gboolean
mend_http_plain_message (JsonObject  *message,
                         const char **role,
                         char       **text)
{
  JsonNode *content = json_object_get_member (message, "content");

  *role = mend_json_get_string (message, "role");
  if (g_strcmp0 (*role, "user") != 0 && g_strcmp0 (*role, "assistant") != 0)
    return FALSE;
  if (content == NULL ||
      !(JSON_NODE_HOLDS_ARRAY (content) ||
        (JSON_NODE_HOLDS_VALUE (content) && json_node_get_value_type (content) == G_TYPE_STRING)))
    return FALSE;
  if (JSON_NODE_HOLDS_ARRAY (content))
    {
      JsonArray *blocks = json_node_get_array (content);

      for (guint i = 0; i < json_array_get_length (blocks); i++)
        {
          const char *type = mend_json_get_string (mend_http_block_at (blocks, i), "type");

          if (g_strcmp0 (type, "tool_use") == 0 || g_strcmp0 (type, "tool_result") == 0)
            return FALSE;
        }
    }
  *text = mend_http_content_text (content);
  return TRUE;
}

void
mend_http_write_role_message (GString            *out,
                              JsonObject         *message,
                              MendHttpAddMessage  add)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autofree char *text = NULL;
  const char *role;

  /* Text alone, as @add writes it, without a builder. */
  if (mend_http_plain_message (message, &role, &text))
    {
      g_string_append (out, g_str_equal (role, "user") ? "{\"role\":\"user\",\"content\":"
                                                       : "{\"role\":\"assistant\",\"content\":");
      mend_json_write_string (out, text);
      g_string_append_c (out, '}');
      return;
    }

  builder = json_builder_new_immutable ();
  json_builder_begin_array (builder);
  add (builder, message);
  json_builder_end_array (builder);
  mend_http_append_items (out, builder);
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

static void
messages_write_frame (const char *model,
                      guint       max_tokens,
                      GString    *head,
                      GString    *tail)
{
  mend_http_write_streamed_frame (model, "max_tokens", max_tokens, FALSE, "messages", head, tail);
}

static MendHttpEvent
messages_read_event (MendHttpAnswer *answer,
                     const char     *name,
                     const char     *data,
                     gsize           length,
                     JsonObject     *event,
                     const char    **text)
{
  const char *type = name;
  /* An event that is not read is taken for the model's, as it came. */
  gboolean kept = TRUE;

  if (event != NULL && mend_json_get_string (event, "type") != NULL)
    {
      type = mend_json_get_string (event, "type");
      kept = mend_http_answer_feed_event (answer, event, text);
    }

  if (g_strcmp0 (type, "error") == 0)
    return MEND_HTTP_EVENT_ERROR;
  if (g_strcmp0 (type, "message_stop") == 0)
    return MEND_HTTP_EVENT_END;
  /* A block past those kept, or a delta no block took, is no output. */
  if (g_strcmp0 (type, "content_block_delta") == 0 ||
      g_strcmp0 (type, "content_block_start") == 0)
    return kept ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
  return MEND_HTTP_EVENT_OTHER;
}

/* {"type":"text_delta","text":"…"}: its text in @scratch. */
static gboolean
scan_text_delta (MendJsonScan *scan,
                 GString      *scratch)
{
  gboolean first = TRUE, type = FALSE, text = FALSE;
  MendJsonScanStep step;
  const char *key;
  gsize n;

  if (!mend_json_scan_char (scan, '{'))
    return FALSE;
  while ((step = mend_json_scan_member (scan, &first, &key, &n)) == MEND_JSON_SCAN_NEXT)
    {
      if (MEND_JSON_SCAN_KEY_IS (key, n, "type"))
        {
          if (type || !mend_json_scan_string_is (scan, "text_delta"))
            return FALSE;
          type = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "text"))
        {
          if (text || !mend_json_scan_string (scan, scratch))
            return FALSE;
          text = TRUE;
        }
      else if (!mend_json_scan_skip (scan))
        return FALSE;
    }
  return step == MEND_JSON_SCAN_DONE && type && text;
}

/* {"type":"content_block_delta","index":N,"delta":{"type":"text_delta",
 * "text":"…"}}, its members in any order, others skipped. */
static gboolean
messages_scan_event (MendHttpAnswer *answer,
                     const char     *name,
                     const char     *data,
                     gsize           length,
                     GString        *scratch,
                     MendHttpEvent  *event,
                     const char    **text)
{
  gboolean first = TRUE, type = FALSE, has_index = FALSE, delta = FALSE, kept;
  MendJsonScanStep step;
  MendJsonScan scan;
  const char *key;
  guint index = 0;
  gsize n;

  g_string_truncate (scratch, 0);
  mend_json_scan_init (&scan, data, length);
  if (!mend_json_scan_char (&scan, '{'))
    return FALSE;
  while ((step = mend_json_scan_member (&scan, &first, &key, &n)) == MEND_JSON_SCAN_NEXT)
    {
      if (MEND_JSON_SCAN_KEY_IS (key, n, "type"))
        {
          if (type || !mend_json_scan_string_is (&scan, "content_block_delta"))
            return FALSE;
          type = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "index"))
        {
          if (has_index || !mend_json_scan_index (&scan, &index))
            return FALSE;
          has_index = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "delta"))
        {
          if (delta || !scan_text_delta (&scan, scratch))
            return FALSE;
          delta = TRUE;
        }
      else if (!mend_json_scan_skip (&scan))
        return FALSE;
    }
  if (step != MEND_JSON_SCAN_DONE || !type || !has_index || !delta || !mend_json_scan_end (&scan))
    return FALSE;

  *text = mend_http_answer_add_text (answer, index, scratch->str, &kept);
  *event = kept ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
  return TRUE;
}

static MendHttpEvent
messages_read_whole (MendHttpAnswer *answer,
                     JsonNode       *root)
{
  JsonObject *object = root != NULL && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;

  if (g_strcmp0 (mend_json_get_string (object, "type"), "error") == 0 || mend_http_has_error (object))
    return MEND_HTTP_EVENT_ERROR;
  return mend_http_answer_read_message (answer, root) ? MEND_HTTP_EVENT_END : MEND_HTTP_EVENT_OTHER;
}

const MendHttpDialectClass mend_http_dialect_messages = {
  .dialect = MEND_HTTP_DIALECT_MESSAGES,
  /* The messages as the transcript keeps them. */
  .shape = MEND_TRANSCRIPT_SHAPE_OWN,
  .write_frame = messages_write_frame,
  .read_event = messages_read_event,
  .scan_event = messages_scan_event,
  .read_whole = messages_read_whole,
};

const MendHttpDialectClass *
mend_http_dialect_lookup (MendHttpDialect  dialect,
                          const char      *uri)
{
  g_autoptr(GUri) parsed = NULL;
  const char *path;

  switch (dialect)
    {
    case MEND_HTTP_DIALECT_MESSAGES:
      return &mend_http_dialect_messages;
    case MEND_HTTP_DIALECT_CHAT_COMPLETIONS:
      return &mend_http_dialect_chat_completions;
    case MEND_HTTP_DIALECT_RESPONSES:
      return &mend_http_dialect_responses;
    case MEND_HTTP_DIALECT_GEMINI:
      return &mend_http_dialect_gemini;
    case MEND_HTTP_DIALECT_AUTO:
    default:
      break;
    }

  /* By the endpoint's path, as the providers name them. */
  parsed = uri != NULL ? g_uri_parse (uri, G_URI_FLAGS_NONE, NULL) : NULL;
  path = parsed != NULL ? g_uri_get_path (parsed) : "";
  if (g_str_has_suffix (path, "/chat/completions"))
    return &mend_http_dialect_chat_completions;
  if (g_str_has_suffix (path, "/responses"))
    return &mend_http_dialect_responses;
  if (g_str_has_suffix (path, ":streamGenerateContent") || g_str_has_suffix (path, ":generateContent"))
    return &mend_http_dialect_gemini;
  return &mend_http_dialect_messages;
}
