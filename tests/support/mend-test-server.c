/* mend-test-server.c — a chat over MendHttpSender against a scripted SoupServer on 127.0.0.1
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by the tests of the HTTP sender's wire formats: the test data is
 * the endpoint's path (Chat Completions when NULL), from which the sender
 * takes its format; every request's body is kept; the server answers each
 * request with the next reply of the script (its status, headers and
 * body). Waits run in virtual time; every object is finalized at the end.
 * mend_test_http_chat_load () reads a recorded answer from tests/data/http.
 */

#include "config.h"

#include <string.h>

#include "mend-test-server.h"

#define WALL_START_S 1764500000

static void
server_callback (SoupServer        *server,
                 SoupServerMessage *msg,
                 const char        *path,
                 GHashTable        *query,
                 gpointer           user_data)
{
  MendTestHttpChat *f = user_data;
  g_autoptr(GBytes) flat = soup_message_body_flatten (soup_server_message_get_request_body (msg));
  const MendTestHttpReply *reply;

  g_ptr_array_add (f->bodies, g_strndup (g_bytes_get_data (flat, NULL), g_bytes_get_size (flat)));
  g_assert_cmpuint (f->served, <, f->n_script);
  reply = &f->script[f->served++];
  soup_server_message_set_status (msg, reply->status, NULL);
  if (reply->headers != NULL)
    {
      g_auto(GStrv) lines = g_strsplit (reply->headers, "\n", -1);

      for (guint i = 0; lines[i] != NULL; i++)
        {
          char *colon = strchr (lines[i], ':');

          if (colon == NULL)
            continue;
          *colon = '\0';
          soup_message_headers_append (soup_server_message_get_response_headers (msg),
                                       g_strstrip (lines[i]), g_strstrip (colon + 1));
        }
    }
  soup_server_message_set_response (msg, reply->content_type, SOUP_MEMORY_STATIC,
                                    reply->body, strlen (reply->body));
}

static void
on_text_delta (MendHttpSender   *sender,
               const char       *delta,
               MendTestHttpChat *f)
{
  g_string_append (f->deltas, delta);
}

static void
on_turn_finished (MendChat         *chat,
                  MendTurn         *turn,
                  MendTestHttpChat *f)
{
  g_ptr_array_add (f->finished, g_object_ref (turn));
}

void
mend_test_http_chat_set_up_at (MendTestHttpChat *f,
                               const char       *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();
  GSList *uris;

  f->bodies = g_ptr_array_new_with_free_func (g_free);
  f->finished = g_ptr_array_new_with_free_func (g_object_unref);
  f->loaded = g_ptr_array_new_with_free_func (g_free);
  f->deltas = g_string_new (NULL);
  f->server = soup_server_new (NULL, NULL);
  if (path == NULL)
    path = "/v1/chat/completions";
  /* Every path: Gemini's carries a query. */
  soup_server_add_handler (f->server, NULL, server_callback, f, NULL);
  g_assert_true (soup_server_listen_local (f->server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error));
  g_assert_no_error (error);
  uris = soup_server_get_uris (f->server);
  f->endpoint = g_strdup_printf ("http://127.0.0.1:%d%s", g_uri_get_port (uris->data), path);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  f->clock = mend_manual_clock_new ((gint64) WALL_START_S * G_USEC_PER_SEC);
  /* The dialect comes from the path. */
  f->sender = mend_http_sender_new (f->endpoint);
  mend_http_sender_set_model (f->sender, "llama3.2");
  g_signal_connect (f->sender, "text-delta", G_CALLBACK (on_text_delta), f);
  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  f->chat = g_object_new (MEND_TYPE_CHAT, "clock", f->clock, "policy", policy, "sender", f->sender, NULL);
  g_signal_connect (f->chat, "turn-finished", G_CALLBACK (on_turn_finished), f);
}

void
mend_test_http_chat_set_up (MendTestHttpChat *f,
                            gconstpointer     data)
{
  mend_test_http_chat_set_up_at (f, data);
}

void
mend_test_http_chat_tear_down (MendTestHttpChat *f,
                               gconstpointer     data)
{
  mend_chat_close (f->chat);
  g_ptr_array_set_size (f->finished, 0);
  g_assert_finalize_object (f->chat);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_assert_finalize_object (f->sender);
  g_assert_finalize_object (f->clock);
  soup_server_disconnect (f->server);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_finalize_object (f->server);
  g_ptr_array_unref (f->finished);
  g_ptr_array_unref (f->bodies);
  g_ptr_array_unref (f->loaded);
  g_string_free (f->deltas, TRUE);
  g_free (f->endpoint);
}

const char *
mend_test_http_chat_load (MendTestHttpChat *f,
                          const char       *name)
{
  g_autofree char *path = g_build_filename (MEND_TEST_SRCDIR, "data", "http", name, NULL);
  g_autoptr(GError) error = NULL;
  char *contents = NULL;

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);
  g_ptr_array_add (f->loaded, contents);
  return contents;
}

void
mend_test_http_chat_start (MendTestHttpChat        *f,
                           const MendTestHttpReply *script,
                           guint                    n)
{
  f->script = script;
  f->n_script = n;
  f->served = 0;
  g_assert_true (mend_chat_submit (f->chat, "Summarize the build logs", NULL, NULL));
}
