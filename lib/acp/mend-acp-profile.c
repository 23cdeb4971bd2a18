/* mend-acp-profile.c — MendAcpProfile: what libmend knows of one ACP agent
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "mend-acp-profile-private.h"

/**
 * MendAcpProfile:
 *
 * What libmend knows of one agent that speaks the Agent Client Protocol,
 * beyond the protocol itself: how it behaves when its upstream fails.
 * [class@Mend.AcpAgent] takes one from the agent's `initialize` answer
 * (its `agentInfo.name`, through [func@Mend.AcpProfile.lookup]) unless
 * the app set one with [method@Mend.AcpAgent.set_profile].
 *
 * - [property@Mend.AcpProfile:keeps-failed-prompt]: whether the agent
 *   keeps a prompt that failed in its history. The Gemini CLI drops it;
 *   then the chat's "Continue the current turn" would reach a model that
 *   never saw the prompt, so the agent is sent the failed prompt instead,
 *   once.
 * - [property@Mend.AcpProfile:restreams-partial]: whether an attempt of
 *   the agent's starts its answer again from nothing. Then an attempt that
 *   failed after some text (and no tool call) is retried like one that
 *   failed before any output; otherwise it is partial, not retried. Its
 *   text marks the turn's output as seen ([method@Mend.Turn.note_output])
 *   once the answer is whole; a tool call at once.
 * - [property@Mend.AcpProfile:notice-prefixes]: message chunks that are
 *   the agent's own notices, not the model's output, such as Codex's
 *   "Model metadata for `…` not found" warning: they do not count as
 *   output.
 * - [property@Mend.AcpProfile:error-prefixes]: message chunks that are
 *   the agent's error text, as adapters that were not asked for typed
 *   failures write it before they end the prompt ("API Error: 529 …"):
 *   they are not output, and a prompt they end with a plain `end_turn`
 *   failed with their words.
 *
 * The agents libmend knows (see docs/agents.md for what was seen of each):
 *
 * | `agentInfo.name` | keeps failed prompt | restreams partial | notices | errors |
 * |---|---|---|---|---|
 * | `@zed-industries/claude-code-acp` | yes | no | — | — |
 * | `@zed-industries/claude-agent-acp` | yes | no | — | — |
 * | `@agentclientprotocol/claude-agent-acp` | yes | no | — | "API Error: ", "Invalid API key", "Connection to the API was lost" |
 * | `gemini-cli` | no | yes | — | — |
 * | `codex-acp` | yes | yes | "Model metadata for `" | — |
 * | `@agentclientprotocol/codex-acp` | yes | yes | "Model metadata for `" | "unexpected status ", "stream disconnected before completion", "Quota exceeded" |
 *
 * Any other agent gets the default profile, named "default": it keeps a
 * failed prompt, does not restream, and has no notices — the choices
 * under which libmend, when wrong, repeats nothing the model saw and
 * retries no partial answer.
 *
 * Whatever the profile, an error code from 400 to 599 is read as the
 * upstream's HTTP status and JSON-RPC's bare "Internal error" yields to
 * the error's `data` (see [class@Mend.AcpAgent]).
 *
 * An agent libmend does not know, which drops a failed prompt and warns
 * in its chunks:
 *
 * ```c
 * const char *argv[] = { "my-agent", "--acp", NULL };
 * const char *notices[] = { "Warning: ", NULL };
 * g_autoptr(MendAcpAgent) agent = mend_acp_agent_new (argv);
 * g_autoptr(MendAcpProfile) profile = mend_acp_profile_new ("my-agent");
 *
 * mend_acp_profile_set_keeps_failed_prompt (profile, FALSE);
 * mend_acp_profile_set_notice_prefixes (profile, notices);
 * mend_acp_agent_set_profile (agent, profile);
 * ```
 */

struct _MendAcpProfile
{
  GObject   parent_instance;

  char     *name;
  gboolean  keeps_failed_prompt;
  gboolean  restreams_partial;
  GStrv     notice_prefixes;
  GStrv     error_prefixes;
};

enum {
  PROP_0,
  PROP_NAME,
  PROP_KEEPS_FAILED_PROMPT,
  PROP_RESTREAMS_PARTIAL,
  PROP_NOTICE_PREFIXES,
  PROP_ERROR_PREFIXES,
  N_PROPS
};

G_DEFINE_FINAL_TYPE (MendAcpProfile, mend_acp_profile, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];

/* The agents libmend knows, by agentInfo.name. */
typedef struct
{
  const char *name;
  gboolean    keeps_failed_prompt;
  gboolean    restreams_partial;
  const char *notices[2];
  const char *errors[4];
} KnownAgent;

static const KnownAgent known_agents[] = {
  { "@zed-industries/claude-code-acp", TRUE, FALSE, { NULL }, { NULL } },
  { "@zed-industries/claude-agent-acp", TRUE, FALSE, { NULL }, { NULL } },
  /* To a client that does not ask for typed failures, its errors come as
   * a chunk before the JSON-RPC error (0.101.0, REAL-AGENTS.md); each
   * failed prompt stays in its history. */
  { "@agentclientprotocol/claude-agent-acp", TRUE, FALSE, { NULL },
    { "API Error: ", "Invalid API key", "Connection to the API was lost", NULL } },
  /* A failed prompt is dropped from its history; a stream cut after text
   * is answered again from the start (REAL-AGENTS.md, 0.61.0). */
  { "gemini-cli", FALSE, TRUE, { NULL }, { NULL } },
  /* Each of its attempts streams the answer again; a model it has no
   * metadata for makes it warn in a message chunk (0.16.0,
   * tests/data/codex-acp-0.16.0/unknown-model-warning.jsonl). */
  { "codex-acp", TRUE, TRUE, { "Model metadata for `", NULL }, { NULL } },
  /* The TypeScript rewrite (2.6.0): a 503 or a cut stream is a chunk of
   * error text and then a plain end_turn, to a client that does not ask
   * for typed failures. */
  { "@agentclientprotocol/codex-acp", TRUE, TRUE, { "Model metadata for `", NULL },
    { "unexpected status ", "stream disconnected before completion", "Quota exceeded", NULL } },
};

static void
mend_acp_profile_finalize (GObject *object)
{
  MendAcpProfile *self = MEND_ACP_PROFILE (object);

  g_free (self->name);
  g_strfreev (self->notice_prefixes);
  g_strfreev (self->error_prefixes);

  G_OBJECT_CLASS (mend_acp_profile_parent_class)->finalize (object);
}

static void
mend_acp_profile_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  MendAcpProfile *self = MEND_ACP_PROFILE (object);

  switch (prop_id)
    {
    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;
    case PROP_KEEPS_FAILED_PROMPT:
      g_value_set_boolean (value, self->keeps_failed_prompt);
      break;
    case PROP_RESTREAMS_PARTIAL:
      g_value_set_boolean (value, self->restreams_partial);
      break;
    case PROP_NOTICE_PREFIXES:
      g_value_set_boxed (value, self->notice_prefixes);
      break;
    case PROP_ERROR_PREFIXES:
      g_value_set_boxed (value, self->error_prefixes);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_acp_profile_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  MendAcpProfile *self = MEND_ACP_PROFILE (object);

  switch (prop_id)
    {
    case PROP_NAME:
      self->name = g_value_dup_string (value);
      if (self->name == NULL)
        self->name = g_strdup ("default");
      break;
    case PROP_KEEPS_FAILED_PROMPT:
      mend_acp_profile_set_keeps_failed_prompt (self, g_value_get_boolean (value));
      break;
    case PROP_RESTREAMS_PARTIAL:
      mend_acp_profile_set_restreams_partial (self, g_value_get_boolean (value));
      break;
    case PROP_NOTICE_PREFIXES:
      mend_acp_profile_set_notice_prefixes (self, g_value_get_boxed (value));
      break;
    case PROP_ERROR_PREFIXES:
      mend_acp_profile_set_error_prefixes (self, g_value_get_boxed (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_acp_profile_class_init (MendAcpProfileClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = mend_acp_profile_finalize;
  object_class->get_property = mend_acp_profile_get_property;
  object_class->set_property = mend_acp_profile_set_property;

  /**
   * MendAcpProfile:name:
   *
   * The agent's `agentInfo.name` the profile is for, or "default".
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, "default",
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAcpProfile:keeps-failed-prompt:
   *
   * Whether the agent keeps a prompt that failed in its history. When it
   * does not, a "Continue the current turn" after a give-up sends the
   * failed prompt instead, once.
   */
  properties[PROP_KEEPS_FAILED_PROMPT] =
    g_param_spec_boolean ("keeps-failed-prompt", NULL, NULL, TRUE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAcpProfile:restreams-partial:
   *
   * Whether each attempt of the agent's answers from the start, so that
   * an attempt that failed after text alone (no tool call) may be
   * retried.
   */
  properties[PROP_RESTREAMS_PARTIAL] =
    g_param_spec_boolean ("restreams-partial", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAcpProfile:notice-prefixes:
   *
   * The beginnings of the agent's own notices in message chunks: a chunk
   * that starts with one is not the model's output.
   */
  properties[PROP_NOTICE_PREFIXES] =
    g_param_spec_boxed ("notice-prefixes", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * MendAcpProfile:error-prefixes:
   *
   * The beginnings of the agent's error text in message chunks, as an
   * agent that was not asked for typed failures writes it: a chunk that
   * starts with one, before any output, is not the model's output, and a
   * prompt that then ends with `end_turn` failed with its words.
   */
  properties[PROP_ERROR_PREFIXES] =
    g_param_spec_boxed ("error-prefixes", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
mend_acp_profile_init (MendAcpProfile *self)
{
  self->keeps_failed_prompt = TRUE;
}

/**
 * mend_acp_profile_new:
 * @name: (nullable): the agent's `agentInfo.name`, or %NULL for "default"
 *
 * Creates a profile with the defaults: keeps a failed prompt, does not
 * restream, no notices. To start from what libmend knows of an agent,
 * use [func@Mend.AcpProfile.lookup].
 *
 * Returns: (transfer full): a new profile
 */
MendAcpProfile *
mend_acp_profile_new (const char *name)
{
  return g_object_new (MEND_TYPE_ACP_PROFILE, "name", name, NULL);
}

/**
 * mend_acp_profile_lookup:
 * @agent_name: (nullable): an agent's `agentInfo.name`
 *
 * Gets what libmend knows of the agent named @agent_name: a new profile,
 * the app's to change. An agent libmend does not know gets the default
 * profile, named "default".
 *
 * Returns: (transfer full): a new profile
 */
MendAcpProfile *
mend_acp_profile_lookup (const char *agent_name)
{
  for (guint i = 0; agent_name != NULL && i < G_N_ELEMENTS (known_agents); i++)
    if (g_str_equal (agent_name, known_agents[i].name))
      return g_object_new (MEND_TYPE_ACP_PROFILE,
                           "name", known_agents[i].name,
                           "keeps-failed-prompt", known_agents[i].keeps_failed_prompt,
                           "restreams-partial", known_agents[i].restreams_partial,
                           "notice-prefixes", known_agents[i].notices,
                           "error-prefixes", known_agents[i].errors,
                           NULL);

  return mend_acp_profile_new (NULL);
}

/**
 * mend_acp_profile_get_name:
 * @self: a profile
 *
 * Gets [property@Mend.AcpProfile:name].
 *
 * Returns: the agent's name, or "default"
 */
const char *
mend_acp_profile_get_name (MendAcpProfile *self)
{
  g_return_val_if_fail (MEND_IS_ACP_PROFILE (self), NULL);

  return self->name;
}

/**
 * mend_acp_profile_get_keeps_failed_prompt:
 * @self: a profile
 *
 * Gets [property@Mend.AcpProfile:keeps-failed-prompt].
 *
 * Returns: whether the agent keeps a failed prompt in its history
 */
gboolean
mend_acp_profile_get_keeps_failed_prompt (MendAcpProfile *self)
{
  g_return_val_if_fail (MEND_IS_ACP_PROFILE (self), TRUE);

  return self->keeps_failed_prompt;
}

/**
 * mend_acp_profile_set_keeps_failed_prompt:
 * @self: a profile
 * @keeps: whether the agent keeps a failed prompt in its history
 *
 * Sets [property@Mend.AcpProfile:keeps-failed-prompt].
 */
void
mend_acp_profile_set_keeps_failed_prompt (MendAcpProfile *self,
                                          gboolean        keeps)
{
  g_return_if_fail (MEND_IS_ACP_PROFILE (self));

  keeps = !!keeps;
  if (self->keeps_failed_prompt != keeps)
    {
      self->keeps_failed_prompt = keeps;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_KEEPS_FAILED_PROMPT]);
    }
}

/**
 * mend_acp_profile_get_restreams_partial:
 * @self: a profile
 *
 * Gets [property@Mend.AcpProfile:restreams-partial].
 *
 * Returns: whether each attempt answers from the start
 */
gboolean
mend_acp_profile_get_restreams_partial (MendAcpProfile *self)
{
  g_return_val_if_fail (MEND_IS_ACP_PROFILE (self), FALSE);

  return self->restreams_partial;
}

/**
 * mend_acp_profile_set_restreams_partial:
 * @self: a profile
 * @restreams: whether each attempt answers from the start
 *
 * Sets [property@Mend.AcpProfile:restreams-partial].
 */
void
mend_acp_profile_set_restreams_partial (MendAcpProfile *self,
                                        gboolean        restreams)
{
  g_return_if_fail (MEND_IS_ACP_PROFILE (self));

  restreams = !!restreams;
  if (self->restreams_partial != restreams)
    {
      self->restreams_partial = restreams;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RESTREAMS_PARTIAL]);
    }
}

/**
 * mend_acp_profile_get_notice_prefixes:
 * @self: a profile
 *
 * Gets [property@Mend.AcpProfile:notice-prefixes].
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the
 *   prefixes, or %NULL for none
 */
const char * const *
mend_acp_profile_get_notice_prefixes (MendAcpProfile *self)
{
  g_return_val_if_fail (MEND_IS_ACP_PROFILE (self), NULL);

  return (const char * const *) self->notice_prefixes;
}

/**
 * mend_acp_profile_set_notice_prefixes:
 * @self: a profile
 * @prefixes: (nullable) (array zero-terminated=1): the beginnings of the
 *   agent's notices, or %NULL for none
 *
 * Sets [property@Mend.AcpProfile:notice-prefixes]. Empty prefixes are
 * left out: they would make every chunk a notice.
 */
/* Sets @field to the non-empty ones of @prefixes (an empty prefix would
 * match every chunk), or NULL for none, and notifies @pspec. */
static void
set_prefixes (MendAcpProfile     *self,
              GStrv              *field,
              const char * const *prefixes,
              GParamSpec         *pspec)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  GStrv kept;

  for (guint i = 0; prefixes != NULL && prefixes[i] != NULL; i++)
    if (prefixes[i][0] != '\0')
      g_strv_builder_add (builder, prefixes[i]);

  kept = g_strv_builder_end (builder);
  if (kept[0] == NULL)
    g_clear_pointer (&kept, g_strfreev);
  /* The same prefixes are no change. */
  if ((kept == NULL && *field == NULL) ||
      (kept != NULL && *field != NULL && g_strv_equal ((const char * const *) kept, (const char * const *) *field)))
    {
      g_strfreev (kept);
      return;
    }
  g_strfreev (*field);
  *field = kept;
  g_object_notify_by_pspec (G_OBJECT (self), pspec);
}

void
mend_acp_profile_set_notice_prefixes (MendAcpProfile     *self,
                                      const char * const *prefixes)
{
  g_return_if_fail (MEND_IS_ACP_PROFILE (self));

  set_prefixes (self, &self->notice_prefixes, prefixes, properties[PROP_NOTICE_PREFIXES]);
}

/**
 * mend_acp_profile_get_error_prefixes:
 * @self: a profile
 *
 * Gets [property@Mend.AcpProfile:error-prefixes].
 *
 * Returns: (transfer none) (nullable) (array zero-terminated=1): the
 *   prefixes, or %NULL for none
 */
const char * const *
mend_acp_profile_get_error_prefixes (MendAcpProfile *self)
{
  g_return_val_if_fail (MEND_IS_ACP_PROFILE (self), NULL);

  return (const char * const *) self->error_prefixes;
}

/**
 * mend_acp_profile_set_error_prefixes:
 * @self: a profile
 * @prefixes: (nullable) (array zero-terminated=1): the beginnings of the
 *   agent's error text, or %NULL for none
 *
 * Sets [property@Mend.AcpProfile:error-prefixes]. Empty prefixes are
 * left out.
 */
void
mend_acp_profile_set_error_prefixes (MendAcpProfile     *self,
                                     const char * const *prefixes)
{
  g_return_if_fail (MEND_IS_ACP_PROFILE (self));

  set_prefixes (self, &self->error_prefixes, prefixes, properties[PROP_ERROR_PREFIXES]);
}

static gboolean
has_prefix_in (GStrv       prefixes,
               const char *text)
{
  for (guint i = 0; prefixes != NULL && prefixes[i] != NULL; i++)
    if (g_str_has_prefix (text, prefixes[i]))
      return TRUE;
  return FALSE;
}

gboolean
mend_acp_profile_is_notice (MendAcpProfile *self,
                            const char     *text)
{
  g_return_val_if_fail (MEND_IS_ACP_PROFILE (self), FALSE);
  g_return_val_if_fail (text != NULL, FALSE);

  return has_prefix_in (self->notice_prefixes, text);
}

gboolean
mend_acp_profile_is_error (MendAcpProfile *self,
                           const char     *text)
{
  g_return_val_if_fail (MEND_IS_ACP_PROFILE (self), FALSE);
  g_return_val_if_fail (text != NULL, FALSE);

  return has_prefix_in (self->error_prefixes, text);
}
