/* mend-test-server.h — a chat over MendHttpSender against a scripted SoupServer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Its functions are in mend-test-server.c.
 */

#pragma once

#include "mend-test-utils.h"

G_BEGIN_DECLS

/* The server answers each request with the next reply of the script:
 * its status, headers and body. */
typedef struct
{
  guint       status;
  const char *content_type;
  const char *body;
  const char *headers;  /* "Name: value" lines, or NULL */
} MendTestHttpReply;

/* The sender takes its wire format from the endpoint's path; every
 * request's body is kept. Waits run in virtual time; every object is
 * finalized at the end. */
typedef struct
{
  SoupServer *server;
  const MendTestHttpReply *script;
  guint n_script;
  guint served;
  GPtrArray *bodies;
  char *endpoint;

  MendClock *clock;
  MendChat *chat;
  MendHttpSender *sender;
  GString *deltas;
  GPtrArray *finished;
  GPtrArray *loaded;   /* what mend_test_http_chat_load () read */
} MendTestHttpChat;

/* A chat whose sender's endpoint is @path on the server (Chat Completions'
 * when NULL), from which the sender takes its format. */
void        mend_test_http_chat_set_up_at  (MendTestHttpChat        *f,
                                            const char              *path);
/* The same, the test data being the path. */
void        mend_test_http_chat_set_up     (MendTestHttpChat        *f,
                                            gconstpointer            data);
void        mend_test_http_chat_tear_down  (MendTestHttpChat        *f,
                                            gconstpointer            data);
/* A recorded answer, tests/data/http/@name (see its SOURCES.md), kept
 * until the end of the test. */
const char *mend_test_http_chat_load       (MendTestHttpChat        *f,
                                            const char              *name);
/* Serves @script (@n replies) from now on, and submits the user's prompt. */
void        mend_test_http_chat_start      (MendTestHttpChat        *f,
                                            const MendTestHttpReply *script,
                                            guint                    n);

G_END_DECLS
