/* mend-failure.c — MendFailure: the facts of one failed attempt, fixed when it is made
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <glib/gi18n-lib.h>

#include "mend-classifier-private.h"
#include "mend-clock.h"
#include "mend-enum-types.h"
#include "mend-error.h"
#include "mend-failure-private.h"
#include "mend-failure-reset-private.h"
#include "mend-json-private.h"
#include "mend-failure-parse-private.h"
#include "mend-redact-private.h"

/**
 * MendFailure:
 *
 * What went wrong on one attempt.
 *
 * A failure is made from what the app saw: a [struct@GLib.Error], an HTTP
 * response, the error text an agent printed, an empty answer, or the user's
 * Stop. Its facts — [property@Mend.Failure:reason],
 * [property@Mend.Failure:status], [property@Mend.Failure:retry-after-ms],
 * [property@Mend.Failure:api-error-type], [property@Mend.Failure:partial] —
 * are read once, when it is made, and never change: a failure may be handed
 * to several turns, records and handlers, and reads the same in each.
 * [property@Mend.Failure:kind] is the default [class@Mend.ErrorPolicy]'s
 * classification of those facts, also fixed when the failure is made.
 *
 * What a [class@Mend.Turn] decided — its policy's kind for the failure in
 * the turn's context (the attempt, whether output was seen) and the delay
 * before the next attempt — is the turn's
 * [property@Mend.Turn:last-verdict], a [class@Mend.Verdict]; the failure
 * itself is not changed by it.
 *
 * The facts are construct-only properties, so that an app or a test can
 * make a failure of its own with [ctor@GObject.Object.new]; the text and
 * the error are redacted and cut like those of the constructors below.
 *
 * Text is matched case-insensitively; a status inside text counts only as a
 * whole number ("15000" is not 500). Anything not recognized is
 * %MEND_REASON_UNKNOWN and fails closed: it is not retried.
 *
 * Example:
 *
 * ```c
 * g_autoptr(MendFailure) failure =
 *   mend_failure_new_from_text ("API Error: 503 no non-exhausted claude accounts available");
 *
 * g_print ("%s, %s, decided by %s\n",
 *          mend_reason_to_nick (mend_failure_get_reason (failure)),        // "capacity"
 *          mend_failure_kind_to_nick (mend_failure_get_kind (failure)),    // "transient"
 *          mend_failure_get_rule (failure));
 * ```
 */

struct _MendFailure
{
  GObject          parent_instance;

  MendFailureKind  kind;
  MendReason       reason;
  guint            status;
  gint64           retry_after_ms;
  char            *message;
  GError          *error;
  char            *api_error_type;
  gboolean         partial;
  int              should_retry;  /* -1 unknown, 0 or 1 from x-should-retry */
  char            *rule;
  gboolean         user_stop;     /* the user's Stop, or a GIO cancellation */
  gint64           resets_at;     /* wall-clock µs, 0 unknown */
  gboolean         reset_in_text; /* read from the message: read again at the turn's time */
};

enum {
  PROP_0,
  PROP_KIND,
  PROP_REASON,
  PROP_STATUS,
  PROP_RETRY_AFTER_MS,
  PROP_MESSAGE,
  PROP_ERROR,
  PROP_API_ERROR_TYPE,
  PROP_PARTIAL,
  PROP_RULE,
  PROP_RESETS_AT,
  N_PROPS
};

G_DEFINE_FINAL_TYPE (MendFailure, mend_failure, G_TYPE_OBJECT)

static GParamSpec *properties[N_PROPS];

static char *
truncate_message (const char *text)
{
  const char *end;
  gsize len;

  if (text == NULL)
    return NULL;

  len = strlen (text);
  if (!g_utf8_validate (text, len, &end))
    {
      g_autofree char *valid = g_utf8_make_valid (text, len);
      return truncate_message (valid);
    }

  if (len <= MEND_FAILURE_MAX_MESSAGE_BYTES)
    return g_strdup (text);

  /* Room for "…" (3 bytes), cut at a character boundary. */
  end = g_utf8_find_prev_char (text, text + MEND_FAILURE_MAX_MESSAGE_BYTES - 3 + 1);
  return g_strdup_printf ("%.*s…", (int) (end - text), text);
}

static void
classify_default (MendFailure *self)
{
  self->kind = mend_failure_default_kind (self->reason,
                                          self->should_retry,
                                          self->partial,
                                          FALSE,
                                          self->retry_after_ms,
                                          MEND_FAILURE_DEFAULT_RETRY_AFTER_MAX_MS);
}

/* A limit's reset in the failure's own words, read at @now_us. */
static void
read_reset_in_text (MendFailure *self,
                    gint64       now_us)
{
  if (self->kind != MEND_FAILURE_LIMIT)
    return;
  self->resets_at = mend_failure_parse_reset (self->message, now_us);
  self->reset_in_text = self->resets_at > 0;
}

void
mend_failure_resolve_reset (MendFailure *self,
                            gint64       now_us)
{
  g_return_if_fail (MEND_IS_FAILURE (self));

  if (self->reset_in_text)
    read_reset_in_text (self, now_us);
}

void
mend_failure_set_reset (MendFailure *self,
                        gint64       resets_at_us)
{
  g_return_if_fail (MEND_IS_FAILURE (self));
  g_return_if_fail (resets_at_us > 0);

  if (self->reason != MEND_REASON_USAGE_LIMIT || self->kind != MEND_FAILURE_LIMIT)
    return;
  self->resets_at = resets_at_us;
  self->reset_in_text = FALSE;
}

static MendFailure *
failure_new (MendReason  reason,
             const char *message,
             char       *rule)
{
  MendFailure *self = g_object_new (MEND_TYPE_FAILURE, NULL);
  g_autofree char *redacted = mend_redact_secrets (message, -1);

  self->reason = reason;
  self->message = truncate_message (redacted);
  self->rule = rule;

  return self;
}

/**
 * mend_failure_new_from_text:
 * @detail: (nullable): error text, as an agent or a log printed it
 *
 * Makes a failure from error text such as `API Error: 529 {…}`,
 * `Connection error: ECONNRESET` or "You've hit your usage limit".
 *
 * The text is weighed, strongest evidence first: words that settle it
 * whatever else is said (a usage limit, a request larger than the whole
 * limit); a provider's own code or type read as a whole token wherever it
 * sits — in JSON, in JSON inside a JSON string, in a Python repr
 * (`overloaded_error`, `RESOURCE_EXHAUSTED` and its quota id,
 * `insufficient_quota`, `ThrottlingException`); the provider's own words
 * ("Overloaded", "socket hang up"); a catch-all code a wrapper adds
 * (`invalid_request_error`, `APIConnectionError`); a status, which a
 * wrapper's number in the text ("API error (400): …") never lets outrank
 * the provider; plain words last. Between equals, the reason that does not
 * retry wins. [property@Mend.Failure:rule] says what decided.
 *
 * A hint such as "(retry after 30s)", "Please retry in 39.8s" or Google's
 * `retryDelay` is kept in [property@Mend.Failure:retry-after-ms]. Text that
 * says nothing known is %MEND_REASON_UNKNOWN, which is not retried.
 *
 * Returns: (transfer full): a new failure
 */
MendFailure *
mend_failure_new_from_text (const char *detail)
{
  g_autofree char *api_type = NULL;
  char *rule = NULL;
  MendEvidenceRank rank = MEND_EVIDENCE_NONE;
  MendFailure *self;
  MendReason reason;

  if (detail == NULL || *detail == '\0')
    {
      self = failure_new (MEND_REASON_UNKNOWN, _("Unknown error"),
                          g_strdup (_("no text: fails closed")));
      classify_default (self);
      return self;
    }

  reason = mend_reason_from_text (detail, &api_type, &rule, &rank);
  self = failure_new (reason, detail, rule);
  self->api_error_type = mend_redact_secrets (api_type, -1);
  self->retry_after_ms = mend_failure_parse_text_hint (detail);
  self->status = mend_classifier_status_in_text (detail);
  /* A quota in a family's words whose text says to try again within a
   * minute ("Quota exceeded for metric … Please retry in 25.4s") is a rate
   * limit; a limit's own words (a balance, a daily quota, a plan that
   * resets at a time) stay a limit. */
  if ((reason == MEND_REASON_USAGE_LIMIT || reason == MEND_REASON_BILLING) &&
      rank <= MEND_EVIDENCE_SPECIFIC &&
      self->retry_after_ms >= 0 && self->retry_after_ms <= MEND_FAILURE_DEFAULT_RETRY_AFTER_MAX_MS)
    {
      g_autofree char *seconds = g_strdup_printf ("%.1f", self->retry_after_ms / 1000.0);
      g_autofree char *words = g_steal_pointer (&self->rule);

      self->reason = MEND_REASON_RATE_LIMIT;
      self->rule = g_strdup_printf (_("%s, with a wait of %s s: a rate limit"), words, seconds);
    }
  classify_default (self);
  read_reset_in_text (self, mend_clock_get_real_time (mend_clock_get_default ()));

  return self;
}

/**
 * mend_failure_new_from_error:
 * @error: the error an attempt ended with
 *
 * Makes a failure from a [struct@GLib.Error]. GIO, resolver, TLS and libsoup
 * errors are read by domain and code, whatever language their text is in:
 * %G_IO_ERROR_CANCELLED is the user's Stop, a timeout is
 * %MEND_REASON_TIMEOUT, a reset, refused, closed or cut connection, a
 * failed proxy, a temporary DNS failure, a TLS EOF and a response libsoup
 * cannot parse are %MEND_REASON_TRANSPORT; a proxy's or a server's demand
 * for a credential is %MEND_REASON_AUTH, a proxy's refusal
 * %MEND_REASON_PERMISSION, a redirect loop %MEND_REASON_BAD_REQUEST; a
 * certificate that is not trusted fails closed. Only a generic code
 * (%G_IO_ERROR_FAILED, which carries libsoup's HTTP/2 errors, a TLS
 * library's handshake error) and other domains are read as text, in the
 * words their library wrote.
 *
 * Returns: (transfer full): a new failure
 */
MendFailure *
mend_failure_new_from_error (const GError *error)
{
  MendFailure *self;
  MendReason reason;

  g_return_val_if_fail (error != NULL, NULL);

  if (!mend_reason_from_gerror (error, &reason))
    self = mend_failure_new_from_text (error->message);
  else
    {
      self = failure_new (reason, error->message,
                          g_strdup_printf (_("GLib error %s, code %d"),
                                           g_quark_to_string (error->domain), error->code));
      classify_default (self);
    }

  self->user_stop = g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);

  /* The GError leaves the library too: its text is redacted like the
   * message. */
  self->error = g_error_copy (error);
  g_free (self->error->message);
  self->error->message = mend_redact_secrets (error->message, -1);

  return self;
}

/**
 * mend_failure_new_from_http:
 * @status: the HTTP status
 * @headers: (nullable): the response headers
 * @body: (nullable): the response body
 *
 * Makes a failure from an HTTP response. The status decides the reason; an
 * Anthropic or OpenAI JSON error body refines it (a 429 whose body speaks of
 * a plan's quota is a %MEND_REASON_USAGE_LIMIT, of a spent balance
 * %MEND_REASON_BILLING, a 500 that says it is overloaded is
 * %MEND_REASON_CAPACITY). `x-should-retry` wins over the
 * status; `retry-after-ms`, then `Retry-After` (seconds or an HTTP-date),
 * give [property@Mend.Failure:retry-after-ms]. A 2xx response with an empty
 * body is %MEND_REASON_EMPTY.
 *
 * A `Retry-After` date is read against the response's `Date` header when it
 * has one, so that a server whose clock is hours off this machine's still
 * gets the wait it asked for. Without a `Date` header it is read against
 * the default clock's wall time, and a date further away than the turn
 * default of [property@Mend.ErrorPolicy:retry-after-max-ms] (60 s) is
 * taken for a clock set wrong rather than a limit's reset: the failure then
 * has no hint (-1) and the policy's own backoff applies.
 *
 * Returns: (transfer full): a new failure
 */
MendFailure *
mend_failure_new_from_http (guint               status,
                            SoupMessageHeaders *headers,
                            GBytes             *body)
{
  return mend_failure_new_from_http_with_clock (status, headers, body, NULL);
}

MendFailure *
mend_failure_new_from_http_with_clock (guint               status,
                                       SoupMessageHeaders *headers,
                                       GBytes             *body,
                                       MendClock          *clock)
{
  g_return_val_if_fail (clock == NULL || MEND_IS_CLOCK (clock), NULL);

  return mend_failure_new_from_http_within (status, headers, body, clock,
                                            MEND_FAILURE_DEFAULT_RETRY_AFTER_MAX_MS);
}

MendFailure *
mend_failure_new_from_http_within (guint               status,
                                   SoupMessageHeaders *headers,
                                   GBytes             *body,
                                   MendClock          *clock,
                                   guint               retry_after_max_ms)
{
  g_autofree char *body_text = NULL;
  g_autofree char *message = NULL;
  g_autoptr(JsonNode) json = NULL;
  char *rule = NULL;
  const char *data = NULL;
  gsize size = 0;
  MendApiError api = { 0 };
  MendReason reason;
  MendFailure *self;
  gboolean header_hint;
  gboolean window_spent = FALSE;
  gint64 resets_at;
  gint64 now_us;

  g_return_val_if_fail (clock == NULL || MEND_IS_CLOCK (clock), NULL);

  if (clock == NULL)
    clock = mend_clock_get_default ();

  if (body != NULL)
    data = g_bytes_get_data (body, &size);

  reason = mend_reason_from_http (status, data, size, &json, &api, &body_text, &rule);

  if (api.message != NULL && *api.message != '\0')
    message = g_strdup (api.message);
  else if (body_text != NULL && *g_strstrip (body_text) != '\0' &&
           g_utf8_validate (body_text, -1, NULL))
    message = g_strdup_printf ("HTTP %u: %s", status, body_text);
  else if (reason == MEND_REASON_EMPTY)
    message = g_strdup (_("The model sent an empty response"));
  else
    message = g_strdup_printf ("HTTP %u %s", status, soup_status_get_phrase (status));

  now_us = mend_clock_get_real_time (clock);
  resets_at = mend_failure_parse_reset_headers (headers, now_us, &window_spent);
  /* A subscription window spent (Anthropic's unified limit "rejected")
   * is a usage limit that resets, not a per-minute rate limit. */
  if (window_spent && status == 429)
    {
      reason = MEND_REASON_USAGE_LIMIT;
      g_free (rule);
      rule = g_strdup (_("anthropic-ratelimit-unified-status: rejected, a subscription window is spent"));
    }
  self = failure_new (reason, message, rule);
  self->status = status;
  self->api_error_type = mend_redact_secrets (api.type, -1);
  mend_failure_parse_headers (headers, now_us, retry_after_max_ms,
                            &self->should_retry, &self->retry_after_ms);
  header_hint = self->retry_after_ms >= 0;
  if (self->retry_after_ms < 0)
    self->retry_after_ms = mend_failure_parse_text_hint (api.message ? api.message : body_text);
  if (self->retry_after_ms < 0 && size > 0)
    {
      /* Google's RetryInfo sits beside the message, in the details. */
      g_autofree char *whole = g_strndup (data, MIN (size, MEND_REASON_MAX_BODY_BYTES));

      self->retry_after_ms = mend_failure_parse_text_hint (whole);
    }
  /* A 429 in a usage limit's words whose body names a wait of a minute or
   * less is a rate limit: Gemini says "You exceeded your current quota,
   * please check your plan and billing details" of its per-minute quota,
   * with "Suggested retry after 2s" and a RetryInfo; a plan or a daily
   * quota names no such wait. A Retry-After header beside a limit's words
   * (OpenAI's insufficient_quota) does not make it one. */
  if ((self->reason == MEND_REASON_USAGE_LIMIT || self->reason == MEND_REASON_BILLING) &&
      status == 429 && !header_hint &&
      self->retry_after_ms >= 0 && self->retry_after_ms <= retry_after_max_ms)
    {
      g_autofree char *seconds = g_strdup_printf ("%.1f", self->retry_after_ms / 1000.0);

      self->reason = MEND_REASON_RATE_LIMIT;
      g_free (self->rule);
      self->rule = g_strdup_printf (_("HTTP status 429 in a usage limit’s words, with a wait of %s s: a rate limit"),
                                    seconds);
    }
  classify_default (self);
  /* When the limit resets: the headers say, or a daily quota's RetryInfo,
   * or the words. */
  if (self->kind == MEND_FAILURE_LIMIT)
    {
      if (resets_at > 0)
        self->resets_at = resets_at;
      else if (self->retry_after_ms > 0)
        self->resets_at = mend_failure_time_after_ms (now_us, self->retry_after_ms);
      else
        read_reset_in_text (self, now_us);
    }

  return self;
}

void
mend_failure_build_state (MendFailure *self,
                          JsonBuilder *builder)
{
  json_builder_begin_object (builder);
  mend_json_add_nick (builder, "reason", MEND_TYPE_REASON, self->reason);
  json_builder_set_member_name (builder, "status");
  json_builder_add_int_value (builder, self->status);
  json_builder_set_member_name (builder, "retryAfterMs");
  json_builder_add_int_value (builder, self->retry_after_ms);
  json_builder_set_member_name (builder, "partial");
  json_builder_add_boolean_value (builder, self->partial);
  mend_json_add_string (builder, "message", self->message);
  if (self->resets_at > 0)
    {
      json_builder_set_member_name (builder, "resetsAt");
      json_builder_add_int_value (builder, self->resets_at / 1000);
    }
  json_builder_end_object (builder);
}

MendFailure *
mend_failure_new_from_state (JsonObject *object,
                             gboolean   *ok)
{
  gboolean valid = TRUE;
  MendReason reason = mend_json_read_nick (object, "reason", MEND_TYPE_REASON, &valid);
  guint status = (guint) mend_json_read_int (object, "status", 0, 999, &valid);
  gint64 retry_after = mend_json_read_int (object, "retryAfterMs", -1, G_MAXINT64 / 4, &valid);
  gboolean partial = mend_json_read_bool (object, "partial", &valid);
  const char *message = mend_json_read_string (object, "message", TRUE, &valid);
  MendFailure *self;

  if (!valid)
    {
      *ok = FALSE;
      return NULL;
    }

  self = failure_new (reason, message, g_strdup (_("saved state")));
  self->status = status;
  self->retry_after_ms = retry_after;
  self->partial = partial;
  classify_default (self);
  /* Saved in milliseconds; absent before there was one. */
  if (json_object_has_member (object, "resetsAt"))
    {
      gint64 resets_at = mend_json_read_int (object, "resetsAt", 0, G_MAXINT64 / 4000, &valid);

      if (!valid)
        {
          g_object_unref (self);
          *ok = FALSE;
          return NULL;
        }
      self->resets_at = resets_at * 1000;
    }
  return self;
}

/**
 * mend_failure_new_empty_response:
 *
 * Makes the failure of an attempt whose answer was empty: no text, no tool
 * call. It is %MEND_REASON_EMPTY and retried.
 *
 * Returns: (transfer full): a new failure
 */
MendFailure *
mend_failure_new_empty_response (void)
{
  MendFailure *self = failure_new (MEND_REASON_EMPTY, _("The model sent an empty response"),
                                   g_strdup (_("an empty response")));

  classify_default (self);
  return self;
}

/**
 * mend_failure_new_stopped:
 *
 * Makes the failure of an attempt the user stopped. It is
 * %MEND_FAILURE_STOPPED: never retried, never an error to show.
 *
 * Returns: (transfer full): a new failure
 */
MendFailure *
mend_failure_new_stopped (void)
{
  MendFailure *self = failure_new (MEND_REASON_CANCELLED, _("Stopped"),
                                   g_strdup (_("the user's Stop")));

  self->user_stop = TRUE;
  classify_default (self);
  return self;
}

/* The failure of a turn that nothing runs: no sender and no handler of
 * MendTurn::attempt. Permanent: another attempt would meet the same
 * nothing. */
MendFailure *
mend_failure_new_no_sender (void)
{
  const char *text = _("Nothing runs this turn: the chat has no sender "
                       "and nothing is connected to the turn’s “attempt” signal");
  MendFailure *self = failure_new (MEND_REASON_BAD_REQUEST, text,
                                   g_strdup (_("a turn with nothing to run it")));

  classify_default (self);
  self->error = g_error_new_literal (MEND_RETRY_ERROR, MEND_RETRY_ERROR_NO_SENDER, text);
  return self;
}

static MendFailure *
copy_facts (MendFailure *self)
{
  MendFailure *copy = g_object_new (MEND_TYPE_FAILURE, NULL);

  copy->reason = self->reason;
  copy->status = self->status;
  copy->retry_after_ms = self->retry_after_ms;
  copy->message = g_strdup (self->message);
  copy->error = self->error != NULL ? g_error_copy (self->error) : NULL;
  copy->api_error_type = g_strdup (self->api_error_type);
  copy->partial = self->partial;
  copy->should_retry = self->should_retry;
  copy->rule = g_strdup (self->rule);
  copy->user_stop = self->user_stop;
  copy->resets_at = self->resets_at;
  copy->reset_in_text = self->reset_in_text;

  return copy;
}

MendFailure *
mend_failure_new_session_lost (const char *detail)
{
  g_autofree char *text = NULL;
  MendFailure *self;

  text = g_strdup_printf (_("The agent could not load this conversation, and its history is gone: %s. "
                            "A new session is opened for the next prompt"),
                          detail != NULL ? detail : _("no reason given"));
  self = failure_new (MEND_REASON_UNKNOWN, text, g_strdup (_("the agent lost the session")));
  classify_default (self);
  self->error = g_error_new_literal (MEND_RETRY_ERROR, MEND_RETRY_ERROR_SESSION_LOST, text);
  return self;
}

MendFailure *
mend_failure_new_partial_copy (MendFailure *self)
{
  MendFailure *copy;

  g_return_val_if_fail (MEND_IS_FAILURE (self), NULL);

  copy = copy_facts (self);
  copy->partial = TRUE;
  classify_default (copy);

  return copy;
}

MendFailure *
mend_failure_new_judged_copy (MendFailure *self,
                              MendReason   reason,
                              const char  *rule)
{
  MendFailure *copy;

  g_return_val_if_fail (MEND_IS_FAILURE (self), NULL);

  copy = copy_facts (self);
  copy->reason = reason;
  g_free (copy->rule);
  copy->rule = g_strdup (rule);
  classify_default (copy);

  return copy;
}

gboolean
mend_failure_is_user_stop (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), FALSE);

  return self->user_stop;
}

static void
mend_failure_constructed (GObject *object)
{
  MendFailure *self = (MendFailure *) object;

  G_OBJECT_CLASS (mend_failure_parent_class)->constructed (object);

  /* Facts given as properties are kept as the constructors keep them:
   * redacted, and the text cut. */
  if (self->message != NULL)
    {
      g_autofree char *given = g_steal_pointer (&self->message);
      g_autofree char *redacted = mend_redact_secrets (given, -1);

      self->message = truncate_message (redacted);
    }
  if (self->error != NULL)
    {
      char *given = self->error->message;

      self->error->message = mend_redact_secrets (given, -1);
      g_free (given);
    }
  if (self->api_error_type != NULL)
    {
      g_autofree char *given = g_steal_pointer (&self->api_error_type);

      self->api_error_type = mend_redact_secrets (given, -1);
    }

  classify_default (self);
}

static void
mend_failure_finalize (GObject *object)
{
  MendFailure *self = (MendFailure *) object;

  g_clear_pointer (&self->message, g_free);
  g_clear_pointer (&self->api_error_type, g_free);
  g_clear_pointer (&self->rule, g_free);
  g_clear_error (&self->error);

  G_OBJECT_CLASS (mend_failure_parent_class)->finalize (object);
}

static void
mend_failure_get_property (GObject    *object,
                           guint       prop_id,
                           GValue     *value,
                           GParamSpec *pspec)
{
  MendFailure *self = MEND_FAILURE (object);

  switch (prop_id)
    {
    case PROP_KIND:
      g_value_set_enum (value, self->kind);
      break;
    case PROP_REASON:
      g_value_set_enum (value, self->reason);
      break;
    case PROP_STATUS:
      g_value_set_uint (value, self->status);
      break;
    case PROP_RETRY_AFTER_MS:
      g_value_set_int64 (value, self->retry_after_ms);
      break;
    case PROP_MESSAGE:
      g_value_set_string (value, self->message);
      break;
    case PROP_ERROR:
      g_value_set_boxed (value, self->error);
      break;
    case PROP_API_ERROR_TYPE:
      g_value_set_string (value, self->api_error_type);
      break;
    case PROP_PARTIAL:
      g_value_set_boolean (value, self->partial);
      break;
    case PROP_RULE:
      g_value_set_string (value, self->rule);
      break;
    case PROP_RESETS_AT:
      g_value_set_int64 (value, self->resets_at);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* Construct-only: each fact is set once, before the failure is made. */
static void
mend_failure_set_property (GObject      *object,
                           guint         prop_id,
                           const GValue *value,
                           GParamSpec   *pspec)
{
  MendFailure *self = MEND_FAILURE (object);

  switch (prop_id)
    {
    case PROP_REASON:
      self->reason = g_value_get_enum (value);
      break;
    case PROP_STATUS:
      self->status = g_value_get_uint (value);
      break;
    case PROP_RETRY_AFTER_MS:
      self->retry_after_ms = g_value_get_int64 (value);
      break;
    case PROP_MESSAGE:
      g_assert (self->message == NULL);
      self->message = g_value_dup_string (value);
      break;
    case PROP_ERROR:
      g_assert (self->error == NULL);
      self->error = g_value_dup_boxed (value);
      break;
    case PROP_API_ERROR_TYPE:
      g_assert (self->api_error_type == NULL);
      self->api_error_type = g_value_dup_string (value);
      break;
    case PROP_PARTIAL:
      self->partial = g_value_get_boolean (value);
      break;
    case PROP_RULE:
      g_assert (self->rule == NULL);
      self->rule = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
mend_failure_class_init (MendFailureClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->constructed = mend_failure_constructed;
  object_class->finalize = mend_failure_finalize;
  object_class->get_property = mend_failure_get_property;
  object_class->set_property = mend_failure_set_property;

  /**
   * MendFailure:kind:
   *
   * Whether the failure may be retried, as the default
   * [class@Mend.ErrorPolicy] reads its facts; fixed when the failure is
   * made. The verdict of the turn that handled it, under that turn's own
   * policy and in its context, is [property@Mend.Turn:last-verdict].
   */
  properties[PROP_KIND] =
    g_param_spec_enum ("kind", NULL, NULL,
                       MEND_TYPE_FAILURE_KIND, MEND_FAILURE_PERMANENT,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:reason:
   *
   * What went wrong, as the facts tell.
   */
  properties[PROP_REASON] =
    g_param_spec_enum ("reason", NULL, NULL,
                       MEND_TYPE_REASON, MEND_REASON_UNKNOWN,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:status:
   *
   * The HTTP status, or 0 when there was none.
   */
  properties[PROP_STATUS] =
    g_param_spec_uint ("status", NULL, NULL,
                       0, 999, 0,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:retry-after-ms:
   *
   * How long the server asked to wait, in milliseconds, or -1 when it did
   * not say.
   */
  properties[PROP_RETRY_AFTER_MS] =
    g_param_spec_int64 ("retry-after-ms", NULL, NULL,
                        -1, G_MAXINT64, -1,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:message:
   *
   * The error text, at most %MEND_FAILURE_MAX_MESSAGE_BYTES bytes.
   */
  properties[PROP_MESSAGE] =
    g_param_spec_string ("message", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:error:
   *
   * The [struct@GLib.Error] the failure was made from, or %NULL.
   */
  properties[PROP_ERROR] =
    g_param_spec_boxed ("error", NULL, NULL,
                        G_TYPE_ERROR,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:api-error-type:
   *
   * The type of the API's error body, such as `overloaded_error`, or %NULL.
   */
  properties[PROP_API_ERROR_TYPE] =
    g_param_spec_string ("api-error-type", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:partial:
   *
   * Whether output was seen before the attempt failed. Such a failure is
   * not retried unless the policy's [property@Mend.ErrorPolicy:retry-partial]
   * says so, so that tools never run twice and text is never duplicated.
   */
  properties[PROP_PARTIAL] =
    g_param_spec_boolean ("partial", NULL, NULL,
                          FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:rule:
   *
   * What decided the reason, for people: the provider code, the words or
   * the status that weighed most, and where that wording comes from, such
   * as “provider code “overloaded_error” (Anthropic error type)”.
   * Translated; not meant to be parsed.
   */
  properties[PROP_RULE] =
    g_param_spec_string ("rule", NULL, NULL,
                         NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * MendFailure:resets-at:
   *
   * When the usage limit that failed the attempt resets, in wall-clock
   * microseconds since the Unix epoch, or 0 when nothing said: from
   * Anthropic's `anthropic-ratelimit-unified-reset`, OpenAI's
   * `x-ratelimit-reset-requests` and `-tokens`, a Gemini daily quota's
   * `RetryInfo`, or the words of the message ("resets 9:23pm (UTC)",
   * "try again at Dec 2nd, 2026 3:05 PM", "resets in 3h 12m"). A time of
   * day without a date is the next one after the failure.
   * [property@Mend.ErrorPolicy:continue-at-reset] waits for it.
   */
  properties[PROP_RESETS_AT] =
    g_param_spec_int64 ("resets-at", NULL, NULL,
                        0, G_MAXINT64, 0,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
mend_failure_init (MendFailure *self)
{
  self->kind = MEND_FAILURE_PERMANENT;
  self->reason = MEND_REASON_UNKNOWN;
  self->retry_after_ms = -1;
  self->should_retry = -1;
}

/**
 * mend_failure_get_kind:
 * @self: a failure
 *
 * Gets whether the failure may be retried, as the default policy reads
 * its facts: see [property@Mend.Failure:kind].
 *
 * Returns: the default classification
 */
MendFailureKind
mend_failure_get_kind (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), MEND_FAILURE_PERMANENT);

  return self->kind;
}

/**
 * mend_failure_get_reason:
 * @self: a failure
 *
 * Gets what went wrong.
 *
 * Returns: the reason
 */
MendReason
mend_failure_get_reason (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), MEND_REASON_UNKNOWN);

  return self->reason;
}

/**
 * mend_failure_get_status:
 * @self: a failure
 *
 * Gets the HTTP status of the failure, also one read from error text.
 *
 * Returns: the status, or 0
 */
guint
mend_failure_get_status (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), 0);

  return self->status;
}

/**
 * mend_failure_get_retry_after_ms:
 * @self: a failure
 *
 * Gets how long the server asked to wait.
 *
 * Returns: the server's hint in milliseconds, or -1
 */
gint64
mend_failure_get_retry_after_ms (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), -1);

  return self->retry_after_ms;
}

/**
 * mend_failure_get_message:
 * @self: a failure
 *
 * Gets the error text.
 *
 * Returns: (nullable): the message
 */
const char *
mend_failure_get_message (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), NULL);

  return self->message;
}

/**
 * mend_failure_get_error:
 * @self: a failure
 *
 * Gets the error the failure was made from.
 *
 * Returns: (nullable) (transfer none): the error, or %NULL
 */
const GError *
mend_failure_get_error (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), NULL);

  return self->error;
}

/**
 * mend_failure_get_api_error_type:
 * @self: a failure
 *
 * Gets the type of the API's error body, such as `overloaded_error`.
 *
 * Returns: (nullable): the type, or %NULL
 */
const char *
mend_failure_get_api_error_type (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), NULL);

  return self->api_error_type;
}

/**
 * mend_failure_get_resets_at:
 * @self: a failure
 *
 * Gets [property@Mend.Failure:resets-at].
 *
 * Returns: when the usage limit resets, in wall-clock µs, or 0
 */
gint64
mend_failure_get_resets_at (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), 0);

  return self->resets_at;
}

/**
 * mend_failure_get_rule:
 * @self: a failure
 *
 * Gets what decided the failure's reason, for people: see
 * [property@Mend.Failure:rule].
 *
 * Returns: (nullable): the rule
 */
const char *
mend_failure_get_rule (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), NULL);

  return self->rule;
}

/**
 * mend_failure_get_partial:
 * @self: a failure
 *
 * Gets whether output was seen before the attempt failed.
 *
 * Returns: %TRUE if the failure came after output
 */
gboolean
mend_failure_get_partial (MendFailure *self)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), FALSE);

  return self->partial;
}

/**
 * mend_failure_get_should_retry:
 * @self: a failure
 * @should_retry: (out) (optional): what the server's `x-should-retry` said
 *
 * Gets the server's own word on retrying, from its `x-should-retry` header.
 * It wins over the status in the default classification.
 *
 * Returns: %TRUE if the server said, %FALSE if it did not
 */
gboolean
mend_failure_get_should_retry (MendFailure *self,
                               gboolean    *should_retry)
{
  g_return_val_if_fail (MEND_IS_FAILURE (self), FALSE);

  if (should_retry != NULL)
    *should_retry = self->should_retry == 1;

  return self->should_retry != -1;
}
