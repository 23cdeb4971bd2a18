/* mend-stream-text.c — the model's text in a stream-json line
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/* memmem () */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include "config.h"

#include <string.h>

#include "mend-json-private.h"
#include "mend-stream-text-private.h"

/* What a line that carries text names, in quotes: a delta's type, or
 * the message's. Its type is read from the parse, whatever the line's
 * spacing and the order of its members. */
#define TEXT_DELTA "\"text_delta\""
#define ASSISTANT "\"assistant\""

static JsonArray *
get_array (JsonObject *object,
           const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  return node != NULL && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

static gboolean
get_true (JsonObject *object,
          const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_BOOLEAN && json_node_get_boolean (node);
}

/* A text delta of a streamed content block. */
static char *
delta_text (JsonObject *root)
{
  JsonObject *event = mend_json_get_object (root, "event");
  JsonObject *delta = event != NULL ? mend_json_get_object (event, "delta") : NULL;

  if (delta == NULL || g_strcmp0 (mend_json_get_string (event, "type"), "content_block_delta") != 0 ||
      g_strcmp0 (mend_json_get_string (delta, "type"), "text_delta") != 0)
    return NULL;
  return g_strdup (mend_json_get_string (delta, "text"));
}

/* The text blocks of an assistant message of the model's (not one the
 * CLI made to report an error). */
static char *
message_text (JsonObject *root)
{
  JsonObject *message = mend_json_get_object (root, "message");
  JsonArray *content;
  GString *text;

  if (message == NULL || g_strcmp0 (mend_json_get_string (message, "model"), "<synthetic>") == 0 ||
      get_true (root, "is_api_error_message"))
    return NULL;

  content = get_array (message, "content");
  if (content == NULL)
    return NULL;

  text = g_string_new (NULL);
  for (guint i = 0; i < json_array_get_length (content); i++)
    {
      JsonNode *node = json_array_get_element (content, i);
      JsonObject *block = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      const char *piece;

      if (block == NULL || g_strcmp0 (mend_json_get_string (block, "type"), "text") != 0)
        continue;
      piece = mend_json_get_string (block, "text");
      if (piece != NULL)
        g_string_append (text, piece);
    }
  return g_string_free (text, text->len == 0);
}

char *
mend_stream_text_from_line (const char *line,
                            gsize       length,
                            gboolean   *is_delta)
{
  g_autoptr(JsonNode) root = NULL;
  const char *type;
  gboolean delta;

  *is_delta = FALSE;
  /* Only deltas that carry text are parsed: not the other events. */
  if (memmem (line, length, TEXT_DELTA, strlen (TEXT_DELTA)) == NULL &&
      memmem (line, length, ASSISTANT, strlen (ASSISTANT)) == NULL)
    return NULL;

  root = mend_json_parse (line, length, NULL);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  type = mend_json_get_string (json_node_get_object (root), "type");
  delta = g_strcmp0 (type, "stream_event") == 0;
  if (!delta && g_strcmp0 (type, "assistant") != 0)
    return NULL;
  /* A subagent's text is its own, not the answer. */
  if (mend_json_get_string (json_node_get_object (root), "parent_tool_use_id") != NULL)
    return NULL;

  *is_delta = delta;
  return delta ? delta_text (json_node_get_object (root)) : message_text (json_node_get_object (root));
}
