/* mend-gtk-queue-view.c — MendGtkQueueView: a chat's queued follow-ups, each with edit and remove
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <glib/gi18n-lib.h>

#include "libmend-gtk.h"
#include "mend-gtk-i18n-private.h"
#include "mend-gtk-style-private.h"

/**
 * MendGtkQueueView:
 *
 * The follow-ups waiting in a [class@Mend.Chat]'s [class@Mend.Queue], in
 * the order they will be sent, each in a row of a [class@Gtk.ListBox]
 * with a button to remove it and one to edit its text.
 *
 * Set [property@MendGtk.QueueView:chat]; the view follows the queue as it
 * changes and takes no room while it is empty.
 *
 * The item that [class@Mend.Chat] puts at the head after a give-up, to
 * continue the turn that gave up (its provenance is
 * %MEND_CHAT_CONTINUE_PROVENANCE), is marked apart: its row has the
 * `.continue` style class and says what it is, rather than showing the
 * prompt as if the person had typed it. It can be removed, not edited.
 *
 * Each row has an accessible label ("Queued: …", "Continue: …"), and each
 * button its own ("Remove from the queue", "Edit"), so that the list is
 * usable from the keyboard and with a screen reader: Tab reaches the
 * buttons, Enter on a text starts editing it, Enter again keeps the
 * change and Escape drops it.
 *
 * ## CSS nodes and style classes
 *
 * ```
 * mendqueueview
 * ╰── list.boxed-list.queue
 *     ├── row.queued
 *     │   ╰── box
 *     │       ├── editablelabel.text
 *     │       ├── button.edit.flat
 *     │       ╰── button.remove.flat
 *     ╰── row.continue
 *         ╰── box
 *             ├── box
 *             │   ├── label.heading
 *             │   ╰── label.dim-label
 *             ╰── button.remove.flat
 * ```
 *
 * Since: 0.2
 */

struct _MendGtkQueueView
{
  GtkWidget parent_instance;

  MendChat *chat;
  MendQueue *queue;

  GtkWidget *list;
};

enum {
  PROP_0,
  PROP_CHAT,
  N_PROPS
};

G_DEFINE_FINAL_TYPE (MendGtkQueueView, mend_gtk_queue_view, GTK_TYPE_WIDGET)

static GParamSpec *properties[N_PROPS];

#define ITEM_ID_KEY "mend-gtk-queue-item-id"

static gboolean
is_continue (MendQueueItem *item)
{
  return g_strcmp0 (mend_queue_item_get_provenance (item), MEND_CHAT_CONTINUE_PROVENANCE) == 0;
}

static void
update_visible (MendGtkQueueView *self)
{
  gtk_widget_set_visible (self->list, self->queue != NULL && g_list_model_get_n_items (G_LIST_MODEL (self->queue)) > 0);
}

static void
on_items_changed (GListModel       *model,
                  guint             position,
                  guint             removed,
                  guint             added,
                  MendGtkQueueView *self)
{
  update_visible (self);
}

static void
on_remove_clicked (GtkButton        *button,
                   MendGtkQueueView *self)
{
  const char *id = g_object_get_data (G_OBJECT (button), ITEM_ID_KEY);
  g_autoptr(GError) error = NULL;

  /* Already sent, or removed: the row goes with the next change. */
  if (self->queue != NULL && !mend_queue_remove (self->queue, id, &error))
    g_debug ("Could not remove a queued item: %s", error->message);
}

static void
on_edit_clicked (GtkButton        *button,
                 GtkEditableLabel *text)
{
  gtk_editable_label_start_editing (text);
  gtk_widget_grab_focus (GTK_WIDGET (text));
}

static void
on_editing_changed (GtkEditableLabel *text,
                    GParamSpec       *pspec,
                    MendGtkQueueView *self)
{
  const char *id = g_object_get_data (G_OBJECT (text), ITEM_ID_KEY);
  MendQueueItem *item;
  g_autoptr(GError) error = NULL;

  if (gtk_editable_label_get_editing (text) || self->queue == NULL)
    return;
  item = mend_queue_find (self->queue, id);
  if (item == NULL)
    return;
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (text)), mend_queue_item_get_text (item)) == 0)
    return;
  /* Blank or too long: the queue keeps the old text, and so does the row. */
  if (!mend_queue_replace_text (self->queue, id, gtk_editable_get_text (GTK_EDITABLE (text)), &error))
    {
      g_debug ("Could not edit a queued item: %s", error->message);
      gtk_editable_set_text (GTK_EDITABLE (text), mend_queue_item_get_text (item));
    }
}

static GtkWidget *
make_icon_button (const char *icon_name,
                  const char *css_class,
                  const char *tooltip,
                  const char *accessible_label)
{
  GtkWidget *button = gtk_button_new_from_icon_name (icon_name);

  gtk_widget_add_css_class (button, css_class);
  gtk_widget_add_css_class (button, "flat");
  gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (button, tooltip);
  gtk_accessible_update_property (GTK_ACCESSIBLE (button),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, accessible_label,
                                  -1);
  return button;
}

static GtkWidget *
create_row (gpointer object,
            gpointer user_data)
{
  MendGtkQueueView *self = user_data;
  MendQueueItem *item = object;
  const char *id = mend_queue_item_get_id (item);
  const char *text = mend_queue_item_get_text (item);
  g_autofree char *accessible = NULL;
  GtkWidget *row = gtk_list_box_row_new ();
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *remove;

  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), FALSE);
  gtk_widget_set_margin_start (box, 12);
  gtk_widget_set_margin_end (box, 6);
  gtk_widget_set_margin_top (box, 6);
  gtk_widget_set_margin_bottom (box, 6);
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), box);

  if (is_continue (item))
    {
      GtkWidget *texts = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
      /* Translators: the title of the queued item that resumes the turn that gave up */
      GtkWidget *title = gtk_label_new (_("Continue"));
      /* Translators: says what the Continue item in the queue does */
      GtkWidget *subtitle = gtk_label_new (_("Resumes the unfinished turn before your next message"));

      gtk_widget_add_css_class (row, "continue");
      gtk_widget_set_hexpand (texts, TRUE);
      gtk_label_set_xalign (GTK_LABEL (title), 0.0f);
      gtk_widget_add_css_class (title, "heading");
      gtk_label_set_xalign (GTK_LABEL (subtitle), 0.0f);
      gtk_label_set_wrap (GTK_LABEL (subtitle), TRUE);
      gtk_widget_add_css_class (subtitle, "dim-label");
      gtk_box_append (GTK_BOX (texts), title);
      gtk_box_append (GTK_BOX (texts), subtitle);
      gtk_box_append (GTK_BOX (box), texts);
      /* Translators: a screen reader's name for the Continue row; %s is its prompt */
      accessible = g_strdup_printf (_("Continue: %s"), text);
    }
  else
    {
      GtkWidget *label = gtk_editable_label_new (text);
      GtkWidget *edit;

      gtk_widget_add_css_class (row, "queued");
      gtk_widget_add_css_class (label, "text");
      gtk_widget_set_hexpand (label, TRUE);
      gtk_widget_set_valign (label, GTK_ALIGN_CENTER);
      gtk_editable_set_width_chars (GTK_EDITABLE (label), 8);
      g_object_set_data_full (G_OBJECT (label), ITEM_ID_KEY, g_strdup (id), g_free);
      g_signal_connect_object (label, "notify::editing", G_CALLBACK (on_editing_changed), self, 0);
      gtk_box_append (GTK_BOX (box), label);

      /* Translators: a button's tooltip and a screen reader's name for it */
      edit = make_icon_button ("document-edit-symbolic", "edit", _("Edit"), _("Edit"));
      g_signal_connect (edit, "clicked", G_CALLBACK (on_edit_clicked), label);
      gtk_box_append (GTK_BOX (box), edit);
      /* Translators: a screen reader's name for a queued follow-up's row; %s is its text */
      accessible = g_strdup_printf (_("Queued: %s"), text);
    }

  /* Translators: a button's tooltip */
  remove = make_icon_button ("window-close-symbolic", "remove", _("Remove"),
                             /* Translators: a screen reader's name for the remove button */
                             _("Remove from the queue"));
  g_object_set_data_full (G_OBJECT (remove), ITEM_ID_KEY, g_strdup (id), g_free);
  g_signal_connect_object (remove, "clicked", G_CALLBACK (on_remove_clicked), self, 0);
  gtk_box_append (GTK_BOX (box), remove);

  gtk_accessible_update_property (GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, accessible, -1);
  return row;
}

/**
 * mend_gtk_queue_view_new:
 * @chat: (nullable): the chat whose queue to show
 *
 * Makes a view of @chat's queue.
 *
 * Returns: (transfer floating): a new queue view
 *
 * Since: 0.2
 */
GtkWidget *
mend_gtk_queue_view_new (MendChat *chat)
{
  g_return_val_if_fail (chat == NULL || MEND_IS_CHAT (chat), NULL);

  return g_object_new (MEND_GTK_TYPE_QUEUE_VIEW, "chat", chat, NULL);
}

/**
 * mend_gtk_queue_view_get_chat:
 * @self: a queue view
 *
 * Gets [property@MendGtk.QueueView:chat].
 *
 * Returns: (transfer none) (nullable): the chat whose queue it shows
 *
 * Since: 0.2
 */
MendChat *
mend_gtk_queue_view_get_chat (MendGtkQueueView *self)
{
  g_return_val_if_fail (MEND_GTK_IS_QUEUE_VIEW (self), NULL);

  return self->chat;
}

/**
 * mend_gtk_queue_view_set_chat:
 * @self: a queue view
 * @chat: (nullable): the chat whose queue to show
 *
 * Shows @chat's queue.
 *
 * Since: 0.2
 */
void
mend_gtk_queue_view_set_chat (MendGtkQueueView *self,
                              MendChat         *chat)
{
  g_return_if_fail (MEND_GTK_IS_QUEUE_VIEW (self));
  g_return_if_fail (chat == NULL || MEND_IS_CHAT (chat));

  if (self->chat == chat)
    return;

  if (self->queue != NULL)
    g_signal_handlers_disconnect_by_data (self->queue, self);
  gtk_list_box_bind_model (GTK_LIST_BOX (self->list), NULL, NULL, NULL, NULL);
  g_clear_object (&self->queue);
  g_set_object (&self->chat, chat);

  if (chat != NULL)
    {
      self->queue = g_object_ref (mend_chat_get_queue (chat));
      gtk_list_box_bind_model (GTK_LIST_BOX (self->list), G_LIST_MODEL (self->queue), create_row, self, NULL);
      g_signal_connect_object (self->queue, "items-changed", G_CALLBACK (on_items_changed), self, 0);
    }
  update_visible (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CHAT]);
}

static void
mend_gtk_queue_view_dispose (GObject *object)
{
  MendGtkQueueView *self = MEND_GTK_QUEUE_VIEW (object);

  if (self->queue != NULL)
    g_signal_handlers_disconnect_by_data (self->queue, self);
  if (self->list != NULL)
    gtk_list_box_bind_model (GTK_LIST_BOX (self->list), NULL, NULL, NULL, NULL);
  g_clear_object (&self->queue);
  g_clear_object (&self->chat);
  g_clear_pointer (&self->list, gtk_widget_unparent);

  G_OBJECT_CLASS (mend_gtk_queue_view_parent_class)->dispose (object);
}

static void
mend_gtk_queue_view_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  MendGtkQueueView *self = MEND_GTK_QUEUE_VIEW (object);

  switch (prop_id)
    {
    case PROP_CHAT:
      g_value_set_object (value, self->chat);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_gtk_queue_view_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  MendGtkQueueView *self = MEND_GTK_QUEUE_VIEW (object);

  switch (prop_id)
    {
    case PROP_CHAT:
      mend_gtk_queue_view_set_chat (self, g_value_get_object (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_gtk_queue_view_class_init (MendGtkQueueViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  mend_gtk_i18n_init ();

  object_class->dispose = mend_gtk_queue_view_dispose;
  object_class->get_property = mend_gtk_queue_view_get_property;
  object_class->set_property = mend_gtk_queue_view_set_property;

  /**
   * MendGtkQueueView:chat:
   *
   * The chat whose queue the view shows, or %NULL.
   *
   * Since: 0.2
   */
  properties[PROP_CHAT] =
    g_param_spec_object ("chat", NULL, NULL,
                         MEND_TYPE_CHAT,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_css_name (widget_class, "mendqueueview");
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
}

static void
mend_gtk_queue_view_init (MendGtkQueueView *self)
{
  mend_gtk_style_ensure (GTK_WIDGET (self));

  self->list = gtk_list_box_new ();
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (self->list), GTK_SELECTION_NONE);
  gtk_widget_add_css_class (self->list, "boxed-list");
  gtk_widget_add_css_class (self->list, "queue");
  /* Translators: a screen reader's name for the list of queued follow-ups */
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->list),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL, _("Queued messages"),
                                  -1);
  gtk_widget_set_parent (self->list, GTK_WIDGET (self));
  update_visible (self);
}
