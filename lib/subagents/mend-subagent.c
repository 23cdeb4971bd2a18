/* mend-subagent.c — MendSubagent: one subagent as the interface shows it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "mend-enum-types.h"
#include "mend-failure.h"
#include "mend-json-private.h"
#include "mend-retry-wait-private.h"
#include "mend-subagent-private.h"

/**
 * MendSubagent:
 *
 * A subagent of a chat, as the interface shows it: its state, the wait
 * before it is resumed, and whether a person's Retry can work.
 *
 * [class@Mend.SubagentRetry] keeps these up to date; they are read-only for
 * everyone else. [method@Mend.Subagent.to_json] gives the entry that logs
 * and web views carry: `{"subagentId","agentId","name","state",
 * "retryable","retry":{"attempt","of","reason","nextAt"}|null}`.
 *
 * Example:
 *
 * ```c
 * static void
 * on_subagent_notify (MendSubagent *subagent, GParamSpec *pspec, gpointer data)
 * {
 *   MendRetryWait *wait = mend_subagent_get_retry (subagent);
 *   g_autofree char *text = wait ? mend_retry_wait_describe (wait) : NULL;
 *
 *   g_print ("%s: %s\n", mend_subagent_get_name (subagent),
 *            text ? text : mend_subagent_get_retryable (subagent) ? "can be retried" : "");
 * }
 *
 * static void
 * on_items_changed (GListModel *subagents, guint position, guint removed, guint added, gpointer data)
 * {
 *   for (guint i = position; i < position + added; i++)
 *     {
 *       g_autoptr(MendSubagent) subagent = g_list_model_get_item (subagents, i);
 *
 *       g_signal_connect (subagent, "notify", G_CALLBACK (on_subagent_notify), NULL);
 *     }
 * }
 * ```
 */

struct _MendSubagent
{
  GObject            parent_instance;

  char              *id;
  char              *agent_id;
  char              *name;
  MendSubagentState  state;
  MendRetryWait     *retry;
  gboolean           retryable;
  MendFailure       *failure;
  guint              attempts;

};

enum {
  PROP_0,
  PROP_ID,
  PROP_AGENT_ID,
  PROP_NAME,
  PROP_STATE,
  PROP_RETRY,
  PROP_RETRYABLE,
  PROP_FAILURE,
  PROP_ATTEMPTS,
  N_PROPS
};

G_DEFINE_FINAL_TYPE (MendSubagent, mend_subagent, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];

static void
mend_subagent_finalize (GObject *object)
{
  MendSubagent *self = (MendSubagent *) object;

  g_clear_pointer (&self->id, g_free);
  g_clear_pointer (&self->agent_id, g_free);
  g_clear_pointer (&self->name, g_free);
  g_clear_object (&self->retry);
  g_clear_object (&self->failure);

  G_OBJECT_CLASS (mend_subagent_parent_class)->finalize (object);
}

static void
mend_subagent_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  MendSubagent *self = MEND_SUBAGENT (object);

  switch (prop_id)
    {
    case PROP_ID:
      g_value_set_string (value, self->id);
      break;
    case PROP_AGENT_ID:
      g_value_set_string (value, self->agent_id);
      break;
    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;
    case PROP_STATE:
      g_value_set_enum (value, self->state);
      break;
    case PROP_RETRY:
      g_value_set_object (value, self->retry);
      break;
    case PROP_RETRYABLE:
      g_value_set_boolean (value, self->retryable);
      break;
    case PROP_FAILURE:
      g_value_set_object (value, self->failure);
      break;
    case PROP_ATTEMPTS:
      g_value_set_uint (value, self->attempts);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_subagent_class_init (MendSubagentClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = mend_subagent_finalize;
  object_class->get_property = mend_subagent_get_property;

  /**
   * MendSubagent:id:
   *
   * The subagent's id: the id of the tool call that spawned it, or its agent
   * id when there is none.
   */
  properties[PROP_ID] =
    g_param_spec_string ("id", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendSubagent:agent-id:
   *
   * The id the agent resumes the subagent by, or %NULL when unknown.
   */
  properties[PROP_AGENT_ID] =
    g_param_spec_string ("agent-id", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendSubagent:name:
   *
   * The subagent's description, as the agent gave it (untrusted text).
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendSubagent:state:
   *
   * Running, completed, failed or cancelled.
   */
  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, NULL,
                       MEND_TYPE_SUBAGENT_STATE, MEND_SUBAGENT_RUNNING,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendSubagent:retry:
   *
   * The wait before the subagent is resumed, or %NULL.
   */
  properties[PROP_RETRY] =
    g_param_spec_object ("retry", NULL, NULL,
                         MEND_TYPE_RETRY_WAIT,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendSubagent:retryable:
   *
   * Whether a person's Retry can work: %TRUE while the agent id is known and
   * the chat is open, also after a Stop and after the automatic attempts are
   * used up; %FALSE once the chat closed, or the subagent runs again, ended,
   * was replaced or forgotten.
   */
  properties[PROP_RETRYABLE] =
    g_param_spec_boolean ("retryable", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendSubagent:failure:
   *
   * What the subagent last failed on, or %NULL.
   */
  properties[PROP_FAILURE] =
    g_param_spec_object ("failure", NULL, NULL,
                         MEND_TYPE_FAILURE,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendSubagent:attempts:
   *
   * How many resume prompts were sent for it.
   */
  properties[PROP_ATTEMPTS] =
    g_param_spec_uint ("attempts", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
mend_subagent_init (MendSubagent *self)
{
  self->state = MEND_SUBAGENT_RUNNING;
}

MendSubagent *
mend_subagent_new (const char *id,
                   const char *agent_id,
                   const char *name)
{
  MendSubagent *self = g_object_new (MEND_TYPE_SUBAGENT, NULL);

  self->id = g_strdup (id);
  self->agent_id = g_strdup (agent_id);
  self->name = g_strdup (name);

  return self;
}

void
mend_subagent_set_state (MendSubagent      *self,
                         MendSubagentState  state)
{
  if (self->state != state)
    {
      self->state = state;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
    }
}

void
mend_subagent_set_retry (MendSubagent  *self,
                         MendRetryWait *retry)
{
  if (g_set_object (&self->retry, retry))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RETRY]);
}

void
mend_subagent_set_retryable (MendSubagent *self,
                             gboolean      retryable)
{
  retryable = !!retryable;
  if (self->retryable != retryable)
    {
      self->retryable = retryable;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RETRYABLE]);
    }
}

void
mend_subagent_set_failure (MendSubagent *self,
                           MendFailure  *failure)
{
  if (g_set_object (&self->failure, failure))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_FAILURE]);
}

void
mend_subagent_set_attempts (MendSubagent *self,
                            guint         attempts)
{
  if (self->attempts != attempts)
    {
      self->attempts = attempts;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ATTEMPTS]);
    }
}

/**
 * mend_subagent_get_id:
 * @self: a subagent
 *
 * Gets the subagent's id.
 *
 * Returns: the id
 */
const char *
mend_subagent_get_id (MendSubagent *self)
{
  g_return_val_if_fail (MEND_IS_SUBAGENT (self), NULL);

  return self->id;
}

/**
 * mend_subagent_get_agent_id:
 * @self: a subagent
 *
 * Gets the id the agent resumes the subagent by.
 *
 * Returns: (nullable): the agent id, or %NULL
 */
const char *
mend_subagent_get_agent_id (MendSubagent *self)
{
  g_return_val_if_fail (MEND_IS_SUBAGENT (self), NULL);

  return self->agent_id;
}

/**
 * mend_subagent_get_name:
 * @self: a subagent
 *
 * Gets the subagent's description.
 *
 * Returns: (nullable): the name, or %NULL
 */
const char *
mend_subagent_get_name (MendSubagent *self)
{
  g_return_val_if_fail (MEND_IS_SUBAGENT (self), NULL);

  return self->name;
}

/**
 * mend_subagent_get_state:
 * @self: a subagent
 *
 * Gets the subagent's state.
 *
 * Returns: the state
 */
MendSubagentState
mend_subagent_get_state (MendSubagent *self)
{
  g_return_val_if_fail (MEND_IS_SUBAGENT (self), MEND_SUBAGENT_FAILED);

  return self->state;
}

/**
 * mend_subagent_get_retry:
 * @self: a subagent
 *
 * Gets the wait before the subagent is resumed.
 *
 * Returns: (transfer none) (nullable): the wait, or %NULL
 */
MendRetryWait *
mend_subagent_get_retry (MendSubagent *self)
{
  g_return_val_if_fail (MEND_IS_SUBAGENT (self), NULL);

  return self->retry;
}

/**
 * mend_subagent_get_retryable:
 * @self: a subagent
 *
 * Gets whether a person's Retry can work.
 *
 * Returns: %TRUE if [method@Mend.SubagentRetry.resume_now] may be called
 */
gboolean
mend_subagent_get_retryable (MendSubagent *self)
{
  g_return_val_if_fail (MEND_IS_SUBAGENT (self), FALSE);

  return self->retryable;
}

/**
 * mend_subagent_get_failure:
 * @self: a subagent
 *
 * Gets what the subagent last failed on.
 *
 * Returns: (transfer none) (nullable): the failure, or %NULL
 */
MendFailure *
mend_subagent_get_failure (MendSubagent *self)
{
  g_return_val_if_fail (MEND_IS_SUBAGENT (self), NULL);

  return self->failure;
}

/**
 * mend_subagent_get_attempts:
 * @self: a subagent
 *
 * Gets how many resume prompts were sent for the subagent.
 *
 * Returns: the number of attempts
 */
guint
mend_subagent_get_attempts (MendSubagent *self)
{
  g_return_val_if_fail (MEND_IS_SUBAGENT (self), 0);

  return self->attempts;
}

static const char *
state_nick (MendSubagentState state)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (MEND_TYPE_SUBAGENT_STATE);
  GEnumValue *value = g_enum_get_value (klass, state);

  return value ? value->value_nick : "failed";
}

/**
 * mend_subagent_to_json:
 * @self: a subagent
 *
 * Writes the subagent's entry: `{"subagentId","agentId","name","state",
 * "retryable","retry":{"attempt","of","reason","nextAt"}|null}`, with
 * `nextAt` in wall-clock milliseconds.
 *
 * Returns: (transfer full): the JSON text
 */
char *
mend_subagent_to_json (MendSubagent *self)
{
  g_autoptr(JsonBuilder) builder = NULL;

  g_return_val_if_fail (MEND_IS_SUBAGENT (self), NULL);

  builder = json_builder_new_immutable ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "subagentId");
  json_builder_add_string_value (builder, self->id);
  json_builder_set_member_name (builder, "agentId");
  if (self->agent_id != NULL)
    json_builder_add_string_value (builder, self->agent_id);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "name");
  if (self->name != NULL)
    json_builder_add_string_value (builder, self->name);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "state");
  json_builder_add_string_value (builder, state_nick (self->state));
  json_builder_set_member_name (builder, "retryable");
  json_builder_add_boolean_value (builder, self->retryable);
  json_builder_set_member_name (builder, "retry");
  if (self->retry != NULL)
    mend_retry_wait_build_json (self->retry, builder);
  else
    json_builder_add_null_value (builder);
  json_builder_end_object (builder);

  return mend_json_builder_finish (builder);
}
