/* mend-transcript-entry.c — a transcript's messages, each written once per wire format
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A request body is the transcript's messages and the turn's, each in the
 * shape of the wire format. A message does not change once in the
 * transcript, so each is written once per shape and its text kept: a body
 * is then the texts spliced, what it costs to write its bytes.
 *
 * What a message becomes may depend on the messages before it (Gemini
 * names a tool result by the name of its call). Its text is then kept with
 * what it read: the oldest message it depended on (*dep*) and the first
 * message of the request it was written for (*built_from*). A transcript
 * only ever drops its oldest messages, appends new ones, or is replaced
 * (its entries then are new), so the messages before an entry, in any
 * request that holds it, run from the request's first message to it, and
 * a later request's first is no earlier. The text is good for a request
 * whose first message is no earlier than built_from (no message it did
 * not see is before it) and no later than dep (none it read is gone).
 */

#include "config.h"

#include <string.h>

#include "mend-json-private.h"
#include "mend-transcript-entry-private.h"

typedef struct
{
  char    *text;        /* NULL until written */
  gsize    length;
  gboolean lookups;     /* it read messages before it */
  guint64  built_from;  /* the first message of the request then */
  guint64  dep;         /* the oldest message it read, or G_MAXUINT64 */
} Shape;

struct _MendTranscriptEntry
{
  guint     ref;
  JsonNode *message;      /* NULL until asked for, when made from prompt */
  char     *prompt;       /* a user's prompt alone, or NULL */
  guint64   seq;
  Shape     shapes[MEND_TRANSCRIPT_N_SHAPES];
};

struct _MendTranscriptEntries
{
  guint      ref;
  GPtrArray *array;        /* MendTranscriptEntry* */
  /* Per shape: every entry written, none from the messages before it,
   * and their length joined: nothing to check for the next request. */
  gboolean   written[MEND_TRANSCRIPT_N_SHAPES];
  gsize      total[MEND_TRANSCRIPT_N_SHAPES];
};

struct _MendTranscriptRequest
{
  guint                  ref;
  MendTranscriptEntries *list;    /* the transcript's, never changed */
  MendTranscriptEntry   *user;    /* or NULL */
  guint64                first_seq; /* of the first, or G_MAXUINT64 */
};

/* Entry @i of @request, the user's last. */
static inline MendTranscriptEntry *
entry_at (MendTranscriptRequest *request,
          guint                  i)
{
  return i < request->list->array->len ? g_ptr_array_index (request->list->array, i) : request->user;
}

static inline guint
n_entries (MendTranscriptRequest *request)
{
  return request->list->array->len + (request->user != NULL ? 1 : 0);
}

struct _MendTranscriptLookup
{
  MendTranscriptRequest *request;
  guint                  index;
  gboolean               used;
  guint64                dep;
};

/* Entries: one thread only, the transcript's, so a plain count. */

MendTranscriptEntry *
mend_transcript_entry_new (JsonNode *message,
                           char     *own_json)
{
  MendTranscriptEntry *entry = g_new0 (MendTranscriptEntry, 1);

  entry->ref = 1;
  entry->message = json_node_ref (message);
  entry->seq = G_MAXUINT64;
  if (own_json != NULL)
    {
      entry->shapes[MEND_TRANSCRIPT_SHAPE_OWN].text = own_json;
      entry->shapes[MEND_TRANSCRIPT_SHAPE_OWN].length = strlen (own_json);
    }
  return entry;
}

MendTranscriptEntry *
mend_transcript_entry_new_prompt (const char *prompt)
{
  MendTranscriptEntry *entry = g_new0 (MendTranscriptEntry, 1);

  entry->ref = 1;
  entry->prompt = g_strdup (prompt);
  entry->seq = G_MAXUINT64;
  return entry;
}

MendTranscriptEntry *
mend_transcript_entry_ref (MendTranscriptEntry *entry)
{
  entry->ref++;
  return entry;
}

void
mend_transcript_entry_unref (MendTranscriptEntry *entry)
{
  if (entry == NULL || --entry->ref > 0)
    return;
  for (guint i = 0; i < MEND_TRANSCRIPT_N_SHAPES; i++)
    g_free (entry->shapes[i].text);
  g_clear_pointer (&entry->message, json_node_unref);
  g_free (entry->prompt);
  g_free (entry);
}

JsonNode *
mend_transcript_entry_get_message (MendTranscriptEntry *entry)
{
  if (entry->message == NULL)
    {
      JsonObject *object = json_object_new ();

      /* As a builder makes it. */
      json_object_set_string_member (object, "role", "user");
      json_object_set_string_member (object, "content", entry->prompt);
      entry->message = json_node_new (JSON_NODE_OBJECT);
      json_node_take_object (entry->message, object);
    }
  return entry->message;
}

void
mend_transcript_entry_set_seq (MendTranscriptEntry *entry,
                               guint64              seq)
{
  entry->seq = seq;
}

/* A text block as json-glib writes {"type":"text","text":…} and nothing
 * more, in that order. */
static const char *
plain_text_block (JsonNode *node)
{
  JsonObjectIter iter;
  const char *name;
  JsonNode *value;
  const char *text = NULL;
  guint i = 0;

  if (!JSON_NODE_HOLDS_OBJECT (node) || json_object_get_size (json_node_get_object (node)) != 2)
    return NULL;
  json_object_iter_init_ordered (&iter, json_node_get_object (node));
  while (json_object_iter_next_ordered (&iter, &name, &value))
    {
      gboolean string = JSON_NODE_HOLDS_VALUE (value) && json_node_get_value_type (value) == G_TYPE_STRING;

      if (!string)
        return NULL;
      if (i == 0 && !(g_str_equal (name, "type") && g_str_equal (json_node_get_string (value), "text")))
        return NULL;
      if (i == 1)
        {
          if (!g_str_equal (name, "text"))
            return NULL;
          text = json_node_get_string (value);
        }
      i++;
    }
  return text;
}

/* A user's message, {"role":"user","content":…} with text only, written
 * as json-glib writes it, without a builder or a generator: the turn's
 * own message, new in every request. FALSE for any other. */
static gboolean
write_plain_user (GString  *out,
                  JsonNode *message)
{
  JsonObject *object = JSON_NODE_HOLDS_OBJECT (message) ? json_node_get_object (message) : NULL;
  JsonObjectIter iter;
  const char *name;
  JsonNode *role = NULL;
  JsonNode *content = NULL;
  JsonNode *value;
  guint i = 0;

  if (object == NULL || json_object_get_size (object) != 2)
    return FALSE;
  json_object_iter_init_ordered (&iter, object);
  while (json_object_iter_next_ordered (&iter, &name, &value))
    {
      if (i == 0 && g_str_equal (name, "role"))
        role = value;
      else if (i == 1 && g_str_equal (name, "content"))
        content = value;
      i++;
    }
  if (role == NULL || content == NULL || !JSON_NODE_HOLDS_VALUE (role) ||
      json_node_get_value_type (role) != G_TYPE_STRING || !g_str_equal (json_node_get_string (role), "user"))
    return FALSE;

  if (JSON_NODE_HOLDS_VALUE (content) && json_node_get_value_type (content) == G_TYPE_STRING)
    {
      g_string_append (out, "{\"role\":\"user\",\"content\":");
      mend_json_write_string (out, json_node_get_string (content));
      g_string_append_c (out, '}');
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_ARRAY (content))
    return FALSE;
  for (guint j = 0; j < json_array_get_length (json_node_get_array (content)); j++)
    if (plain_text_block (json_array_get_element (json_node_get_array (content), j)) == NULL)
      return FALSE;

  g_string_append (out, "{\"role\":\"user\",\"content\":[");
  for (guint j = 0; j < json_array_get_length (json_node_get_array (content)); j++)
    {
      g_string_append (out, j > 0 ? ",{\"type\":\"text\",\"text\":" : "{\"type\":\"text\",\"text\":");
      mend_json_write_string (out, plain_text_block (json_array_get_element (json_node_get_array (content), j)));
      g_string_append_c (out, '}');
    }
  g_string_append (out, "]}");
  return TRUE;
}

/* The transcript's own shape of a prompt. */
static const MendTranscriptPromptShape own_prompt = { "{\"role\":\"user\",\"content\":", "}" };

/* {"role":"user","content":@prompt} in @shape, in one allocation. */
static char *
write_prompt (const MendTranscriptPromptShape *shape,
              const char                      *prompt,
              gsize                           *length)
{
  gsize head = strlen (shape->head);
  gsize tail = strlen (shape->tail);
  char *text;
  char *end;

  *length = head + mend_json_string_length (prompt) + tail;
  text = g_malloc (*length + 1);
  memcpy (text, shape->head, head);
  end = mend_json_string_copy (text + head, prompt);
  memcpy (end, shape->tail, tail);
  end[tail] = '\0';
  return text;
}

const char *
mend_transcript_entry_get_json (MendTranscriptEntry *entry,
                                gsize               *length)
{
  Shape *own = &entry->shapes[MEND_TRANSCRIPT_SHAPE_OWN];

  if (own->text == NULL && entry->prompt != NULL)
    own->text = write_prompt (&own_prompt, entry->prompt, &own->length);
  else if (own->text == NULL)
    {
      GString *out = g_string_new (NULL);

      if (!write_plain_user (out, entry->message))
        {
          g_autofree char *text = mend_json_to_string (entry->message);

          g_string_assign (out, text);
        }
      own->length = out->len;
      own->text = g_string_free (out, FALSE);
    }
  if (length != NULL)
    *length = own->length;
  return own->text;
}

/* Lists */

MendTranscriptEntries *
mend_transcript_entries_new (void)
{
  MendTranscriptEntries *list = g_new0 (MendTranscriptEntries, 1);

  list->ref = 1;
  list->array = g_ptr_array_new_with_free_func ((GDestroyNotify) mend_transcript_entry_unref);
  return list;
}

static MendTranscriptEntries *
entries_ref (MendTranscriptEntries *list)
{
  list->ref++;
  return list;
}

void
mend_transcript_entries_unref (MendTranscriptEntries *list)
{
  if (list == NULL || --list->ref > 0)
    return;
  g_ptr_array_unref (list->array);
  g_free (list);
}

MendTranscriptEntries *
mend_transcript_entries_own (MendTranscriptEntries *list)
{
  MendTranscriptEntries *copy;

  if (list->ref == 1)
    {
      /* About to change. */
      memset (list->written, 0, sizeof list->written);
      return list;
    }
  copy = g_new0 (MendTranscriptEntries, 1);
  copy->ref = 1;
  copy->array = g_ptr_array_new_full (list->array->len, (GDestroyNotify) mend_transcript_entry_unref);
  for (guint i = 0; i < list->array->len; i++)
    g_ptr_array_add (copy->array, mend_transcript_entry_ref (g_ptr_array_index (list->array, i)));
  mend_transcript_entries_unref (list);
  return copy;
}

GPtrArray *
mend_transcript_entries_get_array (MendTranscriptEntries *list)
{
  return list->array;
}

/* Requests */

MendTranscriptRequest *
mend_transcript_request_new (MendTranscriptEntries *list,
                             MendTranscriptEntry   *user)
{
  MendTranscriptRequest *request = g_new0 (MendTranscriptRequest, 1);

  request->ref = 1;
  request->list = entries_ref (list);
  request->user = user != NULL ? mend_transcript_entry_ref (user) : NULL;
  request->first_seq = list->array->len > 0
                       ? ((MendTranscriptEntry *) g_ptr_array_index (list->array, 0))->seq : G_MAXUINT64;
  return request;
}

MendTranscriptRequest *
mend_transcript_request_new_from_array (JsonArray *messages)
{
  g_autoptr(MendTranscriptEntries) list = mend_transcript_entries_new ();

  for (guint i = 0; i < json_array_get_length (messages); i++)
    {
      MendTranscriptEntry *entry = mend_transcript_entry_new (json_array_get_element (messages, i), NULL);

      mend_transcript_entry_set_seq (entry, i);
      g_ptr_array_add (list->array, entry);
    }
  return mend_transcript_request_new (list, NULL);
}

MendTranscriptRequest *
mend_transcript_request_ref (MendTranscriptRequest *request)
{
  request->ref++;
  return request;
}

void
mend_transcript_request_unref (MendTranscriptRequest *request)
{
  if (request == NULL || --request->ref > 0)
    return;
  mend_transcript_entries_unref (request->list);
  mend_transcript_entry_unref (request->user);
  g_free (request);
}

guint
mend_transcript_request_get_n_entries (MendTranscriptRequest *request)
{
  return n_entries (request);
}

MendTranscriptEntry *
mend_transcript_request_get_entry (MendTranscriptRequest *request,
                                   guint                  i)
{
  g_assert (i < n_entries (request));
  return entry_at (request, i);
}

gboolean
mend_transcript_request_is_current (MendTranscriptRequest *request,
                                    MendTranscriptEntries *list)
{
  /* A list a request holds is never changed: the transcript's is the
   * same one until it changes. */
  return request->list == list;
}

JsonNode *
mend_transcript_request_dup_messages (MendTranscriptRequest *request)
{
  JsonArray *array = json_array_sized_new (n_entries (request));
  JsonNode *node = json_node_new (JSON_NODE_ARRAY);

  for (guint i = 0; i < n_entries (request); i++)
    json_array_add_element (array, json_node_ref (mend_transcript_entry_get_message (entry_at (request, i))));
  json_node_take_array (node, array);
  return node;
}

static gboolean
shape_is_good (Shape   *shape,
               guint64  first_seq)
{
  return shape->text != NULL &&
         (!shape->lookups || (first_seq >= shape->built_from && shape->dep >= first_seq));
}

/* Writes entry @i of @request in @shape unless it is written for it;
 * returns its length. */
static gsize
prepare_entry (MendTranscriptRequest           *request,
               guint                            i,
               guint                            shape,
               MendTranscriptWriteFunc          write,
               const MendTranscriptPromptShape *prompt,
               gboolean                        *lookups)
{
  MendTranscriptEntry *entry = entry_at (request, i);
  Shape *written = &entry->shapes[shape];

  if (shape == MEND_TRANSCRIPT_SHAPE_OWN)
    {
      if (written->text == NULL)
        mend_transcript_entry_get_json (entry, NULL);
    }
  else if (!shape_is_good (written, request->first_seq))
    {
      MendTranscriptLookup lookup = { request, i, FALSE, G_MAXUINT64 };

      g_free (written->text);
      /* A prompt's message, in one allocation; a message that is not an
       * object is none (a body of an array given by hand). */
      if (entry->prompt != NULL)
        written->text = write_prompt (prompt, entry->prompt, &written->length);
      else
        {
          GString *out = g_string_new (NULL);

          if (JSON_NODE_HOLDS_OBJECT (entry->message))
            write (out, json_node_get_object (entry->message), &lookup);
          written->length = out->len;
          written->text = g_string_free (out, FALSE);
        }
      written->lookups = lookup.used;
      written->built_from = request->first_seq;
      written->dep = lookup.dep;
    }

  *lookups |= written->lookups;
  return written->length;
}

gsize
mend_transcript_request_prepare (MendTranscriptRequest           *request,
                                 guint                            shape,
                                 MendTranscriptWriteFunc          write,
                                 const MendTranscriptPromptShape *prompt)
{
  MendTranscriptEntries *list = request->list;
  gboolean lookups = FALSE;
  gsize length = 0;
  gsize user;

  g_assert (shape < MEND_TRANSCRIPT_N_SHAPES);

  /* The transcript's part, as a request of the same messages left it
   * (when no message depends on the messages before it), else entry by
   * entry. */
  if (list->written[shape])
    length = list->total[shape];
  else
    {
      for (guint i = 0; i < list->array->len; i++)
        {
          Shape *written = &((MendTranscriptEntry *) g_ptr_array_index (list->array, i))->shapes[shape];
          gsize n;

          if (G_LIKELY (written->text != NULL && !written->lookups))
            n = written->length;
          else
            n = prepare_entry (request, i, shape, write, prompt, &lookups);
          if (n > 0)
            length += n + (length > 0 ? 1 : 0);
        }
      if (!lookups)
        {
          list->written[shape] = TRUE;
          list->total[shape] = length;
        }
    }

  if (request->user == NULL)
    return length;
  user = prepare_entry (request, list->array->len, shape, write, prompt, &lookups);
  return user > 0 ? length + user + (length > 0 ? 1 : 0) : length;
}

char *
mend_transcript_request_copy (MendTranscriptRequest *request,
                              guint                  shape,
                              char                  *out)
{
  GPtrArray *array = request->list->array;
  gboolean any = FALSE;

  for (guint i = 0; i <= array->len; i++)
    {
      MendTranscriptEntry *entry = i < array->len ? g_ptr_array_index (array, i) : request->user;
      Shape *written;

      if (entry == NULL)
        break;
      written = &entry->shapes[shape];
      if (written->length == 0)
        continue;
      if (any)
        *out++ = ',';
      memcpy (out, written->text, written->length);
      out += written->length;
      any = TRUE;
    }
  return out;
}

const char *
mend_transcript_lookup_tool_name (MendTranscriptLookup *lookup,
                                  const char           *id)
{
  lookup->used = TRUE;
  for (guint i = lookup->index + 1; i > 0; i--)
    {
      MendTranscriptEntry *entry = entry_at (lookup->request, i - 1);
      JsonObject *message = entry->message != NULL && JSON_NODE_HOLDS_OBJECT (entry->message)
                            ? json_node_get_object (entry->message) : NULL;
      JsonNode *content = message != NULL ? json_object_get_member (message, "content") : NULL;
      JsonArray *blocks = content != NULL && JSON_NODE_HOLDS_ARRAY (content) ? json_node_get_array (content) : NULL;

      for (guint j = 0; blocks != NULL && j < json_array_get_length (blocks); j++)
        {
          JsonNode *element = json_array_get_element (blocks, j);
          JsonObject *block = JSON_NODE_HOLDS_OBJECT (element) ? json_node_get_object (element) : NULL;
          const char *name = mend_json_get_string (block, "name");

          if (name != NULL && g_strcmp0 (mend_json_get_string (block, "type"), "tool_use") == 0 &&
              g_strcmp0 (mend_json_get_string (block, "id"), id) == 0)
            {
              lookup->dep = MIN (lookup->dep, entry->seq);
              return name;
            }
        }
    }
  return NULL;
}
