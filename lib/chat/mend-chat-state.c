/* mend-chat-state.c — a chat's saved state: written and read back so a crash loses nothing queued
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A chat's saved state: what an app writes down so that a crash loses no
 * queued message and no pending retry.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include <glib/gi18n-lib.h>

#include "mend-chat-private.h"
#include "mend-clock.h"
#include "mend-enum-types.h"
#include "mend-error-policy-private.h"
#include "mend-failure-private.h"
#include "mend-json-private.h"
#include "mend-queue-private.h"
#include "mend-queue-item-private.h"
#include "mend-retry-wait.h"
#include "mend-sender.h"
#include "mend-subagent-retry-private.h"
#include "mend-turn-private.h"


/**
 * mend_chat_save_state:
 * @self: a chat
 *
 * Writes down what a crash must not lose: the queue (ids, texts,
 * provenance, order), the lifecycle, the turn that runs or waits (its
 * attempt count and, for a wait, its wall-clock `nextAt`), the turn that
 * [method@Mend.Chat.retry] would run again (under `retry`, with the
 * failure it gave up on), the subagents with their pending resumes, and
 * what the chat's sender keeps
 * between turns ([method@Mend.Sender.save_state], such as an HTTP sender's
 * conversation), under `senderState`. [method@Mend.Chat.restore_state]
 * reads it back into a new chat.
 *
 * Returns: (transfer full): the state, as JSON text
 */
char *
mend_chat_save_state (MendChat *self)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autofree char *sender_state = NULL;
  const char *retry_id, *retry_prompt, *retry_provenance, *continue_id;
  MendQueue *queue;
  MendTurn *turn;

  g_return_val_if_fail (MEND_IS_CHAT (self), NULL);
  mend_return_val_if_not_owner (mend_chat_get_owner (self), self, NULL);

  queue = mend_chat_get_queue (self);
  turn = mend_chat_get_turn (self);
  builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "version");
  json_builder_add_int_value (builder, MEND_CHAT_STATE_VERSION);
  json_builder_set_member_name (builder, "chatId");
  json_builder_add_string_value (builder, mend_chat_get_id (self));
  json_builder_set_member_name (builder, "lifecycle");
  json_builder_add_string_value (builder, mend_chat_get_lifecycle (self) == MEND_LIFECYCLE_ERROR ? "error" : "ready");

  json_builder_set_member_name (builder, "queue");
  json_builder_begin_array (builder);
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (queue)); i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (G_LIST_MODEL (queue), i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, mend_queue_item_get_id (item));
      json_builder_set_member_name (builder, "text");
      json_builder_add_string_value (builder, mend_queue_item_get_text (item));
      mend_json_add_string (builder, "provenance", mend_queue_item_get_provenance (item));
      json_builder_set_member_name (builder, "queuedAt");
      json_builder_add_int_value (builder, mend_queue_item_get_queued_at (item) / 1000);
      if (mend_queue_item_get_extra (item))
        {
          json_builder_set_member_name (builder, "resume");
          json_builder_add_boolean_value (builder, TRUE);
        }
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  json_builder_set_member_name (builder, "turn");
  if (turn != NULL && !mend_turn_is_finished (turn) && mend_turn_get_state (turn) != MEND_TURN_IDLE)
    {
      MendRetryWait *wait = mend_turn_get_wait (turn);
      MendFailure *failure = mend_turn_get_last_failure (turn);
      guint attempt = mend_turn_get_attempt (turn);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, mend_turn_get_id (turn));
      json_builder_set_member_name (builder, "prompt");
      json_builder_add_string_value (builder, mend_turn_get_prompt (turn));
      mend_json_add_string (builder, "provenance", mend_turn_get_provenance (turn));
      /* A gate's hold spent nothing: saved as the wait after the attempts
       * made, or, before the first, as that attempt to run again. The
       * restored chat's gate holds it anew if it must. */
      if (wait != NULL && mend_retry_wait_get_held (wait))
        {
          if (attempt > 1)
            attempt--;
          else
            wait = NULL;
        }

      json_builder_set_member_name (builder, "attempt");
      json_builder_add_int_value (builder, attempt);
      json_builder_set_member_name (builder, "state");
      json_builder_add_string_value (builder, wait != NULL ? "waiting" : "running");
      if (wait != NULL)
        {
          json_builder_set_member_name (builder, "nextAt");
          json_builder_add_int_value (builder, mend_retry_wait_get_next_at (wait) / 1000);
        }
      json_builder_set_member_name (builder, "failure");
      if (failure != NULL)
        mend_failure_build_state (failure, builder);
      else
        json_builder_add_null_value (builder);
      json_builder_end_object (builder);
    }
  else
    json_builder_add_null_value (builder);

  /* What Retry would run again, with what it gave up on. */
  if (mend_chat_get_retry (self, &retry_id, &retry_prompt, &retry_provenance, &continue_id))
    {
      MendFailure *failure = mend_chat_get_last_failure (self);

      json_builder_set_member_name (builder, "retry");
      json_builder_begin_object (builder);
      mend_json_add_string (builder, "turnId", retry_id);
      mend_json_add_string (builder, "prompt", retry_prompt);
      mend_json_add_string (builder, "provenance", retry_provenance);
      mend_json_add_string (builder, "continueId", continue_id);
      json_builder_set_member_name (builder, "failure");
      if (failure != NULL)
        mend_failure_build_state (failure, builder);
      else
        json_builder_add_null_value (builder);
      json_builder_end_object (builder);
    }

  json_builder_set_member_name (builder, "subagents");
  mend_subagent_retry_save (mend_chat_get_subagents (self), builder);

  if (mend_chat_get_sender (self) != NULL)
    sender_state = mend_sender_save_state (mend_chat_get_sender (self));
  if (sender_state != NULL)
    mend_json_add_string (builder, "senderState", sender_state);

  json_builder_end_object (builder);

  return mend_json_builder_finish (builder);
}

/* Whether a saved queue item waits in the resume prompts' room; a state
 * saved before that room existed has no flag, and its items are the
 * user's. */
static gboolean
read_resume_flag (JsonObject *object,
                  gboolean   *ok)
{
  if (!json_object_has_member (object, "resume"))
    return FALSE;

  return mend_json_read_bool (object, "resume", ok);
}

static gboolean
invalid (GError     **error,
         const char  *what)
{
  g_set_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID,
               _("The saved state is not valid: %s"), what);
  return FALSE;
}

/* Set on a chat while its state is restored. */
static G_DEFINE_QUARK (mend-chat-restoring, restoring)

/**
 * mend_chat_restore_state:
 * @self: a new chat: no turn, nothing queued, no subagents
 * @json: state from [method@Mend.Chat.save_state]
 * @error: return location for a %MEND_STATE_ERROR or a %MEND_QUEUE_ERROR
 *
 * Reads saved state back. The queue comes back in order with its ids; a
 * turn that waited is announced with [signal@Mend.Chat::turn-started] and
 * its retry fires at its original wall-clock time, or at once if that time
 * has passed, its attempt count kept (no attempt is burnt by the restart);
 * a turn that was running runs its attempt again. Subagents come back with
 * their pending resumes, and the chat's sender gets back its own state
 * ([method@Mend.Sender.restore_state]); state saved without one leaves the
 * sender as it is.
 *
 * Corrupt, truncated, hostile or future-version state is an error that
 * says what is wrong, and then nothing changes: a sender state that the
 * sender refuses too, and then the sender keeps what it had.
 *
 * Returns: %TRUE if the state was restored
 */
gboolean
mend_chat_restore_state (MendChat    *self,
                         const char  *json,
                         GError     **error)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) parse_error = NULL;
  g_autoptr(MendFailure) failure = NULL;
  g_autoptr(MendFailure) retry_failure = NULL;
  JsonObject *object;
  JsonObject *turn = NULL;
  JsonObject *retry = NULL;
  JsonArray *queue = NULL;
  JsonArray *subagents = NULL;
  JsonNode *node;
  MendSender *sender = mend_chat_get_sender (self);
  const char *sender_state = NULL;
  g_autofree char *sender_before = NULL;
  MendQueue *live_queue;
  MendLifecycle lifecycle;
  const char *nick;
  gboolean ok = TRUE;
  gint64 version;
  gint64 attempt = 0;
  gint64 delay_ms = -1;
  guint n_user = 0;
  guint n_extra = 0;
  g_autoptr(GPtrArray) restored = NULL;
  gboolean done = FALSE;
  guint first;

  g_return_val_if_fail (MEND_IS_CHAT (self), FALSE);
  mend_return_val_if_not_owner (mend_chat_get_owner (self), self, FALSE);
  g_return_val_if_fail (json != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  live_queue = mend_chat_get_queue (self);
  if (mend_chat_get_turn (self) != NULL ||
      mend_queue_get_length (live_queue) > 0 ||
      g_list_model_get_n_items (G_LIST_MODEL (mend_chat_get_subagents (self))) > 0 ||
      mend_chat_get_lifecycle (self) == MEND_LIFECYCLE_CLOSED ||
      g_object_get_qdata (G_OBJECT (self), restoring_quark ()) != NULL)
    {
      g_set_error_literal (error, MEND_STATE_ERROR, MEND_STATE_ERROR_NOT_EMPTY,
                           _("State is restored into a new chat, and this one is in use"));
      return FALSE;
    }

  root = mend_json_parse (json, -1, &parse_error);
  if (root == NULL)
    {
      g_set_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID,
                   _("The saved state is not valid JSON: %s"), parse_error->message);
      return FALSE;
    }
  if (!JSON_NODE_HOLDS_OBJECT (root))
    return invalid (error, _("not a JSON object"));
  object = json_node_get_object (root);

  version = mend_json_read_int (object, "version", 1, G_MAXINT64, &ok);
  if (!ok)
    return invalid (error, _("no version"));
  if (version > MEND_CHAT_STATE_VERSION)
    {
      g_autofree char *saved = g_strdup_printf ("%" G_GINT64_FORMAT, version);

      g_set_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_VERSION,
                   _("The state was saved by a newer libmend (version %s, this one reads %d)"),
                   saved, MEND_CHAT_STATE_VERSION);
      return FALSE;
    }

  nick = mend_json_read_string (object, "lifecycle", FALSE, &ok);
  if (g_strcmp0 (nick, "ready") == 0)
    lifecycle = MEND_LIFECYCLE_READY;
  else if (g_strcmp0 (nick, "error") == 0)
    lifecycle = MEND_LIFECYCLE_ERROR;
  else
    return invalid (error, _("an unknown lifecycle"));

  node = json_object_get_member (object, "queue");
  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return invalid (error, _("no queue"));
  queue = json_node_get_array (node);
  if (json_array_get_length (queue) > mend_queue_get_max_items (live_queue) + MEND_QUEUE_MAX_EXTRA_ITEMS)
    return invalid (error, _("more queued messages than the queue holds"));

  for (guint i = 0; i < json_array_get_length (queue); i++)
    {
      JsonNode *item = json_array_get_element (queue, i);
      g_autofree char *checked = NULL;
      JsonObject *obj;

      if (!JSON_NODE_HOLDS_OBJECT (item))
        return invalid (error, _("a queued message that is not an object"));
      obj = json_node_get_object (item);
      mend_json_read_string (obj, "id", FALSE, &ok);
      mend_json_read_string (obj, "text", FALSE, &ok);
      mend_json_read_string (obj, "provenance", TRUE, &ok);
      mend_json_read_int (obj, "queuedAt", 0, G_MAXINT64 / 1000, &ok);
      if (!ok)
        return invalid (error, _("a queued message without an id, text or time"));
      if (read_resume_flag (obj, &ok))
        n_extra++;
      else
        n_user++;
      if (!ok)
        return invalid (error, _("a queued message whose resume flag is not true or false"));
      if (n_user > mend_queue_get_max_items (live_queue) || n_extra > MEND_QUEUE_MAX_EXTRA_ITEMS)
        return invalid (error, _("more queued messages than the queue holds"));
      checked = mend_queue_check_message (live_queue, mend_json_read_string (obj, "text", FALSE, &ok),
                                          mend_json_read_string (obj, "provenance", TRUE, &ok), error);
      if (checked == NULL)
        return FALSE;
      for (guint j = 0; j < i; j++)
        if (g_strcmp0 (json_object_get_string_member (json_node_get_object (json_array_get_element (queue, j)), "id"),
                       mend_json_read_string (obj, "id", FALSE, &ok)) == 0)
          return invalid (error, _("a queued message id given twice"));
    }

  node = json_object_get_member (object, "turn");
  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    {
      const char *state;

      turn = json_node_get_object (node);
      mend_json_read_string (turn, "id", FALSE, &ok);
      mend_json_read_string (turn, "prompt", FALSE, &ok);
      mend_json_read_string (turn, "provenance", TRUE, &ok);
      attempt = mend_json_read_int (turn, "attempt", 1, 1001, &ok);
      state = mend_json_read_string (turn, "state", FALSE, &ok);
      if (!ok)
        return invalid (error, _("a turn without an id, prompt or attempt"));

      if (g_strcmp0 (state, "waiting") == 0)
        {
          gint64 next_at = mend_json_read_int (turn, "nextAt", 0, G_MAXINT64 / 1000, &ok);
          gint64 now_ms = mend_clock_get_real_time (mend_chat_get_clock (self)) / 1000;

          MendErrorPolicy *policy = mend_chat_get_policy (self);
          gint64 longest = MAX ((gint64) mend_error_policy_get_max_delay_ms (policy),
                                (gint64) mend_error_policy_get_retry_after_max_ms (policy))
                           + mend_error_policy_get_stagger_for (policy, mend_chat_get_id (self));

          if (!ok)
            return invalid (error, _("a waiting turn without its time"));
          /* Never longer than the policy could have asked for: a clock
           * set wrong, or a hostile file, must not hold the chat for years. */
          delay_ms = CLAMP (next_at - now_ms, 0, longest);
        }
      else if (g_strcmp0 (state, "running") != 0)
        return invalid (error, _("a turn in an unknown state"));

      node = json_object_get_member (turn, "failure");
      if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
        {
          failure = mend_failure_new_from_state (json_node_get_object (node), &ok);
          if (failure == NULL)
            return invalid (error, _("a turn's failure that cannot be read"));
        }
      else if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
        return invalid (error, _("a turn's failure that is not an object"));
    }
  else if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    return invalid (error, _("a turn that is not an object"));

  node = json_object_get_member (object, "retry");
  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    {
      retry = json_node_get_object (node);
      mend_json_read_string (retry, "turnId", TRUE, &ok);
      mend_json_read_string (retry, "prompt", FALSE, &ok);
      mend_json_read_string (retry, "provenance", TRUE, &ok);
      mend_json_read_string (retry, "continueId", TRUE, &ok);
      if (!ok)
        return invalid (error, _("a turn to retry without its prompt"));
      node = json_object_get_member (retry, "failure");
      if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
        {
          retry_failure = mend_failure_new_from_state (json_node_get_object (node), &ok);
          if (retry_failure == NULL)
            return invalid (error, _("a turn's failure that cannot be read"));
        }
      else if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
        return invalid (error, _("a turn's failure that is not an object"));
    }
  else if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    return invalid (error, _("a turn to retry that is not an object"));

  node = json_object_get_member (object, "subagents");
  if (node != NULL && JSON_NODE_HOLDS_ARRAY (node))
    subagents = json_node_get_array (node);
  else if (node != NULL && !JSON_NODE_HOLDS_NULL (node))
    return invalid (error, _("subagents that are not an array"));

  sender_state = mend_json_read_string (object, "senderState", TRUE, &ok);
  if (!ok)
    return invalid (error, _("a sender state that is not text"));

  /* Everything was checked. Handlers of what is restored may call back:
   * the chat stays alive, another restore is refused until this one is
   * done, and a submission queues. The saved queue comes back first, and
   * is announced once it is all in, so that a submission queues behind the
   * saved messages and takes neither their ids nor their room. The sender,
   * then the subagents, check their own state before they change anything;
   * if either refuses, what came back before is taken out again. Held
   * resume prompts go out only once the user's turn is back, so that none
   * takes its place. */
  g_object_ref (self);
  g_object_set_qdata (G_OBJECT (self), restoring_quark (), self);
  mend_chat_hold_starts (self, TRUE);

  restored = g_ptr_array_new_with_free_func (g_object_unref);
  first = mend_queue_get_length (live_queue);
  for (guint i = 0; i < json_array_get_length (queue); i++)
    {
      JsonObject *obj = json_node_get_object (json_array_get_element (queue, i));
      MendQueueItem *item;

      item = mend_queue_restore_item (live_queue,
                                      mend_json_read_string (obj, "id", FALSE, &ok),
                                      mend_json_read_string (obj, "text", FALSE, &ok),
                                      mend_json_read_string (obj, "provenance", TRUE, &ok),
                                      mend_json_read_int (obj, "queuedAt", 0, G_MAXINT64 / 1000, &ok) * 1000,
                                      read_resume_flag (obj, &ok),
                                      NULL);
      if (item != NULL)
        g_ptr_array_add (restored, g_object_ref (item));
    }
  mend_queue_announce_restored (live_queue, first, restored->len);

  /* The subagents are checked before the sender takes its state: a
   * sender that kept nothing before cannot be given nothing back. */
  if (subagents != NULL && !mend_subagent_retry_check (subagents, error))
    goto undo;

  if (sender != NULL && sender_state != NULL)
    {
      g_autoptr(GError) sender_error = NULL;

      sender_before = mend_sender_save_state (sender);
      if (!mend_sender_restore_state (sender, sender_state, &sender_error))
        {
          g_clear_pointer (&sender_before, g_free);
          invalid (error, sender_error->message);
          goto undo;
        }
    }

  if (subagents != NULL &&
      !mend_subagent_retry_restore (mend_chat_get_subagents (self), subagents, error))
    goto undo;

  /* The resume prompts in it are the subagents' again. */
  if (subagents != NULL)
    mend_subagent_retry_find_restored_prompts (mend_chat_get_subagents (self));

  mend_chat_restore_lifecycle (self, lifecycle);
  if (turn != NULL && mend_chat_get_turn (self) == NULL)
    mend_chat_restore_turn (self,
                            mend_json_read_string (turn, "id", FALSE, &ok),
                            mend_json_read_string (turn, "prompt", FALSE, &ok),
                            mend_json_read_string (turn, "provenance", TRUE, &ok),
                            (guint) attempt, delay_ms, failure);
  else if (turn == NULL && retry != NULL)
    mend_chat_restore_retry (self,
                             mend_json_read_string (retry, "turnId", TRUE, &ok),
                             mend_json_read_string (retry, "prompt", FALSE, &ok),
                             mend_json_read_string (retry, "provenance", TRUE, &ok),
                             mend_json_read_string (retry, "continueId", TRUE, &ok),
                             retry_failure);
  mend_chat_hold_starts (self, FALSE);
  mend_subagent_retry_release_held (mend_chat_get_subagents (self));
  done = TRUE;
  goto out;

undo:
  for (guint i = 0; i < restored->len; i++)
    {
      MendQueueItem *item = g_ptr_array_index (restored, i);

      if (mend_queue_has_item (live_queue, item))
        mend_queue_remove (live_queue, mend_queue_item_get_id (item), NULL);
    }
  if (sender_before != NULL)
    mend_sender_restore_state (sender, sender_before, NULL);
  mend_chat_hold_starts (self, FALSE);

out:
  g_object_set_qdata (G_OBJECT (self), restoring_quark (), NULL);
  g_object_unref (self);

  return done;
}

/* Writes @length bytes of @data to @fd, all of them. */
static gboolean
write_all (int         fd,
           const char *data,
           gsize       length)
{
  while (length > 0)
    {
      gssize n = write (fd, data, length);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      data += n;
      length -= n;
    }
  return TRUE;
}

static gboolean
set_file_error (GError     **error,
                int          saved_errno,
                gboolean     writing,
                const char  *path)
{
  g_autofree char *shown = g_filename_display_name (path);

  if (writing)
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                 _("Cannot write the state to “%s”: %s"), shown, g_strerror (saved_errno));
  else
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                 _("Cannot read the state from “%s”: %s"), shown, g_strerror (saved_errno));
  return FALSE;
}

/* A save's own file beside @path is `.HASH.libmend.XXXXXX.saving` in the
 * same directory, HASH the first 16 hex digits of the SHA-256 of @path's
 * base name: short whatever the length of that name, hidden, and of a
 * shape no other file is likely to have. The save holds it locked (flock)
 * until after the rename: such a file that nobody holds locked is the
 * file of a save that died. */
#define SAVE_HASH_LEN 16
#define SAVE_TAG ".libmend"
#define SAVE_SUFFIX ".saving"

/* The start of the name of a save's own file beside @base: `.HASH.libmend`. */
static char *
save_file_prefix (const char *base)
{
  g_autofree char *hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256, base, -1);

  return g_strdup_printf (".%.*s" SAVE_TAG, SAVE_HASH_LEN, hash);
}

/* Makes a new file of this save's own beside @path and locks it. Returns
 * its name and *@fd_out, or NULL with errno set. */
static char *
open_beside (const char *path,
             int        *fd_out)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *prefix = save_file_prefix (base);
  g_autofree char *template = g_strconcat (prefix, ".XXXXXX" SAVE_SUFFIX, NULL);

  for (guint tries = 0; tries < 100; tries++)
    {
      char *name = g_build_filename (dir, template, NULL);
      struct stat by_fd, by_name;
      int saved_errno;
      int fd;

      /* O_EXCL: never a file that another save writes or has renamed
       * into place. */
      fd = g_mkstemp_full (name, O_WRONLY | O_CLOEXEC, 0600);
      if (fd < 0)
        {
          saved_errno = errno;
          g_free (name);
          errno = saved_errno;
          return NULL;
        }
      if (flock (fd, LOCK_EX) != 0 || fstat (fd, &by_fd) != 0)
        {
          saved_errno = errno;
          close (fd);
          g_unlink (name);
          g_free (name);
          errno = saved_errno;
          return NULL;
        }
      /* Another save may have taken it for a dead one's before the lock:
       * then the name is gone, and this save takes another. */
      if (stat (name, &by_name) == 0 &&
          by_name.st_dev == by_fd.st_dev && by_name.st_ino == by_fd.st_ino)
        {
          *fd_out = fd;
          return name;
        }
      close (fd);
      g_free (name);
    }

  errno = EEXIST;
  return NULL;
}

/* Writes @json to a new file of this save's own beside @path, flushed to
 * disk, and locked through *@fd_out (open until the rename). Returns its
 * name, or NULL with errno set and nothing left behind. */
static char *
write_beside (const char *path,
              const char *json,
              int        *fd_out)
{
  char *name = open_beside (path, fd_out);
  int saved_errno;

  if (name == NULL)
    return NULL;
  if (!write_all (*fd_out, json, strlen (json)) || fsync (*fd_out) != 0)
    {
      saved_errno = errno ? errno : EIO;
      g_unlink (name);
      close (*fd_out);
      g_free (name);
      errno = saved_errno;
      return NULL;
    }
  return name;
}

/* Whether @name is the name of a save's own file that starts with @prefix
 * (from save_file_prefix()): `@prefix.XXXXXX.saving`, six letters or digits. */
static gboolean
is_save_file (const char *name,
              const char *prefix)
{
  gsize prefix_len = strlen (prefix);

  if (strlen (name) != prefix_len + strlen (".XXXXXX" SAVE_SUFFIX) ||
      strncmp (name, prefix, prefix_len) != 0 || name[prefix_len] != '.' ||
      !g_str_has_suffix (name, SAVE_SUFFIX))
    return FALSE;
  for (guint i = 1; i <= 6; i++)
    if (!g_ascii_isalnum (name[prefix_len + i]))
      return FALSE;
  return TRUE;
}

/* Removes the files that saves to @path left when they died between
 * naming their file and the rename: files of exactly that name for @path,
 * regular, this user's, and locked by no save. */
static void
remove_dead_saves (const char *path)
{
  g_autofree char *dir_path = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *prefix = save_file_prefix (base);
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  const char *name;

  if (dir == NULL)
    return;

  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *file = NULL;
      struct stat by_fd, by_name;
      int fd;

      if (!is_save_file (name, prefix))
        continue;
      file = g_build_filename (dir_path, name, NULL);
      fd = open (file, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
      if (fd < 0)
        continue;
      /* Unlocked: its save died (or has just renamed it, and then the
       * name is gone already). Removed only while the name is still the
       * file that was checked. */
      if (fstat (fd, &by_fd) == 0 && S_ISREG (by_fd.st_mode) &&
          by_fd.st_uid == geteuid () &&
          flock (fd, LOCK_EX | LOCK_NB) == 0 &&
          lstat (file, &by_name) == 0 &&
          by_name.st_dev == by_fd.st_dev && by_name.st_ino == by_fd.st_ino)
        g_unlink (file);
      close (fd);
    }
}

/**
 * mend_chat_save_state_to_file:
 * @self: a chat
 * @path: (type filename): where to write
 * @error: return location for a file error
 *
 * Writes [method@Mend.Chat.save_state] to @path atomically: the state is
 * written to a new file of this save's own in the same directory, flushed
 * to disk, then renamed over the old one. A reader of @path sees the previous
 * state or the new one, whole, never an empty or a half-written file, and
 * a crash or a failed save leaves the previous good file.
 *
 * Saves to one path from several threads or processes do not mix: each
 * renames a whole file of its own into place and the last rename wins.
 * That file is hidden beside @path, named `.HASH.libmend.XXXXXX.saving`:
 * HASH is the first 16 hex digits of the SHA-256 of the base name of
 * @path, and `XXXXXX` six random letters or digits, so the name is short
 * even when the base name of @path is as long as the file system allows.
 * A save that fails is a %G_IO_ERROR naming @path and removes its own
 * file; the file of a save killed before its rename is removed by the
 * next save to @path, which removes only files of that exact name for
 * @path, regular, owned by the user, and locked by no running save. The
 * file is readable by its owner only.
 *
 * Returns: %TRUE if the state was written
 */
gboolean
mend_chat_save_state_to_file (MendChat    *self,
                              const char  *path,
                              GError     **error)
{
  g_autofree char *json = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *saving = NULL;
  int saved_errno;
  int fd = -1;

  g_return_val_if_fail (MEND_IS_CHAT (self), FALSE);
  mend_return_val_if_not_owner (mend_chat_get_owner (self), self, FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  json = mend_chat_save_state (self);
  saving = write_beside (path, json, &fd);
  if (saving == NULL)
    return set_file_error (error, errno, TRUE, path);

  if (g_rename (saving, path) != 0)
    {
      saved_errno = errno;
      g_unlink (saving);
      close (fd);
      return set_file_error (error, saved_errno, TRUE, path);
    }
  close (fd);

  /* The rename itself reaches the disk. */
  dir = g_path_get_dirname (path);
  fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0)
    {
      fsync (fd);
      close (fd);
    }

  remove_dead_saves (path);

  return TRUE;
}

/**
 * mend_chat_restore_state_from_file:
 * @self: a new chat
 * @path: (type filename): a file written by
 *   [method@Mend.Chat.save_state_to_file]
 * @error: return location for a %MEND_STATE_ERROR or a file error
 *
 * Reads state from @path; see [method@Mend.Chat.restore_state]. Only a
 * regular file is read (not a device, a FIFO or a socket), and one over
 * %MEND_CHAT_STATE_MAX_BYTES is refused, however it grows while it is read.
 *
 * Returns: %TRUE if the state was restored
 */
gboolean
mend_chat_restore_state_from_file (MendChat    *self,
                                   const char  *path,
                                   GError     **error)
{
  g_autofree char *contents = NULL;
  struct stat st;
  gsize capacity;
  gsize length = 0;
  int fd;

  g_return_val_if_fail (MEND_IS_CHAT (self), FALSE);
  mend_return_val_if_not_owner (mend_chat_get_owner (self), self, FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  /* Non-blocking, so that opening a FIFO does not wait for a writer. */
  fd = open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return set_file_error (error, errno, FALSE, path);

  if (fstat (fd, &st) != 0)
    {
      int saved_errno = errno;

      close (fd);
      return set_file_error (error, saved_errno, FALSE, path);
    }
  if (!S_ISREG (st.st_mode))
    {
      close (fd);
      return invalid (error, _("it is not a regular file"));
    }
  if (st.st_size > MEND_CHAT_STATE_MAX_BYTES)
    {
      close (fd);
      g_set_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID,
                   _("The saved state is larger than %d bytes"), MEND_CHAT_STATE_MAX_BYTES);
      return FALSE;
    }

  /* One byte more than fstat said shows a file that grows; never more
   * than one byte past the cap is read. */
  capacity = (gsize) st.st_size + 1;
  contents = g_malloc (capacity + 1);
  while (length <= MEND_CHAT_STATE_MAX_BYTES)
    {
      gssize n;

      if (length == capacity)
        {
          capacity = MIN (capacity * 2, (gsize) MEND_CHAT_STATE_MAX_BYTES + 1);
          contents = g_realloc (contents, capacity + 1);
        }

      n = read (fd, contents + length, capacity - length);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved_errno = errno;

          close (fd);
          return set_file_error (error, saved_errno, FALSE, path);
        }
      if (n == 0)
        break;
      length += n;
    }
  close (fd);

  if (length > MEND_CHAT_STATE_MAX_BYTES)
    {
      g_set_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID,
                   _("The saved state is larger than %d bytes"), MEND_CHAT_STATE_MAX_BYTES);
      return FALSE;
    }
  contents[length] = '\0';

  if (memchr (contents, '\0', length) != NULL)
    return invalid (error, _("it is not text"));

  return mend_chat_restore_state (self, contents, error);
}
