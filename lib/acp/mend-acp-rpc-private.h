/* mend-acp-rpc-private.h — JSON-RPC 2.0 over an ACP agent's standard streams
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* One JSON-RPC 2.0 peer on an agent's standard output and input, one
 * message a line. Each line is parsed once, by the library's bounded
 * parser, before anything else reads it. Reference counted; the owner
 * closes it, after which no event and no answer comes. */
typedef struct _MendAcpRpc MendAcpRpc;

typedef struct
{
  /* A request of the peer's (@id set) or a notification (@id %NULL);
   * @params may be %NULL. */
  void (*message) (gpointer    user_data,
                   const char *method,
                   JsonNode   *id,
                   JsonNode   *params);
  /* A line past the parser's bounds (depth, values): not read, and the
   * connection goes on; @problem says what was wrong with it. */
  void (*refused) (gpointer    user_data,
                   const char *problem);
  /* The connection failed: the peer closed its output, or wrote what is
   * not JSON-RPC. The owner closes it. */
  void (*failed)  (gpointer    user_data);
} MendAcpRpcEvents;

/* The answer to a call: its @result (which may be a JSON null), or the
 * @error object the peer answered with; both %NULL when the connection
 * closed or failed before the answer came. Called once per call. */
typedef void (*MendAcpRpcAnswerFunc)  (JsonNode   *result,
                                       JsonObject *error,
                                       gpointer    user_data);
/* A message was written to the peer, or never will be (the connection
 * closed). */
typedef void (*MendAcpRpcWrittenFunc) (gpointer    user_data);

MendAcpRpc *mend_acp_rpc_new         (GInputStream           *output,
                                      GOutputStream          *input,
                                      const MendAcpRpcEvents *events,
                                      gpointer                user_data);
MendAcpRpc *mend_acp_rpc_ref         (MendAcpRpc             *rpc);
void        mend_acp_rpc_unref       (MendAcpRpc             *rpc);
/* Calls @method with @params (an object, or %NULL); @answer is called
 * once, whatever happens. */
void        mend_acp_rpc_call        (MendAcpRpc             *rpc,
                                      const char             *method,
                                      JsonNode               *params,
                                      MendAcpRpcAnswerFunc    answer,
                                      gpointer                user_data);
void        mend_acp_rpc_notify      (MendAcpRpc             *rpc,
                                      const char             *method,
                                      JsonNode               *params);
/* Answers the request @id with @result, or with the error @code and
 * @message; @written (optional) is called once either way. */
void        mend_acp_rpc_reply       (MendAcpRpc             *rpc,
                                      JsonNode               *id,
                                      JsonNode               *result,
                                      MendAcpRpcWrittenFunc   written,
                                      gpointer                user_data);
void        mend_acp_rpc_reply_error (MendAcpRpc             *rpc,
                                      JsonNode               *id,
                                      gint64                  code,
                                      const char             *message,
                                      MendAcpRpcWrittenFunc   written,
                                      gpointer                user_data);
/* Detaches the events, answers every call in flight with neither result
 * nor error (at once), drops what is not written yet, and drops the
 * owner's reference. */
void        mend_acp_rpc_close       (MendAcpRpc             *rpc);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendAcpRpc, mend_acp_rpc_unref)

G_END_DECLS
