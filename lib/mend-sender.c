/* mend-sender.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-failure.h"
#include "mend-sender.h"
#include "mend-turn.h"

/**
 * MendSender:
 *
 * Runs one attempt of a [class@Mend.Turn].
 *
 * Set a sender on a turn (or a chat) and the turn calls it for each attempt,
 * with the same prompt and provenance every time and a cancellable that the
 * user's Stop cancels. The attempt ends with %NULL when it succeeded, or with
 * a [class@Mend.Failure] that the turn's policy classifies. A sender that
 * sees output before it fails should call [method@Mend.Turn.note_output]
 * first, so that the failure is not retried.
 *
 * Without a sender, a turn emits [signal@Mend.Turn::attempt] and the app
 * reports the end with [method@Mend.Turn.succeed] or [method@Mend.Turn.fail].
 */

G_DEFINE_INTERFACE (MendSender, mend_sender, G_TYPE_OBJECT)

static void
mend_sender_default_init (MendSenderInterface *iface)
{
}

/**
 * mend_sender_send_async:
 * @self: a sender
 * @turn: the turn the attempt belongs to
 * @attempt: the number of the attempt, from 1
 * @cancellable: (nullable): cancelled when the user stops the turn
 * @callback: (scope async) (closure user_data): called when the attempt ended
 * @user_data: data for @callback
 *
 * Sends one attempt of @turn.
 */
void
mend_sender_send_async (MendSender          *self,
                        MendTurn            *turn,
                        guint                attempt,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  g_return_if_fail (MEND_IS_SENDER (self));
  g_return_if_fail (MEND_IS_TURN (turn));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  MEND_SENDER_GET_IFACE (self)->send_async (self, turn, attempt, cancellable, callback, user_data);
}

/**
 * mend_sender_send_finish:
 * @self: a sender
 * @result: the result passed to the callback
 *
 * Finishes [method@Mend.Sender.send_async].
 *
 * Returns: (transfer full) (nullable): %NULL when the attempt succeeded, else
 *   what went wrong
 */
MendFailure *
mend_sender_send_finish (MendSender   *self,
                         GAsyncResult *result)
{
  g_return_val_if_fail (MEND_IS_SENDER (self), NULL);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), NULL);

  return MEND_SENDER_GET_IFACE (self)->send_finish (self, result);
}
