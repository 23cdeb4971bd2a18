/* hostile-server.h
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

#pragma once

#include <string.h>
#include <sys/resource.h>

#include <gio/gio.h>

#if defined(__has_include)
# if __has_include(<valgrind/valgrind.h>)
#  include <valgrind/valgrind.h>
# endif
#endif
#ifndef RUNNING_ON_VALGRIND
# define RUNNING_ON_VALGRIND 0
#endif

#if defined(__SANITIZE_ADDRESS__)
# define HOSTILE_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define HOSTILE_ASAN 1
# endif
#endif

/* The most a test process may hold. Under AddressSanitizer the address
 * space is mostly shadow, so the bound is ASan's own: an allocation over
 * 256 MB, or 1 GB in use, ends the process with a report. */
#define HOSTILE_ADDRESS_SPACE_BYTES ((rlim_t) 2 << 30)

#ifdef HOSTILE_ASAN
const char *__asan_default_options (void);
const char *
__asan_default_options (void)
{
  return "max_allocation_size_mb=256:malloc_limit_mb=1024:allocator_may_return_null=0";
}
#endif

static inline void
hostile_limit_memory (void)
{
#ifndef HOSTILE_ASAN
  struct rlimit limit = { HOSTILE_ADDRESS_SPACE_BYTES, HOSTILE_ADDRESS_SPACE_BYTES };

  /* valgrind keeps its own house in the same address space. */
  if (!RUNNING_ON_VALGRIND)
    g_assert_cmpint (setrlimit (RLIMIT_AS, &limit), ==, 0);
#endif
}

/* strcasestr, without _GNU_SOURCE. */
static inline const char *
hostile_find_nocase (const char *haystack,
                     const char *needle)
{
  gsize n = strlen (needle);

  for (const char *p = haystack; *p != '\0'; p++)
    if (g_ascii_strncasecmp (p, needle, n) == 0)
      return p;
  return NULL;
}

typedef struct _HostileServer HostileServer;

/* Answers one request on @connection; @request is its head and body. */
typedef void (*HostileBehaviour) (HostileServer *server,
                                  GSocket       *connection,
                                  const char    *request);

struct _HostileServer
{
  GSocket          *listener;
  guint16           port;
  GThread          *thread;
  HostileBehaviour  behaviour;
  gconstpointer     data;           /* for the behaviour */
  guint             max_connections;

  GMutex            lock;
  GPtrArray        *requests;       /* under lock */
  guint64           written;        /* under lock */
  gint              stop;           /* atomic */
};

/* Bytes the server writes at most in one answer, whatever the client does. */
#define HOSTILE_MAX_WRITE ((guint64) 512 << 20)

static inline guint64
hostile_server_written (HostileServer *server)
{
  guint64 n;

  g_mutex_lock (&server->lock);
  n = server->written;
  g_mutex_unlock (&server->lock);
  return n;
}

/* Writes @length bytes; FALSE once the client is gone or the server has
 * written its most. */
static inline gboolean
hostile_write (HostileServer *server,
               GSocket       *connection,
               const void    *data,
               gsize          length)
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

  return hostile_server_written (server) < HOSTILE_MAX_WRITE;
}

static inline gboolean
hostile_write_str (HostileServer *server,
                   GSocket       *connection,
                   const char    *text)
{
  return hostile_write (server, connection, text, strlen (text));
}

/* Waits until the client closes the connection (or a while passes). */
static inline void
hostile_wait_for_close (HostileServer *server,
                        GSocket       *connection)
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
static inline char *
hostile_read_request (GSocket *connection)
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
          length = hostile_find_nocase (request->str, "\r\nContent-Length:");
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
  HostileServer *server = data;

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

      request = hostile_read_request (connection);
      g_mutex_lock (&server->lock);
      g_ptr_array_add (server->requests, g_strdup (request));
      g_mutex_unlock (&server->lock);

      server->behaviour (server, connection, request);
      g_socket_shutdown (connection, FALSE, TRUE, NULL);
      g_socket_close (connection, NULL);
    }

  return NULL;
}

static inline HostileServer *
hostile_server_new (HostileBehaviour behaviour,
                    gconstpointer    data,
                    guint            max_connections)
{
  HostileServer *server = g_new0 (HostileServer, 1);
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

static inline char *
hostile_server_uri (HostileServer *server)
{
  return g_strdup_printf ("http://127.0.0.1:%u/v1/messages", server->port);
}

static inline guint
hostile_server_n_requests (HostileServer *server)
{
  guint n;

  g_mutex_lock (&server->lock);
  n = server->requests->len;
  g_mutex_unlock (&server->lock);
  return n;
}

static inline void
hostile_server_free (HostileServer *server)
{
  g_atomic_int_set (&server->stop, 1);
  g_thread_join (server->thread);
  g_socket_close (server->listener, NULL);
  g_object_unref (server->listener);
  g_ptr_array_unref (server->requests);
  g_mutex_clear (&server->lock);
  g_free (server);
}
