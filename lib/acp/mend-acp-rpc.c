/* mend-acp-rpc.c — JSON-RPC 2.0 over an ACP agent's standard streams
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The agent writes one message a line; the framing (mend-acp-framing.c)
 * bounds each line, mends its lone surrogates and hands it on whole.
 * Here each is parsed once, by the library's strict parser, and read as
 * a JSON tree: no recursion past MEND_JSON_MAX_DEPTH and no conversion
 * of the tree to another form.
 */

#include "config.h"

#include <string.h>

#include "mend-acp-framing-private.h"
#include "mend-acp-rpc-private.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"

/* What one read takes from the agent's output: a dispatch handles the
 * messages in it, and no more. */
#define READ_SIZE 65536

#define FRAME_HEADER "Content-Length: "

typedef struct
{
  MendAcpRpcAnswerFunc answer;
  gpointer             user_data;
} Call;

typedef struct
{
  MendAcpRpc            *rpc;          /* while it is written */
  GBytes                *bytes;
  MendAcpRpcWrittenFunc  written;
  gpointer               user_data;
} Write;

struct _MendAcpRpc
{
  gatomicrefcount         ref_count;
  const MendAcpRpcEvents *events;       /* NULL once closed */
  gpointer                user_data;

  GIOStream              *stream;
  GCancellable           *cancellable;
  GByteArray             *in;           /* frames read, not handled yet */
  GHashTable             *calls;        /* id → Call */
  gint64                  last_id;
  GQueue                  writes;       /* Write, not started yet */
  gboolean                writing;
  gboolean                failed;
};

MendAcpRpc *
mend_acp_rpc_ref (MendAcpRpc *rpc)
{
  g_atomic_ref_count_inc (&rpc->ref_count);
  return rpc;
}

static void
write_free (Write *write)
{
  g_bytes_unref (write->bytes);
  g_free (write);
}

void
mend_acp_rpc_unref (MendAcpRpc *rpc)
{
  if (!g_atomic_ref_count_dec (&rpc->ref_count))
    return;

  g_assert (g_hash_table_size (rpc->calls) == 0);
  g_assert (g_queue_is_empty (&rpc->writes));
  g_hash_table_unref (rpc->calls);
  g_byte_array_unref (rpc->in);
  g_clear_object (&rpc->cancellable);
  g_clear_object (&rpc->stream);
  g_free (rpc);
}

static gboolean
is_open (MendAcpRpc *rpc)
{
  return rpc->events != NULL;
}

/* Every call in flight is answered with nothing, each once: out of the
 * table before its answer runs. */
static void
drop_calls (MendAcpRpc *rpc)
{
  while (g_hash_table_size (rpc->calls) > 0)
    {
      GHashTableIter iter;
      gpointer key;
      Call *call;

      g_hash_table_iter_init (&iter, rpc->calls);
      g_hash_table_iter_next (&iter, &key, (gpointer *) &call);
      g_hash_table_iter_steal (&iter);
      g_free (key);
      call->answer (NULL, NULL, call->user_data);
      g_free (call);
    }
}

static void
drop_writes (MendAcpRpc *rpc)
{
  Write *write;

  while ((write = g_queue_pop_head (&rpc->writes)) != NULL)
    {
      if (write->written != NULL)
        write->written (write->user_data);
      write_free (write);
    }
}

/* The connection failed: told once; the owner closes it. */
static void
fail (MendAcpRpc *rpc)
{
  if (!is_open (rpc) || rpc->failed)
    return;
  rpc->failed = TRUE;
  mend_acp_rpc_ref (rpc);
  rpc->events->failed (rpc->user_data);
  /* An owner that did not close it yet still gets every answer. */
  if (is_open (rpc))
    drop_calls (rpc);
  mend_acp_rpc_unref (rpc);
}

void
mend_acp_rpc_close (MendAcpRpc *rpc)
{
  rpc->events = NULL;
  rpc->user_data = NULL;
  g_cancellable_cancel (rpc->cancellable);
  drop_calls (rpc);
  drop_writes (rpc);
  mend_acp_rpc_unref (rpc);
}

/* Writing */

static void write_next (MendAcpRpc *rpc);

static void
on_written (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  Write *write = user_data;
  g_autoptr(MendAcpRpc) rpc = g_steal_pointer (&write->rpc);
  g_autoptr(GError) error = NULL;

  g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, &error);
  rpc->writing = FALSE;
  if (write->written != NULL)
    write->written (write->user_data);
  write_free (write);

  if (error != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      mend_debug ("Could not write to the agent: %s", error->message);
      fail (rpc);
    }
  else if (error == NULL)
    write_next (rpc);
}

static void
write_next (MendAcpRpc *rpc)
{
  GOutputStream *out = g_io_stream_get_output_stream (rpc->stream);
  Write *write;

  if (rpc->writing || !is_open (rpc) || (write = g_queue_pop_head (&rpc->writes)) == NULL)
    return;

  rpc->writing = TRUE;
  write->rpc = mend_acp_rpc_ref (rpc);
  g_output_stream_write_all_async (out, g_bytes_get_data (write->bytes, NULL), g_bytes_get_size (write->bytes),
                                   G_PRIORITY_DEFAULT, rpc->cancellable, on_written, write);
}

/* Sends the message @builder holds, framed as the framing's writer reads
 * it. */
static void
send_message (MendAcpRpc            *rpc,
              JsonBuilder           *builder,
              MendAcpRpcWrittenFunc  written,
              gpointer               user_data)
{
  g_autofree char *json = NULL;
  GString *frame;
  Write *write;

  json_builder_end_object (builder);
  json = mend_json_builder_finish (builder);
  frame = g_string_sized_new (strlen (json) + 32);
  g_string_append_printf (frame, FRAME_HEADER "%" G_GSIZE_FORMAT "\r\n\r\n%s", strlen (json), json);

  write = g_new0 (Write, 1);
  write->bytes = g_string_free_to_bytes (frame);
  write->written = written;
  write->user_data = user_data;
  if (!is_open (rpc))
    {
      g_queue_push_tail (&rpc->writes, write);
      drop_writes (rpc);
      return;
    }
  g_queue_push_tail (&rpc->writes, write);
  write_next (rpc);
}

static JsonBuilder *
begin_message (void)
{
  JsonBuilder *builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "jsonrpc");
  json_builder_add_string_value (builder, "2.0");
  return builder;
}

static void
add_member (JsonBuilder *builder,
            const char  *name,
            JsonNode    *value)
{
  json_builder_set_member_name (builder, name);
  json_builder_add_value (builder, value ? json_node_copy (value) : json_node_new (JSON_NODE_NULL));
}

static void
add_method (JsonBuilder *builder,
            const char  *method,
            JsonNode    *params)
{
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, method);
  if (params != NULL)
    add_member (builder, "params", params);
}

void
mend_acp_rpc_call (MendAcpRpc           *rpc,
                   const char           *method,
                   JsonNode             *params,
                   MendAcpRpcAnswerFunc  answer,
                   gpointer              user_data)
{
  g_autoptr(JsonBuilder) builder = begin_message ();
  Call *call;
  gint64 id;

  if (!is_open (rpc) || rpc->failed)
    {
      answer (NULL, NULL, user_data);
      return;
    }

  id = ++rpc->last_id;
  call = g_new0 (Call, 1);
  call->answer = answer;
  call->user_data = user_data;
  g_hash_table_insert (rpc->calls, g_memdup2 (&id, sizeof id), call);

  json_builder_set_member_name (builder, "id");
  json_builder_add_int_value (builder, id);
  add_method (builder, method, params);
  send_message (rpc, builder, NULL, NULL);
}

void
mend_acp_rpc_notify (MendAcpRpc *rpc,
                     const char *method,
                     JsonNode   *params)
{
  g_autoptr(JsonBuilder) builder = begin_message ();

  add_method (builder, method, params);
  send_message (rpc, builder, NULL, NULL);
}

void
mend_acp_rpc_reply (MendAcpRpc            *rpc,
                    JsonNode              *id,
                    JsonNode              *result,
                    MendAcpRpcWrittenFunc  written,
                    gpointer               user_data)
{
  g_autoptr(JsonBuilder) builder = begin_message ();

  add_member (builder, "id", id);
  add_member (builder, "result", result);
  send_message (rpc, builder, written, user_data);
}

void
mend_acp_rpc_reply_error (MendAcpRpc            *rpc,
                          JsonNode              *id,
                          gint64                 code,
                          const char            *message,
                          MendAcpRpcWrittenFunc  written,
                          gpointer               user_data)
{
  g_autoptr(JsonBuilder) builder = begin_message ();

  add_member (builder, "id", id);
  json_builder_set_member_name (builder, "error");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "code");
  json_builder_add_int_value (builder, code);
  mend_json_add_string (builder, "message", message);
  json_builder_end_object (builder);
  send_message (rpc, builder, written, user_data);
}

/* Reading */

/* Our calls' ids are whole numbers. */
static gboolean
read_id (JsonNode *id,
         gint64   *value)
{
  if (id == NULL || !JSON_NODE_HOLDS_VALUE (id) || json_node_get_value_type (id) != G_TYPE_INT64)
    return FALSE;
  *value = json_node_get_int (id);
  return TRUE;
}

static void
handle_answer (MendAcpRpc *rpc,
               JsonObject *message)
{
  JsonNode *id = json_object_get_member (message, "id");
  JsonNode *result = json_object_get_member (message, "result");
  JsonNode *error = json_object_get_member (message, "error");
  g_autoptr(JsonNode) null = NULL;
  gpointer key = NULL;
  Call *call = NULL;
  gint64 value;

  if (id == NULL)
    return;
  if (read_id (id, &value))
    g_hash_table_lookup_extended (rpc->calls, &value, &key, (gpointer *) &call);

  if (call == NULL)
    {
      /* An error answer to no call, or an answer with nothing in it, says
       * nothing of ours; a result for no call of ours means the agent
       * and the client no longer agree on what was asked. */
      if (error != NULL || result == NULL)
        {
          mend_debug ("The agent answered no call of ours; ignored");
          return;
        }
      mend_debug ("The agent answered a call that was not made, or was answered already");
      fail (rpc);
      return;
    }
  if (error != NULL && !JSON_NODE_HOLDS_OBJECT (error))
    {
      mend_debug ("The agent answered with an error that is not an object");
      fail (rpc);
      return;
    }

  g_hash_table_steal (rpc->calls, &value);
  g_free (key);
  if (error == NULL && result == NULL)
    result = null = json_node_new (JSON_NODE_NULL);
  call->answer (error ? NULL : result, error ? json_node_get_object (error) : NULL, call->user_data);
  g_free (call);
}

static void
handle_message (MendAcpRpc *rpc,
                const char *data,
                gsize       length)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = mend_json_parse (data, (gssize) length, &error);
  JsonObject *message;
  JsonNode *method;
  JsonNode *id;

  if (node == NULL)
    {
      mend_debug ("The agent wrote a line that is not JSON: %s", error->message);
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE))
        rpc->events->refused (rpc->user_data, error->message);
      else
        fail (rpc);
      return;
    }
  /* Batches are not part of ACP. */
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      mend_debug ("The agent wrote a line that is not a JSON-RPC message");
      fail (rpc);
      return;
    }

  message = json_node_get_object (node);
  method = json_object_get_member (message, "method");
  if (method == NULL)
    {
      handle_answer (rpc, message);
      return;
    }
  if (!JSON_NODE_HOLDS_VALUE (method) || json_node_get_value_type (method) != G_TYPE_STRING)
    {
      mend_debug ("The agent wrote a message whose method is not a string");
      fail (rpc);
      return;
    }
  /* A request with no id, or a null one, cannot be answered: it is a
   * notification. */
  id = json_object_get_member (message, "id");
  if (id != NULL && JSON_NODE_HOLDS_NULL (id))
    id = NULL;
  rpc->events->message (rpc->user_data, json_node_get_string (method), id,
                        json_object_get_member (message, "params"));
}

/* The next whole frame in @in from @start: its body and where the next
 * begins. The framing writes each header as FRAME_HEADER, its length and
 * a blank line. */
static gboolean
next_frame (GByteArray *in,
            gsize       start,
            gsize      *body,
            gsize      *length,
            gsize      *next)
{
  const char *data = (const char *) in->data + start;
  gsize size = in->len - start;
  const char *end;
  guint64 n;

  if (size < strlen (FRAME_HEADER) ||
      (end = g_strstr_len (data, MIN (size, (gsize) 64), "\r\n\r\n")) == NULL)
    return FALSE;
  n = g_ascii_strtoull (data + strlen (FRAME_HEADER), NULL, 10);
  *body = start + (gsize) (end - data) + 4;
  if (n > in->len - *body)
    return FALSE;
  *length = (gsize) n;
  *next = *body + *length;
  return TRUE;
}

static void read_next (MendAcpRpc *rpc);

static void
on_read (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(MendAcpRpc) rpc = user_data;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;
  gsize start = 0;
  gsize body, length, next;

  bytes = g_input_stream_read_bytes_finish (G_INPUT_STREAM (source), result, &error);
  if (!is_open (rpc) || rpc->failed)
    return;
  if (bytes == NULL || g_bytes_get_size (bytes) == 0)
    {
      if (error != NULL)
        mend_debug ("Could not read from the agent: %s", error->message);
      fail (rpc);
      return;
    }

  g_byte_array_append (rpc->in, g_bytes_get_data (bytes, NULL), (guint) g_bytes_get_size (bytes));
  while (is_open (rpc) && !rpc->failed && next_frame (rpc->in, start, &body, &length, &next))
    {
      start = next;
      handle_message (rpc, (const char *) rpc->in->data + body, length);
    }
  if (!is_open (rpc) || rpc->failed)
    return;
  g_byte_array_remove_range (rpc->in, 0, (guint) start);
  read_next (rpc);
}

static void
read_next (MendAcpRpc *rpc)
{
  g_input_stream_read_bytes_async (g_io_stream_get_input_stream (rpc->stream), READ_SIZE,
                                   G_PRIORITY_DEFAULT, rpc->cancellable, on_read, mend_acp_rpc_ref (rpc));
}

MendAcpRpc *
mend_acp_rpc_new (GInputStream           *output,
                  GOutputStream          *input,
                  const MendAcpRpcEvents *events,
                  gpointer                user_data)
{
  MendAcpRpc *rpc = g_new0 (MendAcpRpc, 1);

  g_atomic_ref_count_init (&rpc->ref_count);
  rpc->events = events;
  rpc->user_data = user_data;
  rpc->stream = mend_acp_framing_wrap (output, input);
  rpc->cancellable = g_cancellable_new ();
  rpc->in = g_byte_array_new ();
  rpc->calls = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL, NULL);
  g_queue_init (&rpc->writes);

  read_next (rpc);
  return rpc;
}
