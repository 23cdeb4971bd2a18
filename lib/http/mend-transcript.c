/* mend-transcript.c — MendTranscript: the conversation so far, as the model is sent it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-owner-private.h"
#include "mend-i18n-private.h"
#include "mend-json-private.h"
#include "mend-transcript-private.h"
#include "mend-transcript-entry-private.h"
#include "mend-turn-private.h"

/**
 * MendTranscript:
 *
 * The conversation a [class@Mend.HttpSender] sends with each turn.
 *
 * A transcript holds messages in the shape of Anthropic's Messages API:
 * `{"role":"user"|"assistant","content":…}`, where the content is a string
 * or an array of blocks; an assistant's content keeps its text, tool_use
 * and thinking blocks as the model sent them. The first message is the
 * user's. A turn is a user message and the assistant's answer to it.
 *
 * The sender asks its transcript for the messages of each request: the
 * transcript, then the turn's user message. Every attempt of a turn sends
 * the same messages, so a retry neither adds nor repeats anything. The
 * transcript changes only when a turn ends:
 *
 * - a turn that succeeded adds its user message and the answer of the
 *   attempt that succeeded, once;
 * - a turn that gave up (retries used up, or a failure that is not
 *   retried) adds nothing, but its prompt stays *pending*: the next turn's
 *   user message carries the pending prompts, in order, as text blocks
 *   before its own (`[{"type":"text","text":"the failed prompt"},
 *   {"type":"text","text":"Continue the current turn"}]`), so that the
 *   model sees what it was asked before "Continue" (a format whose
 *   message is one string gets them a blank line apart) — unless the next
 *   prompt is the one that gave up, sent again, which is then sent once;
 *   that turn's success
 *   adds them all as the one user message it sent, and a turn that gives
 *   up again keeps them all pending. At most
 *   %MEND_TRANSCRIPT_MAX_PENDING prompts are kept;
 * - a turn the user stopped adds nothing, and drops what was pending with
 *   it: the user left that question;
 * - a turn that succeeded without an answer the sender could read (not a
 *   Messages answer, one without content, or one with a block that has no
 *   type or a text block without text) adds nothing and keeps its prompt
 *   pending, as if it had given up.
 *
 * The transcript is bounded: past [property@Mend.Transcript:max-messages]
 * messages or [property@Mend.Transcript:max-bytes] bytes of
 * [method@Mend.Transcript.to_json], the oldest turns go first, whole, so
 * that what is left still starts with a user message; the newest turn is
 * always kept. An app trims it further with
 * [method@Mend.Transcript.trim], empties it with
 * [method@Mend.Transcript.clear], and replaces it with
 * [method@Mend.Transcript.load_json] (for instance with a summary).
 * A turn already sent commits what it sent, whatever was loaded since.
 * The transcript has changed (and emitted [signal@Mend.Transcript::changed])
 * by the time the turn emits [signal@Mend.Turn::finished], and so before a
 * chat's [signal@Mend.Chat::turn-finished].
 *
 * A transcript serves one turn at a time: when a sender starts another
 * turn before the one it follows has ended, the first one's exchange is
 * dropped.
 *
 * Tool calls: an assistant message with `tool_use` blocks expects the next
 * user message to start with their `tool_result` blocks. The default body
 * offers the model no tools, so it sends none; an app that offers tools
 * (in a [signal@Mend.HttpSender::build-message] handler) answers them in
 * the body it builds, and keeps the transcript with
 * [method@Mend.Transcript.load_json]. A tool call whose arguments never
 * formed JSON (a stream cut short by the token limit, a model's slip) is
 * kept with the text the model sent as its `input`, a string; the OpenAI
 * formats send it back as the call's `arguments`.
 *
 * ```c
 * g_autoptr(MendHttpSender) sender = mend_http_sender_new (url);
 * MendTranscript *transcript = mend_http_sender_get_transcript (sender);
 * g_autofree char *json = NULL;
 *
 * // Keep the last 20 turns, and let an older session's history in.
 * mend_transcript_set_max_messages (transcript, 40);
 * if (!mend_transcript_load_json (transcript, saved_json, &error))
 *   g_warning ("Not loaded: %s", error->message);
 *
 * // After some turns: what the model will see next.
 * json = mend_transcript_to_json (transcript);
 * ```
 *
 * A chat saves the transcript with its state ([method@Mend.Chat.save_state]),
 * pending prompts included, through [method@Mend.Sender.save_state].
 */

struct _MendTranscript
{
  GObject    parent_instance;
  MendOwner         owner;         /* its thread: see mend-owner-private.h */

  GPtrArray *messages;     /* JsonNode*, each a sealed message object */
  GArray    *costs;        /* Cost: of each message */
  MendTranscriptEntries *entries; /* each message, as written; shared with requests */
  guint64    next_seq;     /* of the next message */
  gsize      bytes;        /* of to_json() */
  gsize      values;       /* JSON values in all messages */
  GPtrArray *pending;      /* JsonNode*: text blocks of turns that gave up */
  guint      max_messages;
  guint      max_bytes;

  /* The turn in flight */
  GWeakRef   turn;
  gulong     state_id;
  MendTranscriptRequest *request;
  JsonNode  *answer;
};

enum {
  PROP_0,
  PROP_N_MESSAGES,
  PROP_N_PENDING,
  PROP_MAX_MESSAGES,
  PROP_MAX_BYTES,
  N_PROPS
};

enum {
  CHANGED,
  N_SIGNALS
};

G_DEFINE_FINAL_TYPE (MendTranscript, mend_transcript, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

/* What a message costs: the bytes of its JSON, and its JSON values (every
 * node), which the saved state's parse counts against
 * %MEND_JSON_MAX_VALUES. */
typedef struct
{
  gsize bytes;
  guint values;
} Cost;

/* The transcript is saved as {"messages":[…]}: two levels above a message,
 * and some values besides the messages, which the parse of a saved state
 * must still take. */
#define MAX_MESSAGE_DEPTH (MEND_JSON_MAX_DEPTH - 2)
#define MAX_VALUES (MEND_JSON_MAX_VALUES - 1024)
/* Escaped as a string in a saved state, a transcript may grow six times
 * (control characters), which must stay under MEND_CHAT_STATE_MAX_BYTES. */
#define MAX_MAX_BYTES (8 * 1024 * 1024)

/* Counts the nodes of @node, and tells whether it nests no deeper than
 * @depth_left levels. */
static gboolean
count_values (JsonNode *node,
              guint     depth_left,
              guint    *values)
{
  (*values)++;

  if (JSON_NODE_HOLDS_OBJECT (node) || JSON_NODE_HOLDS_ARRAY (node))
    {
      g_autoptr(GList) children = NULL;

      if (depth_left == 0)
        return FALSE;
      if (JSON_NODE_HOLDS_OBJECT (node))
        children = json_object_get_values (json_node_get_object (node));
      else
        children = json_array_get_elements (json_node_get_array (node));
      for (GList *l = children; l != NULL; l = l->next)
        if (!count_values (l->data, depth_left - 1, values))
          return FALSE;
    }

  return TRUE;
}

static const char *
role_of (JsonNode *message)
{
  return mend_json_get_string (json_node_get_object (message), "role");
}

static gboolean
starts_turn (MendTranscript *self,
             guint           i)
{
  return g_strcmp0 (role_of (g_ptr_array_index (self->messages, i)), "user") == 0 &&
         (i == 0 || g_strcmp0 (role_of (g_ptr_array_index (self->messages, i - 1)), "assistant") == 0);
}

/* The bytes of to_json(): the brackets, each message, and a comma
 * between two. The message's entry is @entry when given (the one its
 * request wrote, with what it wrote), else a new one. */
static void
append_message (MendTranscript      *self,
                JsonNode            *message,
                MendTranscriptEntry *entry)
{
  Cost cost = { 0, 0 };

  if (entry != NULL)
    mend_transcript_entry_ref (entry);
  else
    entry = mend_transcript_entry_new (message, mend_json_to_string (message));
  mend_transcript_entry_get_json (entry, &cost.bytes);
  mend_transcript_entry_set_seq (entry, self->next_seq++);
  count_values (message, G_MAXUINT, &cost.values);
  json_node_seal (message);
  g_ptr_array_add (self->messages, json_node_ref (message));
  self->entries = mend_transcript_entries_own (self->entries);
  g_ptr_array_add (mend_transcript_entries_get_array (self->entries), entry);
  g_array_append_val (self->costs, cost);
  self->bytes += cost.bytes + (self->messages->len > 1 ? 1 : 0);
  self->values += cost.values;
}

/* Drops the @n oldest messages, and what they cost. */
static void
drop_front (MendTranscript *self,
            guint           n)
{
  for (guint i = 0; i < n; i++)
    {
      Cost *cost = &g_array_index (self->costs, Cost, i);

      self->bytes -= cost->bytes + (self->messages->len - i > 1 ? 1 : 0);
      self->values -= cost->values;
    }
  if (n == 0)
    return;
  g_ptr_array_remove_range (self->messages, 0, n);
  self->entries = mend_transcript_entries_own (self->entries);
  g_ptr_array_remove_range (mend_transcript_entries_get_array (self->entries), 0, n);
  g_array_remove_range (self->costs, 0, n);
}

/* The messages' JSON, joined by commas, as a JSON array holds them. */
static void
append_messages (MendTranscript *self,
                 GString        *out)
{
  GPtrArray *entries = mend_transcript_entries_get_array (self->entries);

  for (guint i = 0; i < entries->len; i++)
    {
      gsize length;
      const char *json = mend_transcript_entry_get_json (g_ptr_array_index (entries, i), &length);

      if (i > 0)
        g_string_append_c (out, ',');
      g_string_append_len (out, json, length);
    }
}

static gboolean
over_bounds (MendTranscript *self,
             guint           n,
             gsize           bytes,
             gsize           values)
{
  return n > self->max_messages || bytes > self->max_bytes || values > MAX_VALUES;
}

/* The oldest turns go, whole, until the rest is within the bounds or one
 * turn is left: found in one pass, dropped at once. */
static void
apply_bounds (MendTranscript *self)
{
  guint length = self->messages->len;
  gsize bytes = self->bytes;
  gsize values = self->values;
  guint cut = 0;

  if (!over_bounds (self, length, bytes, values))
    return;
  for (guint i = 1; i < length; i++)
    {
      Cost *cost = &g_array_index (self->costs, Cost, i - 1);

      bytes -= cost->bytes + (length - (i - 1) > 1 ? 1 : 0);
      values -= cost->values;
      if (!starts_turn (self, i))
        continue;
      cut = i;
      if (!over_bounds (self, length - i, bytes, values))
        break;
    }
  if (cut > 0)
    drop_front (self, cut);
}

/* After a change: notifies what moved, and emits ::changed. */
static void
changed (MendTranscript *self,
         guint           old_n,
         guint           old_pending)
{
  g_object_ref (self);
  if (old_n != self->messages->len)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_MESSAGES]);
  if (old_pending != self->pending->len)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_PENDING]);
  g_signal_emit (self, signals[CHANGED], 0);
  g_object_unref (self);
}

static void
keep_pending (MendTranscript *self,
              JsonNode       *user)
{
  JsonNode *content = json_object_get_member (json_node_get_object (user), "content");

  g_ptr_array_set_size (self->pending, 0);
  if (JSON_NODE_HOLDS_ARRAY (content))
    {
      JsonArray *blocks = json_node_get_array (content);

      for (guint i = 0; i < json_array_get_length (blocks); i++)
        g_ptr_array_add (self->pending, json_node_ref (json_array_get_element (blocks, i)));
    }
  else
    {
      g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "text");
      json_builder_set_member_name (builder, "text");
      json_builder_add_string_value (builder, json_node_get_string (content));
      json_builder_end_object (builder);
      g_ptr_array_add (self->pending, json_builder_get_root (builder));
    }

  if (self->pending->len > MEND_TRANSCRIPT_MAX_PENDING)
    g_ptr_array_remove_range (self->pending, 0, self->pending->len - MEND_TRANSCRIPT_MAX_PENDING);
}

static void
untrack (MendTranscript *self)
{
  g_autoptr(MendTurn) turn = g_weak_ref_get (&self->turn);

  /* Connected with the transcript as its object: gone already when the
   * transcript is finalized first. */
  if (turn != NULL && self->state_id != 0 && g_signal_handler_is_connected (turn, self->state_id))
    g_signal_handler_disconnect (turn, self->state_id);
  self->state_id = 0;
  g_weak_ref_set (&self->turn, NULL);
  g_clear_pointer (&self->request, mend_transcript_request_unref);
  g_clear_pointer (&self->answer, json_node_unref);
}

static gboolean check_message (JsonNode  *node,
                               guint      index,
                               GError   **error);

/* The followed turn ended: commit, keep or drop its exchange. */
static void
on_turn_state (MendTurn       *turn,
               GParamSpec     *pspec,
               MendTranscript *self)
{
  g_autoptr(JsonNode) user = NULL;
  g_autoptr(JsonNode) answer = NULL;
  g_autoptr(MendTranscriptRequest) request = NULL;
  g_autoptr(MendTurn) followed = g_weak_ref_get (&self->turn);
  MendTurnState state = mend_turn_get_state (turn);
  guint old_n = self->messages->len;
  guint old_pending = self->pending->len;

  if (followed != turn || !mend_turn_is_finished (turn))
    return;

  answer = g_steal_pointer (&self->answer);
  request = g_steal_pointer (&self->request);
  untrack (self);
  user = json_node_ref (mend_transcript_entry_get_message (
    mend_transcript_request_get_entry (request, mend_transcript_request_get_n_entries (request) - 1)));

  /* A prompt that could not be read back (not UTF-8: a turn made by
   * hand) is not kept. */
  if (!check_message (user, 0, NULL))
    state = MEND_TURN_STOPPED;

  if (state == MEND_TURN_SUCCEEDED && answer != NULL)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
      g_autoptr(JsonNode) assistant = NULL;
      g_autoptr(MendTranscriptEntry) written = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "role");
      json_builder_add_string_value (builder, "assistant");
      json_builder_set_member_name (builder, "content");
      json_builder_add_value (builder, json_node_ref (answer));
      json_builder_end_object (builder);
      assistant = json_builder_get_root (builder);

      /* The user's message as its request wrote it, when the messages
       * before it are still the ones it was written after; the request
       * let go first, so that the messages are not copied. */
      if (request != NULL && mend_transcript_request_is_current (request, self->entries))
        written = mend_transcript_entry_ref (
          mend_transcript_request_get_entry (request, mend_transcript_request_get_n_entries (request) - 1));
      g_clear_pointer (&request, mend_transcript_request_unref);

      append_message (self, user, written);
      append_message (self, assistant, NULL);
      g_ptr_array_set_size (self->pending, 0);
      apply_bounds (self);
    }
  else if (state == MEND_TURN_SUCCEEDED || state == MEND_TURN_FAILED)
    keep_pending (self, user);
  else
    g_ptr_array_set_size (self->pending, 0);

  changed (self, old_n, old_pending);
}

/* The turn's user message, the pending prompts before its own; NULL for
 * its prompt alone, which its entry makes and writes itself. */
static JsonNode *
build_user (MendTranscript *self,
            const char     *prompt)
{
  g_autoptr(JsonBuilder) builder = NULL;
  guint n = self->pending->len;

  /* The prompt that gave up, sent again ("Try again"), is sent once. */
  if (n > 0 && g_strcmp0 (mend_json_get_string (json_node_get_object (g_ptr_array_index (self->pending, n - 1)),
                                                 "text"), prompt) == 0)
    n--;

  /* The prompt alone, the usual case: its entry makes the message when
   * it is asked for, and writes it from the prompt. */
  if (n == 0)
    return NULL;

  builder = json_builder_new_immutable ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "role");
  json_builder_add_string_value (builder, "user");
  json_builder_set_member_name (builder, "content");
  if (n == 0)
    json_builder_add_string_value (builder, prompt);
  else
    {
      json_builder_begin_array (builder);
      for (guint i = 0; i < n; i++)
        json_builder_add_value (builder, json_node_ref (g_ptr_array_index (self->pending, i)));
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "text");
      json_builder_set_member_name (builder, "text");
      json_builder_add_string_value (builder, prompt);
      json_builder_end_object (builder);
      json_builder_end_array (builder);
    }
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

MendTranscriptRequest *
mend_transcript_request_for (MendTranscript *self,
                             MendTurn       *turn,
                             gboolean        track)
{
  g_autoptr(MendTurn) followed = g_weak_ref_get (&self->turn);
  g_autoptr(MendTranscriptEntry) entry = NULL;
  g_autoptr(JsonNode) user = NULL;
  MendTranscriptRequest *request;

  g_return_val_if_fail (MEND_IS_TRANSCRIPT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);
  g_return_val_if_fail (MEND_IS_TURN (turn), NULL);

  if (followed == turn && self->request != NULL)
    return mend_transcript_request_ref (self->request);

  user = build_user (self, mend_turn_get_prompt (turn));
  entry = user != NULL ? mend_transcript_entry_new (user, NULL)
                       : mend_transcript_entry_new_prompt (mend_turn_get_prompt (turn));
  request = mend_transcript_request_new (self->entries, entry);

  if (track)
    {
      /* Another turn ends the one followed so far: its exchange is not
       * kept (one conversation, one turn at a time). */
      g_clear_object (&followed);
      untrack (self);
      g_weak_ref_set (&self->turn, turn);
      self->state_id = g_signal_connect_object (turn, "notify::state",
                                                G_CALLBACK (on_turn_state), self, 0);
      self->request = mend_transcript_request_ref (request);
    }

  return request;
}

static gboolean content_is_valid (JsonNode  *content,
                                  char     **text);

void
mend_transcript_answered (MendTranscript *self,
                          MendTurn       *turn,
                          JsonNode       *content)
{
  g_autoptr(MendTurn) followed = NULL;
  g_autofree char *text = NULL;

  g_return_if_fail (MEND_IS_TRANSCRIPT (self));
  mend_return_if_not_owner (&self->owner, self);

  followed = g_weak_ref_get (&self->turn);
  if (followed != turn)
    return;

  g_clear_pointer (&self->answer, json_node_unref);
  if (content != NULL && content_is_valid (content, &text))
    {
      /* An answer larger than the whole transcript may be is not kept. */
      if (strlen (text) <= self->max_bytes)
        self->answer = json_node_ref (content);
    }
}

/* Checking what an app or a file gives */

static gboolean
invalid (GError     **error,
         guint        index,
         const char  *what)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
               _("The transcript is not valid: message %u %s"), index + 1, what);
  return FALSE;
}

static gboolean
check_block (JsonNode  *node,
             gboolean   text_only)
{
  JsonObject *block;
  const char *type;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return FALSE;
  block = json_node_get_object (node);
  type = mend_json_get_string (block, "type");
  if (type == NULL || !g_utf8_validate (type, -1, NULL))
    return FALSE;
  if (g_str_equal (type, "text") || text_only)
    {
      const char *text = mend_json_get_string (block, "text");

      return g_str_equal (type, "text") && text != NULL && g_utf8_validate (text, -1, NULL);
    }
  return TRUE;
}

/* json-glib reads some JSON that it cannot write back as JSON: a number
 * past a double (written "inf"), a lone surrogate escape (written as
 * bytes that are not UTF-8). Kept, either would make a saved state that
 * never loads again: what is kept must write out as JSON that reads back. */
static gboolean
holds_double (JsonNode *node)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_VALUE:
      return json_node_get_value_type (node) == G_TYPE_DOUBLE;
    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);

        for (guint i = 0; i < json_array_get_length (array); i++)
          if (holds_double (json_array_get_element (array, i)))
            return TRUE;
        return FALSE;
      }
    case JSON_NODE_OBJECT:
      {
        JsonObjectIter iter;
        JsonNode *member;

        json_object_iter_init (&iter, json_node_get_object (node));
        while (json_object_iter_next (&iter, NULL, &member))
          if (holds_double (member))
            return TRUE;
        return FALSE;
      }
    case JSON_NODE_NULL:
    default:
      return FALSE;
    }
}

/* The text @node writes out as, when it reads back; else NULL. Valid
 * UTF-8 with no number that is a double reads back as it is (strings,
 * integers, booleans and nulls write as JSON): only then is it not read
 * again. */
static char *
written_back (JsonNode *node)
{
  g_autofree char *text = mend_json_to_string (node);

  if (!g_utf8_validate (text, -1, NULL))
    return NULL;
  if (holds_double (node))
    {
      g_autoptr(JsonNode) again = mend_json_parse (text, -1, NULL);

      if (again == NULL)
        return NULL;
    }
  return g_steal_pointer (&text);
}

static gboolean
writes_back (JsonNode *node)
{
  g_autofree char *text = written_back (node);

  return text != NULL;
}

/* Blocks load_json() would take back: what is kept must restore. Its
 * text, written out, in *@text. */
static gboolean
content_is_valid (JsonNode  *content,
                  char     **text)
{
  JsonArray *blocks;
  guint values = 0;

  if (!JSON_NODE_HOLDS_ARRAY (content))
    return FALSE;
  blocks = json_node_get_array (content);
  if (json_array_get_length (blocks) == 0)
    return FALSE;
  for (guint i = 0; i < json_array_get_length (blocks); i++)
    if (!check_block (json_array_get_element (blocks, i), FALSE))
      return FALSE;

  /* The message holds the content one level down; a turn must fit in
   * what a saved state may hold, with room to spare. */
  return count_values (content, MAX_MESSAGE_DEPTH - 1, &values) && values <= MAX_VALUES / 2 &&
         (*text = written_back (content)) != NULL;
}

static gboolean
check_message (JsonNode  *node,
               guint      index,
               GError   **error)
{
  JsonObject *message;
  JsonNode *content;
  const char *role;
  guint values = 0;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return invalid (error, index, _("is not an object"));
  message = json_node_get_object (node);

  role = mend_json_get_string (message, "role");
  if (g_strcmp0 (role, "user") != 0 && g_strcmp0 (role, "assistant") != 0)
    return invalid (error, index, _("has no role “user” or “assistant”"));
  if (index == 0 && !g_str_equal (role, "user"))
    return invalid (error, index, _("is not the user’s, and the first one must be"));

  content = json_object_get_member (message, "content");
  if (content == NULL)
    return invalid (error, index, _("has no content"));
  if (JSON_NODE_HOLDS_VALUE (content) && json_node_get_value_type (content) == G_TYPE_STRING)
    {
      if (!g_utf8_validate (json_node_get_string (content), -1, NULL))
        return invalid (error, index, _("has content that is not UTF-8"));
    }
  else if (JSON_NODE_HOLDS_ARRAY (content))
    {
      JsonArray *blocks = json_node_get_array (content);

      if (json_array_get_length (blocks) == 0)
        return invalid (error, index, _("has no content"));
      for (guint i = 0; i < json_array_get_length (blocks); i++)
        if (!check_block (json_array_get_element (blocks, i), FALSE))
          return invalid (error, index, _("has a content block without a type, or a text block without text"));
    }
  else
    return invalid (error, index, _("has content that is neither text nor an array of blocks"));

  if (json_object_get_size (message) != 2)
    return invalid (error, index, _("has members other than role and content"));
  if (!count_values (node, MAX_MESSAGE_DEPTH, &values))
    return invalid (error, index, _("is nested too deeply to be saved"));
  if (!writes_back (node))
    return invalid (error, index, _("holds a number or text that cannot be saved as JSON"));

  return TRUE;
}

static JsonArray *
parse_messages (JsonNode    *node,
                GError     **error)
{
  JsonArray *array;
  guint values = 0;

  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           _("The transcript is not valid: it is not an array of messages"));
      return NULL;
    }

  array = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (array); i++)
    if (!check_message (json_array_get_element (array, i), i, error))
      return NULL;

  /* Only a text near the parser's own limit holds this many. */
  count_values (node, G_MAXUINT, &values);
  if (values > MAX_VALUES)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("The transcript is not valid: it holds more than %u JSON values"), MAX_VALUES);
      return NULL;
    }

  return array;
}

static void
replace (MendTranscript *self,
         JsonArray      *messages,
         JsonArray      *pending)
{
  guint old_n = self->messages->len;
  guint old_pending = self->pending->len;

  drop_front (self, self->messages->len);
  g_ptr_array_set_size (self->pending, 0);

  for (guint i = 0; messages != NULL && i < json_array_get_length (messages); i++)
    append_message (self, json_array_get_element (messages, i), NULL);
  for (guint i = 0; pending != NULL && i < json_array_get_length (pending); i++)
    g_ptr_array_add (self->pending, json_node_ref (json_array_get_element (pending, i)));
  if (self->pending->len > MEND_TRANSCRIPT_MAX_PENDING)
    g_ptr_array_remove_range (self->pending, 0, self->pending->len - MEND_TRANSCRIPT_MAX_PENDING);
  apply_bounds (self);

  changed (self, old_n, old_pending);
}

char *
mend_transcript_save (MendTranscript *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
  g_autofree char *pending = NULL;
  GString *json;

  g_return_val_if_fail (MEND_IS_TRANSCRIPT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  json_builder_begin_array (builder);
  for (guint i = 0; i < self->pending->len; i++)
    json_builder_add_value (builder, json_node_ref (g_ptr_array_index (self->pending, i)));
  json_builder_end_array (builder);
  pending = mend_json_builder_finish (builder);

  /* {"messages":[…],"pending":[…]}, the messages as kept. */
  json = g_string_sized_new (self->bytes + strlen (pending) + 32);
  g_string_append (json, "{\"messages\":[");
  append_messages (self, json);
  g_string_append (json, "],\"pending\":");
  g_string_append (json, pending);
  g_string_append_c (json, '}');
  return g_string_free (json, FALSE);
}

gboolean
mend_transcript_restore (MendTranscript  *self,
                         const char      *json,
                         GError         **error)
{
  g_autoptr(JsonNode) root = NULL;
  JsonArray *messages;
  JsonNode *pending;

  g_return_val_if_fail (MEND_IS_TRANSCRIPT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);
  g_return_val_if_fail (json != NULL, FALSE);

  root = mend_json_parse (json, -1, error);
  if (root == NULL)
    return FALSE;
  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           _("The transcript’s saved state is not a JSON object"));
      return FALSE;
    }

  messages = parse_messages (json_object_get_member (json_node_get_object (root), "messages"), error);
  if (messages == NULL)
    return FALSE;

  pending = json_object_get_member (json_node_get_object (root), "pending");
  if (pending != NULL && !JSON_NODE_HOLDS_NULL (pending))
    {
      gboolean ok = JSON_NODE_HOLDS_ARRAY (pending);

      for (guint i = 0; ok && i < json_array_get_length (json_node_get_array (pending)); i++)
        ok = check_block (json_array_get_element (json_node_get_array (pending), i), TRUE) &&
             writes_back (json_array_get_element (json_node_get_array (pending), i));
      if (!ok)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                               _("The transcript’s pending prompts are not an array of text blocks"));
          return FALSE;
        }
    }

  replace (self, messages, pending && JSON_NODE_HOLDS_ARRAY (pending) ? json_node_get_array (pending) : NULL);
  return TRUE;
}

/* The class */

static void
mend_transcript_finalize (GObject *object)
{
  MendTranscript *self = (MendTranscript *) object;

  untrack (self);
  g_weak_ref_clear (&self->turn);
  g_clear_pointer (&self->messages, g_ptr_array_unref);
  g_clear_pointer (&self->entries, mend_transcript_entries_unref);
  g_clear_pointer (&self->costs, g_array_unref);
  g_clear_pointer (&self->pending, g_ptr_array_unref);

  mend_owner_clear (&self->owner);
  G_OBJECT_CLASS (mend_transcript_parent_class)->finalize (object);
}

static void
mend_transcript_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  MendTranscript *self = MEND_TRANSCRIPT (object);

  switch (prop_id)
    {
    case PROP_N_MESSAGES:
      g_value_set_uint (value, self->messages->len);
      break;
    case PROP_N_PENDING:
      g_value_set_uint (value, self->pending->len);
      break;
    case PROP_MAX_MESSAGES:
      g_value_set_uint (value, self->max_messages);
      break;
    case PROP_MAX_BYTES:
      g_value_set_uint (value, self->max_bytes);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_transcript_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  MendTranscript *self = MEND_TRANSCRIPT (object);

  switch (prop_id)
    {
    case PROP_MAX_MESSAGES:
      mend_transcript_set_max_messages (self, g_value_get_uint (value));
      break;
    case PROP_MAX_BYTES:
      mend_transcript_set_max_bytes (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_transcript_class_init (MendTranscriptClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = mend_transcript_finalize;
  object_class->get_property = mend_transcript_get_property;
  object_class->set_property = mend_transcript_set_property;

  mend_i18n_init ();

  /**
   * MendTranscript:n-messages:
   *
   * How many messages the transcript holds.
   */
  properties[PROP_N_MESSAGES] =
    g_param_spec_uint ("n-messages", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendTranscript:n-pending:
   *
   * How many prompts of turns that gave up wait to be sent again with the
   * next turn's prompt.
   */
  properties[PROP_N_PENDING] =
    g_param_spec_uint ("n-pending", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendTranscript:max-messages:
   *
   * The most messages kept, at least 2. Past it, the oldest turns are
   * dropped, whole; the newest is always kept.
   */
  properties[PROP_MAX_MESSAGES] =
    g_param_spec_uint ("max-messages", NULL, NULL, 2, G_MAXUINT,
                       MEND_TRANSCRIPT_DEFAULT_MAX_MESSAGES,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendTranscript:max-bytes:
   *
   * The most bytes of [method@Mend.Transcript.to_json] kept, at most
   * 8 MiB, so that a chat's saved state holds it. Past it, the oldest turns
   * are dropped, whole; the newest is always kept, and an answer larger
   * than this alone is not.
   */
  properties[PROP_MAX_BYTES] =
    g_param_spec_uint ("max-bytes", NULL, NULL, 2, MAX_MAX_BYTES,
                       MEND_TRANSCRIPT_DEFAULT_MAX_BYTES,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * MendTranscript::changed:
   * @self: the transcript
   *
   * The messages or the pending prompts changed: a turn ended, or the
   * app trimmed, cleared or loaded the transcript. A good moment to save.
   */
  signals[CHANGED] =
    g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
mend_transcript_init (MendTranscript *self)
{
  mend_owner_init (&self->owner);
  self->messages = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  self->costs = g_array_new (FALSE, FALSE, sizeof (Cost));
  self->entries = mend_transcript_entries_new ();
  self->pending = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  self->max_messages = MEND_TRANSCRIPT_DEFAULT_MAX_MESSAGES;
  self->max_bytes = MEND_TRANSCRIPT_DEFAULT_MAX_BYTES;
  g_weak_ref_init (&self->turn, NULL);
  self->bytes = 2;
}

/**
 * mend_transcript_new:
 *
 * Creates an empty transcript.
 *
 * Returns: (transfer full): a new transcript
 */
MendTranscript *
mend_transcript_new (void)
{
  return g_object_new (MEND_TYPE_TRANSCRIPT, NULL);
}

/**
 * mend_transcript_get_n_messages:
 * @self: a transcript
 *
 * Gets [property@Mend.Transcript:n-messages].
 *
 * Returns: how many messages the transcript holds
 */
guint
mend_transcript_get_n_messages (MendTranscript *self)
{
  g_return_val_if_fail (MEND_IS_TRANSCRIPT (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->messages->len;
}

/**
 * mend_transcript_get_n_pending:
 * @self: a transcript
 *
 * Gets [property@Mend.Transcript:n-pending].
 *
 * Returns: how many prompts of turns that gave up wait to be sent again
 */
guint
mend_transcript_get_n_pending (MendTranscript *self)
{
  g_return_val_if_fail (MEND_IS_TRANSCRIPT (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->pending->len;
}

/**
 * mend_transcript_get_max_messages:
 * @self: a transcript
 *
 * Gets [property@Mend.Transcript:max-messages].
 *
 * Returns: the most messages kept
 */
guint
mend_transcript_get_max_messages (MendTranscript *self)
{
  g_return_val_if_fail (MEND_IS_TRANSCRIPT (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->max_messages;
}

/**
 * mend_transcript_set_max_messages:
 * @self: a transcript
 * @max_messages: the most messages kept, at least 2
 *
 * Sets [property@Mend.Transcript:max-messages]; a transcript already
 * longer drops its oldest turns now.
 */
void
mend_transcript_set_max_messages (MendTranscript *self,
                                  guint           max_messages)
{
  guint old_n;

  g_return_if_fail (MEND_IS_TRANSCRIPT (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (max_messages >= 2);

  if (self->max_messages == max_messages)
    return;

  old_n = self->messages->len;
  self->max_messages = max_messages;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_MESSAGES]);
  apply_bounds (self);
  if (old_n != self->messages->len)
    changed (self, old_n, self->pending->len);
}

/**
 * mend_transcript_get_max_bytes:
 * @self: a transcript
 *
 * Gets [property@Mend.Transcript:max-bytes].
 *
 * Returns: the most bytes of JSON kept
 */
guint
mend_transcript_get_max_bytes (MendTranscript *self)
{
  g_return_val_if_fail (MEND_IS_TRANSCRIPT (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->max_bytes;
}

/**
 * mend_transcript_set_max_bytes:
 * @self: a transcript
 * @max_bytes: the most bytes of [method@Mend.Transcript.to_json] kept,
 *   from 2 to 8 MiB
 *
 * Sets [property@Mend.Transcript:max-bytes]; a transcript already larger
 * drops its oldest turns now.
 */
void
mend_transcript_set_max_bytes (MendTranscript *self,
                               guint           max_bytes)
{
  guint old_n;

  g_return_if_fail (MEND_IS_TRANSCRIPT (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (max_bytes >= 2 && max_bytes <= MAX_MAX_BYTES);

  if (self->max_bytes == max_bytes)
    return;

  old_n = self->messages->len;
  self->max_bytes = max_bytes;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_BYTES]);
  apply_bounds (self);
  if (old_n != self->messages->len)
    changed (self, old_n, self->pending->len);
}

/**
 * mend_transcript_to_json:
 * @self: a transcript
 *
 * Writes the messages as a JSON array, in the shape of the `messages` of
 * a Messages request: `[{"role":"user","content":…},
 * {"role":"assistant","content":[…]}, …]`. The prompts of turns that gave
 * up are not in it: they are sent with the next turn's prompt.
 *
 * Returns: (transfer full): the JSON text
 */
char *
mend_transcript_to_json (MendTranscript *self)
{
  GString *json;

  g_return_val_if_fail (MEND_IS_TRANSCRIPT (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  /* Each message's JSON, as kept, in brackets. */
  json = g_string_sized_new (self->bytes + 1);
  g_string_append_c (json, '[');
  append_messages (self, json);
  g_string_append_c (json, ']');
  return g_string_free (json, FALSE);
}

/**
 * mend_transcript_load_json:
 * @self: a transcript
 * @json: a JSON array of messages, as [method@Mend.Transcript.to_json]
 *   writes it
 * @error: return location for a %G_IO_ERROR_INVALID_DATA
 *
 * Replaces the whole transcript, and forgets the pending prompts.
 *
 * @json must be an array of objects with exactly a `role` (`"user"` or
 * `"assistant"`, the first one `"user"`) and a `content`: a string, or a
 * non-empty array of blocks that each have a `type` (a `text` block its
 * `text`). Anything else is refused with an error that says what was
 * wrong and which message, and the transcript is left as it was, as is
 * one whose last turn alone is larger than
 * [property@Mend.Transcript:max-bytes] or nests too deeply to be saved.
 * What is loaded is bounded like the rest: past the bounds, its oldest
 * turns are dropped.
 *
 * Returns: %TRUE if the transcript was replaced
 */
gboolean
mend_transcript_load_json (MendTranscript  *self,
                           const char      *json,
                           GError         **error)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) parse_error = NULL;
  JsonArray *messages;
  gsize last_turn = 0;

  g_return_val_if_fail (MEND_IS_TRANSCRIPT (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);
  g_return_val_if_fail (json != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  root = mend_json_parse (json, -1, &parse_error);
  if (root == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("The transcript is not valid JSON: %s"), parse_error->message);
      return FALSE;
    }

  messages = parse_messages (root, error);
  if (messages == NULL)
    return FALSE;

  /* The newest turn is always kept: it must fit on its own. */
  for (guint i = json_array_get_length (messages); i > 0; i--)
    {
      JsonNode *message = json_array_get_element (messages, i - 1);
      g_autofree char *text = mend_json_to_string (message);

      last_turn += strlen (text) + 1;
      if (g_strcmp0 (role_of (message), "user") == 0 &&
          (i == 1 || g_strcmp0 (role_of (json_array_get_element (messages, i - 2)), "assistant") == 0))
        break;
    }
  if (last_turn + 1 > self->max_bytes)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   _("The transcript is not valid: its last turn is larger than %u bytes (max-bytes)"),
                   self->max_bytes);
      return FALSE;
    }

  replace (self, messages, NULL);
  return TRUE;
}

/**
 * mend_transcript_trim:
 * @self: a transcript
 * @keep_last_turns: how many of the newest turns to keep
 *
 * Drops the oldest turns, whole (a user message and the assistant's
 * messages after it), until at most @keep_last_turns are left; 0 empties
 * the messages. The pending prompts stay.
 */
void
mend_transcript_trim (MendTranscript *self,
                      guint           keep_last_turns)
{
  guint cut = 0;
  guint old_n;

  g_return_if_fail (MEND_IS_TRANSCRIPT (self));
  mend_return_if_not_owner (&self->owner, self);

  old_n = self->messages->len;
  if (keep_last_turns == 0)
    cut = self->messages->len;
  else
    {
      guint n_turns = 0;

      /* Where the oldest turn kept starts, counted from the newest: the
       * turns dropped go at once. */
      for (guint i = self->messages->len; i > 0; i--)
        if (starts_turn (self, i - 1) && ++n_turns == keep_last_turns)
          {
            cut = i - 1;
            break;
          }
    }
  drop_front (self, cut);

  if (old_n != self->messages->len)
    changed (self, old_n, self->pending->len);
}

/**
 * mend_transcript_clear:
 * @self: a transcript
 *
 * Forgets every message and every pending prompt: the next turn starts a
 * new conversation.
 */
void
mend_transcript_clear (MendTranscript *self)
{
  guint old_n;
  guint old_pending;

  g_return_if_fail (MEND_IS_TRANSCRIPT (self));
  mend_return_if_not_owner (&self->owner, self);

  old_n = self->messages->len;
  old_pending = self->pending->len;
  if (old_n == 0 && old_pending == 0)
    return;

  drop_front (self, old_n);
  g_ptr_array_set_size (self->pending, 0);
  changed (self, old_n, old_pending);
}
