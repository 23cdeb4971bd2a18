/* mend-queue-item.c — MendQueueItem: one message waiting in the queue
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-queue-item-private.h"

/**
 * MendQueueItem:
 *
 * One follow-up message waiting in a [class@Mend.Queue].
 *
 * An item is read-only to its users: only its queue makes it and changes
 * it. [property@Mend.QueueItem:id] stays the same for the item's whole life
 * and is never given to another item of the same queue, so the UI can name
 * an item to remove or edit even after the queue moved. When the text is
 * edited through [method@Mend.Queue.replace_text] the item stays the same
 * object and notifies [property@Mend.QueueItem:text], so a row bound to it
 * keeps its widget.
 *
 * Example:
 *
 * ```c
 * static void
 * bind_row (GtkLabel *label, MendQueueItem *item)
 * {
 *   // Editing the item's text notifies it: the row follows.
 *   g_object_bind_property (item, "text", label, "label", G_BINDING_SYNC_CREATE);
 *   g_object_set_data_full (G_OBJECT (label), "item-id",
 *                           g_strdup (mend_queue_item_get_id (item)), g_free);
 * }
 * ```
 */

struct _MendQueueItem
{
  GObject  parent_instance;

  char    *id;
  char    *text;
  char    *provenance;
  gint64   queued_at;
  gboolean extra;
  gboolean withdrawn;
};

enum {
  PROP_0,
  PROP_ID,
  PROP_TEXT,
  PROP_PROVENANCE,
  PROP_QUEUED_AT,
  N_PROPS
};

G_DEFINE_FINAL_TYPE (MendQueueItem, mend_queue_item, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];

static void
mend_queue_item_finalize (GObject *object)
{
  MendQueueItem *self = (MendQueueItem *) object;

  g_clear_pointer (&self->id, g_free);
  g_clear_pointer (&self->text, g_free);
  g_clear_pointer (&self->provenance, g_free);

  G_OBJECT_CLASS (mend_queue_item_parent_class)->finalize (object);
}

static void
mend_queue_item_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  MendQueueItem *self = MEND_QUEUE_ITEM (object);

  switch (prop_id)
    {
    case PROP_ID:
      g_value_set_string (value, self->id);
      break;
    case PROP_TEXT:
      g_value_set_string (value, self->text);
      break;
    case PROP_PROVENANCE:
      g_value_set_string (value, self->provenance);
      break;
    case PROP_QUEUED_AT:
      g_value_set_int64 (value, self->queued_at);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_queue_item_class_init (MendQueueItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = mend_queue_item_finalize;
  object_class->get_property = mend_queue_item_get_property;

  /**
   * MendQueueItem:id:
   *
   * The item's id, unique within its queue and never reused by it.
   */
  properties[PROP_ID] =
    g_param_spec_string ("id", NULL, NULL,
                         NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendQueueItem:text:
   *
   * The message, with line ends normalized to LF. It changes (and is
   * notified) when the queue replaces it.
   */
  properties[PROP_TEXT] =
    g_param_spec_string ("text", NULL, NULL,
                         NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendQueueItem:provenance:
   *
   * Where the message came from, as JSON text, or %NULL for a message the
   * user typed.
   */
  properties[PROP_PROVENANCE] =
    g_param_spec_string ("provenance", NULL, NULL,
                         NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendQueueItem:queued-at:
   *
   * When the message was queued: wall-clock microseconds since the Unix
   * epoch, on the queue's [class@Mend.Clock].
   */
  properties[PROP_QUEUED_AT] =
    g_param_spec_int64 ("queued-at", NULL, NULL,
                        G_MININT64, G_MAXINT64, 0,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
mend_queue_item_init (MendQueueItem *self)
{
}

MendQueueItem *
mend_queue_item_new (const char *id,
                     const char *text,
                     const char *provenance,
                     gint64      queued_at)
{
  MendQueueItem *self;

  g_assert (id != NULL);
  g_assert (text != NULL);

  self = g_object_new (MEND_TYPE_QUEUE_ITEM, NULL);
  self->id = g_strdup (id);
  self->text = g_strdup (text);
  self->provenance = g_strdup (provenance);
  self->queued_at = queued_at;

  return self;
}

void
mend_queue_item_set_text (MendQueueItem *self,
                          const char    *text)
{
  g_assert (MEND_IS_QUEUE_ITEM (self));
  g_assert (text != NULL);

  if (g_strcmp0 (self->text, text) == 0)
    return;

  g_free (self->text);
  self->text = g_strdup (text);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TEXT]);
}

/**
 * mend_queue_item_get_id:
 * @self: an item
 *
 * Gets the item's id, unique within its queue and never reused by it.
 *
 * Returns: (transfer none): the id
 */
const char *
mend_queue_item_get_id (MendQueueItem *self)
{
  g_return_val_if_fail (MEND_IS_QUEUE_ITEM (self), NULL);

  return self->id;
}

/**
 * mend_queue_item_get_text:
 * @self: an item
 *
 * Gets the message, with line ends normalized to LF.
 *
 * Returns: (transfer none): the text
 */
const char *
mend_queue_item_get_text (MendQueueItem *self)
{
  g_return_val_if_fail (MEND_IS_QUEUE_ITEM (self), NULL);

  return self->text;
}

/**
 * mend_queue_item_get_provenance:
 * @self: an item
 *
 * Gets where the message came from, as the JSON text it was queued with.
 *
 * Returns: (transfer none) (nullable): the provenance, or %NULL for a
 *   message the user typed
 */
const char *
mend_queue_item_get_provenance (MendQueueItem *self)
{
  g_return_val_if_fail (MEND_IS_QUEUE_ITEM (self), NULL);

  return self->provenance;
}

/**
 * mend_queue_item_get_queued_at:
 * @self: an item
 *
 * Gets when the message was queued.
 *
 * Returns: wall-clock microseconds since the Unix epoch
 */
gint64
mend_queue_item_get_queued_at (MendQueueItem *self)
{
  g_return_val_if_fail (MEND_IS_QUEUE_ITEM (self), 0);

  return self->queued_at;
}

void
mend_queue_item_set_extra (MendQueueItem *self,
                           gboolean       extra)
{
  g_assert (MEND_IS_QUEUE_ITEM (self));

  self->extra = !!extra;
}

gboolean
mend_queue_item_get_extra (MendQueueItem *self)
{
  g_assert (MEND_IS_QUEUE_ITEM (self));

  return self->extra;
}

void
mend_queue_item_set_withdrawn (MendQueueItem *self)
{
  g_return_if_fail (MEND_IS_QUEUE_ITEM (self));

  self->withdrawn = TRUE;
}

gboolean
mend_queue_item_get_withdrawn (MendQueueItem *self)
{
  g_return_val_if_fail (MEND_IS_QUEUE_ITEM (self), FALSE);

  return self->withdrawn;
}
