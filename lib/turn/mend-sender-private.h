/* mend-sender-private.h — how a chat attaches itself to its sender
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-sender.h"

G_BEGIN_DECLS

/* The chat whose sender @sender is attaches itself when it gets it and
 * detaches as it goes (it holds @sender until then): what an agent's
 * readers report goes to mend_sender_get_chat(), down into the chat.
 * A sender that shows its chat as a `chat` property feeds one chat at a
 * time: a second chat is refused, with a critical, and the first keeps
 * it; the property is notified. Returns whether @chat is attached. */
gboolean mend_sender_attach_chat (MendSender *sender,
                                  GObject    *chat);
/* Lets go of @chat, if it is the one attached, at once. Returns whether
 * the sender's `chat` property is to be notified: the caller does it
 * with mend_sender_notify_chat(), on the sender's thread, which may not
 * be the one that drops the chat's last reference. */
gboolean mend_sender_detach_chat (MendSender *sender,
                                  GObject    *chat);
void     mend_sender_notify_chat (MendSender *sender);
/* The chat attached, or %NULL: a MendChat. */
GObject *mend_sender_get_chat    (MendSender *sender);

G_END_DECLS
