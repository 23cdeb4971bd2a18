/* mend-sender-private.h — how a chat attaches itself to its sender
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-agent-host-private.h"
#include "mend-sender.h"

G_BEGIN_DECLS

/* Hands @sender the host table of @chat, whose sender it is; with @host
 * %NULL, @chat lets go (a sender attached to another chat since keeps
 * that one). Senders that feed nothing back ignore it. */
void                 mend_sender_attach_host (MendSender          *sender,
                                              const MendAgentHost *host,
                                              GObject             *chat);

/* The host table a chat lends, kept on the chat, for a parser that an app
 * makes for the chat itself (mend_stream_observer_new()). */
GQuark               mend_agent_host_quark   (void);
const MendAgentHost *mend_agent_host_lookup  (GObject             *chat);
void                 mend_agent_host_install (GObject             *chat,
                                              const MendAgentHost *host);

G_END_DECLS
