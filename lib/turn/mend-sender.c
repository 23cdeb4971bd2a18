/* mend-sender.c — MendSender: the interface a turn sends its attempts through
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-failure.h"
#include "mend-redact-private.h"
#include "mend-sender.h"
#include "mend-sender-private.h"
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
 *
 * Example:
 *
 * ```c
 * static void
 * my_sender_send_async (MendSender          *sender,
 *                       MendTurn            *turn,
 *                       guint                attempt,
 *                       int                  io_priority,
 *                       GCancellable        *cancellable,
 *                       GAsyncReadyCallback  callback,
 *                       gpointer             user_data)
 * {
 *   g_autoptr(GTask) task = g_task_new (sender, cancellable, callback, user_data);
 *
 *   // Send mend_turn_get_prompt (turn); then NULL for success, or the failure:
 *   g_task_return_pointer (task, mend_failure_new_from_http (529, NULL, NULL), g_object_unref);
 * }
 *
 * static MendFailure *
 * my_sender_send_finish (MendSender *sender, GAsyncResult *result, GError **error)
 * {
 *   return g_task_propagate_pointer (G_TASK (result), error);
 * }
 *
 * static void
 * my_sender_iface_init (MendSenderInterface *iface)
 * {
 *   iface->send_async = my_sender_send_async;
 *   iface->send_finish = my_sender_send_finish;
 * }
 * ```
 *
 * In Python, make the task as for any asynchronous method, with
 * `(self, cancellable, callback, user_data)`, and return %NULL (`None`)
 * for a success, a [class@Mend.Failure], or raise the task's error
 * (`tests/python/test_sender.py`). libmend's PyGObject override makes the
 * four-argument form work: without it (an override not installed), the
 * callback PyGObject hands the method already carries its data, so make
 * the task with `(self, cancellable, callback)`, which works either way.
 * Implement `do_send_async` in one class of a hierarchy: PyGObject 3.42
 * calls a subclass's implementation of an interface method for instances
 * of its parent too.
 *
 * ```python
 * class MySender(GObject.Object, Mend.Sender):
 *     def do_send_async(self, turn, attempt, io_priority, cancellable, callback, user_data):
 *         task = Gio.Task.new(self, cancellable, callback, user_data)
 *         task.return_value(Mend.Failure.new_from_http(529, None, None))
 *
 *     def do_send_finish(self, result):
 *         ok, failure = result.propagate_value()
 *         return failure
 * ```
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
 * @io_priority: the I/O priority of the request, such as %G_PRIORITY_DEFAULT
 * @cancellable: (nullable): cancelled when the user stops the turn
 * @callback: (scope async) (closure user_data): called when the attempt ended
 * @user_data: data for @callback
 *
 * Sends one attempt of @turn.
 *
 * An implementation calls @callback exactly once, on the thread-default
 * main context of the call. When @cancellable is cancelled before the
 * attempt ended, [method@Mend.Sender.send_finish] fails with
 * %G_IO_ERROR_CANCELLED: a cancelled attempt never reads as a success.
 */
void
mend_sender_send_async (MendSender          *self,
                        MendTurn            *turn,
                        guint                attempt,
                        int                  io_priority,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  g_return_if_fail (MEND_IS_SENDER (self));
  g_return_if_fail (MEND_IS_TURN (turn));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  MEND_SENDER_GET_IFACE (self)->send_async (self, turn, attempt, io_priority,
                                             cancellable, callback, user_data);
}

/**
 * mend_sender_send_finish:
 * @self: a sender
 * @result: the result passed to the callback
 * @error: return location for a #GError, or %NULL
 *
 * Finishes [method@Mend.Sender.send_async].
 *
 * There are three outcomes: the attempt succeeded (%NULL, @error unset), it
 * failed upstream (the failure, for the turn's policy to classify), or it
 * could not be made (%NULL with @error set; %G_IO_ERROR_CANCELLED when it
 * was cancelled). A turn reads an error as a failure made from it, so a
 * cancelled attempt is a Stop, never a success.
 *
 * Returns: (transfer full) (nullable): the attempt's failure, or %NULL
 */
MendFailure *
mend_sender_send_finish (MendSender    *self,
                         GAsyncResult  *result,
                         GError       **error)
{
  MendFailure *failure;
  GError *local_error = NULL;

  g_return_val_if_fail (MEND_IS_SENDER (self), NULL);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  failure = MEND_SENDER_GET_IFACE (self)->send_finish (self, result, &local_error);
  if (local_error != NULL)
    {
      g_clear_object (&failure);
      g_propagate_error (error, local_error);
    }

  return failure;
}

/**
 * mend_sender_save_state:
 * @self: a sender
 *
 * Gets what the sender keeps between turns, such as the conversation of a
 * [class@Mend.HttpSender], so that it can be saved with a chat's state
 * ([method@Mend.Chat.save_state] does).
 *
 * Returns: (transfer full) (nullable): JSON text, or %NULL when the sender
 *   keeps nothing
 */
char *
mend_sender_save_state (MendSender *self)
{
  MendSenderInterface *iface;

  g_return_val_if_fail (MEND_IS_SENDER (self), NULL);

  iface = MEND_SENDER_GET_IFACE (self);
  if (iface->save_state == NULL)
    return NULL;

  return iface->save_state (self);
}

/**
 * mend_sender_restore_state:
 * @self: a sender
 * @state: what [method@Mend.Sender.save_state] returned
 * @error: return location for a #GError
 *
 * Reads back what [method@Mend.Sender.save_state] returned. State that
 * cannot be read is an error that says what is wrong, and the sender keeps
 * what it had. A sender that keeps nothing ignores @state.
 *
 * Returns: %TRUE if the state was restored or there was nothing to restore
 */
gboolean
mend_sender_restore_state (MendSender  *self,
                           const char  *state,
                           GError     **error)
{
  MendSenderInterface *iface;

  g_return_val_if_fail (MEND_IS_SENDER (self), FALSE);
  g_return_val_if_fail (state != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  iface = MEND_SENDER_GET_IFACE (self);
  if (iface->restore_state == NULL)
    return TRUE;

  return iface->restore_state (self, state, error);
}

static GQuark
mend_sender_chat_quark (void)
{
  return g_quark_from_static_string ("mend-sender-chat");
}

/* A sender that shows the chat it feeds as a `chat` property (an agent,
 * whose output feeds the chat) feeds one chat at a time. */
static GParamSpec *
chat_property (MendSender *sender)
{
  return g_object_class_find_property (G_OBJECT_GET_CLASS (sender), "chat");
}

void
mend_sender_notify_chat (MendSender *sender)
{
  GParamSpec *pspec;

  g_assert (MEND_IS_SENDER (sender));

  pspec = chat_property (sender);
  if (pspec != NULL)
    g_object_notify_by_pspec (G_OBJECT (sender), pspec);
}

gboolean
mend_sender_attach_chat (MendSender *sender,
                         GObject    *chat)
{
  GObject *attached;
  GParamSpec *pspec;

  g_assert (MEND_IS_SENDER (sender));
  g_assert (G_IS_OBJECT (chat));

  attached = g_object_get_qdata (G_OBJECT (sender), mend_sender_chat_quark ());
  if (attached == chat)
    return TRUE;

  pspec = chat_property (sender);
  if (attached != NULL)
    {
      /* Its output would take over the first chat's attempt in flight. */
      if (pspec != NULL)
        mend_critical ("A %s is the sender of one chat at a time, and this one already feeds another",
                       G_OBJECT_TYPE_NAME (sender));
      return FALSE;
    }

  g_object_set_qdata (G_OBJECT (sender), mend_sender_chat_quark (), chat);
  mend_sender_notify_chat (sender);
  return TRUE;
}

gboolean
mend_sender_detach_chat (MendSender *sender,
                         GObject    *chat)
{
  g_assert (MEND_IS_SENDER (sender));

  if (g_object_get_qdata (G_OBJECT (sender), mend_sender_chat_quark ()) != chat)
    return FALSE;

  g_object_set_qdata (G_OBJECT (sender), mend_sender_chat_quark (), NULL);
  return chat_property (sender) != NULL;
}

GObject *
mend_sender_get_chat (MendSender *sender)
{
  return g_object_get_qdata (G_OBJECT (sender), mend_sender_chat_quark ());
}
