/* mend-agent-child.c — one run of an agent's child process: spawn, output, standard error, exit, end
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixinputstream.h>

#include "mend-agent-child-private.h"
#include "mend-agent-common-private.h"
#include "mend-redact-private.h"

#define STDERR_READ_SIZE 4096
/* What is drained of standard error at the end, at most: a process left
 * behind may write it without end. */
#define STDERR_DRAIN_READS 16
/* After the agent exited, how often what it wrote and nobody read yet is
 * looked at, and for how long at most: a process left behind may write
 * its output without end. */
#define EXIT_DRAIN_TICK_MS 25
#define EXIT_DRAIN_MAX_MS  2000
/* What one read of the output takes. */
#define STDOUT_READ_SIZE (64 * 1024)

struct _MendAgentChild
{
  gatomicrefcount                ref_count;
  const MendAgentChildCallbacks *callbacks;
  gpointer                       user_data;   /* NULL once closed */
  GSubprocess                   *subprocess;
  pid_t                          pgid;        /* the agent's pid, and its group's */
  GInputStream                  *stdout_stream;
  guint8                        *stdout_buffer; /* a read's, while lines are read */
  GByteArray                    *line;        /* the start of a line split over reads */
  gboolean                       discarding;  /* in a line past the bound, until its end */
  GInputStream                  *stderr_stream;
  GSource                       *stderr_source;
  GByteArray                    *stderr_tail;
  GSocketConnection             *stdin_connection;
  GOutputStream                 *stdin_stream;
  GCancellable                  *cancellable;
  GQueue                         writes;      /* GBytes */
  GBytes                        *writing;     /* kept while the stream reads it */
  GSource                       *drain;       /* after the exit, what was written is read first */
  guint                          drain_ms;
  GSource                       *kill;        /* the end of a close's grace period */
  gboolean                       stdout_done;
  gboolean                       stderr_done;
  gboolean                       exited;
  gboolean                       ended;
  gboolean                       closing;
  gboolean                       group_gone;  /* never signalled again */
  guint64                        n_lines;
};

static guint n_closing;

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

  g_assert (child->drain == NULL && child->kill == NULL);

  g_queue_clear_full (&child->writes, (GDestroyNotify) g_bytes_unref);
  g_clear_pointer (&child->writing, g_bytes_unref);
  g_clear_pointer (&child->stderr_source, g_source_unref);
  g_clear_pointer (&child->stderr_tail, g_byte_array_unref);
  g_clear_object (&child->subprocess);
  g_free (child->stdout_buffer);
  g_clear_pointer (&child->line, g_byte_array_unref);
  g_clear_object (&child->stdout_stream);
  g_clear_object (&child->stderr_stream);
  g_clear_object (&child->stdin_stream);
  g_clear_object (&child->stdin_connection);
  g_clear_object (&child->cancellable);
  g_free (child);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendAgentChild, child_unref)

static gboolean
is_open (MendAgentChild *child)
{
  return child->user_data != NULL;
}

static void
clear_source (GSource **source)
{
  if (*source == NULL)
    return;
  g_source_destroy (*source);
  g_clear_pointer (source, g_source_unref);
}

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
      /* The agent is gone; that is seen where it exits. */
      mend_debug ("Could not write to the agent: %s", error->message);
      g_queue_clear_full (&child->writes, (GDestroyNotify) g_bytes_unref);
      return;
    }

  write_next (child);
}

static void
write_next (MendAgentChild *child)
{
  if (child->writing != NULL || g_queue_is_empty (&child->writes) || !is_open (child))
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

static void read_next (MendAgentChild *child);

/* One whole line to the owner; FALSE once the owner closed the child. */
static gboolean
take_line (MendAgentChild *child,
           const guint8   *line,
           gsize           length)
{
  child->n_lines++;
  child->callbacks->line (child, (const char *) line, length, child->user_data);
  return is_open (child);
}

/* The lines of one read: each whole line goes to the owner, the start of
 * the next is kept. A line past MEND_AGENT_MAX_LINE_BYTES is not kept
 * whole: it is skipped, to its end. */
static gboolean
take_lines (MendAgentChild *child,
            const guint8   *p,
            gsize           n)
{
  const guint8 *end = p + n;

  while (p < end)
    {
      const guint8 *newline = memchr (p, '\n', end - p);
      gsize piece = (newline ? newline : end) - p;

      if (child->discarding)
        child->discarding = newline == NULL;
      else if (child->line->len + piece > MEND_AGENT_MAX_LINE_BYTES)
        {
          mend_debug ("The agent wrote a line longer than %u bytes: skipped", MEND_AGENT_MAX_LINE_BYTES);
          g_byte_array_set_size (child->line, 0);
          child->discarding = newline == NULL;
        }
      else if (newline == NULL)
        g_byte_array_append (child->line, p, (guint) piece);
      else if (child->line->len > 0)
        {
          g_autoptr(GByteArray) line = g_steal_pointer (&child->line);

          child->line = g_byte_array_new ();
          g_byte_array_append (line, p, (guint) piece);
          if (!take_line (child, line->data, line->len))
            return FALSE;
        }
      else if (!take_line (child, p, piece))
        return FALSE;

      if (newline == NULL)
        break;
      p = newline + 1;
    }
  return TRUE;
}

static void
on_read (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(MendAgentChild) child = user_data;
  g_autoptr(GError) error = NULL;
  gssize n;

  n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, &error);
  if (!is_open (child) || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  if (n <= 0)
    {
      /* The end of the output, or a read error: the agent cannot answer
       * any more either way. Its last line may have no line end. */
      if (error != NULL)
        mend_debug ("Could not read the agent's output: %s", error->message);
      else if (!child->discarding && child->line->len > 0)
        {
          g_autoptr(GByteArray) line = g_steal_pointer (&child->line);

          child->line = g_byte_array_new ();
          if (!take_line (child, line->data, line->len))
            return;
        }
      child->stdout_done = TRUE;
      maybe_end (child);
      return;
    }

  if (take_lines (child, child->stdout_buffer, (gsize) n))
    read_next (child);
}

static void
read_next (MendAgentChild *child)
{
  g_input_stream_read_async (child->stdout_stream, child->stdout_buffer, STDOUT_READ_SIZE, G_PRIORITY_DEFAULT,
                             child->cancellable, on_read, child_ref (child));
}

/* Standard error is read without an operation pending, so that what the
 * agent wrote just before it exited can be drained at once; at most
 * @max_reads reads, or until it would block when @max_reads is 0. */
static gboolean
read_stderr (MendAgentChild *child,
             guint           max_reads)
{
  GPollableInputStream *stream = G_POLLABLE_INPUT_STREAM (child->stderr_stream);
  guint8 buffer[STDERR_READ_SIZE];

  for (guint i = 0; !child->stderr_done && is_open (child) && (max_reads == 0 || i < max_reads); i++)
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
      mend_stderr_tail_append (child->stderr_tail, buffer, (gsize) n);
    }

  return child->stderr_done ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

static gboolean
on_stderr_ready (GObject  *stream,
                 gpointer  user_data)
{
  MendAgentChild *child = user_data;

  if (read_stderr (child, 0) == G_SOURCE_CONTINUE)
    return G_SOURCE_CONTINUE;

  maybe_end (child);
  return G_SOURCE_REMOVE;
}

/* The end of a run */

static gboolean
group_is_gone (MendAgentChild *child)
{
  if (child->group_gone)
    return TRUE;
  /* Once the agent is reaped its number is free when its group is empty:
   * a process that has it now is someone else's, and so is any group of
   * that number. The agent's own group never has another process of the
   * leader's number. */
  if ((kill (-child->pgid, 0) != 0 && errno == ESRCH) ||
      (child->exited && kill (child->pgid, 0) == 0))
    child->group_gone = TRUE;
  return child->group_gone;
}

/* Signals what is left of the agent's group, never a group that took its
 * number since. */
static void
signal_group (MendAgentChild *child,
              int             signum)
{
  if (group_is_gone (child))
    return;
  if (kill (-child->pgid, signum) != 0 && errno == ESRCH && !child->exited)
    /* Not in its own group yet: it was just started. */
    kill (child->pgid, signum);
}

static void
closing_done (MendAgentChild *child)
{
  if (!child->closing)
    return;

  child->closing = FALSE;
  n_closing--;
  clear_source (&child->kill);
  child_unref (child);
}

static void
arm_drain (MendAgentChild *child,
           GSource        *source);

/* Bytes the agent wrote that are still in its output pipe. */
static gsize
unread_output (MendAgentChild *child)
{
  int n = 0;

  if (!G_IS_UNIX_INPUT_STREAM (child->stdout_stream) ||
      ioctl (g_unix_input_stream_get_fd (G_UNIX_INPUT_STREAM (child->stdout_stream)), FIONREAD, &n) != 0)
    return 0;
  return n > 0 ? (gsize) n : 0;
}

static gboolean
on_drained (gpointer user_data)
{
  MendAgentChild *child = user_data;

  g_clear_pointer (&child->drain, g_source_unref);
  child->stdout_done = TRUE;
  maybe_end (child);
  return G_SOURCE_REMOVE;
}

static gboolean
on_drain_tick (gpointer user_data)
{
  MendAgentChild *child = user_data;

  g_clear_pointer (&child->drain, g_source_unref);
  child->drain_ms += EXIT_DRAIN_TICK_MS;
  if (unread_output (child) > 0 && child->drain_ms < EXIT_DRAIN_MAX_MS)
    arm_drain (child, g_timeout_source_new (EXIT_DRAIN_TICK_MS));
  else
    {
      /* Below the output's own sources: what was read is handled first. */
      GSource *idle = g_idle_source_new ();

      g_source_set_priority (idle, G_PRIORITY_DEFAULT_IDLE);
      arm_drain (child, idle);
    }
  return G_SOURCE_REMOVE;
}

static void
arm_drain (MendAgentChild *child,
           GSource        *source)
{
  gboolean last = g_source_get_priority (source) == G_PRIORITY_DEFAULT_IDLE;

  child->drain = source;
  g_source_set_callback (source, last ? on_drained : on_drain_tick,
                         child_ref (child), (GDestroyNotify) child_unref);
  g_source_set_static_name (source, "[mend] agent exit");
  g_source_attach (source, g_main_context_get_thread_default ());
}

static void
on_wait (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(MendAgentChild) child = user_data;

  g_subprocess_wait_finish (G_SUBPROCESS (source), result, NULL);
  child->exited = TRUE;
  /* Seen at once: an empty group's number is free from now on. */
  group_is_gone (child);

  if (child->closing)
    {
      /* Ended, and nothing of its group left: the close is over early. */
      if (group_is_gone (child))
        closing_done (child);
      return;
    }
  if (!is_open (child) || child->ended)
    return;

  /* The agent is gone, whoever holds its output: what it wrote before it
   * exited is read first, then the run is over. */
  arm_drain (child, g_timeout_source_new (EXIT_DRAIN_TICK_MS));
}

/* The agent is gone once it exited and its output is read, or once its
 * output ended and either its standard error ended too or it exited. */
static void
maybe_end (MendAgentChild *child)
{
  if (child->ended || !is_open (child))
    return;
  if (!child->stdout_done)
    return;
  if (!child->stderr_done && !child->exited)
    return;

  read_stderr (child, STDERR_DRAIN_READS);
  child->ended = TRUE;
  child_ref (child);
  child->callbacks->ended (child, child->user_data);
  child_unref (child);
}

void
mend_agent_child_drain_stderr (MendAgentChild *child)
{
  read_stderr (child, STDERR_DRAIN_READS);
}

static void
child_setup (gpointer user_data)
{
  /* A group of its own, so that the tools it starts end with it. */
  setpgid (0, 0);
}

MendAgentChild *
mend_agent_child_spawn (const char * const            *argv,
                        const char * const            *envp,
                        const char                    *cwd,
                        GByteArray                    *stderr_tail,
                        const MendAgentChildCallbacks *callbacks,
                        gpointer                       user_data,
                        GError                       **error)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSocketConnection) stdin_connection = NULL;
  MendAgentChild *child;
  GSubprocess *subprocess;

  g_assert (user_data != NULL);
  g_assert (stderr_tail != NULL);

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
  g_subprocess_launcher_set_child_setup (launcher, child_setup, NULL, NULL);

  subprocess = g_subprocess_launcher_spawnv (launcher, argv, error);
  if (subprocess == NULL)
    return NULL;

  child = g_new0 (MendAgentChild, 1);
  g_atomic_ref_count_init (&child->ref_count);
  child->callbacks = callbacks;
  child->user_data = user_data;
  child->subprocess = subprocess;
  /* An agent that exited at once may be reaped already: it has no number
   * then, and its group is never signalled (kill (0, …) would signal
   * this process's own group). */
  if (g_subprocess_get_identifier (subprocess) != NULL)
    child->pgid = (pid_t) g_ascii_strtoll (g_subprocess_get_identifier (subprocess), NULL, 10);
  child->group_gone = child->pgid <= 0;
  child->cancellable = g_cancellable_new ();
  child->stderr_tail = g_byte_array_ref (stderr_tail);
  child->stdin_connection = g_steal_pointer (&stdin_connection);
  child->stdin_stream = g_object_ref (g_io_stream_get_output_stream (G_IO_STREAM (child->stdin_connection)));
  child->stdout_stream = g_object_ref (g_subprocess_get_stdout_pipe (subprocess));
  child->stderr_stream = g_object_ref (g_subprocess_get_stderr_pipe (subprocess));
  g_queue_init (&child->writes);

  if (callbacks->line != NULL)
    {
      child->stdout_buffer = g_malloc (STDOUT_READ_SIZE);
      child->line = g_byte_array_new ();
      read_next (child);
    }
  child->stderr_source = g_pollable_input_stream_create_source (G_POLLABLE_INPUT_STREAM (child->stderr_stream),
                                                                child->cancellable);
  g_source_set_callback (child->stderr_source, G_SOURCE_FUNC (on_stderr_ready),
                         child_ref (child), (GDestroyNotify) child_unref);
  g_source_set_priority (child->stderr_source, MEND_AGENT_STDERR_PRIORITY);
  g_source_attach (child->stderr_source, g_main_context_get_thread_default ());
  /* Not cancelled by a close: the exit still tells when the close is over. */
  g_subprocess_wait_async (subprocess, NULL, on_wait, child_ref (child));

  return child;
}

GInputStream *
mend_agent_child_get_stdout (MendAgentChild *child)
{
  return child->stdout_stream;
}

GOutputStream *
mend_agent_child_get_stdin (MendAgentChild *child)
{
  return child->stdin_stream;
}

const char *
mend_agent_child_get_identifier (MendAgentChild *child)
{
  return child->ended || child->exited ? NULL : g_subprocess_get_identifier (child->subprocess);
}

guint64
mend_agent_child_get_n_lines (MendAgentChild *child)
{
  return child->n_lines;
}

static gboolean
on_grace_over (gpointer user_data)
{
  MendAgentChild *child = user_data;

  if (!group_is_gone (child))
    {
      mend_debug ("Agent %d: its group outlived SIGTERM, killing it", (int) child->pgid);
      signal_group (child, SIGKILL);
    }
  /* The agent itself is dead now; its reaping ends nothing more. */
  g_clear_pointer (&child->kill, g_source_unref);
  closing_done (child);
  return G_SOURCE_REMOVE;
}

void
mend_agent_child_close (MendAgentChild *child,
                        guint           grace_ms)
{
  child->user_data = NULL;
  clear_source (&child->drain);
  g_source_destroy (child->stderr_source);
  g_cancellable_cancel (child->cancellable);
  /* An agent that ignores every signal still sees its input end. */
  g_socket_shutdown (g_socket_connection_get_socket (child->stdin_connection), FALSE, TRUE, NULL);

  /* The owner's reference is the close's until the group is gone. */
  child->closing = TRUE;
  n_closing++;

  signal_group (child, grace_ms > 0 ? SIGTERM : SIGKILL);

  if (child->exited && group_is_gone (child))
    {
      closing_done (child);
      return;
    }

  child->kill = g_timeout_source_new (grace_ms);
  g_source_set_callback (child->kill, on_grace_over, child, NULL);
  g_source_set_static_name (child->kill, "[mend] agent grace");
  g_source_attach (child->kill, g_main_context_get_thread_default ());
}

guint
mend_agent_child_get_n_closing (void)
{
  return n_closing;
}
