/* mend-test-hostile-server.c — a raw-socket HTTP server that writes whatever a test says, and a bound on memory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A raw-socket HTTP server on 127.0.0.1, port 0, in a thread of its own,
 * that answers each request with whatever bytes a test's behaviour writes:
 * headers that never end, bodies that never end, a gzip bomb, a redirect.
 * Every server stops by itself: it takes a bounded number of connections,
 * writes a bounded number of bytes, and gives up waiting after a while.
 *
 * And a bound on the test process's memory, so that a missing cap fails
 * the test instead of the machine.
 */

#include "config.h"

#include <string.h>
#include <sys/resource.h>

#include "mend-test-utils.h"
#include "mend-test-hostile-server.h"
#include "mend-test-bounds.h"

/* The most a test process may hold. Under AddressSanitizer the address
 * space is mostly shadow, so the bound is ASan's own (mend-test-bounds.c). */
#define ADDRESS_SPACE_BYTES ((rlim_t) 2 << 30)

void
mend_test_limit_memory (void)
{
#ifndef MEND_TEST_ASAN
  struct rlimit limit = { ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES };

  /* valgrind keeps its own house in the same address space. */
  if (!RUNNING_ON_VALGRIND)
    g_assert_cmpint (setrlimit (RLIMIT_AS, &limit), ==, 0);
#endif
}

const char *
mend_test_find_nocase (const char *haystack,
                       const char *needle)
{
  gsize n = strlen (needle);

  for (const char *p = haystack; *p != '\0'; p++)
    if (g_ascii_strncasecmp (p, needle, n) == 0)
      return p;
  return NULL;
}

guint64
mend_test_hostile_server_written (MendTestHostileServer *server)
{
  guint64 n;

  g_mutex_lock (&server->lock);
  n = server->written;
  g_mutex_unlock (&server->lock);
  return n;
}

gboolean
mend_test_hostile_write (MendTestHostileServer *server,
                         GSocket               *connection,
                         const void            *data,
                         gsize                  length)
{
  const char *p = data;

  while (length > 0)
    {
      gssize n;

      if (g_atomic_int_get (&server->stop))
        return FALSE;
      n = g_socket_send (connection, p, length, NULL, NULL);
      if (n <= 0)
        return FALSE;
      g_mutex_lock (&server->lock);
      server->written += n;
      g_mutex_unlock (&server->lock);
      p += n;
      length -= n;
    }

  return mend_test_hostile_server_written (server) < MEND_TEST_HOSTILE_MAX_WRITE;
}

gboolean
mend_test_hostile_write_str (MendTestHostileServer *server,
                             GSocket               *connection,
                             const char            *text)
{
  return mend_test_hostile_write (server, connection, text, strlen (text));
}

void
mend_test_hostile_wait_for_close (MendTestHostileServer *server,
                                  GSocket               *connection)
{
  char buffer[4096];

  for (guint i = 0; i < 200 && !g_atomic_int_get (&server->stop); i++)
    {
      if (!g_socket_condition_timed_wait (connection, G_IO_IN, 100 * 1000, NULL, NULL))
        continue;
      if (g_socket_receive (connection, buffer, sizeof buffer, NULL, NULL) <= 0)
        return;
    }
}

/* The request's head and body (by Content-Length), at most 1 MiB. */
static char *
read_request (GSocket *connection)
{
  GString *request = g_string_new (NULL);
  gsize body_at = 0;
  gsize body_length = 0;
  char buffer[16384];

  while (request->len < (1 << 20))
    {
      gssize n;

      if (!g_socket_condition_timed_wait (connection, G_IO_IN, 10 * G_USEC_PER_SEC, NULL, NULL))
        break;
      n = g_socket_receive (connection, buffer, sizeof buffer, NULL, NULL);
      if (n <= 0)
        break;
      g_string_append_len (request, buffer, n);

      if (body_at == 0)
        {
          const char *end = strstr (request->str, "\r\n\r\n");
          const char *length;

          if (end == NULL)
            continue;
          body_at = end + 4 - request->str;
          length = mend_test_find_nocase (request->str, "\r\nContent-Length:");
          if (length != NULL && length < end)
            body_length = g_ascii_strtoull (length + strlen ("\r\nContent-Length:"), NULL, 10);
        }
      if (request->len >= body_at + body_length)
        break;
    }

  return g_string_free (request, FALSE);
}

static gpointer
hostile_server_run (gpointer data)
{
  MendTestHostileServer *server = data;

  for (guint served = 0; served < server->max_connections; )
    {
      g_autoptr(GSocket) connection = NULL;
      g_autofree char *request = NULL;

      if (g_atomic_int_get (&server->stop))
        break;
      if (!g_socket_condition_timed_wait (server->listener, G_IO_IN, 50 * 1000, NULL, NULL))
        continue;
      connection = g_socket_accept (server->listener, NULL, NULL);
      if (connection == NULL)
        continue;
      served++;
      g_socket_set_blocking (connection, TRUE);
      g_socket_set_timeout (connection, 20);

      request = read_request (connection);
      g_mutex_lock (&server->lock);
      g_ptr_array_add (server->requests, g_strdup (request));
      g_mutex_unlock (&server->lock);

      server->behaviour (server, connection, request);
      g_socket_shutdown (connection, FALSE, TRUE, NULL);
      g_socket_close (connection, NULL);
    }

  return NULL;
}

MendTestHostileServer *
mend_test_hostile_server_new (MendTestHostileBehaviour behaviour,
                              gconstpointer            data,
                              guint                    max_connections)
{
  MendTestHostileServer *server = g_new0 (MendTestHostileServer, 1);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GError) error = NULL;

  server->behaviour = behaviour;
  server->data = data;
  server->max_connections = max_connections;
  server->requests = g_ptr_array_new_with_free_func (g_free);
  g_mutex_init (&server->lock);

  server->listener = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  g_assert_true (g_socket_bind (server->listener, address, TRUE, &error));
  g_assert_no_error (error);
  g_assert_true (g_socket_listen (server->listener, &error));
  g_assert_no_error (error);
  bound = g_socket_get_local_address (server->listener, &error);
  g_assert_no_error (error);
  server->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));

  server->thread = g_thread_new ("hostile-server", hostile_server_run, server);
  return server;
}

char *
mend_test_hostile_server_uri (MendTestHostileServer *server)
{
  return g_strdup_printf ("http://127.0.0.1:%u/v1/messages", server->port);
}

guint
mend_test_hostile_server_n_requests (MendTestHostileServer *server)
{
  guint n;

  g_mutex_lock (&server->lock);
  n = server->requests->len;
  g_mutex_unlock (&server->lock);
  return n;
}

void
mend_test_hostile_server_free (MendTestHostileServer *server)
{
  g_atomic_int_set (&server->stop, 1);
  g_thread_join (server->thread);
  g_socket_close (server->listener, NULL);
  g_object_unref (server->listener);
  g_ptr_array_unref (server->requests);
  g_mutex_clear (&server->lock);
  g_free (server);
}
