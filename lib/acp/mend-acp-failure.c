/* mend-acp-failure.c — failures as ACP agents report them: JSON-RPC errors and typed failures
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What an Agent Client Protocol agent says of a failed prompt, read into a
 * MendFailure: a JSON-RPC error answer (its code, message and data:
 * claude-agent-acp's data.errorKind, codex-acp's codexErrorInfo), and the
 * typed-failure extension both of today's adapters speak to a client that
 * advertises it (a prompt's `_meta.jetbrains.air.sessionFailure`, with a
 * category, a severity, a title and actions). What is typed decides the
 * failure's class; the words (the title, the message) are read by the
 * classifier for the reason within that class and for a reset time.
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "mend-acp-failure-private.h"
#include "mend-failure-private.h"
#include "mend-json-private.h"
#include "mend-redact-private.h"

/* The Agent Client Protocol's error code for a client that must log in. */
#define ACP_AUTH_REQUIRED (-32000)
/* JSON-RPC's "request cancelled", which ACP lets an agent send for a
 * cancellation of its own. */
#define ACP_REQUEST_CANCELLED (-32800)

/* Classes of failure, as typed reports name them */

typedef enum
{
  CLASS_NONE,
  CLASS_SERVICE,      /* the upstream failed for a moment */
  CLASS_CONNECTION,   /* the way to it did */
  CLASS_LIMIT,        /* a limit of the account's */
  CLASS_ACCESS,       /* the credentials or a permission */
  CLASS_REQUEST,      /* the request itself */
} FailureClass;

static gboolean
reason_in_class (MendReason   reason,
                 FailureClass klass)
{
  switch (klass)
    {
    /* The adapters tell the two apart loosely (codex-acp calls a 503 a
     * connection failure): either keeps any transient reason. */
    case CLASS_SERVICE:
    case CLASS_CONNECTION:
      return reason == MEND_REASON_CAPACITY || reason == MEND_REASON_RATE_LIMIT ||
             reason == MEND_REASON_SERVER || reason == MEND_REASON_TIMEOUT ||
             reason == MEND_REASON_TRANSPORT || reason == MEND_REASON_EMPTY;
    case CLASS_LIMIT:
      return reason == MEND_REASON_USAGE_LIMIT || reason == MEND_REASON_BILLING ||
             reason == MEND_REASON_RATE_LIMIT;
    case CLASS_ACCESS:
      return reason == MEND_REASON_AUTH || reason == MEND_REASON_PERMISSION;
    case CLASS_REQUEST:
      return reason == MEND_REASON_BAD_REQUEST;
    case CLASS_NONE:
    default:
      return TRUE;
    }
}

/* The reason of a class when the words name none of its own. */
static MendReason
class_default_reason (FailureClass klass)
{
  switch (klass)
    {
    case CLASS_SERVICE:
      return MEND_REASON_SERVER;
    case CLASS_CONNECTION:
      return MEND_REASON_TRANSPORT;
    case CLASS_LIMIT:
      return MEND_REASON_USAGE_LIMIT;
    case CLASS_ACCESS:
      return MEND_REASON_AUTH;
    case CLASS_REQUEST:
      return MEND_REASON_BAD_REQUEST;
    case CLASS_NONE:
    default:
      return MEND_REASON_UNKNOWN;
    }
}

/* Words that settle a failure that cannot succeed again: a refused key
 * or permission, a wrong request, a limit. */
static gboolean
is_settled_permanent (MendFailure *failure)
{
  MendReason reason = mend_failure_get_reason (failure);

  return reason == MEND_REASON_AUTH || reason == MEND_REASON_PERMISSION ||
         reason == MEND_REASON_BAD_REQUEST || reason == MEND_REASON_USAGE_LIMIT ||
         reason == MEND_REASON_BILLING;
}

/* @failure, read from words, within the class a typed report gave: kept
 * when its reason is of the class, else judged again as the class's own
 * (a new reference either way). A transient class does not overrule
 * words that settle a permanent failure: both adapters call a 400 a
 * "service" failure to retry (0.101.0, 2.6.0), and its words say it is
 * the request. */
static MendFailure *
judge_in_class (MendFailure  *failure,
                FailureClass  klass,
                const char   *rule)
{
  if (klass == CLASS_NONE || reason_in_class (mend_failure_get_reason (failure), klass))
    return g_object_ref (failure);
  if ((klass == CLASS_SERVICE || klass == CLASS_CONNECTION) && is_settled_permanent (failure))
    return g_object_ref (failure);

  return mend_failure_new_judged_copy (failure, class_default_reason (klass), rule);
}

typedef struct
{
  const char   *name;
  FailureClass  klass;
} TypedName;

/* The categories of the typed-failure extension. */
static const TypedName categories[] = {
  { "service", CLASS_SERVICE },
  { "connection", CLASS_CONNECTION },
  { "limit", CLASS_LIMIT },
  { "access", CLASS_ACCESS },
  { "request", CLASS_REQUEST },
};

/* claude-agent-acp's data.errorKind, and codex's CodexErrorInfo (in
 * codex-acp's data.codexErrorInfo: a string, or an object named by it). */
static const TypedName error_kinds[] = {
  { "server_error", CLASS_SERVICE },
  { "overloaded", CLASS_SERVICE },
  { "rate_limit", CLASS_LIMIT },
  { "authentication_failed", CLASS_ACCESS },
  { "billing_error", CLASS_LIMIT },
  { "invalid_request", CLASS_REQUEST },
  { "serverOverloaded", CLASS_SERVICE },
  { "internalServerError", CLASS_SERVICE },
  { "httpConnectionFailed", CLASS_CONNECTION },
  { "responseStreamConnectionFailed", CLASS_CONNECTION },
  { "responseStreamDisconnected", CLASS_CONNECTION },
  { "usageLimitExceeded", CLASS_LIMIT },
  { "usage_limit_exceeded", CLASS_LIMIT },
  { "unauthorized", CLASS_ACCESS },
  { "badRequest", CLASS_REQUEST },
  { "contextWindowExceeded", CLASS_REQUEST },
};

static FailureClass
class_of (const TypedName *names,
          gsize            n_names,
          const char      *name)
{
  for (gsize i = 0; name != NULL && i < n_names; i++)
    if (g_str_equal (names[i].name, name))
      return names[i].klass;
  return CLASS_NONE;
}

/* The name a CodexErrorInfo gives: the string, or the object's one member. */
static const char *
codex_info_name (JsonNode *info)
{
  if (info == NULL)
    return NULL;
  if (JSON_NODE_HOLDS_VALUE (info) && json_node_get_value_type (info) == G_TYPE_STRING)
    return json_node_get_string (info);
  if (JSON_NODE_HOLDS_OBJECT (info) && json_object_get_size (json_node_get_object (info)) == 1)
    {
      g_autoptr(GList) names = json_object_get_members (json_node_get_object (info));

      return names->data;
    }
  return NULL;
}

/* A JSON-RPC error's data, where it is typed: @failure judged within the
 * class it names, or NULL when it names none. */
static MendFailure *
judge_by_data (MendFailure *failure,
               JsonObject  *data)
{
  const char *kind = mend_json_get_string (data, "errorKind");
  JsonNode *info = json_object_get_member (data, "codexErrorInfo");
  FailureClass klass;

  if (info == NULL)
    info = json_object_get_member (data, "codex_error_info");
  klass = class_of (error_kinds, G_N_ELEMENTS (error_kinds), kind);
  if (klass == CLASS_NONE)
    klass = class_of (error_kinds, G_N_ELEMENTS (error_kinds), codex_info_name (info));
  if (klass == CLASS_NONE)
    return NULL;
  return judge_in_class (failure, klass, "acp:error-data");
}

MendFailure *
mend_acp_failure_new_own_cancel (const char *detail)
{
  g_autoptr(MendFailure) failure = NULL;
  g_autofree char *text = NULL;

  /* Translators: an agent cancelled a prompt the user did not stop; %s
   * is what it said. */
  text = g_strdup_printf (_("The agent cancelled the prompt on its own (%s)"),
                          detail != NULL && *detail != '\0' ? detail : "cancelled");
  failure = mend_failure_new_from_text (text);
  return mend_failure_new_judged_copy (failure, MEND_REASON_SERVER, "acp:own-cancel");
}

JsonObject *
mend_acp_session_failure_get (JsonObject *holder)
{
  JsonObject *meta = holder ? mend_json_get_object (holder, "_meta") : NULL;
  JsonObject *jetbrains = meta ? mend_json_get_object (meta, "jetbrains") : NULL;
  JsonObject *air = jetbrains ? mend_json_get_object (jetbrains, "air") : NULL;

  /* A flat "jetbrains.air" key, as some write the extension's name. */
  if (air == NULL && meta != NULL)
    air = mend_json_get_object (meta, "jetbrains.air");
  return air ? mend_json_get_object (air, "sessionFailure") : NULL;
}

gboolean
mend_acp_session_failure_is_warning (JsonObject *session_failure)
{
  return g_strcmp0 (mend_json_get_string (session_failure, "severity"), "warning") == 0;
}

MendFailure *
mend_acp_failure_from_session_failure (JsonObject *session_failure)
{
  const char *title = mend_json_get_string (session_failure, "title");
  const char *category = mend_json_get_string (session_failure, "category");
  g_autoptr(MendFailure) failure = NULL;
  FailureClass klass;

  failure = mend_failure_new_from_text (title != NULL && *title != '\0'
                                        ? title : _("The agent reported a failure"));
  klass = class_of (categories, G_N_ELEMENTS (categories), category);
  mend_debug ("ACP session failure (%s): %s", category ? category : "no category",
              mend_failure_get_message (failure));
  return judge_in_class (failure, klass, "acp:session-failure");
}

/* JSON-RPC's catch-all message for -32603, which adapters send with the
 * real error in "data" (codex-acp: "Internal error", the details in
 * data.message and data.codex_error_info) or after a colon (Claude's
 * adapters: "Internal error: API Error: 529 …"). */
#define RPC_INTERNAL_ERROR "Internal error"

/* The words of @data that say what failed: its "message", "details" and
 * "error" strings, and codex-acp's codex_error_info (a string, or an
 * object whose member names are the kind), or NULL when it has none. */
static char *
rpc_error_data_text (JsonNode *data)
{
  static const char *const names[] = { "message", "details", "error" };
  static const char *const infos[] = { "codex_error_info", "codexErrorInfo" };
  JsonObject *object;
  JsonNode *info = NULL;
  GString *s;

  if (data == NULL || !JSON_NODE_HOLDS_OBJECT (data))
    return NULL;
  object = json_node_get_object (data);
  s = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      const char *text = mend_json_get_string (object, names[i]);

      if (text != NULL && *text != '\0')
        g_string_append_printf (s, "%s%s", s->len > 0 ? " " : "", text);
    }
  for (guint i = 0; i < G_N_ELEMENTS (infos) && info == NULL; i++)
    info = json_object_get_member (object, infos[i]);
  if (info != NULL && s->len > 0)
    {
      if (JSON_NODE_HOLDS_VALUE (info) && json_node_get_value_type (info) == G_TYPE_STRING)
        g_string_append_printf (s, " (%s)", json_node_get_string (info));
      else if (JSON_NODE_HOLDS_OBJECT (info))
        {
          g_autoptr(GList) kinds = json_object_get_members (json_node_get_object (info));

          for (GList *l = kinds; l != NULL; l = l->next)
            g_string_append_printf (s, " (%s)", (const char *) l->data);
        }
    }
  if (s->len == 0)
    {
      g_string_free (s, TRUE);
      return NULL;
    }
  return g_string_free (s, FALSE);
}

static void
rpc_error_read (JsonObject  *object,
                gint64      *code,
                char       **text)
{
  JsonNode *code_node = json_object_get_member (object, "code");
  JsonNode *data_node = json_object_get_member (object, "data");
  g_autofree char *details = NULL;
  const char *message = mend_json_get_string (object, "message");
  GString *s;

  *code = 0;
  if (code_node != NULL && JSON_NODE_HOLDS_VALUE (code_node))
    {
      if (json_node_get_value_type (code_node) == G_TYPE_INT64)
        *code = json_node_get_int (code_node);
      else if (json_node_get_value_type (code_node) == G_TYPE_DOUBLE)
        {
          double d = json_node_get_double (code_node);

          /* Out of range (or not a number), the conversion is undefined:
           * such a code means nothing. Nor does one that is not whole
           * (599.5), as JSON-RPC's codes are integers: it is no HTTP
           * status. */
          *code = d > -9.2e18 && d < 9.2e18 ? (gint64) d : 0;
          if ((double) *code != d)
            *code = 0;
        }
    }

  if (data_node != NULL && JSON_NODE_HOLDS_NULL (data_node))
    data_node = NULL;
  details = rpc_error_data_text (data_node);
  s = g_string_new (NULL);

  /* A wrapper's catch-all yields to the error it wraps. */
  if (message != NULL && g_str_has_prefix (message, RPC_INTERNAL_ERROR ": "))
    message += strlen (RPC_INTERNAL_ERROR ": ");
  else if (details != NULL && g_strcmp0 (message, RPC_INTERNAL_ERROR) == 0)
    message = NULL;

  if (message != NULL)
    g_string_append (s, message);
  if (details != NULL)
    g_string_append_printf (s, "%s%s", s->len > 0 ? " " : "", details);
  else if (data_node != NULL)
    {
      g_autofree char *json = mend_json_to_string (data_node);

      g_string_append_printf (s, "%s%s", s->len > 0 ? " " : "", json);
    }
  /* ACP's own code for "authentication required": said in the words the
   * classifier reads as an authentication failure. */
  if (*code == ACP_AUTH_REQUIRED)
    g_string_append (s, " (ACP auth_required: unauthorized)");
  if (s->len == 0)
    {
      g_autofree char *number = g_strdup_printf ("%" G_GINT64_FORMAT, *code);

      g_string_printf (s, _("The agent answered with error %s"), number);
    }
  *text = g_string_free (s, FALSE);
}

/* A failure read from a JSON-RPC error answer, or NULL when there is
 * none (the connection failed: the agent is gone). JSON-RPC's own codes
 * are negative; an error code from 400 to 599 is the HTTP status of the
 * upstream's answer, as the Gemini CLI sends it, and the message its
 * body or the body's message. */
MendFailure *
mend_acp_failure_from_rpc_error (JsonObject *error)
{
  g_autoptr(MendFailure) failure = NULL;
  g_autofree char *text = NULL;
  JsonObject *data;
  gint64 code = 0;

  if (error == NULL)
    return NULL;
  rpc_error_read (error, &code, &text);

  mend_debug ("ACP error %" G_GINT64_FORMAT ": %s", code, text);
  if (code >= 400 && code <= 599)
    {
      g_autoptr(GBytes) body = g_bytes_new (text, strlen (text));

      return mend_failure_new_from_http ((guint) code, NULL, body);
    }
  /* A cancellation the client did not ask for is the agent's own: it is
   * no Stop of the user's. */
  if (code == ACP_REQUEST_CANCELLED)
    return mend_acp_failure_new_own_cancel (text);

  failure = mend_failure_new_from_text (text);
  data = mend_json_get_object (error, "data");
  if (data != NULL)
    {
      MendFailure *typed = judge_by_data (failure, data);

      if (typed != NULL)
        return typed;
    }
  return g_steal_pointer (&failure);
}

