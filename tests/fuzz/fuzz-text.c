/* fuzz-text.c: error texts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The whole input, as a C string, is read by mend_failure_new_from_text ():
 * the classifier's token scan, phrase tables, limit-versus-requested numbers
 * and hint parser. The failure must say what decided it (a UTF-8 rule), and
 * the turn and resume policies must agree on everything but a rate limit's
 * horizon. Then a GError is made of it: byte 0 picks the domain (GIO, resolver,
 * TLS, libsoup's session, a file error or a domain of the app's own), byte
 * 1 the code, and the rest is the message; mend_failure_new_from_error ()
 * reads it.
 */

#include "fuzz-common.h"

#include "mend-error-policy-private.h"
#include "mend-redact-private.h"

static GQuark fuzz_app_error_quark (void);
G_DEFINE_QUARK (fuzz-app-error-quark, fuzz_app_error)

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init (argc, argv);
  return 0;
}

static GQuark
pick_domain (guint8 byte)
{
  switch (byte % 6)
    {
    case 0: return G_IO_ERROR;
    case 1: return G_RESOLVER_ERROR;
    case 2: return G_TLS_ERROR;
    case 3: return SOUP_SESSION_ERROR;
    case 4: return G_FILE_ERROR;
    default: return fuzz_app_error_quark ();
    }
}

static void
check_rule_and_horizon (MendFailure     *failure,
                        MendErrorPolicy *resume)
{
  const char *rule = mend_failure_get_rule (failure);
  MendFailureKind turn_kind = mend_failure_get_kind (failure);
  MendFailureKind resume_kind = mend_error_policy_classify (resume, failure);

  fuzz_check (rule != NULL && g_utf8_validate (rule, -1, NULL), "no rule, or not UTF-8");
  /* Only a rate limit's hint may part the two policies: LIMIT beyond the
   * turn's minute, TRANSIENT within the resume policy's hour. */
  if (turn_kind != resume_kind)
    fuzz_check (mend_failure_get_reason (failure) == MEND_REASON_RATE_LIMIT &&
                turn_kind == MEND_FAILURE_LIMIT && resume_kind == MEND_FAILURE_TRANSIENT,
                "the policies disagree on something other than a rate limit's horizon");
  /* Nothing that cannot succeed is ever retried. */
  if (mend_failure_get_reason (failure) == MEND_REASON_AUTH ||
      mend_failure_get_reason (failure) == MEND_REASON_PERMISSION ||
      mend_failure_get_reason (failure) == MEND_REASON_USAGE_LIMIT)
    fuzz_check (turn_kind != MEND_FAILURE_TRANSIENT && resume_kind != MEND_FAILURE_TRANSIENT,
                "a refused key, permission or usage limit is retried");
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = fuzz_strndup (data, size);
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendErrorPolicy *resume = mend_error_policy_new_for_resume ();
  MendFailure *failure;

  mend_error_policy_set_seed (policy, 7);

  failure = mend_failure_new_from_text (text);
  fuzz_check_failure (failure);
  fuzz_classify (policy, failure);
  check_rule_and_horizon (failure, resume);
  g_assert_finalize_object (failure);

  if (size >= 2)
    {
      /* Codes beyond the enums too, as a newer GLib may send them. */
      int code = (int) data[1] - 8;
      GError *error = g_error_new_literal (pick_domain (data[0]), code, text + 2);
      g_autofree char *redacted = mend_redact_secrets (error->message, -1);
      const GError *kept;

      failure = mend_failure_new_from_error (error);
      fuzz_check_failure (failure);
      check_rule_and_horizon (failure, resume);
      kept = mend_failure_get_error (failure);
      /* Kept, with its text redacted like the message. */
      fuzz_check (kept != NULL && kept != error && g_error_matches (kept, error->domain, error->code) &&
                  g_strcmp0 (kept->message, redacted) == 0, "the error is not kept");
      fuzz_classify (policy, failure);
      g_assert_finalize_object (failure);
      g_error_free (error);
    }

  g_assert_finalize_object (policy);
  g_assert_finalize_object (resume);
  return 0;
}
