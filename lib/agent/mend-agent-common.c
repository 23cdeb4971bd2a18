/* mend-agent-common.c — what the agent senders share: stderr's tail, the environment,
 * standard input
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mend-agent-common-private.h"
#include "mend-agent-process.h"
#include "mend-redact-private.h"

/* What is kept is twice what is shown: the text shown is redacted
 * whole before it is cut to its last MEND_AGENT_STDERR_MAX_BYTES. */
#define STDERR_KEPT_BYTES (2 * MEND_AGENT_STDERR_MAX_BYTES)

void
mend_stderr_tail_append (GByteArray   *tail,
                         const guint8 *data,
                         gsize         size)
{
  g_assert (tail != NULL);

  if (size >= STDERR_KEPT_BYTES)
    {
      g_byte_array_set_size (tail, 0);
      data += size - STDERR_KEPT_BYTES;
      size = STDERR_KEPT_BYTES;
    }
  g_byte_array_append (tail, data, (guint) size);
  if (tail->len > STDERR_KEPT_BYTES)
    g_byte_array_remove_range (tail, 0, tail->len - STDERR_KEPT_BYTES);
}

char *
mend_stderr_tail_text (GByteArray *tail)
{
  g_autofree char *valid = NULL;
  g_autofree char *text = NULL;

  g_assert (tail != NULL);

  if (tail->len == 0)
    return NULL;

  valid = g_utf8_make_valid ((const char *) tail->data, tail->len);
  /* Once it is full, its start was cut: it may begin inside a key. */
  text = mend_redact_tail (valid, -1, MEND_AGENT_STDERR_MAX_BYTES, tail->len >= STDERR_KEPT_BYTES);
  g_strstrip (text);
  return text[0] != '\0' ? g_steal_pointer (&text) : NULL;
}

gboolean
mend_environ_replace (char               ***slot,
                      const char * const  *environ_)
{
  g_assert (slot != NULL);

  if (*slot == NULL && environ_ == NULL)
    return FALSE;
  if (*slot != NULL && environ_ != NULL &&
      g_strv_equal ((const char * const *) *slot, environ_))
    return FALSE;

  g_strfreev (*slot);
  *slot = g_strdupv ((char **) environ_);
  return TRUE;
}

char **
mend_environ_with (char       **current,
                   const char  *name,
                   const char  *value)
{
  char **env = current ? g_strdupv (current) : g_get_environ ();

  if (value != NULL)
    return g_environ_setenv (env, name, value, TRUE);
  return g_environ_unsetenv (env, name);
}

GSocketConnection *
mend_agent_stdin_socket (GSubprocessLauncher  *launcher,
                         GError              **error)
{
  g_autoptr(GSocket) socket = NULL;
  int fds[2];

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    {
      int errsv = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                   "socketpair: %s", g_strerror (errsv));
      return NULL;
    }
  socket = g_socket_new_from_fd (fds[0], error);
  if (socket == NULL)
    {
      close (fds[0]);
      close (fds[1]);
      return NULL;
    }
  g_subprocess_launcher_take_stdin_fd (launcher, fds[1]);

  return g_socket_connection_factory_create_connection (socket);
}
