/* real-agent-common.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "real-agent-common.h"

void
model_server_start (ModelServer *server,
                    const char  *rules)
{
  g_autofree char *script = g_build_filename (g_get_home_dir (), "rules.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autofree char *line = NULL;

  g_assert_cmpint (g_mkdir_with_parents (g_get_home_dir (), 0700), ==, 0);
  g_assert_true (g_file_set_contents (script, rules, -1, &error));
  g_assert_no_error (error);

  server->process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                                      MEND_TEST_PYTHON, MEND_TEST_SRCDIR "/model-server.py", script, NULL);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (server->process));
  line = g_data_input_stream_read_line (out, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (line);
  server->port = (guint) g_ascii_strtoull (line, NULL, 10);
  g_assert_cmpuint (server->port, >, 0);
}

void
model_server_stop (ModelServer *server)
{
  if (server->process == NULL)
    return;

  /* It serves until its standard input closes. */
  g_output_stream_close (g_subprocess_get_stdin_pipe (server->process), NULL, NULL);
  g_subprocess_wait (server->process, NULL, NULL);
  finalize_eventually (g_steal_pointer (&server->process));
}

char *
model_server_dup_base_url (ModelServer *server)
{
  return g_strdup_printf ("http://127.0.0.1:%u", server->port);
}

guint
model_server_n_requests (ModelServer *server)
{
  g_autofree char *uri = g_strdup_printf ("http://127.0.0.1:%u/_requests", server->port);
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autoptr(SoupMessage) msg = soup_message_new ("GET", uri);
  g_autoptr(GBytes) body = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;

  body = soup_session_send_and_read (session, msg, NULL, &error);
  g_assert_no_error (error);
  root = json_from_string (g_bytes_get_data (body, NULL), &error);
  g_assert_no_error (error);
  return (guint) json_object_get_int_member (json_node_get_object (root), "requests");
}

char *
real_agent_path (const char *env_name,
                 const char *default_path)
{
  const char *path = g_getenv (env_name);

  return g_strdup (path != NULL && path[0] != '\0' ? path : default_path);
}

gboolean
claude_transcript_has (const char *session,
                       const char *text)
{
  g_autofree char *projects = g_build_filename (g_get_home_dir (), ".claude", "projects", NULL);
  g_autofree char *name = g_strconcat (session, ".jsonl", NULL);
  g_autoptr(GDir) dir = g_dir_open (projects, 0, NULL);
  const char *entry;

  while (dir != NULL && (entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (projects, entry, name, NULL);
      g_autofree char *contents = NULL;

      if (g_file_get_contents (path, &contents, NULL, NULL) && strstr (contents, text) != NULL)
        return TRUE;
    }

  return FALSE;
}

void
finalize_eventually (gpointer object)
{
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

  g_object_add_weak_pointer (object, &object);
  g_object_unref (object);
  while (object != NULL && g_get_monotonic_time () < deadline)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  g_assert_null (object);
}
