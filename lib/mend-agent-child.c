/* mend-agent-child.c — the agent's child process: spawn, standard error, exit
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gio/gio.h>

#include "mend-agent-common-private.h"
#include "mend-agent-process-private.h"

#define STDERR_READ_SIZE 4096

struct _MendAgentChild
{
  gatomicrefcount                ref_count;
  const MendAgentChildCallbacks *callbacks;
  gpointer                       user_data;   /* NULL once closed */
  GSubprocess                   *subprocess;
  GDataInputStream              *stdout_lines;
  GInputStream                  *stderr_stream;
  GSource                       *stderr_source;
  GSocketConnection             *stdin_connection;
  GOutputStream                 *stdin_stream;
  GCancellable                  *cancellable;
  GQueue                         writes;      /* GBytes */
  GBytes                        *writing;     /* kept while the stream reads it */
  gboolean                       stdout_done;
  gboolean                       stderr_done;
  gboolean                       exited;
  gboolean                       ended;
  guint64                        n_lines;
};

static void maybe_end (MendAgentChild *child);

static MendAgentChild *
child_ref (MendAgentChild *child)
{
  g_atomic_ref_count_inc (&child->ref_count);
  return child;
}

static void
child_unref (MendAgentChild *child)
{
  if (!g_atomic_ref_count_dec (&child->ref_count))
    return;

  g_queue_clear_full (&child->writes, (GDestroyNotify) g_bytes_unref);
  g_clear_pointer (&child->writing, g_bytes_unref);
  g_clear_pointer (&child->stderr_source, g_source_unref);
  g_clear_object (&child->subprocess);
  g_clear_object (&child->stdout_lines);
  g_clear_object (&child->stderr_stream);
  g_clear_object (&child->stdin_stream);
  g_clear_object (&child->stdin_connection);
  g_clear_object (&child->cancellable);
  g_free (child);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendAgentChild, child_unref)

/* Writing */

static void write_next (MendAgentChild *child);

static void
on_written (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(MendAgentChild) child = user_data;
  g_autoptr(GError) error = NULL;

  g_clear_pointer (&child->writing, g_bytes_unref);
  if (!g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, &error))
    {
      /* The agent is gone; that is seen where its output ends. */
      g_debug ("Could not write to the agent: %s", error->message);
      g_queue_clear_full (&child->writes, (GDestroyNotify) g_bytes_unref);
      return;
    }

  write_next (child);
}

static void
write_next (MendAgentChild *child)
{
  if (child->writing != NULL || g_queue_is_empty (&child->writes))
    return;

  child->writing = g_queue_pop_head (&child->writes);
  g_output_stream_write_all_async (child->stdin_stream,
                                   g_bytes_get_data (child->writing, NULL),
                                   g_bytes_get_size (child->writing),
                                   G_PRIORITY_DEFAULT, child->cancellable,
                                   on_written, child_ref (child));
}

void
mend_agent_child_write (MendAgentChild *child,
                        GBytes         *bytes)
{
  g_queue_push_tail (&child->writes, g_bytes_ref (bytes));
  write_next (child);
}

/* Reading */

static void read_next_line (MendAgentChild *child);

static void
on_line (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(MendAgentChild) child = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  gsize length = 0;

  line = g_data_input_stream_read_line_finish (G_DATA_INPUT_STREAM (source), result, &length, &error);
  if (child->user_data == NULL || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  if (line == NULL)
    {
      /* The end of the output, or a read error: the agent cannot answer
       * any more either way. */
      if (error != NULL)
        g_debug ("Could not read the agent's output: %s", error->message);
      child->stdout_done = TRUE;
      maybe_end (child);
      return;
    }

  child->n_lines++;
  child->callbacks->line (child, line, length, child->user_data);
  if (child->user_data != NULL)
    read_next_line (child);
}

static void
read_next_line (MendAgentChild *child)
{
  g_data_input_stream_read_line_async (child->stdout_lines, G_PRIORITY_DEFAULT,
                                       child->cancellable, on_line, child_ref (child));
}

/* Standard error is read without an operation pending, so that what the
 * agent wrote just before it exited can be drained at once. */
static gboolean
read_stderr (MendAgentChild *child)
{
  GPollableInputStream *stream = G_POLLABLE_INPUT_STREAM (child->stderr_stream);
  guint8 buffer[STDERR_READ_SIZE];

  while (!child->stderr_done && child->user_data != NULL)
    {
      g_autoptr(GError) error = NULL;
      gssize n = g_pollable_input_stream_read_nonblocking (stream, buffer, sizeof buffer, NULL, &error);

      if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        return G_SOURCE_CONTINUE;
      if (n <= 0)
        {
          child->stderr_done = TRUE;
          break;
        }
      child->callbacks->error (child, buffer, (gsize) n, child->user_data);
    }

  return G_SOURCE_REMOVE;
}

static gboolean
on_stderr_ready (GObject  *stream,
                 gpointer  user_data)
{
  MendAgentChild *child = user_data;

  if (read_stderr (child) == G_SOURCE_CONTINUE)
    return G_SOURCE_CONTINUE;

  maybe_end (child);
  return G_SOURCE_REMOVE;
}

static void
on_wait (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(MendAgentChild) child = user_data;

  if (!g_subprocess_wait_finish (G_SUBPROCESS (source), result, NULL) || child->user_data == NULL)
    return;

  child->exited = TRUE;
  maybe_end (child);
}

/* The agent is gone once its output ended and either its standard error
 * ended too or it exited (then what it wrote there is all in the pipe; a
 * process it left behind may hold the pipe open for long). */
static void
maybe_end (MendAgentChild *child)
{
  if (child->ended || child->user_data == NULL || !child->stdout_done)
    return;
  if (!child->stderr_done && !child->exited)
    return;

  read_stderr (child);
  child->ended = TRUE;
  child->callbacks->ended (child, child->user_data);
}

MendAgentChild *
mend_agent_child_spawn (const char * const            *argv,
                        const char * const            *envp,
                        const char                    *cwd,
                        const MendAgentChildCallbacks *callbacks,
                        gpointer                       user_data,
                        GError                       **error)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSocketConnection) stdin_connection = NULL;
  MendAgentChild *child;
  GSubprocess *subprocess;

  g_assert (user_data != NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  /* A socket, not a pipe: a write to an agent that is gone fails instead
   * of raising SIGPIPE in the app. */
  stdin_connection = mend_agent_stdin_socket (launcher, error);
  if (stdin_connection == NULL)
    return NULL;
  if (envp != NULL)
    g_subprocess_launcher_set_environ (launcher, (char **) envp);
  if (cwd != NULL)
    g_subprocess_launcher_set_cwd (launcher, cwd);

  subprocess = g_subprocess_launcher_spawnv (launcher, argv, error);
  if (subprocess == NULL)
    return NULL;

  child = g_new0 (MendAgentChild, 1);
  g_atomic_ref_count_init (&child->ref_count);
  child->callbacks = callbacks;
  child->user_data = user_data;
  child->subprocess = subprocess;
  child->cancellable = g_cancellable_new ();
  child->stdin_connection = g_steal_pointer (&stdin_connection);
  child->stdin_stream = g_object_ref (g_io_stream_get_output_stream (G_IO_STREAM (child->stdin_connection)));
  child->stdout_lines = g_data_input_stream_new (g_subprocess_get_stdout_pipe (subprocess));
  child->stderr_stream = g_object_ref (g_subprocess_get_stderr_pipe (subprocess));
  g_queue_init (&child->writes);

  read_next_line (child);
  child->stderr_source = g_pollable_input_stream_create_source (G_POLLABLE_INPUT_STREAM (child->stderr_stream),
                                                                child->cancellable);
  g_source_set_callback (child->stderr_source, G_SOURCE_FUNC (on_stderr_ready),
                         child_ref (child), (GDestroyNotify) child_unref);
  g_source_set_priority (child->stderr_source, MEND_AGENT_STDERR_PRIORITY);
  g_source_attach (child->stderr_source, g_main_context_get_thread_default ());
  g_subprocess_wait_async (subprocess, child->cancellable, on_wait, child_ref (child));

  return child;
}

const char *
mend_agent_child_get_identifier (MendAgentChild *child)
{
  return child->ended ? NULL : g_subprocess_get_identifier (child->subprocess);
}

guint64
mend_agent_child_get_n_lines (MendAgentChild *child)
{
  return child->n_lines;
}

/* Kills the agent, detaches the owner and drops the owner's reference;
 * the async calls in flight end, cancelled, and drop theirs. */
void
mend_agent_child_close (MendAgentChild *child)
{
  child->user_data = NULL;
  g_source_destroy (child->stderr_source);
  g_cancellable_cancel (child->cancellable);
  g_subprocess_force_exit (child->subprocess);
  /* A child that ignores the kill still sees its input end. */
  g_socket_shutdown (g_socket_connection_get_socket (child->stdin_connection), FALSE, TRUE, NULL);
  child_unref (child);
}
