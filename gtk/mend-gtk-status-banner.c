/* mend-gtk-status-banner.c — MendGtkStatusBanner: a chat's retry state, with Retry now, Stop and Retry
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <glib/gi18n-lib.h>

#include "libmend-gtk.h"
#include "mend-gtk-i18n-private.h"
#include "mend-gtk-style-private.h"

/**
 * MendGtkStatusBanner:
 *
 * A banner that shows what a [class@Mend.Chat] is doing about a failure,
 * and offers what a person can do about it.
 *
 * Set [property@MendGtk.StatusBanner:chat] and put the banner above or
 * below the conversation: nothing else is needed.
 *
 * - While the chat is idle, or a retry is too quick to mention (below
 *   [property@Mend.Chat:quiet-wait-ms]), the banner is hidden: it follows
 *   [property@Mend.Chat:status-text] and shows only when that has words.
 * - During a wait it shows the status sentence, ticking each second
 *   ("The service is overloaded — retrying in 4 s (retry 1 of 4)"), a
 *   "Retry now" button that fires the wait at once and a "Stop" button.
 *   While the network is gone or a gate holds the turn, the sentence says
 *   so and "Retry now" is not offered.
 * - After a give-up it shows the failure's sentence and a "Retry" button
 *   ([method@Mend.Chat.retry]); a "Details" toggle reveals the server's own
 *   text ([property@Mend.Failure:message]), selectable, for a bug report.
 * - At a usage limit (a failure of kind %MEND_FAILURE_LIMIT) it says so,
 *   with Retry for when the person knows the limit has lifted.
 *
 * ## CSS nodes and style classes
 *
 * ```
 * mendstatusbanner[.waiting][.held][.offline][.gave-up][.limit]
 * ╰── revealer
 *     ╰── box.card.status
 *         ├── box
 *         │   ├── image[.warning][.error]
 *         │   ├── box
 *         │   │   ╰── label.status-text
 *         │   ├── button.retry-now
 *         │   ├── button.stop
 *         │   ├── button.retry.suggested-action
 *         │   ╰── togglebutton.details
 *         ╰── revealer
 *             ╰── label.details.dim-label.monospace
 * ```
 *
 * The banner's own node carries the state: `.waiting` during a wait or
 * a retry under way, `.held` while a gate holds it (and `.offline` when
 * that is because the network is gone), `.gave-up` after a give-up and
 * `.limit` at a usage limit. Only standard style classes are
 * used otherwise (`.card`, `.warning`, `.error`, `.dim-label`,
 * `.suggested-action`, `.monospace`), so that it fits GTK's own theme and
 * libadwaita's, light and dark.
 *
 * Since: 0.2
 */

struct _MendGtkStatusBanner
{
  GtkWidget parent_instance;

  MendChat *chat;

  GtkWidget *revealer;
  GtkWidget *card;
  GtkWidget *icon;
  GtkWidget *label;
  GtkWidget *retry_now;
  GtkWidget *stop;
  GtkWidget *retry;
  GtkWidget *details;
  GtkWidget *details_revealer;
  GtkWidget *details_label;
};

enum {
  PROP_0,
  PROP_CHAT,
  N_PROPS
};

G_DEFINE_FINAL_TYPE (MendGtkStatusBanner, mend_gtk_status_banner, GTK_TYPE_WIDGET)

static GParamSpec *properties[N_PROPS];

static void
set_css_class (GtkWidget  *widget,
               const char *css_class,
               gboolean    set)
{
  if (set)
    gtk_widget_add_css_class (widget, css_class);
  else
    gtk_widget_remove_css_class (widget, css_class);
}

/* Everything the banner shows follows from the chat's status, its wait,
 * its turn and its last failure. */
static void
update (MendGtkStatusBanner *self)
{
  const char *text = self->chat != NULL ? mend_chat_get_status_text (self->chat) : NULL;
  gboolean shown = text != NULL && text[0] != '\0';
  MendRetryWait *wait = NULL;
  MendFailure *failure = NULL;
  gboolean busy = FALSE;
  gboolean waiting, held, offline = FALSE, gave_up, limit;
  const char *message = NULL;

  if (self->chat != NULL)
    {
      wait = mend_chat_get_wait (self->chat);
      failure = mend_chat_get_last_failure (self->chat);
      busy = mend_chat_get_turn (self->chat) != NULL;
    }
  if (wait != NULL && mend_retry_wait_get_state (wait) != MEND_RETRY_WAIT_PENDING)
    wait = NULL;

  waiting = shown && wait != NULL;
  held = waiting && mend_retry_wait_get_held (wait);
  if (held)
    {
      MendGateState gate_state;

      g_object_get (wait, "gate-state", &gate_state, NULL);
      offline = gate_state == MEND_GATE_OFFLINE;
    }
  gave_up = shown && !busy;
  limit = gave_up && failure != NULL && mend_failure_get_kind (failure) == MEND_FAILURE_LIMIT;
  if (gave_up && failure != NULL)
    message = mend_failure_get_message (failure);

  /* Retry is never offered while hidden. */
  gtk_widget_set_sensitive (self->retry, gave_up && mend_chat_get_can_retry (self->chat));
  /* The words stay while the banner slides away. */
  if (shown)
    gtk_label_set_label (GTK_LABEL (self->label), text);
  gtk_revealer_set_reveal_child (GTK_REVEALER (self->revealer), shown);
  if (!shown)
    return;

  set_css_class (GTK_WIDGET (self), "waiting", busy);
  set_css_class (GTK_WIDGET (self), "held", held);
  set_css_class (GTK_WIDGET (self), "offline", offline);
  set_css_class (GTK_WIDGET (self), "gave-up", gave_up);
  set_css_class (GTK_WIDGET (self), "limit", limit);

  gtk_image_set_from_icon_name (GTK_IMAGE (self->icon),
                                offline ? "network-offline-symbolic" :
                                gave_up ? "dialog-warning-symbolic" : "view-refresh-symbolic");
  set_css_class (self->icon, "warning", busy || limit);
  set_css_class (self->icon, "error", gave_up && !limit);

  gtk_widget_set_visible (self->retry_now, waiting && !held);
  gtk_widget_set_visible (self->stop, busy);
  gtk_widget_set_visible (self->retry, gave_up);

  gtk_label_set_label (GTK_LABEL (self->details_label), message != NULL ? message : "");
  gtk_widget_set_visible (self->details, message != NULL && message[0] != '\0');
  if (!gtk_widget_get_visible (self->details))
    gtk_toggle_button_set_active (GTK_TOGGLE_BUTTON (self->details), FALSE);
}

static void
on_chat_notify (MendChat            *chat,
                GParamSpec          *pspec,
                MendGtkStatusBanner *self)
{
  update (self);
}

static void
on_retry_now_clicked (MendGtkStatusBanner *self)
{
  MendRetryWait *wait;

  if (self->chat == NULL)
    return;
  wait = mend_chat_get_wait (self->chat);
  if (wait != NULL)
    mend_retry_wait_fire_now (wait);
}

static void
on_stop_clicked (MendGtkStatusBanner *self)
{
  if (self->chat != NULL)
    mend_chat_stop (self->chat);
}

static void
on_retry_clicked (MendGtkStatusBanner *self)
{
  g_autoptr(GError) error = NULL;

  /* The button is sensitive only when the chat can retry; a refusal here
   * is a race with the chat's own state, which the next update shows. */
  if (self->chat != NULL && !mend_chat_retry (self->chat, &error))
    g_debug ("Retry refused: %s", error->message);
}

/**
 * mend_gtk_status_banner_new:
 * @chat: (nullable): the chat to show
 *
 * Makes a banner for @chat.
 *
 * Returns: (transfer floating): a new banner
 *
 * Since: 0.2
 */
GtkWidget *
mend_gtk_status_banner_new (MendChat *chat)
{
  g_return_val_if_fail (chat == NULL || MEND_IS_CHAT (chat), NULL);

  return g_object_new (MEND_GTK_TYPE_STATUS_BANNER, "chat", chat, NULL);
}

/**
 * mend_gtk_status_banner_get_chat:
 * @self: a banner
 *
 * Gets [property@MendGtk.StatusBanner:chat].
 *
 * Returns: (transfer none) (nullable): the chat it shows
 *
 * Since: 0.2
 */
MendChat *
mend_gtk_status_banner_get_chat (MendGtkStatusBanner *self)
{
  g_return_val_if_fail (MEND_GTK_IS_STATUS_BANNER (self), NULL);

  return self->chat;
}

/**
 * mend_gtk_status_banner_set_chat:
 * @self: a banner
 * @chat: (nullable): the chat to show
 *
 * Shows @chat. While the banner has it, the chat's status ticks each
 * second during a wait that is shown; set %NULL to stop watching it.
 *
 * Since: 0.2
 */
void
mend_gtk_status_banner_set_chat (MendGtkStatusBanner *self,
                                 MendChat            *chat)
{
  static const char * const watched[] = {
    "notify::status-text", "notify::wait", "notify::turn", "notify::last-failure", "notify::can-retry",
  };

  g_return_if_fail (MEND_GTK_IS_STATUS_BANNER (self));
  g_return_if_fail (chat == NULL || MEND_IS_CHAT (chat));

  if (self->chat == chat)
    return;

  if (self->chat != NULL)
    g_signal_handlers_disconnect_by_data (self->chat, self);
  g_set_object (&self->chat, chat);
  if (chat != NULL)
    for (guint i = 0; i < G_N_ELEMENTS (watched); i++)
      g_signal_connect_object (chat, watched[i], G_CALLBACK (on_chat_notify), self, 0);

  /* Read with a handler connected: the status ticks from now on. */
  update (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CHAT]);
}

static GtkWidget *
make_button (const char *label,
             const char *css_class,
             GCallback   clicked,
             gpointer    self)
{
  GtkWidget *button = gtk_button_new_with_label (label);

  gtk_widget_add_css_class (button, css_class);
  gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
  g_signal_connect_swapped (button, "clicked", clicked, self);
  return button;
}

static void
mend_gtk_status_banner_dispose (GObject *object)
{
  MendGtkStatusBanner *self = MEND_GTK_STATUS_BANNER (object);

  if (self->chat != NULL)
    g_signal_handlers_disconnect_by_data (self->chat, self);
  g_clear_object (&self->chat);
  g_clear_pointer (&self->revealer, gtk_widget_unparent);

  G_OBJECT_CLASS (mend_gtk_status_banner_parent_class)->dispose (object);
}

static void
mend_gtk_status_banner_get_property (GObject    *object,
                                     guint       prop_id,
                                     GValue     *value,
                                     GParamSpec *pspec)
{
  MendGtkStatusBanner *self = MEND_GTK_STATUS_BANNER (object);

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
mend_gtk_status_banner_set_property (GObject      *object,
                                     guint         prop_id,
                                     const GValue *value,
                                     GParamSpec   *pspec)
{
  MendGtkStatusBanner *self = MEND_GTK_STATUS_BANNER (object);

  switch (prop_id)
    {
    case PROP_CHAT:
      mend_gtk_status_banner_set_chat (self, g_value_get_object (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_gtk_status_banner_class_init (MendGtkStatusBannerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  mend_gtk_i18n_init ();

  object_class->dispose = mend_gtk_status_banner_dispose;
  object_class->get_property = mend_gtk_status_banner_get_property;
  object_class->set_property = mend_gtk_status_banner_set_property;

  /**
   * MendGtkStatusBanner:chat:
   *
   * The chat whose state the banner shows, or %NULL.
   *
   * Since: 0.2
   */
  properties[PROP_CHAT] =
    g_param_spec_object ("chat", NULL, NULL,
                         MEND_TYPE_CHAT,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_css_name (widget_class, "mendstatusbanner");
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
mend_gtk_status_banner_init (MendGtkStatusBanner *self)
{
  GtkWidget *row;
  GtkWidget *texts;

  mend_gtk_style_ensure (GTK_WIDGET (self));

  self->revealer = gtk_revealer_new ();
  gtk_revealer_set_transition_type (GTK_REVEALER (self->revealer), GTK_REVEALER_TRANSITION_TYPE_SLIDE_DOWN);
  gtk_widget_set_parent (self->revealer, GTK_WIDGET (self));

  self->card = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_add_css_class (self->card, "card");
  gtk_widget_add_css_class (self->card, "status");
  gtk_widget_set_margin_start (self->card, 6);
  gtk_widget_set_margin_end (self->card, 6);
  gtk_widget_set_margin_top (self->card, 6);
  gtk_widget_set_margin_bottom (self->card, 6);
  gtk_revealer_set_child (GTK_REVEALER (self->revealer), self->card);

  row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_set_margin_start (row, 12);
  gtk_widget_set_margin_end (row, 6);
  gtk_widget_set_margin_top (row, 6);
  gtk_widget_set_margin_bottom (row, 6);
  gtk_box_append (GTK_BOX (self->card), row);

  /* The sentence says it all: the icon is decoration. */
  self->icon = g_object_new (GTK_TYPE_IMAGE,
                             "accessible-role", GTK_ACCESSIBLE_ROLE_PRESENTATION,
                             "icon-name", "view-refresh-symbolic",
                             NULL);
  gtk_box_append (GTK_BOX (row), self->icon);

  texts = gtk_box_new (GTK_ORIENTATION_VERTICAL, 2);
  gtk_widget_set_hexpand (texts, TRUE);
  gtk_widget_set_valign (texts, GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (row), texts);

  /* A live region: a screen reader hears the status change. */
  self->label = g_object_new (GTK_TYPE_LABEL,
                              "accessible-role", GTK_ACCESSIBLE_ROLE_STATUS,
                              "xalign", 0.0f,
                              "wrap", TRUE,
                              "wrap-mode", PANGO_WRAP_WORD_CHAR,
                              NULL);
  gtk_widget_add_css_class (self->label, "status-text");
  gtk_box_append (GTK_BOX (texts), self->label);

  /* Translators: a button that runs the waiting retry at once */
  self->retry_now = make_button (_("Retry now"), "retry-now", G_CALLBACK (on_retry_now_clicked), self);
  gtk_box_append (GTK_BOX (row), self->retry_now);

  /* Translators: a button that stops the turn and its retries */
  self->stop = make_button (_("Stop"), "stop", G_CALLBACK (on_stop_clicked), self);
  gtk_box_append (GTK_BOX (row), self->stop);

  /* Translators: a button that runs again a turn that gave up */
  self->retry = make_button (_("Retry"), "retry", G_CALLBACK (on_retry_clicked), self);
  gtk_widget_add_css_class (self->retry, "suggested-action");
  gtk_box_append (GTK_BOX (row), self->retry);

  /* Translators: a toggle that shows the server's own error message */
  self->details = gtk_toggle_button_new_with_label (_("Details"));
  gtk_widget_add_css_class (self->details, "details");
  gtk_widget_set_valign (self->details, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text (self->details, _("Show the service’s own message"));
  gtk_box_append (GTK_BOX (row), self->details);

  self->details_label = gtk_label_new (NULL);
  gtk_label_set_xalign (GTK_LABEL (self->details_label), 0.0f);
  gtk_label_set_wrap (GTK_LABEL (self->details_label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (self->details_label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_selectable (GTK_LABEL (self->details_label), TRUE);
  gtk_widget_add_css_class (self->details_label, "details");
  gtk_widget_add_css_class (self->details_label, "dim-label");
  gtk_widget_add_css_class (self->details_label, "monospace");
  gtk_widget_set_margin_start (self->details_label, 12);
  gtk_widget_set_margin_end (self->details_label, 12);
  gtk_widget_set_margin_bottom (self->details_label, 8);

  self->details_revealer = gtk_revealer_new ();
  gtk_revealer_set_child (GTK_REVEALER (self->details_revealer), self->details_label);
  g_object_bind_property (self->details, "active", self->details_revealer, "reveal-child", G_BINDING_SYNC_CREATE);
  gtk_box_append (GTK_BOX (self->card), self->details_revealer);

  update (self);
}
