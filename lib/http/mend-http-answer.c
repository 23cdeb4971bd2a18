/* mend-http-answer.c — the assistant's message, put together from a Messages API answer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The assistant's message of one attempt, from a Messages stream
 * (content_block_start, then deltas, per block index) or a whole JSON
 * answer. What is kept is bounded by what the sender reads: its caps on
 * the body, on a line and on an event.
 */

#include "config.h"

#include <string.h>

#include "mend-http-answer-private.h"
#include "mend-json-private.h"
#include "mend-string-private.h"

/* A stream may name any block index: beyond this one, blocks are not kept. */
#define MAX_BLOCKS 1024

typedef struct
{
  JsonObject *start;      /* the block as content_block_start gave it, or NULL */
  char       *type;
  GString    *text;       /* text or thinking, with its deltas */
  GString    *json;       /* a tool call's input, from input_json_delta */
  char       *signature;
  char       *call_id;    /* a tool call's id and name, kept until both came */
  char       *call_name;
} Block;

struct _MendHttpAnswer
{
  GPtrArray *blocks;      /* Block*, by index; NULL where none started */
  GArray    *calls;       /* gint: the block of each tool call a stream numbers, or -1 */
  JsonNode  *content;     /* a whole answer's content array */
  GString   *text;
  char      *stop_reason;
  char      *piece;       /* the last text piece given by add_text_copy () */
};

static void
block_free (Block *block)
{
  if (block == NULL)
    return;
  g_clear_pointer (&block->start, json_object_unref);
  g_free (block->type);
  if (block->text != NULL)
    g_string_free (block->text, TRUE);
  if (block->json != NULL)
    g_string_free (block->json, TRUE);
  g_free (block->signature);
  g_free (block->call_id);
  g_free (block->call_name);
  g_free (block);
}

MendHttpAnswer *
mend_http_answer_new (void)
{
  MendHttpAnswer *self = g_new0 (MendHttpAnswer, 1);

  self->blocks = g_ptr_array_new_with_free_func ((GDestroyNotify) block_free);
  self->calls = g_array_new (FALSE, FALSE, sizeof (gint));
  self->text = g_string_new (NULL);
  return self;
}

void
mend_http_answer_free (MendHttpAnswer *self)
{
  if (self == NULL)
    return;
  g_ptr_array_unref (self->blocks);
  g_array_unref (self->calls);
  g_clear_pointer (&self->content, json_node_unref);
  g_string_free (self->text, TRUE);
  g_free (self->stop_reason);
  g_free (self->piece);
  g_free (self);
}

/* The block at @index; made, of @type, when @type is given and none
 * started there. */
static Block *
get_block_at (MendHttpAnswer *self,
              gint64          index,
              const char     *type)
{
  Block *block;

  if (index < 0 || index >= MAX_BLOCKS)
    return NULL;

  if ((guint) index >= self->blocks->len)
    g_ptr_array_set_size (self->blocks, index + 1);
  block = g_ptr_array_index (self->blocks, index);
  if (block == NULL && type != NULL)
    {
      block = g_new0 (Block, 1);
      block->type = g_strdup (type);
      g_ptr_array_index (self->blocks, index) = block;
    }

  return block;
}

/* The block at the event's index. */
static Block *
get_block (MendHttpAnswer *self,
           JsonObject     *event,
           const char     *type)
{
  JsonNode *node = json_object_get_member (event, "index");

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_INT64)
    return NULL;
  return get_block_at (self, json_node_get_int (node), type);
}

static void
append (GString   **string,
        const char *text)
{
  if (*string == NULL)
    *string = g_string_new (NULL);
  g_string_append (*string, text);
}

static const char *
start_block (MendHttpAnswer *self,
             JsonObject     *event,
             gboolean       *kept)
{
  JsonObject *content = mend_json_get_object (event, "content_block");
  const char *type = mend_json_get_string (content, "type");
  const char *text;
  Block *block;

  if (type == NULL)
    return NULL;

  /* A block starts once; deltas that came first keep its type. */
  block = get_block (self, event, type);
  if (block == NULL || block->start != NULL || !g_str_equal (block->type, type))
    return NULL;
  block->start = json_object_ref (content);
  *kept = TRUE;

  text = mend_json_get_string (content, g_str_equal (type, "thinking") ? "thinking" : "text");
  if (text != NULL && (g_str_equal (type, "text") || g_str_equal (type, "thinking")))
    {
      append (&block->text, text);
      if (g_str_equal (type, "text") && text[0] != '\0')
        return text;
    }

  return NULL;
}

static const char *
add_delta (MendHttpAnswer *self,
           JsonObject     *event,
           gboolean       *kept)
{
  JsonObject *delta = mend_json_get_object (event, "delta");
  const char *type = mend_json_get_string (delta, "type");
  const char *value;
  Block *block;

  if (g_strcmp0 (type, "text_delta") == 0 &&
      (value = mend_json_get_string (delta, "text")) != NULL &&
      (block = get_block (self, event, "text")) != NULL &&
      g_str_equal (block->type, "text"))
    {
      append (&block->text, value);
      *kept = TRUE;
      return value[0] != '\0' ? value : NULL;
    }

  if (g_strcmp0 (type, "input_json_delta") == 0 &&
      (value = mend_json_get_string (delta, "partial_json")) != NULL &&
      (block = get_block (self, event, NULL)) != NULL)
    {
      append (&block->json, value);
      *kept = TRUE;
    }
  else if (g_strcmp0 (type, "thinking_delta") == 0 &&
           (value = mend_json_get_string (delta, "thinking")) != NULL &&
           (block = get_block (self, event, "thinking")) != NULL &&
           g_str_equal (block->type, "thinking"))
    {
      append (&block->text, value);
      *kept = TRUE;
    }
  else if (g_strcmp0 (type, "signature_delta") == 0 &&
           (value = mend_json_get_string (delta, "signature")) != NULL &&
           (block = get_block (self, event, NULL)) != NULL)
    {
      g_free (block->signature);
      block->signature = g_strdup (value);
      *kept = TRUE;
    }

  return NULL;
}

gboolean
mend_http_answer_feed_event (MendHttpAnswer  *self,
                             JsonObject      *event,
                             const char     **text)
{
  const char *type = mend_json_get_string (event, "type");
  gboolean kept = FALSE;

  g_assert (self != NULL);

  *text = NULL;
  if (g_strcmp0 (type, "content_block_start") == 0)
    *text = start_block (self, event, &kept);
  else if (g_strcmp0 (type, "content_block_delta") == 0)
    *text = add_delta (self, event, &kept);

  /* The message's text is what was emitted, in the order it was. */
  if (*text != NULL)
    g_string_append (self->text, *text);

  return kept;
}

const char *
mend_http_answer_add_text (MendHttpAnswer *self,
                           guint           index,
                           const char     *text,
                           gboolean       *kept)
{
  Block *block;
  gsize length;

  g_assert (self != NULL);

  if (kept != NULL)
    *kept = FALSE;
  if (text == NULL || (block = get_block_at (self, index, "text")) == NULL ||
      !g_str_equal (block->type, "text"))
    return NULL;
  /* Every text delta: the two appends without their calls. */
  length = strlen (text);
  if (block->text == NULL)
    block->text = g_string_new (NULL);
  mend_string_append_len (block->text, text, length);
  if (kept != NULL)
    *kept = TRUE;
  if (length == 0)
    return NULL;
  mend_string_append_len (self->text, text, length);
  return text;
}

const char *
mend_http_answer_add_text_after (MendHttpAnswer *self,
                                 const char     *text,
                                 gboolean       *kept)
{
  guint last = self->blocks->len;
  Block *block = NULL;

  g_assert (self != NULL);

  while (last > 0 && (block = g_ptr_array_index (self->blocks, last - 1)) == NULL)
    last--;
  /* The text block there is, or one after the tool call: never an empty
   * one there. */
  if (last == 0 || g_str_equal (block->type, "text"))
    return mend_http_answer_add_text (self, last > 0 ? last - 1 : 0, text, kept);
  if (kept != NULL)
    *kept = FALSE;
  if (text == NULL || text[0] == '\0')
    return NULL;
  return mend_http_answer_add_text (self, self->blocks->len, text, kept);
}

const char *
mend_http_answer_add_text_copy (MendHttpAnswer *self,
                                guint           index,
                                const char     *text,
                                gboolean       *kept)
{
  g_assert (self != NULL);

  g_free (self->piece);
  self->piece = g_strdup (text);
  return mend_http_answer_add_text (self, index, self->piece, kept);
}

gint
mend_http_answer_call_block (MendHttpAnswer *self,
                             guint           key)
{
  g_assert (self != NULL);

  if (key >= MAX_BLOCKS)
    return -1;
  while (self->calls->len <= key)
    {
      gint none = -1;

      g_array_append_val (self->calls, none);
    }
  /* A call first seen goes after the blocks so far (never at block 0,
   * the text's when it comes first). */
  if (g_array_index (self->calls, gint, key) < 0)
    g_array_index (self->calls, gint, key) = MAX (self->blocks->len, 1);
  return g_array_index (self->calls, gint, key);
}

guint
mend_http_answer_get_n_blocks (MendHttpAnswer *self)
{
  g_assert (self != NULL);

  return self->blocks->len;
}

gboolean
mend_http_answer_add_tool_call (MendHttpAnswer *self,
                                guint           index,
                                const char     *id,
                                const char     *name,
                                const char     *arguments)
{
  Block *block;

  g_assert (self != NULL);

  if ((block = get_block_at (self, index, "tool_use")) == NULL || !g_str_equal (block->type, "tool_use"))
    return FALSE;
  /* The id and the name may come in chunks of their own. */
  if (block->call_id == NULL && id != NULL && id[0] != '\0')
    block->call_id = g_strdup (id);
  if (block->call_name == NULL && name != NULL && name[0] != '\0')
    block->call_name = g_strdup (name);
  if (block->start == NULL && block->call_id != NULL && block->call_name != NULL)
    {
      block->start = json_object_new ();
      json_object_set_string_member (block->start, "type", "tool_use");
      json_object_set_string_member (block->start, "id", block->call_id);
      json_object_set_string_member (block->start, "name", block->call_name);
      json_object_set_object_member (block->start, "input", json_object_new ());
    }
  if (arguments != NULL)
    append (&block->json, arguments);
  return TRUE;
}

void
mend_http_answer_set_stop_reason (MendHttpAnswer *self,
                                  const char     *reason)
{
  g_assert (self != NULL);

  g_free (self->stop_reason);
  self->stop_reason = g_strdup (reason);
}

const char *
mend_http_answer_get_stop_reason (MendHttpAnswer *self)
{
  g_assert (self != NULL);

  return self->stop_reason;
}

gboolean
mend_http_answer_is_empty (MendHttpAnswer *self)
{
  g_assert (self != NULL);

  if (self->content != NULL)
    return json_array_get_length (json_node_get_array (self->content)) == 0;
  for (guint i = 0; i < self->blocks->len; i++)
    {
      Block *block = g_ptr_array_index (self->blocks, i);

      if (block != NULL && (block->start != NULL || (block->text != NULL && block->text->len > 0)))
        return FALSE;
    }
  return TRUE;
}

gboolean
mend_http_answer_read_message (MendHttpAnswer *self,
                               JsonNode       *root)
{
  JsonNode *content;

  g_assert (self != NULL);

  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return FALSE;
  content = json_object_get_member (json_node_get_object (root), "content");
  if (content == NULL || !JSON_NODE_HOLDS_ARRAY (content))
    return FALSE;

  g_clear_pointer (&self->content, json_node_unref);
  g_ptr_array_set_size (self->blocks, 0);
  self->content = json_node_ref (content);

  g_string_truncate (self->text, 0);
  for (guint i = 0; i < json_array_get_length (json_node_get_array (content)); i++)
    {
      JsonNode *element = json_array_get_element (json_node_get_array (content), i);
      JsonObject *block = JSON_NODE_HOLDS_OBJECT (element) ? json_node_get_object (element) : NULL;
      const char *text = mend_json_get_string (block, "text");

      if (g_strcmp0 (mend_json_get_string (block, "type"), "text") == 0 && text != NULL)
        g_string_append (self->text, text);
    }

  return TRUE;
}

const char *
mend_http_answer_get_text (MendHttpAnswer *self)
{
  g_assert (self != NULL);

  return self->text->str;
}

static void
build_block (JsonBuilder *builder,
             Block       *block)
{
  gboolean text = g_str_equal (block->type, "text");
  gboolean thinking = g_str_equal (block->type, "thinking");
  g_autoptr(JsonNode) input = NULL;

  /* The arguments as the model sent them: their JSON value, or the text
   * itself when it never formed one (a stream cut short, a slip); none
   * sent, or only spaces, is no argument ({}). */
  if (block->json != NULL && block->json->str[strspn (block->json->str, " \t\r\n")] != '\0')
    {
      input = mend_json_parse (block->json->str, block->json->len, NULL);
      if (input == NULL)
        input = json_node_init_string (json_node_alloc (), block->json->str);
    }

  json_builder_begin_object (builder);
  if (block->start == NULL)
    {
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, block->type);
    }
  else
    {
      g_autoptr(GList) members = json_object_get_members (block->start);

      for (GList *l = members; l != NULL; l = l->next)
        {
          const char *name = l->data;

          if ((text && g_str_equal (name, "text")) ||
              (thinking && (g_str_equal (name, "thinking") || g_str_equal (name, "signature"))) ||
              (input != NULL && g_str_equal (name, "input")))
            continue;
          json_builder_set_member_name (builder, name);
          json_builder_add_value (builder, json_node_copy (json_object_get_member (block->start, name)));
        }
    }

  if (text || thinking)
    {
      json_builder_set_member_name (builder, text ? "text" : "thinking");
      json_builder_add_string_value (builder, block->text ? block->text->str : "");
    }
  if (thinking)
    {
      const char *signature = block->signature;

      if (signature == NULL && block->start != NULL)
        signature = mend_json_get_string (block->start, "signature");
      json_builder_set_member_name (builder, "signature");
      json_builder_add_string_value (builder, signature ? signature : "");
    }
  if (input != NULL)
    {
      json_builder_set_member_name (builder, "input");
      json_builder_add_value (builder, g_steal_pointer (&input));
    }
  json_builder_end_object (builder);
}

JsonNode *
mend_http_answer_dup_content (MendHttpAnswer *self)
{
  g_autoptr(JsonBuilder) builder = NULL;
  guint n = 0;

  g_assert (self != NULL);

  if (self->content != NULL)
    return json_array_get_length (json_node_get_array (self->content)) > 0
           ? json_node_ref (self->content) : NULL;

  builder = json_builder_new ();
  json_builder_begin_array (builder);
  for (guint i = 0; i < self->blocks->len; i++)
    {
      Block *block = g_ptr_array_index (self->blocks, i);

      /* A tool call known only from deltas has no id to answer it by. */
      if (block == NULL || (block->start == NULL && !g_str_equal (block->type, "text") &&
                            !g_str_equal (block->type, "thinking")))
        continue;
      build_block (builder, block);
      n++;
    }
  json_builder_end_array (builder);

  return n > 0 ? json_builder_get_root (builder) : NULL;
}
