/* mend-sender.h — MendSender: the interface a turn sends its attempts through
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <gio/gio.h>

#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

#define MEND_TYPE_SENDER (mend_sender_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_INTERFACE (MendSender, mend_sender, MEND, SENDER, GObject)

/**
 * MendSenderInterface:
 * @parent_iface: the parent interface
 * @send_async: sends one attempt of a turn
 * @send_finish: finishes @send_async: %NULL when the attempt succeeded, the
 *   failure when it failed, or %NULL with @error set when it could not be
 *   made (%G_IO_ERROR_CANCELLED when it was cancelled)
 * @save_state: optional: what the sender keeps between turns (such as the
 *   conversation), as JSON text, or %NULL for nothing
 * @restore_state: optional: reads back what @save_state wrote; checks all of
 *   it before it changes anything, and on error keeps what it had
 *
 * A chat attaches itself to its sender when it gets one, so that a sender
 * that runs an agent (a [class@Mend.Agent]) feeds what the agent reports
 * — its own turns, its subagents, its status — to that chat. A sender of
 * the app's has nothing to do for it.
 *
 * The interface of whatever runs a turn's attempts: an HTTP client, an
 * agent process, a test's script.
 */
struct _MendSenderInterface
{
  GTypeInterface parent_iface;

  void          (*send_async)  (MendSender          *self,
                                MendTurn            *turn,
                                guint                attempt,
                                int                  io_priority,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data);
  MendFailure * (*send_finish) (MendSender          *self,
                                GAsyncResult        *result,
                                GError             **error);

  char *        (*save_state)    (MendSender          *self);
  gboolean      (*restore_state) (MendSender          *self,
                                  const char          *state,
                                  GError             **error);
};

MEND_AVAILABLE_IN_0_2
void         mend_sender_send_async  (MendSender          *self,
                                      MendTurn            *turn,
                                      guint                attempt,
                                      int                  io_priority,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data);
MEND_AVAILABLE_IN_0_2
MendFailure *mend_sender_send_finish (MendSender          *self,
                                      GAsyncResult        *result,
                                      GError             **error);
MEND_AVAILABLE_IN_0_2
char        *mend_sender_save_state    (MendSender          *self);
MEND_AVAILABLE_IN_0_2
gboolean     mend_sender_restore_state (MendSender          *self,
                                        const char          *state,
                                        GError             **error);

G_END_DECLS
