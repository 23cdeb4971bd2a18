/* mend-queue.c — MendQueue: the user's queued follow-ups, which no error eats
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-owner-private.h"
#include "mend-clock.h"
#include "mend-i18n-private.h"
#include "mend-queue-private.h"
#include "mend-queue-item-private.h"

/**
 * MendQueue:
 *
 * The follow-ups the user typed while a turn ran, in the order they will be
 * sent: a [iface@Gio.ListModel] of [class@Mend.QueueItem] to bind a list
 * widget to.
 *
 * The queue is bounded, in the user's items ([property@Mend.Queue:max-items];
 * a chat's subagent resume prompts have a room of their own beside them) and in
 * bytes per item ([property@Mend.Queue:max-item-bytes]), so a stuck agent
 * cannot make it grow without end. Text is normalized on the way in (CRLF
 * and lone CR become LF) and otherwise kept as typed. Anything the queue
 * refuses — blank text, text that is too large or not UTF-8, a full queue,
 * an unknown id — is a %MEND_QUEUE_ERROR that says what was wrong, and the
 * queue is left exactly as it was: a refused message never costs a queued
 * one.
 *
 * [signal@Gio.ListModel::items-changed] reports exactly what changed, and
 * items keep their identity: editing one with
 * [method@Mend.Queue.replace_text] changes the text of the same
 * [class@Mend.QueueItem] object.
 *
 * Example:
 *
 * ```c
 * MendQueue *queue = mend_chat_get_queue (chat);
 * g_autoptr(GError) error = NULL;
 * MendQueueItem *item;
 *
 * // A list widget shows the queue as it changes.
 * gtk_list_view_set_model (view, GTK_SELECTION_MODEL (gtk_no_selection_new (g_object_ref (G_LIST_MODEL (queue)))));
 *
 * item = mend_queue_push (queue, "Then update the changelog", NULL, &error);
 * if (item == NULL)
 *   g_warning ("%s", error->message);  // blank, too large, or the queue is full
 * else
 *   mend_queue_replace_text (queue, mend_queue_item_get_id (item), "Then update NEWS", NULL);
 * ```
 */

#define MAX_ITEMS_LIMIT 1024u

struct _MendQueue
{
  GObject     parent_instance;
  MendOwner         owner;         /* its thread: see mend-owner-private.h */

  MendClock  *clock;
  GPtrArray  *items;           /* MendQueueItem, head first */
  guint64     last_id;
  guint       max_items;
  guint       max_item_bytes;
};

enum {
  PROP_0,
  PROP_CLOCK,
  PROP_MAX_ITEMS,
  PROP_MAX_ITEM_BYTES,
  PROP_N_ITEMS,
  N_PROPS
};

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (MendQueue, mend_queue, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static GParamSpec *properties[N_PROPS];

static GType
mend_queue_get_item_type (GListModel *model)
{
  return MEND_TYPE_QUEUE_ITEM;
}

static guint
mend_queue_get_n_items (GListModel *model)
{
  MendQueue *self = (MendQueue *) model;

  return self->items->len;
}

static gpointer
mend_queue_get_item (GListModel *model,
                     guint       position)
{
  MendQueue *self = (MendQueue *) model;

  if (position >= self->items->len)
    return NULL;

  return g_object_ref (g_ptr_array_index (self->items, position));
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = mend_queue_get_item_type;
  iface->get_n_items = mend_queue_get_n_items;
  iface->get_item = mend_queue_get_item;
}

static void
mend_queue_constructed (GObject *object)
{
  MendQueue *self = (MendQueue *) object;

  G_OBJECT_CLASS (mend_queue_parent_class)->constructed (object);

  if (self->clock == NULL)
    self->clock = g_object_ref (mend_clock_get_default ());
}

static void
mend_queue_finalize (GObject *object)
{
  MendQueue *self = (MendQueue *) object;

  g_clear_pointer (&self->items, g_ptr_array_unref);
  g_clear_object (&self->clock);

  mend_owner_clear (&self->owner);
  G_OBJECT_CLASS (mend_queue_parent_class)->finalize (object);
}

static void
mend_queue_get_property (GObject    *object,
                         guint       prop_id,
                         GValue     *value,
                         GParamSpec *pspec)
{
  MendQueue *self = MEND_QUEUE (object);

  switch (prop_id)
    {
    case PROP_CLOCK:
      g_value_set_object (value, self->clock);
      break;
    case PROP_MAX_ITEMS:
      g_value_set_uint (value, self->max_items);
      break;
    case PROP_MAX_ITEM_BYTES:
      g_value_set_uint (value, self->max_item_bytes);
      break;
    case PROP_N_ITEMS:
      g_value_set_uint (value, self->items->len);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_queue_set_property (GObject      *object,
                         guint         prop_id,
                         const GValue *value,
                         GParamSpec   *pspec)
{
  MendQueue *self = MEND_QUEUE (object);

  switch (prop_id)
    {
    case PROP_CLOCK:
      self->clock = g_value_dup_object (value);
      break;
    case PROP_MAX_ITEMS:
      mend_queue_set_max_items (self, g_value_get_uint (value));
      break;
    case PROP_MAX_ITEM_BYTES:
      mend_queue_set_max_item_bytes (self, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_queue_class_init (MendQueueClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = mend_queue_constructed;
  object_class->finalize = mend_queue_finalize;
  object_class->get_property = mend_queue_get_property;
  object_class->set_property = mend_queue_set_property;

  mend_i18n_init ();

  /**
   * MendQueue:clock:
   *
   * The clock that stamps [property@Mend.QueueItem:queued-at]; %NULL at
   * construction means the default clock.
   */
  properties[PROP_CLOCK] =
    g_param_spec_object ("clock", NULL, NULL,
                         MEND_TYPE_CLOCK,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendQueue:max-items:
   *
   * How many items the queue holds at most; past that, adding one is
   * %MEND_QUEUE_ERROR_FULL. Lowering it below the current length drops
   * nothing: the queue only refuses new items until it is short enough.
   */
  properties[PROP_MAX_ITEMS] =
    g_param_spec_uint ("max-items", NULL, NULL,
                       1, MAX_ITEMS_LIMIT, MEND_QUEUE_DEFAULT_MAX_ITEMS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendQueue:max-item-bytes:
   *
   * How many bytes of UTF-8 one item's text may have, after normalizing;
   * a longer text is %MEND_QUEUE_ERROR_TOO_LARGE. Items already queued are
   * kept when it is lowered.
   */
  properties[PROP_MAX_ITEM_BYTES] =
    g_param_spec_uint ("max-item-bytes", NULL, NULL,
                       1, G_MAXINT, MEND_QUEUE_DEFAULT_MAX_ITEM_BYTES,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendQueue:n-items:
   *
   * How many items the queue holds, notified after
   * [signal@Gio.ListModel::items-changed] when it changes.
   */
  properties[PROP_N_ITEMS] =
    g_param_spec_uint ("n-items", NULL, NULL,
                       0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
mend_queue_init (MendQueue *self)
{
  mend_owner_init (&self->owner);
  self->items = g_ptr_array_new_with_free_func (g_object_unref);
  self->max_items = MEND_QUEUE_DEFAULT_MAX_ITEMS;
  self->max_item_bytes = MEND_QUEUE_DEFAULT_MAX_ITEM_BYTES;
}

static gboolean
find_position (MendQueue  *self,
               const char *id,
               guint      *position)
{
  g_assert (id != NULL);
  g_assert (position != NULL);

  for (guint i = 0; i < self->items->len; i++)
    {
      MendQueueItem *item = g_ptr_array_index (self->items, i);

      if (strcmp (mend_queue_item_get_id (item), id) == 0)
        {
          *position = i;
          return TRUE;
        }
    }

  return FALSE;
}

static gboolean
set_not_found (const char  *id,
               GError     **error)
{
  g_set_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_NOT_FOUND,
               _("No queued message has the id “%s”"), id);
  return FALSE;
}

/* Where @text stops being UTF-8, or -1 when it is valid. */
static gssize
invalid_utf8_offset (const char *text)
{
  const char *end = NULL;

  if (g_utf8_validate (text, -1, &end))
    return -1;

  return end - text;
}

static gboolean
is_blank (const char *text)
{
  for (const char *p = text; *p != '\0'; p = g_utf8_next_char (p))
    {
      if (!g_unichar_isspace (g_utf8_get_char (p)))
        return FALSE;
    }

  return TRUE;
}

/* CRLF and lone CR become LF; nothing else changes. */
static char *
normalize_line_ends (const char *text)
{
  GString *out;

  if (strchr (text, '\r') == NULL)
    return g_strdup (text);

  out = g_string_sized_new (strlen (text));
  for (const char *p = text; *p != '\0'; p++)
    {
      if (*p == '\r')
        {
          g_string_append_c (out, '\n');
          if (p[1] == '\n')
            p++;
        }
      else
        g_string_append_c (out, *p);
    }

  return g_string_free (out, FALSE);
}

static char *
normalize_text (MendQueue   *self,
                const char  *text,
                GError     **error)
{
  g_autofree char *normalized = NULL;
  gssize offset;
  gsize size;

  if (text == NULL || text[0] == '\0')
    {
      g_set_error_literal (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_BLANK,
                           _("The message is empty"));
      return NULL;
    }

  offset = invalid_utf8_offset (text);
  if (offset >= 0)
    {
      g_set_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_INVALID_TEXT,
                   /* Translators: %lu is a byte offset, from 0 */
                   _("The message is not valid UTF-8: bad byte at offset %lu"),
                   (gulong) offset);
      return NULL;
    }

  if (is_blank (text))
    {
      g_set_error_literal (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_BLANK,
                           _("The message is only white space"));
      return NULL;
    }

  normalized = normalize_line_ends (text);
  size = strlen (normalized);

  if (size > self->max_item_bytes)
    {
      g_set_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_TOO_LARGE,
                   g_dngettext (GETTEXT_PACKAGE,
                                "The message is %lu byte; at most %u fit in the queue",
                                "The message is %lu bytes; at most %u fit in the queue",
                                (gulong) size),
                   (gulong) size, self->max_item_bytes);
      return NULL;
    }

  return g_steal_pointer (&normalized);
}

char *
mend_queue_check_message (MendQueue   *self,
                          const char  *text,
                          const char  *provenance,
                          GError     **error)
{
  g_autofree char *normalized = normalize_text (self, text, error);
  gssize offset;

  if (normalized == NULL)
    return NULL;

  offset = provenance != NULL ? invalid_utf8_offset (provenance) : -1;
  if (offset >= 0)
    {
      g_set_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_INVALID_TEXT,
                   /* Translators: the provenance says where a queued
                    * message came from; %lu is a byte offset, from 0 */
                   _("The provenance is not valid UTF-8: bad byte at offset %lu"),
                   (gulong) offset);
      return NULL;
    }

  return g_steal_pointer (&normalized);
}

/* Tells views of a change. A handler may drop the last reference to the
 * queue (its chat's): the queue lives until the emission ends, and callers
 * touch nothing of it after. */
static void
announce (MendQueue *self,
          guint      position,
          guint      removed,
          guint      added)
{
  g_object_ref (self);
  g_list_model_items_changed (G_LIST_MODEL (self), position, removed, added);
  if (removed != added)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_ITEMS]);
  g_object_unref (self);
}

/* Items in the user's room; the resume prompts' room is apart. */
static guint
count_items (MendQueue *self,
             gboolean   extra)
{
  guint n = 0;

  for (guint i = 0; i < self->items->len; i++)
    if (mend_queue_item_get_extra (g_ptr_array_index (self->items, i)) == extra)
      n++;

  return n;
}

/* Whether the room an item goes to can take one more. */
static gboolean
check_room (MendQueue  *self,
            gboolean    extra,
            GError    **error)
{
  guint n_user;

  if (extra && count_items (self, TRUE) >= MEND_QUEUE_MAX_EXTRA_ITEMS)
    {
      g_set_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_FULL,
                   g_dngettext (GETTEXT_PACKAGE,
                                "The queue holds its most resume prompts (%u)",
                                "The queue holds its most resume prompts (%u)",
                                MEND_QUEUE_MAX_EXTRA_ITEMS),
                   MEND_QUEUE_MAX_EXTRA_ITEMS);
      return FALSE;
    }

  n_user = count_items (self, FALSE);
  if (!extra && n_user >= self->max_items)
    {
      if (n_user == self->max_items)
        g_set_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_FULL,
                     g_dngettext (GETTEXT_PACKAGE,
                                  "The queue is full (%u message)",
                                  "The queue is full (%u messages)",
                                  self->max_items),
                     self->max_items);
      else
        g_set_error (error, MEND_QUEUE_ERROR, MEND_QUEUE_ERROR_FULL,
                     g_dngettext (GETTEXT_PACKAGE,
                                  /* Translators: the queue holds more messages
                                   * than its limit, which was lowered after
                                   * they were queued */
                                  "The queue is full (%u message; at most %u)",
                                  "The queue is full (%u messages; at most %u)",
                                  n_user),
                     n_user, self->max_items);
      return FALSE;
    }

  return TRUE;
}

/* An item with the next free id, not in the queue yet. */
static MendQueueItem *
make_item (MendQueue  *self,
           const char *normalized,
           const char *provenance,
           gboolean    extra)
{
  g_autofree char *id = NULL;
  MendQueueItem *item;

  /* Ids never repeat one in the queue, even past a restored id at the
   * top of the range. */
  do
    {
      g_free (id);
      if (++self->last_id == 0)
        self->last_id = 1;
      id = g_strdup_printf ("q%" G_GUINT64_FORMAT, self->last_id);
    }
  while (mend_queue_find (self, id) != NULL);
  item = mend_queue_item_new (id, normalized, provenance,
                              mend_clock_get_real_time (self->clock));
  mend_queue_item_set_extra (item, extra);

  return item;
}

/* Takes @item (transfer full) in at @position and tells views. */
static MendQueueItem *
insert_item (MendQueue     *self,
             guint          position,
             MendQueueItem *item)
{
  g_assert (position <= self->items->len);
  g_assert (MEND_IS_QUEUE_ITEM (item));

  g_ptr_array_insert (self->items, (int) position, item);

  /* A view's handler may take it out again at once: then there is no
   * item to hand back, and no error either. */
  {
    g_autoptr(MendQueue) alive = g_object_ref (self);
    g_autoptr(MendQueueItem) held = g_object_ref (item);

    announce (self, position, 0, 1);
    if (!g_ptr_array_find (self->items, item, NULL))
      item = NULL;
  }

  return item;
}

static MendQueueItem *
add_item (MendQueue   *self,
          guint        position,
          const char  *text,
          const char  *provenance,
          gboolean     extra,
          GError     **error)
{
  g_autofree char *normalized = NULL;

  g_assert (position == 0 || position == self->items->len);

  normalized = mend_queue_check_message (self, text, provenance, error);
  if (normalized == NULL)
    return NULL;

  if (!check_room (self, extra, error))
    return NULL;

  return insert_item (self, position, make_item (self, normalized, provenance, extra));
}

static MendQueueItem *
steal_item (MendQueue *self,
            guint      position)
{
  MendQueueItem *item;

  g_assert (position < self->items->len);

  item = g_ptr_array_steal_index (self->items, position);

  announce (self, position, 1, 0);

  return item;
}

/**
 * mend_queue_new:
 * @clock: (nullable): the clock that stamps the items, or %NULL for the
 *   default clock
 *
 * Creates an empty queue with the default limits.
 *
 * Returns: (transfer full): a new queue
 */
MendQueue *
mend_queue_new (MendClock *clock)
{
  g_return_val_if_fail (clock == NULL || MEND_IS_CLOCK (clock), NULL);

  return g_object_new (MEND_TYPE_QUEUE,
                       "clock", clock,
                       NULL);
}

char *
mend_queue_normalize_text (MendQueue   *self,
                           const char  *text,
                           GError     **error)
{
  g_return_val_if_fail (MEND_IS_QUEUE (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return normalize_text (self, text, error);
}

/**
 * mend_queue_push:
 * @self: a queue
 * @text: (nullable): the text of the message
 * @provenance: (nullable): where the message came from, as JSON text, or
 *   %NULL for a message the user typed
 * @error: return location for a %MEND_QUEUE_ERROR
 *
 * Adds a message at the tail of the queue, stamped with the queue's clock.
 * The text is checked and normalized as by
 * [method@Mend.Queue.normalize_text]; @provenance must be valid UTF-8 and
 * is kept as given. A full queue refuses the message with
 * %MEND_QUEUE_ERROR_FULL. On any error the queue is unchanged.
 *
 * Returns: (transfer none) (nullable): the new item; %NULL with @error
 *   set when it was refused, or %NULL without an error when a handler of
 *   the queue's change already took it out again
 */
MendQueueItem *
mend_queue_push (MendQueue   *self,
                 const char  *text,
                 const char  *provenance,
                 GError     **error)
{
  g_return_val_if_fail (MEND_IS_QUEUE (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return add_item (self, self->items->len, text, provenance, FALSE, error);
}

/**
 * mend_queue_insert_front:
 * @self: a queue
 * @text: (nullable): the text of the message
 * @provenance: (nullable): where the message came from, as JSON text, or
 *   %NULL
 * @error: return location for a %MEND_QUEUE_ERROR
 *
 * Adds a message at the head of the queue, to be sent next: how a chat
 * puts its "Continue" prompt before the user's follow-ups. The rules are
 * those of [method@Mend.Queue.push]; on any error the queue is unchanged.
 *
 * Returns: (transfer none) (nullable): the new item; %NULL with @error
 *   set when it was refused, or %NULL without an error when a handler of
 *   the queue's change already took it out again
 */
MendQueueItem *
mend_queue_insert_front (MendQueue   *self,
                         const char  *text,
                         const char  *provenance,
                         GError     **error)
{
  g_return_val_if_fail (MEND_IS_QUEUE (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return add_item (self, 0, text, provenance, FALSE, error);
}

/**
 * mend_queue_remove:
 * @self: a queue
 * @id: the id of an item
 * @error: return location for a %MEND_QUEUE_ERROR
 *
 * Removes the item with id @id, wherever it is in the queue.
 *
 * Returns: %TRUE if the item was removed, %FALSE with
 *   %MEND_QUEUE_ERROR_NOT_FOUND if no item has that id
 */
gboolean
mend_queue_remove (MendQueue   *self,
                   const char  *id,
                   GError     **error)
{
  MendQueueItem *item;
  guint position;

  g_return_val_if_fail (MEND_IS_QUEUE (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);
  g_return_val_if_fail (id != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!find_position (self, id, &position))
    return set_not_found (id, error);

  item = steal_item (self, position);
  g_object_unref (item);

  return TRUE;
}

/**
 * mend_queue_replace_text:
 * @self: a queue
 * @id: the id of an item
 * @text: (nullable): the new text
 * @error: return location for a %MEND_QUEUE_ERROR
 *
 * Edits a queued message. The text is checked and normalized as by
 * [method@Mend.Queue.normalize_text] (a full queue does not matter). The
 * item keeps its place, id, provenance and time, and stays the same object:
 * it notifies [property@Mend.QueueItem:text], and the queue emits
 * [signal@Gio.ListModel::items-changed] for its position. Text equal to
 * the current one changes nothing and emits nothing.
 *
 * Returns: %TRUE if the item has the text now, %FALSE with @error set
 *   (%MEND_QUEUE_ERROR_NOT_FOUND if no item has that id); the item is
 *   unchanged then
 */
gboolean
mend_queue_replace_text (MendQueue   *self,
                         const char  *id,
                         const char  *text,
                         GError     **error)
{
  g_autofree char *normalized = NULL;
  MendQueueItem *item;
  guint position;

  g_return_val_if_fail (MEND_IS_QUEUE (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);
  g_return_val_if_fail (id != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!find_position (self, id, &position))
    return set_not_found (id, error);

  normalized = normalize_text (self, text, error);
  if (normalized == NULL)
    return FALSE;

  item = g_ptr_array_index (self->items, position);
  if (strcmp (mend_queue_item_get_text (item), normalized) == 0)
    return TRUE;

  mend_queue_item_set_text (item, normalized);
  announce (self, position, 1, 1);

  return TRUE;
}

/**
 * mend_queue_peek:
 * @self: a queue
 *
 * Gets the item that would be sent next, leaving it in the queue.
 *
 * Returns: (transfer none) (nullable): the head, or %NULL if the queue is
 *   empty
 */
MendQueueItem *
mend_queue_peek (MendQueue *self)
{
  g_return_val_if_fail (MEND_IS_QUEUE (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  if (self->items->len == 0)
    return NULL;

  return g_ptr_array_index (self->items, 0);
}

/**
 * mend_queue_pop:
 * @self: a queue
 *
 * Takes the head out of the queue, to send it.
 *
 * Returns: (transfer full) (nullable): the former head, or %NULL if the
 *   queue is empty
 */
MendQueueItem *
mend_queue_pop (MendQueue *self)
{
  g_return_val_if_fail (MEND_IS_QUEUE (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);

  if (self->items->len == 0)
    return NULL;

  return steal_item (self, 0);
}

/**
 * mend_queue_find:
 * @self: a queue
 * @id: the id of an item
 *
 * Looks an item up by its id.
 *
 * Returns: (transfer none) (nullable): the item, or %NULL if no item in
 *   the queue has that id
 */
MendQueueItem *
mend_queue_find (MendQueue  *self,
                 const char *id)
{
  guint position;

  g_return_val_if_fail (MEND_IS_QUEUE (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);
  g_return_val_if_fail (id != NULL, NULL);

  if (!find_position (self, id, &position))
    return NULL;

  return g_ptr_array_index (self->items, position);
}

/**
 * mend_queue_get_length:
 * @self: a queue
 *
 * Gets how many items the queue holds: [property@Mend.Queue:n-items].
 *
 * Returns: the number of items
 */
guint
mend_queue_get_length (MendQueue *self)
{
  g_return_val_if_fail (MEND_IS_QUEUE (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->items->len;
}

gboolean
mend_queue_is_full (MendQueue *self)
{
  g_return_val_if_fail (MEND_IS_QUEUE (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);

  return count_items (self, FALSE) >= self->max_items;
}

/**
 * mend_queue_get_max_items:
 * @self: a queue
 *
 * Gets how many items the queue holds at most.
 *
 * Returns: the limit
 */
guint
mend_queue_get_max_items (MendQueue *self)
{
  g_return_val_if_fail (MEND_IS_QUEUE (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->max_items;
}

/**
 * mend_queue_set_max_items:
 * @self: a queue
 * @max_items: the limit, from 1 to 1024
 *
 * Sets how many items the queue holds at most. Lowering it below the
 * current length drops nothing; the queue refuses new items until it is
 * shorter than the limit.
 */
void
mend_queue_set_max_items (MendQueue *self,
                          guint      max_items)
{
  g_return_if_fail (MEND_IS_QUEUE (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (max_items >= 1 && max_items <= MAX_ITEMS_LIMIT);

  if (self->max_items == max_items)
    return;

  self->max_items = max_items;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_ITEMS]);
}

/**
 * mend_queue_get_max_item_bytes:
 * @self: a queue
 *
 * Gets how many bytes one item's text may have.
 *
 * Returns: the limit in bytes
 */
guint
mend_queue_get_max_item_bytes (MendQueue *self)
{
  g_return_val_if_fail (MEND_IS_QUEUE (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return self->max_item_bytes;
}

/**
 * mend_queue_set_max_item_bytes:
 * @self: a queue
 * @max_item_bytes: the limit in bytes, from 1 to %G_MAXINT
 *
 * Sets how many bytes of UTF-8 one item's text may have, counted after
 * normalizing. Items already queued are kept.
 */
void
mend_queue_set_max_item_bytes (MendQueue *self,
                               guint      max_item_bytes)
{
  g_return_if_fail (MEND_IS_QUEUE (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (max_item_bytes >= 1 && max_item_bytes <= G_MAXINT);

  if (self->max_item_bytes == max_item_bytes)
    return;

  self->max_item_bytes = max_item_bytes;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_ITEM_BYTES]);
}

MendQueueItem *
mend_queue_restore_item (MendQueue   *self,
                         const char  *id,
                         const char  *text,
                         const char  *provenance,
                         gint64       queued_at,
                         gboolean     extra,
                         GError     **error)
{
  g_autofree char *normalized = NULL;
  MendQueueItem *item;
  guint64 number;
  gboolean full;

  g_return_val_if_fail (MEND_IS_QUEUE (self), NULL);
  mend_return_val_if_not_owner (&self->owner, self, NULL);
  g_return_val_if_fail (id != NULL, NULL);

  normalized = mend_queue_check_message (self, text, provenance, error);
  if (normalized == NULL)
    return NULL;

  full = extra ? count_items (self, TRUE) >= MEND_QUEUE_MAX_EXTRA_ITEMS
               : count_items (self, FALSE) >= self->max_items;
  if (mend_queue_find (self, id) != NULL || full)
    {
      g_set_error (error, MEND_QUEUE_ERROR,
                   full ? MEND_QUEUE_ERROR_FULL : MEND_QUEUE_ERROR_INVALID_TEXT,
                   _("The queued message “%s” cannot be restored"), id);
      return NULL;
    }

  /* Ids this queue makes must not meet the restored ones. */
  if (id[0] == 'q' && g_ascii_string_to_unsigned (id + 1, 10, 1, G_MAXUINT64, &number, NULL))
    self->last_id = MAX (self->last_id, number);

  item = mend_queue_item_new (id, normalized, provenance, queued_at);
  mend_queue_item_set_extra (item, extra);
  g_ptr_array_add (self->items, item);

  return item;
}

void
mend_queue_announce_restored (MendQueue *self,
                              guint      position,
                              guint      n)
{
  g_return_if_fail (MEND_IS_QUEUE (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (position + n == self->items->len);

  if (n > 0)
    announce (self, position, 0, n);
}

gboolean
mend_queue_add_prompt (MendQueue      *self,
                       const char     *text,
                       const char     *provenance,
                       gboolean        push,
                       MendQueueItem **item,
                       GError        **error)
{
  g_autofree char *normalized = NULL;

  g_return_val_if_fail (MEND_IS_QUEUE (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);
  g_return_val_if_fail (item != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  normalized = mend_queue_check_message (self, text, provenance, error);
  if (normalized == NULL || (push && !check_room (self, TRUE, error)))
    return FALSE;

  g_clear_object (item);
  *item = make_item (self, normalized, provenance, TRUE);
  if (push)
    insert_item (self, self->items->len, g_object_ref (*item));
  return TRUE;
}

gboolean
mend_queue_has_item (MendQueue     *self,
                     MendQueueItem *item)
{
  g_return_val_if_fail (MEND_IS_QUEUE (self), FALSE);
  mend_return_val_if_not_owner (&self->owner, self, FALSE);

  return item != NULL && g_ptr_array_find (self->items, item, NULL);
}

guint
mend_queue_get_n_user (MendQueue *self)
{
  g_return_val_if_fail (MEND_IS_QUEUE (self), 0);
  mend_return_val_if_not_owner (&self->owner, self, 0);

  return count_items (self, FALSE);
}

void
mend_queue_put_back (MendQueue     *self,
                     MendQueueItem *item)
{
  g_return_if_fail (MEND_IS_QUEUE (self));
  mend_return_if_not_owner (&self->owner, self);
  g_return_if_fail (MEND_IS_QUEUE_ITEM (item));

  g_ptr_array_insert (self->items, 0, g_object_ref (item));
  announce (self, 0, 0, 1);
}
