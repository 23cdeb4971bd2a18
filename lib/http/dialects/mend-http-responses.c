/* mend-http-responses.c — the OpenAI Responses API, as MendHttpSender speaks it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * After https://platform.openai.com/docs/api-reference/responses and its
 * streaming events. The request: {"model","max_output_tokens","stream":true,
 * "input":[…]}, each message {"role","content"} with its text, an
 * assistant's tool calls as items {"type":"function_call","call_id",
 * "name","arguments"} and their results as {"type":"function_call_output",
 * "call_id","output"}. The answer: typed events, each output item by its
 * output_index — response.output_text.delta (text),
 * response.output_item.added and response.function_call_arguments.delta
 * (a tool call) — ending with response.completed or response.incomplete
 * (complete, with what came), response.failed or an `error` event (a
 * failure, its error object inside); there is no [DONE]. Or one JSON
 * body, {"output":[…],"status"}.
 */

#include "config.h"

#include <string.h>

#include "mend-http-dialect-private.h"
#include "mend-json-private.h"
#include "mend-json-scan-private.h"

/* A tool call or its result, an item of its own after @start: @head
 * ({"type":…,"call_id":), @id, "name":@name if any, then @value_name
 * (,"…":), for its value and "}" to follow. */
static void
begin_tool_item (GString    *out,
                 gsize       start,
                 const char *head,
                 const char *id,
                 const char *name,
                 const char *value_name)
{
  mend_http_begin_item (out, start);
  g_string_append (out, head);
  mend_json_write_string (out, id);
  if (name != NULL)
    {
      g_string_append (out, ",\"name\":");
      mend_json_write_string (out, name);
    }
  g_string_append (out, value_name);
}

static void
responses_write_frame (const char *model,
                       guint       max_tokens,
                       GString    *head,
                       GString    *tail)
{
  mend_http_write_streamed_frame (model, "max_output_tokens", max_tokens, FALSE, "input", head, tail);
}

static void
responses_write_message (GString              *out,
                         JsonObject           *message,
                         MendTranscriptLookup *lookup)
{
  const char *role = mend_json_get_string (message, "role");
  JsonNode *content = json_object_get_member (message, "content");
  JsonArray *blocks = content != NULL && JSON_NODE_HOLDS_ARRAY (content) ? json_node_get_array (content) : NULL;
  gsize start = out->len;
  gsize items;

  if (role == NULL)
    return;

  /* Tool results and tool calls are items of their own. */
  for (guint i = 0; blocks != NULL && i < json_array_get_length (blocks); i++)
    {
      JsonObject *block = mend_http_block_at (blocks, i);
      const char *id = mend_json_get_string (block, "tool_use_id");

      if (g_strcmp0 (mend_json_get_string (block, "type"), "tool_result") == 0 && id != NULL)
        {
          begin_tool_item (out, start, "{\"type\":\"function_call_output\",\"call_id\":", id, NULL, ",\"output\":");
          mend_http_write_content_text (out, json_object_get_member (block, "content"), TRUE);
          g_string_append_c (out, '}');
        }
    }

  /* The message's words, unless it was results alone. */
  items = out->len;
  mend_http_begin_item (out, start);
  g_string_append (out, "{\"role\":");
  mend_json_write_string (out, role);
  g_string_append (out, ",\"content\":");
  if (mend_http_write_content_text (out, content, items == start))
    g_string_append_c (out, '}');
  else
    g_string_truncate (out, items);

  for (guint i = 0; blocks != NULL && g_str_equal (role, "assistant") && i < json_array_get_length (blocks); i++)
    {
      JsonObject *block = mend_http_block_at (blocks, i);
      const char *id = mend_json_get_string (block, "id");
      const char *name = mend_json_get_string (block, "name");
      g_autofree char *arguments = NULL;

      if (g_strcmp0 (mend_json_get_string (block, "type"), "tool_use") != 0 || id == NULL || name == NULL)
        continue;
      arguments = mend_http_tool_arguments (block);
      begin_tool_item (out, start, "{\"type\":\"function_call\",\"call_id\":", id, name, ",\"arguments\":");
      mend_json_write_string (out, arguments);
      g_string_append_c (out, '}');
    }
}

/* The event's output_index, or -1. */
static gint64
output_index (JsonObject *event)
{
  JsonNode *node = json_object_get_member (event, "output_index");

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64)
    return -1;
  return json_node_get_int (node);
}

/* An output item: a function call is content; a message's text comes in
 * its deltas (or, read whole, in its output_text parts). */
static gboolean
read_item (MendHttpAnswer  *answer,
           gint64           index,
           JsonObject      *item,
           gboolean         whole,
           const char     **text)
{
  const char *type = mend_json_get_string (item, "type");

  if (index < 0 || index >= G_MAXINT32)
    return FALSE;
  /* A call past the blocks kept is no output. */
  if (g_strcmp0 (type, "function_call") == 0)
    return mend_http_answer_add_tool_call (answer, (guint) index,
                                           mend_json_get_string (item, "call_id"),
                                           mend_json_get_string (item, "name"),
                                           mend_json_get_string (item, "arguments"));
  if (whole && g_strcmp0 (type, "message") == 0)
    {
      JsonNode *content = json_object_get_member (item, "content");
      JsonArray *parts = content != NULL && JSON_NODE_HOLDS_ARRAY (content) ? json_node_get_array (content) : NULL;
      gboolean any = FALSE;

      for (guint i = 0; parts != NULL && i < json_array_get_length (parts); i++)
        {
          JsonObject *part = mend_http_block_at (parts, i);
          const char *part_type = mend_json_get_string (part, "type");
          /* A refusal is the answer's text too. */
          const char *words = g_strcmp0 (part_type, "output_text") == 0 ? mend_json_get_string (part, "text")
                              : g_strcmp0 (part_type, "refusal") == 0 ? mend_json_get_string (part, "refusal")
                              : NULL;

          if (mend_http_answer_add_text (answer, (guint) index, words, NULL) != NULL)
            any = TRUE;
        }
      return any;
    }
  return FALSE;
}

static MendHttpEvent
responses_read_event (MendHttpAnswer *answer,
                      const char     *name,
                      const char     *data,
                      gsize           length,
                      JsonObject     *event,
                      const char    **text)
{
  const char *type = event != NULL ? mend_json_get_string (event, "type") : NULL;
  gint64 index;

  if (type == NULL)
    type = name;
  if (g_strcmp0 (type, "error") == 0 || g_strcmp0 (type, "response.failed") == 0)
    return MEND_HTTP_EVENT_ERROR;
  if (event == NULL)
    return MEND_HTTP_EVENT_OTHER;
  if (g_strcmp0 (type, "response.completed") == 0 || g_strcmp0 (type, "response.incomplete") == 0)
    {
      mend_http_answer_set_stop_reason (answer, type + strlen ("response."));
      return MEND_HTTP_EVENT_END;
    }

  index = output_index (event);
  /* A refusal is the model's answer too, in words of its own. */
  if ((g_strcmp0 (type, "response.output_text.delta") == 0 || g_strcmp0 (type, "response.refusal.delta") == 0) &&
      index >= 0 && index < G_MAXINT32)
    {
      *text = mend_http_answer_add_text (answer, (guint) index, mend_json_get_string (event, "delta"), NULL);
      return *text != NULL ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
    }
  if (g_strcmp0 (type, "response.output_item.added") == 0)
    return read_item (answer, index, mend_json_get_object (event, "item"), FALSE, text)
           ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
  if (g_strcmp0 (type, "response.function_call_arguments.delta") == 0 && index >= 0 && index < G_MAXINT32)
    return mend_http_answer_add_tool_call (answer, (guint) index, NULL, NULL, mend_json_get_string (event, "delta"))
           ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;

  return MEND_HTTP_EVENT_OTHER;
}

/* {"type":"response.output_text.delta","output_index":N,"delta":"…"},
 * in any order, other members skipped. */
static gboolean
responses_scan_event (MendHttpAnswer   *answer,
                      const char       *name,
                      const char       *data,
                      gsize             length,
                      GString          *scratch,
                      MendJsonTemplate *memo,
                      MendHttpEvent    *event,
                      const char      **text)
{
  gboolean first = TRUE, type = FALSE, has_index = FALSE, delta = FALSE;
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
          if (type || !mend_json_scan_string_is (&scan, "response.output_text.delta"))
            return FALSE;
          type = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "output_index"))
        {
          if (has_index || !mend_json_scan_index (&scan, &index))
            return FALSE;
          has_index = TRUE;
        }
      else if (MEND_JSON_SCAN_KEY_IS (key, n, "delta"))
        {
          if (delta || !mend_json_scan_string (&scan, scratch))
            return FALSE;
          delta = TRUE;
        }
      else if (!mend_json_scan_skip (&scan))
        return FALSE;
    }
  if (step != MEND_JSON_SCAN_DONE || !type || !has_index || !delta || !mend_json_scan_end (&scan))
    return FALSE;

  *text = mend_http_answer_add_text (answer, index, scratch->str, NULL);
  *event = *text != NULL ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
  mend_json_template_keep (memo, &scan, name, index);
  return TRUE;
}

static MendHttpEvent
responses_replay_text (MendHttpAnswer *answer,
                       guint           index,
                       const char     *scratch,
                       const char    **text)
{
  *text = mend_http_answer_add_text (answer, index, scratch, NULL);
  return *text != NULL ? MEND_HTTP_EVENT_CONTENT : MEND_HTTP_EVENT_OTHER;
}

static MendHttpEvent
responses_read_whole (MendHttpAnswer *answer,
                      JsonNode       *root)
{
  JsonObject *object = root != NULL && JSON_NODE_HOLDS_OBJECT (root) ? json_node_get_object (root) : NULL;
  JsonNode *output;
  JsonArray *items;
  const char *text;

  if (object == NULL)
    return MEND_HTTP_EVENT_OTHER;
  if (mend_http_has_error (object) || g_strcmp0 (mend_json_get_string (object, "status"), "failed") == 0)
    return MEND_HTTP_EVENT_ERROR;
  output = json_object_get_member (object, "output");
  if (output == NULL || !JSON_NODE_HOLDS_ARRAY (output))
    return MEND_HTTP_EVENT_OTHER;
  items = json_node_get_array (output);
  for (guint i = 0; i < json_array_get_length (items); i++)
    {
      JsonObject *item = mend_http_block_at (items, i);

      if (item != NULL)
        read_item (answer, i, item, TRUE, &text);
    }
  mend_http_answer_set_stop_reason (answer, mend_json_get_string (object, "status"));
  return MEND_HTTP_EVENT_END;
}

const MendHttpDialectClass mend_http_dialect_responses = {
  .dialect = MEND_HTTP_DIALECT_RESPONSES,
  .shape = 2,
  .write_frame = responses_write_frame,
  .write_message = responses_write_message,
  /* A prompt alone, as write_message () writes it. */
  .write_prompt = { "{\"role\":\"user\",\"content\":", "}" },
  .read_event = responses_read_event,
  .scan_event = responses_scan_event,
  .replay_text = responses_replay_text,
  .read_whole = responses_read_whole,
};
