/* mend-demo.c — libmend in front of you
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Starts a flaky model server on loopback and runs a chat against it
 * through MendHttpSender (mend-demo-story.c): a turn that meets two 529s and
 * then answers while a follow-up waits in the queue, a turn that gives up so
 * that "Continue the current turn" heads the queue, a Stop during a wait,
 * and a subagent that a 503 failed, resumed through MendStreamObserver and
 * a scripted agent. With --agent, the same story runs through the real
 * Claude Code CLI (MendAgentProcess) against a model server of its own
 * (mend-demo-agent.c); with --acp, through Claude Code's Agent Client
 * Protocol adapter (MendAcpAgent), against the same server. With --url, one
 * prompt goes to a real endpoint.
 *
 * Exit status: 0 when every scenario played as scripted (the give-up
 * scenario's give-up is planned) or, with --url, when the turn succeeded;
 * 1 when a turn ended otherwise; 2 for a usage error, which is reported
 * before anything else is printed.
 */

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <libmend.h>

#include "mend-demo.h"

/* A clock that runs @speed times faster than the real one: libmend's clock
 * is an extension point, and this is all a subclass needs. */

typedef struct { MendClock parent; double speed; gint64 start; } ScaledClock;
typedef struct { MendClockClass parent_class; } ScaledClockClass;
static GType scaled_clock_get_type (void);
G_DEFINE_TYPE (ScaledClock, scaled_clock, MEND_TYPE_CLOCK)

static gint64
scaled_now (ScaledClock *self)
{
  return self->start + (gint64) ((g_get_monotonic_time () - self->start) * self->speed);
}

static gint64
scaled_clock_get_monotonic_time (MendClock *clock)
{
  return scaled_now ((ScaledClock *) clock);
}

static gint64
scaled_clock_get_real_time (MendClock *clock)
{
  ScaledClock *self = (ScaledClock *) clock;

  return g_get_real_time () - g_get_monotonic_time () + scaled_now (self);
}

static guint
scaled_clock_add_timer (MendClock      *clock,
                        gint64          deadline_us,
                        MendClockFunc   func,
                        gpointer        user_data,
                        GDestroyNotify  notify)
{
  ScaledClock *self = (ScaledClock *) clock;
  gint64 real = self->start + (gint64) ((deadline_us - self->start) / self->speed);

  return MEND_CLOCK_CLASS (scaled_clock_parent_class)->add_timer (clock, real, func, user_data, notify);
}

static void
scaled_clock_class_init (ScaledClockClass *klass)
{
  MendClockClass *clock_class = MEND_CLOCK_CLASS (klass);

  clock_class->get_monotonic_time = scaled_clock_get_monotonic_time;
  clock_class->get_real_time = scaled_clock_get_real_time;
  clock_class->add_timer = scaled_clock_add_timer;
}

static void
scaled_clock_init (ScaledClock *self)
{
  self->speed = 1.0;
  self->start = g_get_monotonic_time ();
}

/* Options and output */

static double opt_speed;
static gboolean opt_speed_given;
static gboolean opt_json;
static gboolean opt_list;
static char *opt_scenario;
static char *opt_url;
static char *opt_dialect;
static char **opt_headers;
static char *opt_policy;
static char **opt_classify;
static gboolean opt_agent;
static char *opt_claude;
static gboolean opt_acp;
static char *opt_acp_adapter;
static char **opt_prompts;

static gboolean is_tty;
static MendRetryWait *countdown_wait;
static gulong countdown_id;

void
say (const char *format,
     ...)
{
  g_autofree char *line = NULL;
  va_list args;

  if (opt_json)
    return;

  va_start (args, format);
  line = g_strdup_vprintf (format, args);
  va_end (args);

  if (is_tty && countdown_wait != NULL)
    g_print ("\r\033[K");
  g_print ("%s\n", line);
}

static const char *
reason_label (MendReason reason)
{
  static const char * const labels[] = {
    N_("capacity"), N_("rate limit"), N_("transport"), N_("timeout"), N_("empty answer"),
    N_("server error"), N_("authentication"), N_("permission"), N_("bad request"),
    N_("usage limit"), N_("billing"), N_("cancelled"), N_("unknown"),
  };

  return (guint) reason < G_N_ELEMENTS (labels) ? _(labels[reason]) : "";
}

static const char *
kind_label (MendFailureKind kind)
{
  static const char * const labels[] = {
    N_("transient"), N_("permanent"), N_("limit"), N_("stopped"),
  };

  return (guint) kind < G_N_ELEMENTS (labels) ? _(labels[kind]) : "";
}

const char *
subagent_state_label (MendSubagentState state)
{
  /* TRANSLATORS: what a subagent does now, after its name: “Survey” runs */
  static const char * const labels[] = {
    N_("runs"), N_("completed"), N_("failed"), N_("was cancelled"),
  };

  return (guint) state < G_N_ELEMENTS (labels) ? _(labels[state]) : "";
}

/* The wait as libmend describes it, translated: "Retrying in 4 s (retry 2 of 4)". */
static char *
countdown_text (MendRetryWait *wait)
{
  g_autofree char *text = mend_retry_wait_describe (wait);

  return g_strdup_printf ("⟳ %s · %s", reason_label (mend_retry_wait_get_reason (wait)), text);
}

/* On a terminal the line is drawn again each time the whole seconds left
 * drop: the wait notifies remaining-seconds, no polling. */
static void
update_countdown (MendRetryWait *wait)
{
  g_autofree char *text = countdown_text (wait);

  g_print ("\r\033[K%s", text);
  fflush (stdout);
}

static void
stop_countdown (void)
{
  if (countdown_wait == NULL)
    return;
  if (is_tty && !opt_json)
    g_print ("\r\033[K");
  g_clear_signal_handler (&countdown_id, countdown_wait);
  g_signal_handlers_disconnect_by_func (countdown_wait, G_CALLBACK (stop_countdown), NULL);
  g_clear_object (&countdown_wait);
}

void
show_wait (MendRetryWait *wait,
           const char    *who)
{
  g_autofree char *text = countdown_text (wait);

  stop_countdown ();
  if (opt_json)
    return;

  if (is_tty)
    {
      countdown_wait = g_object_ref (wait);
      g_signal_connect (wait, "fired", G_CALLBACK (stop_countdown), NULL);
      g_signal_connect (wait, "cancelled", G_CALLBACK (stop_countdown), NULL);
      countdown_id = g_signal_connect (wait, "notify::remaining-seconds", G_CALLBACK (update_countdown), NULL);
      update_countdown (wait);
    }
  else
    say ("  %s%s%s", who, *who ? " " : "", text);
}

/* The first @n characters of @text: g_utf8_substring () must not be asked
 * for more than there are. */
static char *
head_of (const char *text,
         glong       n)
{
  return g_utf8_substring (text, 0, MIN (n, g_utf8_strlen (text, -1)));
}

static char *
queue_line (MendChat *chat)
{
  GListModel *queue = G_LIST_MODEL (mend_chat_get_queue (chat));
  GString *out = g_string_new ("[");

  for (guint i = 0; i < g_list_model_get_n_items (queue); i++)
    {
      g_autoptr(MendQueueItem) item = g_list_model_get_item (queue, i);
      g_autofree char *text = head_of (mend_queue_item_get_text (item), 40);

      if (i > 0)
        g_string_append (out, ", ");
      /* TRANSLATORS: a queued message's text, quoted */
      g_string_append_printf (out, _("“%s”"), text);
    }
  g_string_append (out, "]");
  return g_string_free (out, FALSE);
}

static const char *
lifecycle_label (MendLifecycle lifecycle)
{
  static const char * const labels[] = { N_("ready"), N_("busy"), N_("error"), N_("closed") };

  return (guint) lifecycle < G_N_ELEMENTS (labels) ? _(labels[lifecycle]) : "";
}

/* The chat and what it says */

double
get_speed (void)
{
  return opt_speed;
}

static void
on_record (GObject    *source,
           const char *json,
           gpointer    data)
{
  if (opt_json)
    g_print ("%s\n", json);
}

static void
on_waiting (MendTurn      *turn,
            MendRetryWait *wait,
            Demo          *demo)
{
  MendFailure *failure = mend_retry_wait_get_failure (wait);

  say (_("  ✗ attempt %u: %s (%s)"), mend_turn_get_attempt (turn),
       failure ? mend_failure_get_message (failure) : "",
       failure ? kind_label (mend_failure_get_kind (failure)) : "");
  show_wait (wait, "");
}

static void
on_resumed (MendTurn *turn,
            guint     n,
            Demo     *demo)
{
  say (_("  ↻ attempt %u of %u, same prompt, no new user line"), n, mend_turn_get_max_attempts (turn));
}

static void
on_turn_started (MendChat *chat,
                 MendTurn *turn,
                 Demo     *demo)
{
  g_autofree char *queue = queue_line (chat);
  g_autofree char *prompt = head_of (mend_turn_get_prompt (turn), 72);
  const char *provenance = mend_turn_get_provenance (turn);

  g_string_truncate (demo->answer, 0);
  say (mend_turn_get_retry_of (turn) != NULL ? _("→ %s%s (Retry: the same turn again)") : "→ %s%s",
       prompt, g_utf8_strlen (mend_turn_get_prompt (turn), -1) > 72 ? "…" : "");
  if (provenance != NULL && strstr (provenance, "subagent_retry") != NULL)
    say (_("  (a resume prompt, provenance %s)"), provenance);
  say (_("  lifecycle %s · queue %s"), lifecycle_label (MEND_LIFECYCLE_BUSY), queue);
  g_signal_connect (turn, "waiting", G_CALLBACK (on_waiting), demo);
  g_signal_connect (turn, "resumed", G_CALLBACK (on_resumed), demo);
}

/* The answer as it streams, whatever the sender. A retried attempt
 * starts its answer again. */
static void
on_text_delta (MendChat   *chat,
               MendTurn   *turn,
               const char *text,
               Demo       *demo)
{
  g_string_append (demo->answer, text);
}

static void
on_turn_finished (MendChat *chat,
                  MendTurn *turn,
                  Demo     *demo)
{
  g_autofree char *queue = queue_line (chat);
  MendVerdict *verdict = mend_turn_get_last_verdict (turn);
  MendTurnState state = mend_turn_get_state (turn);
  guint n = mend_turn_get_attempt (turn);

  g_autofree char *how = NULL;

  stop_countdown ();
  if (state == MEND_TURN_SUCCEEDED)
    how = g_strdup_printf (g_dngettext (NULL, "succeeded after %u attempt", "succeeded after %u attempts", n), n);
  else if (state == MEND_TURN_STOPPED)
    how = g_strdup_printf (g_dngettext (NULL, "stopped after %u attempt", "stopped after %u attempts", n), n);
  else
    how = g_strdup_printf (g_dngettext (NULL, "gave up after %u attempt", "gave up after %u attempts", n), n);

  /* The answer, from the chat's text stream, which every sender feeds. */
  if (state == MEND_TURN_SUCCEEDED && demo->answer->len > 0)
    say ("  ← %s", demo->answer->str);
  /* The verdict is what the policy made of the last failure, in its
   * context; the failure says itself in a sentence. */
  if (state == MEND_TURN_FAILED && verdict != NULL)
    {
      g_autofree char *what = mend_failure_describe (mend_verdict_get_failure (verdict));

      say ("  ✗ %s: %s (%s)", how, what, kind_label (mend_verdict_get_kind (verdict)));
    }
  else
    say ("  %s %s", state == MEND_TURN_SUCCEEDED ? "✓" : state == MEND_TURN_STOPPED ? "■" : "✗", how);
  say (_("  lifecycle %s · queue %s"), lifecycle_label (mend_chat_get_lifecycle (chat)), queue);

  g_array_append_val (demo->ended, state);
}

void
connect_chat (Demo *demo)
{
  g_signal_connect (demo->chat, "turn-started", G_CALLBACK (on_turn_started), demo);
  g_signal_connect (demo->chat, "turn-finished", G_CALLBACK (on_turn_finished), demo);
  g_signal_connect (demo->chat, "text-delta", G_CALLBACK (on_text_delta), demo);
  g_signal_connect (demo->chat, "record", G_CALLBACK (on_record), NULL);
}

void
run_until_idle (Demo *demo)
{
  while (mend_chat_get_turn (demo->chat) != NULL || mend_chat_get_external_turn (demo->chat))
    g_main_context_iteration (NULL, TRUE);
}

/* What a scenario left queued, gone before the next one. */
void
clear_queue (Demo *demo)
{
  MendQueue *queue = mend_chat_get_queue (demo->chat);

  while (mend_queue_get_length (queue) > 0)
    g_object_unref (mend_queue_pop (queue));
}

/* Whether each scenario played as scripted decides the exit status. */

void
begin_scenario (Demo *demo)
{
  demo->scenario_start = demo->ended->len;
}


static char *
states_line (const MendTurnState *states,
             guint                n)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < n; i++)
    g_string_append_printf (out, "%s%s", i ? ", " : "", mend_turn_state_to_nick (states[i]));
  return g_string_free (out, FALSE);
}

/* The turns the running scenario finished must have ended in @states, in
 * order; with @n_states 0, every one of them (at least one) succeeded. */
void
expect_turns (Demo                *demo,
              const char          *scenario,
              const MendTurnState *states,
              guint                n_states)
{
  const MendTurnState *ended = &g_array_index (demo->ended, MendTurnState, demo->scenario_start);
  guint n_ended = demo->ended->len - demo->scenario_start;
  gboolean as_planned = n_ended > 0 && (n_states == 0 || n_ended == n_states);

  for (guint i = 0; as_planned && i < n_ended; i++)
    as_planned = ended[i] == (n_states == 0 ? MEND_TURN_SUCCEEDED : states[i]);

  if (!as_planned)
    {
      g_autofree char *got = states_line (ended, n_ended);
      g_autofree char *want = n_states ? states_line (states, n_states) : g_strdup ("succeeded…");

      g_printerr (_("mend-demo: the %s scenario did not play as scripted: its turns ended [%s], not [%s]\n"),
                  scenario, got, want);
      demo->off_script = TRUE;
    }
}

/* Classification of error texts, for --classify */

static void
classify (char **texts)
{
  g_autoptr(MendErrorPolicy) policy = mend_error_policy_new ();

  mend_error_policy_set_jitter (policy, MEND_JITTER_NONE);
  for (guint i = 0; texts[i] != NULL; i++)
    {
      g_autoptr(MendFailure) failure = mend_failure_new_from_text (texts[i]);
      MendFailureKind kind = mend_error_policy_classify (policy, failure);

      g_print ("“%s”\n  ", texts[i]);
      g_print (_("reason %s · %s"), mend_reason_to_nick (mend_failure_get_reason (failure)),
               mend_failure_kind_to_nick (kind));
      if (mend_failure_get_retry_after_ms (failure) >= 0)
        g_print (_(" · server asks to wait %u ms"), (guint) mend_failure_get_retry_after_ms (failure));
      g_print ("\n  ");
      g_print (_("decided by %s"), mend_failure_get_rule (failure));
      g_print ("\n");
      if (mend_failure_get_reason (failure) == MEND_REASON_RATE_LIMIT && kind == MEND_FAILURE_LIMIT)
        g_print (_("  a limit: the server's wait is above retry-after-max-ms (%u ms)\n"),
                 mend_error_policy_get_retry_after_max_ms (policy));
      if (kind == MEND_FAILURE_TRANSIENT)
        {
          g_print ("  %s", _("waits:"));
          for (guint retry = 1; retry <= mend_error_policy_get_max_retries (policy); retry++)
            {
              gint64 delay = mend_error_policy_delay_for (policy, retry, failure, NULL);

              if (delay < 0)
                {
                  g_print (_(" none: the server's wait is above %u ms, so it gives up at once"),
                           mend_error_policy_get_retry_after_max_ms (policy));
                  break;
                }
              g_print (" %" G_GINT64_FORMAT " ms", delay);
            }
          g_print ("\n");
        }
    }
}

/* Arguments: every error is reported, with exit status 2, before the
 * banner or anything else is printed. */

static gboolean
parse_speed (const char  *name,
             const char  *value,
             gpointer     data,
             GError     **error)
{
  char *end = NULL;
  double speed = g_ascii_strtod (value, &end);

  if (end == value || *end != '\0' || !(speed > 0 && speed <= 1000))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   _("--speed must be a number above 0 and at most 1000, not “%s”"), value);
      return FALSE;
    }
  opt_speed = speed;
  opt_speed_given = TRUE;
  return TRUE;
}

static gboolean
usage_error (const char *format,
             ...) G_GNUC_PRINTF (1, 2);

static gboolean
usage_error (const char *format,
             ...)
{
  g_autofree char *text = NULL;
  va_list args;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);
  g_printerr ("mend-demo: %s\n", text);
  return FALSE;
}

/* A --dialect name: the nick of a MendHttpDialect; AUTO for none. */
static MendHttpDialect
dialect_from_name (const char *name)
{
  g_autoptr(GEnumClass) dialects = g_type_class_ref (MEND_TYPE_HTTP_DIALECT);
  GEnumValue *value = g_enum_get_value_by_nick (dialects, name);

  return value != NULL ? (MendHttpDialect) value->value : MEND_HTTP_DIALECT_AUTO;
}

static gboolean
check_arguments (void)
{
  gboolean found = opt_scenario == NULL;

  if ((opt_url != NULL) + opt_agent + opt_acp > 1)
    return usage_error (_("--url, --agent and --acp each play a different chat: give one of them"));
  for (guint i = 0; i < n_story_scenarios; i++)
    found |= g_strcmp0 (opt_scenario, story_scenarios[i].name) == 0;
  if (!found)
    return usage_error (_("no scenario “%s” (see --list)"), opt_scenario);
  if (opt_url == NULL && opt_prompts != NULL && opt_prompts[0] != NULL)
    return usage_error (_("a PROMPT is sent with --url only"));
  if (opt_url == NULL && opt_headers != NULL)
    return usage_error (_("--header is sent with --url only"));
  if (opt_url == NULL && opt_dialect != NULL)
    return usage_error (_("--dialect is spoken with --url only"));
  if (opt_dialect != NULL && dialect_from_name (opt_dialect) == MEND_HTTP_DIALECT_AUTO)
    return usage_error (_("--dialect is messages, chat-completions, responses or gemini, not “%s”"), opt_dialect);
  if (opt_url != NULL)
    {
      g_autofree char *scheme = g_uri_parse_scheme (opt_url);

      if (opt_scenario != NULL)
        return usage_error (_("--scenario plays the story, which --url does not"));
      if (!g_uri_is_valid (opt_url, G_URI_FLAGS_NONE, NULL) ||
          (g_strcmp0 (scheme, "http") != 0 && g_strcmp0 (scheme, "https") != 0))
        return usage_error (_("--url wants an http or https URL, not “%s”"), opt_url);
    }
  return TRUE;
}

/* The key from the format's usual variable, unless a --header gave one:
 * ANTHROPIC_API_KEY as x-api-key for Messages, OPENAI_API_KEY as a Bearer
 * token for the OpenAI formats (and the servers that copy them),
 * GEMINI_API_KEY as x-goog-api-key for Gemini. */
static void
add_key_from_environment (MendHttpSender *sender)
{
  static const struct { MendHttpDialect dialect; const char *variable, *header, *prefix; } keys[] = {
    { MEND_HTTP_DIALECT_MESSAGES, "ANTHROPIC_API_KEY", "x-api-key", "" },
    { MEND_HTTP_DIALECT_CHAT_COMPLETIONS, "OPENAI_API_KEY", "Authorization", "Bearer " },
    { MEND_HTTP_DIALECT_RESPONSES, "OPENAI_API_KEY", "Authorization", "Bearer " },
    { MEND_HTTP_DIALECT_GEMINI, "GEMINI_API_KEY", "x-goog-api-key", "" },
  };
  MendHttpDialect dialect = mend_http_sender_get_dialect (sender);

  for (guint i = 0; opt_headers != NULL && opt_headers[i] != NULL; i++)
    if (g_ascii_strncasecmp (opt_headers[i], "authorization:", strlen ("authorization:")) == 0 ||
        g_ascii_strncasecmp (opt_headers[i], "x-api-key:", strlen ("x-api-key:")) == 0 ||
        g_ascii_strncasecmp (opt_headers[i], "x-goog-api-key:", strlen ("x-goog-api-key:")) == 0)
      return;
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      const char *key = g_getenv (keys[i].variable);
      g_autofree char *value = NULL;

      if (keys[i].dialect != dialect || key == NULL || key[0] == '\0')
        continue;
      value = g_strconcat (keys[i].prefix, key, NULL);
      mend_http_sender_set_header (sender, keys[i].header, value, NULL);
      if (dialect == MEND_HTTP_DIALECT_MESSAGES)
        mend_http_sender_set_header (sender, "anthropic-version", "2023-06-01", NULL);
    }
}

static gboolean
add_headers (MendHttpSender *sender)
{
  for (guint i = 0; opt_headers != NULL && opt_headers[i] != NULL; i++)
    {
      g_auto(GStrv) parts = g_strsplit (opt_headers[i], ":", 2);
      g_autoptr(GError) error = NULL;

      if (parts[0] == NULL || parts[1] == NULL)
        return usage_error (_("--header wants NAME: VALUE, not “%s”"), opt_headers[i]);
      if (!mend_http_sender_set_header (sender, g_strstrip (parts[0]), g_strstrip (parts[1]), &error))
        return usage_error ("%s", error->message);
    }
  return TRUE;
}

/* The demo's strings are in a domain of its own; MEND_DEMO_LOCALEDIR
 * points an uninstalled build at its catalogue (and MEND_LOCALEDIR at
 * libmend's, which libmend binds itself). */
static void
bind_text_domain (void)
{
  const char *dir = g_getenv ("MEND_DEMO_LOCALEDIR");

  bindtextdomain (GETTEXT_PACKAGE, dir != NULL && dir[0] != '\0' ? dir : LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);
}

static GOptionContext *
make_option_context (void)
{
  const GOptionEntry entries[] = {
    { "scenario", 's', 0, G_OPTION_ARG_STRING, &opt_scenario, N_("Play only scenario NAME (see --list)"), N_("NAME") },
    { "list", 'l', 0, G_OPTION_ARG_NONE, &opt_list, N_("List the scenarios"), NULL },
    { "speed", 0, 0, G_OPTION_ARG_CALLBACK, parse_speed, N_("Run the waits N× faster than real time (default 2; 1 with --url)"), N_("N") },
    { "json", 'j', 0, G_OPTION_ARG_NONE, &opt_json, N_("Print the retry records as JSON lines only"), NULL },
    { "url", 'u', 0, G_OPTION_ARG_STRING, &opt_url, N_("Send PROMPT to a real endpoint instead of playing the story"), N_("URL") },
    { "header", 'H', 0, G_OPTION_ARG_STRING_ARRAY, &opt_headers, N_("Add a header to every request (with --url), e.g. “x-api-key: …”"), N_("NAME: VALUE") },
    { "dialect", 0, 0, G_OPTION_ARG_STRING, &opt_dialect, N_("The endpoint’s format (with --url): messages, chat-completions, responses or gemini (default: from the URL’s path)"), N_("FORMAT") },
    { "policy", 'p', 0, G_OPTION_ARG_FILENAME, &opt_policy, N_("Load the turn policy from a JSON FILE"), N_("FILE") },
    { "classify", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &opt_classify, N_("Show how an error TEXT is classified and the waits it implies (repeatable)"), N_("TEXT") },
    { "agent", 'a', 0, G_OPTION_ARG_NONE, &opt_agent, N_("Play the story with the real Claude Code CLI as the sender"), NULL },
    { "claude", 0, 0, G_OPTION_ARG_FILENAME, &opt_claude, N_("The claude program for --agent (default: $MEND_CLAUDE, else the one tools/setup.sh installed)"), N_("PATH") },
    { "acp", 0, 0, G_OPTION_ARG_NONE, &opt_acp, N_("Play the story with Claude Code over the Agent Client Protocol (claude-code-acp) as the sender"), NULL },
    { "acp-adapter", 0, 0, G_OPTION_ARG_FILENAME, &opt_acp_adapter, N_("The claude-code-acp program for --acp (default: $MEND_CLAUDE_CODE_ACP, else the one tools/setup.sh installed)"), N_("PATH") },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &opt_prompts, NULL, N_("[PROMPT]") },
    { NULL }
  };
  GOptionContext *context = g_option_context_new (NULL);

  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_set_summary (context,
    _("Shows libmend keeping an agent's work going when the model's upstream\n"
      "fails for a moment. With no options it starts a flaky model server on\n"
      "loopback and plays every scenario against it: retries with backoff, a\n"
      "give-up that keeps the queue, a Stop, and a subagent resumed in its chat."));
  g_option_context_set_description (context,
    _("Exit status:\n"
      "  0  every scenario played as scripted (the give-up scenario's give-up is\n"
      "     part of the script); with --url, the turn succeeded\n"
      "  1  a turn ended otherwise: with --url, it gave up, failed or was stopped\n"
      "  2  a usage error, reported before anything else is printed\n"
      "\n"
      "Examples:\n"
      "  mend-demo                      play every scenario\n"
      "  mend-demo -s retry --speed 1   one scenario, waits in real time\n"
      "  mend-demo --json               the structured retry records only\n"
      "  mend-demo --agent              the same story through the real Claude Code CLI\n"
      "  mend-demo --acp                the same story over the Agent Client Protocol\n"
      "  mend-demo -c 'API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}'\n"
      "  mend-demo --url https://api.anthropic.com/v1/messages \\\n"
      "            -H 'x-api-key: …' -H 'anthropic-version: 2023-06-01' 'Say hello'\n"
      "\n"
      "See mend-demo(1)."));
  g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
  return context;
}

static int
play (Demo            *demo,
      MendClock       *clock,
      MendErrorPolicy *policy)
{
  g_autoptr(SoupServer) server = soup_server_new (NULL, NULL);
  g_autoptr(MendHttpSender) sender = NULL;
  g_autofree char *endpoint = NULL;
  int status;

  if (opt_url == NULL)
    {
      g_autoptr(GError) error = NULL;
      GSList *uris;

      story_serve (server);
      if (!soup_server_listen_local (server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
        {
          g_printerr (_("mend-demo: cannot start the embedded server: %s\n"), error->message);
          return 1;
        }
      uris = soup_server_get_uris (server);
      endpoint = g_strdup_printf ("http://127.0.0.1:%d/v1/messages", g_uri_get_port (uris->data));
      g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
    }
  else
    endpoint = g_strdup (opt_url);

  sender = g_object_new (MEND_TYPE_HTTP_SENDER,
                         "uri", endpoint,
                         "dialect", opt_dialect != NULL ? dialect_from_name (opt_dialect) : MEND_HTTP_DIALECT_AUTO,
                         NULL);
  if (!add_headers (sender))
    return 2;
  if (opt_url != NULL)
    add_key_from_environment (sender);

  demo->chat = g_object_new (MEND_TYPE_CHAT,
                             "clock", clock,
                             "policy", policy,
                             "sender", sender,
                             "id", "demo",
                             NULL);
  demo->observer = mend_stream_observer_new (demo->chat);
  connect_chat (demo);

  if (opt_speed == 1)
    say (_("libmend %s — a chat against %s; waits run in real time (--speed)"), MEND_VERSION_S,
         opt_url ? opt_url : _("a flaky model server on loopback"));
  else
    say (_("libmend %s — a chat against %s; waits run %g× faster (--speed)"), MEND_VERSION_S,
         opt_url ? opt_url : _("a flaky model server on loopback"), opt_speed);

  if (opt_url != NULL)
    {
      const char *prompt = opt_prompts && opt_prompts[0] ? opt_prompts[0] : "Say hello in five words.";

      mend_chat_submit (demo->chat, prompt, NULL, NULL);
      run_until_idle (demo);
      status = demo->ended->len == 1 &&
               g_array_index (demo->ended, MendTurnState, 0) == MEND_TURN_SUCCEEDED ? 0 : 1;
    }
  else
    {
      for (guint i = 0; i < n_story_scenarios; i++)
        if (opt_scenario == NULL || g_str_equal (opt_scenario, story_scenarios[i].name))
          story_scenarios[i].run (demo);

      say ("\n%s", demo->off_script ? _("A scenario did not play as scripted.")
                                    : _("Every scenario played as scripted."));
      say (g_dngettext (NULL, "%u request reached the server; every queued item was kept.",
                        "%u requests reached the server; every queued item was kept.", story_requests ()),
           story_requests ());
      status = demo->off_script ? 1 : 0;
    }

  stop_countdown ();
  mend_chat_close (demo->chat);
  g_clear_object (&demo->observer);
  g_clear_object (&demo->chat);
  return status;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(MendErrorPolicy) policy = NULL;
  g_autoptr(MendClock) clock = NULL;
  const char *program = NULL;
  Demo demo = { 0 };
  int status;

  setlocale (LC_ALL, "");
  bind_text_domain ();
  g_setenv ("GIO_USE_PROXY_RESOLVER", "dummy", FALSE);

  context = make_option_context ();
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("mend-demo: %s\n", error->message);
      return 2;
    }

  if (opt_list)
    {
      for (guint i = 0; i < n_story_scenarios; i++)
        g_print ("%-9s %s\n", story_scenarios[i].name, story_summary (i));
      return 0;
    }

  if (opt_classify != NULL)
    {
      classify (opt_classify);
      return 0;
    }

  if (!check_arguments ())
    return 2;
  if (!opt_speed_given)
    opt_speed = opt_url != NULL ? 1 : 2;

  if (opt_policy != NULL)
    policy = mend_error_policy_new_from_file (opt_policy, &error);
  else
    policy = mend_error_policy_new ();
  if (policy == NULL)
    {
      g_printerr ("mend-demo: %s\n", error->message);
      return 2;
    }

  if (opt_acp)
    {
      program = opt_acp_adapter ? opt_acp_adapter : g_getenv ("MEND_CLAUDE_CODE_ACP");
      if (program == NULL || program[0] == '\0')
        program = MEND_DEMO_CLAUDE_CODE_ACP;
      if (!g_file_test (program, G_FILE_TEST_IS_EXECUTABLE))
        {
          g_printerr (_("mend-demo: no claude-code-acp at %s: run tools/setup.sh, or give --acp-adapter PATH\n"), program);
          return 1;
        }
    }
  else if (opt_agent)
    {
      program = opt_claude ? opt_claude : g_getenv ("MEND_CLAUDE");
      if (program == NULL || program[0] == '\0')
        program = MEND_DEMO_CLAUDE;
      if (!g_file_test (program, G_FILE_TEST_IS_EXECUTABLE))
        {
          g_printerr (_("mend-demo: no Claude Code CLI at %s: run tools/setup.sh, or give --claude PATH\n"), program);
          return 1;
        }
    }

  is_tty = isatty (STDOUT_FILENO) && !opt_json;
  clock = g_object_new (scaled_clock_get_type (), NULL);
  ((ScaledClock *) clock)->speed = opt_speed;
  demo.ended = g_array_new (FALSE, FALSE, sizeof (MendTurnState));
  demo.answer = g_string_new (NULL);

  if (opt_acp)
    status = run_acp_demo (&demo, clock, program, opt_scenario);
  else if (opt_agent)
    status = run_agent_demo (&demo, clock, program, opt_scenario);
  else
    status = play (&demo, clock, policy);

  stop_countdown ();
  g_array_unref (demo.ended);
  g_string_free (demo.answer, TRUE);
  g_free (opt_scenario);
  g_free (opt_url);
  g_free (opt_dialect);
  g_free (opt_policy);
  g_free (opt_claude);
  g_free (opt_acp_adapter);
  g_strfreev (opt_headers);
  g_strfreev (opt_classify);
  g_strfreev (opt_prompts);
  return status;
}
