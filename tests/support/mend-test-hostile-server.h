/* mend-test-hostile-server.h — a raw-socket HTTP server that writes whatever a test says, and a bound on memory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Its functions are in mend-test-hostile-server.c.
 */

#pragma once

#include "mend-test-utils.h"

G_BEGIN_DECLS

/* Bounds the test process's memory, so that a missing cap fails the test
 * instead of the machine; under AddressSanitizer, the bounds are ASan's
 * own (see mend-test-bounds.c). */
void        mend_test_limit_memory         (void);

/* strcasestr, without _GNU_SOURCE. */
const char *mend_test_find_nocase          (const char *haystack,
                                            const char *needle);

/* A raw-socket HTTP server on 127.0.0.1, port 0, in a thread of its own,
 * that answers each request with whatever bytes a test's behaviour writes:
 * headers that never end, bodies that never end, a gzip bomb, a redirect.
 * Every server stops by itself: it takes a bounded number of connections,
 * writes a bounded number of bytes, and gives up waiting after a while. */
typedef struct _MendTestHostileServer MendTestHostileServer;

/* Answers one request on @connection; @request is its head and body. */
typedef void (*MendTestHostileBehaviour) (MendTestHostileServer *server,
                                          GSocket               *connection,
                                          const char            *request);

struct _MendTestHostileServer
{
  GSocket                  *listener;
  guint16                   port;
  GThread                  *thread;
  MendTestHostileBehaviour  behaviour;
  gconstpointer             data;           /* for the behaviour */
  guint                     max_connections;

  GMutex                    lock;
  GPtrArray                *requests;       /* under lock */
  guint64                   written;        /* under lock */
  gint                      stop;           /* atomic */
};

/* Bytes the server writes at most in one answer, whatever the client does. */
#define MEND_TEST_HOSTILE_MAX_WRITE ((guint64) 512 << 20)

MendTestHostileServer *mend_test_hostile_server_new        (MendTestHostileBehaviour  behaviour,
                                                            gconstpointer             data,
                                                            guint                     max_connections);
void                   mend_test_hostile_server_free       (MendTestHostileServer    *server);
/* Its /v1/messages. */
char                  *mend_test_hostile_server_uri        (MendTestHostileServer    *server);
guint                  mend_test_hostile_server_n_requests (MendTestHostileServer    *server);
guint64                mend_test_hostile_server_written    (MendTestHostileServer    *server);
/* Writes @length bytes; FALSE once the client is gone or the server has
 * written its most. */
gboolean               mend_test_hostile_write             (MendTestHostileServer    *server,
                                                            GSocket                  *connection,
                                                            const void               *data,
                                                            gsize                     length);
gboolean               mend_test_hostile_write_str         (MendTestHostileServer    *server,
                                                            GSocket                  *connection,
                                                            const char               *text);
/* Waits until the client closes the connection (or a while passes). */
void                   mend_test_hostile_wait_for_close    (MendTestHostileServer    *server,
                                                            GSocket                  *connection);

G_END_DECLS
