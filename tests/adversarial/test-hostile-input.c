/* test-hostile-input.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Hostile text and files at every door that parses JSON — policy JSON,
 * saved state, a stream-json line, error text — and at the saved-state
 * file's own door: nesting hidden behind a comment, millions of tiny
 * values, /dev/zero, a FIFO, a save killed half-way. Each is refused, in
 * bounded time and memory, and says why.
 */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <libmend.h>

#include "mend-test-utils.h"
#include "mend-test-hostile-server.h"

#include "mend-stream-observer-private.h"

#define WALL_START 1764500000000000
#define LEVELS 200000

/* @open, then LEVELS levels of nesting between two comments that each
 * hold a quote, so that a scan blind to comments takes the nesting for the
 * inside of a string, then @close. */
static char *
hidden_nesting (const char *open,
                const char *comment_open,
                const char *comment_close,
                const char *close)
{
  GString *text = g_string_new (open);

  g_string_append (text, comment_open);
  g_string_append_c (text, '"');
  g_string_append (text, comment_close);
  for (guint i = 0; i < LEVELS; i++)
    g_string_append_c (text, '[');
  for (guint i = 0; i < LEVELS; i++)
    g_string_append_c (text, ']');
  g_string_append (text, comment_open);
  g_string_append_c (text, '"');
  g_string_append (text, comment_close);
  g_string_append (text, close);
  return g_string_free (text, FALSE);
}

static void
test_comment_hides_nesting_from_policy_json (void)
{
  g_autofree char *block = hidden_nesting ("{\"delays\":[", "/*", "*/", "]}");
  g_autofree char *line = hidden_nesting ("{\"delays\":[", "//", "\n", "]}");
  g_autoptr(GError) error = NULL;

  g_assert_null (mend_error_policy_new_from_json (block, &error));
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "comment"));
  g_clear_error (&error);

  g_assert_null (mend_error_policy_new_from_json (line, &error));
  g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "comment"));
}

static void
test_comment_hides_nesting_from_saved_state (void)
{
  g_autofree char *text = hidden_nesting ("{\"version\":1,\"x\":[", "/*", "*/", "]}");
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_false (mend_chat_restore_state (chat, text, &error));
  g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "comment"));

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
test_comment_hides_nesting_from_the_stream_observer (void)
{
  g_autofree char *line = hidden_nesting ("{\"type\":\"result\",\"x\":[", "/*", "*/", "]}");
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  MendStreamObserver *observer = mend_stream_observer_new (chat);

  g_assert_cmpuint (strlen (line), <=, mend_stream_observer_get_max_line_bytes (observer));
  g_assert_false (mend_stream_observer_feed_line (observer, line, -1));
  g_assert_cmpuint (mend_stream_observer_get_n_ignored (observer), ==, 1);

  g_assert_finalize_object (observer);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
test_comment_hides_nesting_from_error_text (void)
{
  g_autofree char *json = hidden_nesting ("{\"type\":\"error\",\"error\":[", "/*", "*/", "]}");
  g_autofree char *text = g_strdup_printf ("API Error: 529 %s", json);
  g_autoptr(GBytes) body = g_bytes_new (json, strlen (json));
  MendFailure *from_text = mend_failure_new_from_text (text);
  MendFailure *from_http = mend_failure_new_from_http (529, NULL, body);

  /* Read for what the status and the words say; the JSON is not parsed. */
  g_assert_cmpint (mend_failure_get_reason (from_text), ==, MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_failure_get_reason (from_http), ==, MEND_REASON_CAPACITY);
  g_assert_finalize_object (from_text);
  g_assert_finalize_object (from_http);
}

static void
test_strict_json_still_parses (void)
{
  g_autoptr(GError) error = NULL;
  MendErrorPolicy *policy;

  /* Whitespace of every kind is JSON; a comment, '#', a single quote are not. */
  policy = mend_error_policy_new_from_json ("{ \"delays\" : [ 100, 200 ],\n\t\"maxRetries\": 2 }", &error);
  g_assert_no_error (error);
  g_assert_nonnull (policy);
  g_assert_finalize_object (policy);

  for (guint i = 0; i < 4; i++)
    {
      static const char * const refused[] = {
        "{\"maxRetries\": 2 # 3\n}",
        "{'max-retries': 2}",
        "{\"maxRetries\": 2} // done",
        "{\"maxRetries\": 2, \"x\": \"/*\" /* \" */}",
      };
      g_assert_null (mend_error_policy_new_from_json (refused[i], &error));
      g_assert_error (error, MEND_POLICY_ERROR, MEND_POLICY_ERROR_INVALID);
      g_test_message ("%s", error->message);
      g_clear_error (&error);
    }
}

/* Many small values: 63 MB of "0," would be some 30 million nodes. */
static void
test_many_values_are_refused_before_the_parse (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mend-values-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "state.json", NULL);
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  g_autoptr(GError) error = NULL;
  gsize size = 63 * 1000 * 1000;
  GString *text = g_string_sized_new (size + 64);

  g_string_append (text, "{\"version\":1,\"lifecycle\":\"ready\",\"queue\":[");
  while (text->len < size)
    g_string_append (text, "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,");
  g_string_append (text, "0]}");
  g_assert_true (g_file_set_contents (path, text->str, text->len, NULL));
  g_string_free (text, TRUE);
  g_assert_cmpint (size, <, MEND_CHAT_STATE_MAX_BYTES);

  g_assert_false (mend_chat_restore_state_from_file (chat, path, &error));
  g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "262144"));

  g_unlink (path);
  g_rmdir (dir);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

/* Saved-state files */

static void
test_dev_zero_is_not_read (void)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_false (mend_chat_restore_state_from_file (chat, "/dev/zero", &error));
  g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "regular file"));

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static void
test_fifo_does_not_block (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mend-fifo-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "state.json", NULL);
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (mkfifo (path, 0600), ==, 0);
  /* No writer ever opens it: a reader that waited would wait forever. */
  g_assert_false (mend_chat_restore_state_from_file (chat, path, &error));
  g_assert_error (error, MEND_STATE_ERROR, MEND_STATE_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "regular file"));

  g_unlink (path);
  g_rmdir (dir);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
}

static MendChat *
busy_chat (MendClock *clock)
{
  MendChat *chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
  g_autofree char *text = g_strnfill (200000, 'q');

  mend_test_run_turns_by_hand (chat);
  g_assert_true (mend_chat_submit (chat, "Fix the build", NULL, NULL));
  for (guint i = 0; i < mend_queue_get_max_items (mend_chat_get_queue (chat)); i++)
    {
      text[0] = 'a' + i;
      g_assert_true (mend_chat_submit (chat, text, NULL, NULL));
    }
  return chat;
}

/* The child: saves the same state over and over. */
static int
save_forever (const char *path)
{
  MendClock *clock = mend_manual_clock_new (WALL_START);
  MendChat *chat = busy_chat (clock);

  for (;;)
    {
      g_autoptr(GError) error = NULL;

      if (!mend_chat_save_state_to_file (chat, path, &error))
        g_error ("%s", error->message);
    }
  return 0;
}

static guint
count_files (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint n = 0;

  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_test_message ("  %s", name);
      n++;
    }
  return n;
}

/* Blocks until a file appears in the directory watched by @fd, other than
 * @except; FALSE after 20 s. */
static gboolean
wait_for_new_file (int         fd,
                   const char *except)
{
  char buffer[4096] __attribute__ ((aligned (__alignof__ (struct inotify_event))));

  for (;;)
    {
      struct pollfd poll_fd = { fd, POLLIN, 0 };
      gssize n;

      if (poll (&poll_fd, 1, 20000) <= 0)
        return FALSE;
      n = read (fd, buffer, sizeof buffer);
      g_assert_cmpint (n, >, 0);
      for (char *p = buffer; p < buffer + n; )
        {
          struct inotify_event *event = (struct inotify_event *) p;

          if (event->len > 0 && !g_str_equal (event->name, except))
            return TRUE;
          p += sizeof *event + event->len;
        }
    }
}

static void
test_killed_save_leaves_no_stray_file (void)
{
  g_autofree char *dir = g_dir_make_tmp ("mend-kill-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "chat.json", NULL);
  MendClock *clock = mend_manual_clock_new (WALL_START);
  g_autoptr(GError) error = NULL;
  MendChat *chat;
  GStatBuf st;
  int watch;

  /* A first good state, for every kill to be checked against. */
  chat = busy_chat (clock);
  g_assert_true (mend_chat_save_state_to_file (chat, path, &error));
  g_assert_no_error (error);
  mend_chat_close (chat);
  g_assert_finalize_object (chat);

  watch = inotify_init1 (IN_CLOEXEC);
  g_assert_cmpint (watch, >=, 0);
  g_assert_cmpint (inotify_add_watch (watch, dir, IN_CREATE), >=, 0);

  for (guint round = 0; round < 8; round++)
    {
      g_autoptr(GSubprocess) child = NULL;

      child = g_subprocess_new (G_SUBPROCESS_FLAGS_NONE, &error,
                                g_test_get_filename (G_TEST_BUILT, "test-hostile-input", NULL),
                                "--save-forever", path, NULL);
      g_assert_no_error (error);

      /* Killed the moment a save puts a new name in the directory: the
       * moment a temporary file exists. */
      g_assert_true (wait_for_new_file (watch, "chat.json"));
      g_subprocess_force_exit (child);
      g_assert_true (g_subprocess_wait (child, NULL, &error));
      g_assert_true (g_subprocess_get_if_signaled (child));
      g_assert_cmpint (g_subprocess_get_term_sig (child), ==, SIGKILL);

      /* Whatever moment it died, the file is a whole state. */
      chat = g_object_new (MEND_TYPE_CHAT, "clock", clock, NULL);
      mend_test_run_turns_by_hand (chat);
      g_assert_true (mend_chat_restore_state_from_file (chat, path, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (mend_queue_get_length (mend_chat_get_queue (chat)), ==, 16);
      mend_chat_close (chat);
      g_assert_finalize_object (chat);
    }
  close (watch);

  /* One more save, and the directory holds the state and nothing else. */
  chat = busy_chat (clock);
  g_assert_true (mend_chat_save_state_to_file (chat, path, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_files (dir), ==, 1);
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);

  mend_chat_close (chat);
  g_assert_finalize_object (chat);
  g_assert_finalize_object (clock);
  g_unlink (path);
  g_rmdir (dir);
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 3 && g_str_equal (argv[1], "--save-forever"))
    return save_forever (argv[2]);

  mend_test_limit_memory ();
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/Hostile/Json/comment-hides-nesting/policy", test_comment_hides_nesting_from_policy_json);
  g_test_add_func ("/Mend/Hostile/Json/comment-hides-nesting/saved-state", test_comment_hides_nesting_from_saved_state);
  g_test_add_func ("/Mend/Hostile/Json/comment-hides-nesting/stream-observer",
                   test_comment_hides_nesting_from_the_stream_observer);
  g_test_add_func ("/Mend/Hostile/Json/comment-hides-nesting/error-text", test_comment_hides_nesting_from_error_text);
  g_test_add_func ("/Mend/Hostile/Json/strict-json-parses-and-the-rest-is-refused", test_strict_json_still_parses);
  g_test_add_func ("/Mend/Hostile/Json/many-values-are-refused-before-the-parse",
                   test_many_values_are_refused_before_the_parse);
  g_test_add_func ("/Mend/Hostile/StateFile/dev-zero-is-not-read", test_dev_zero_is_not_read);
  g_test_add_func ("/Mend/Hostile/StateFile/fifo-does-not-block", test_fifo_does_not_block);
  g_test_add_func ("/Mend/Hostile/StateFile/killed-save-leaves-no-stray-file", test_killed_save_leaves_no_stray_file);

  return g_test_run ();
}
