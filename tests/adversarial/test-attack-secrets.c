/* test-attack-secrets.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attacks on the redaction of credentials an app gives a sender: a value
 * passed where a header's name goes, two registered values where one is
 * part of the other, the value of a Cookie echoed alone, and a credential
 * on an agent's command line that is not a --flag's value.
 */

#include "config.h"

#include <string.h>

#include <libmend.h>

#include "mend-redact-private.h"
#include "mend-secret-set-private.h"

#define K_IN_NAME   "Zq4Wx8Ec2Rv6Tb1Yn5Um"

/* An app that puts the whole header line in the name (or swaps name and
 * value) hands the credential to set_header (): the error it gets back
 * must not carry it. */
static void
test_header_name_error_is_redacted (void)
{
  MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  g_autoptr(GError) error = NULL;

  g_assert_false (mend_http_sender_set_header (sender, "x-api-key: " K_IN_NAME, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_null (strstr (error->message, K_IN_NAME));
  g_clear_error (&error);

  /* Swapped: the key, which holds a '/' no header name may, as the name. */
  g_assert_false (mend_http_sender_set_header (sender, K_IN_NAME "/AbC=", "x-api-key", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_null (strstr (error->message, K_IN_NAME));

  g_assert_finalize_object (sender);
}

/* Two credentials of one sender, one the start of the other (a key and a
 * token made from it, a session and its signed form): an echo of the
 * longer leaves nothing of it, whichever the redactor tries first. */
static void
test_overlapping_secrets_leave_nothing (void)
{
  static const struct { const char *shorter; const char *longer; const char *tail; } pairs[] = {
    { "Hk3Lm9Np2Qr7", "Hk3Lm9Np2Qr7.SIGNEDtail0001", "SIGNEDtail0001" },
    { "Ab1Cd2Ef3Gh4", "Ab1Cd2Ef3Gh4.SIGNEDtail0002", "SIGNEDtail0002" },
    { "Uv5Wx6Yz7Aa8", "Uv5Wx6Yz7Aa8.SIGNEDtail0003", "SIGNEDtail0003" },
    { "Pp0Oo9Ii8Uu7", "Pp0Oo9Ii8Uu7.SIGNEDtail0004", "SIGNEDtail0004" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (pairs); i++)
    {
      MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
      g_autofree char *text = g_strdup_printf ("upstream refused %s", pairs[i].longer);
      g_autoptr(MendFailure) failure = NULL;

      g_assert_true (mend_http_sender_set_header (sender, "x-api-key", pairs[i].shorter, NULL));
      g_assert_true (mend_http_sender_set_header (sender, "x-session", pairs[i].longer, NULL));

      failure = mend_failure_new_from_text (text);
      g_test_message ("%s", mend_failure_get_message (failure));
      g_assert_null (strstr (mend_failure_get_message (failure), pairs[i].tail));

      g_assert_finalize_object (sender);
    }
}

/* A Cookie's value is "name=value": the server says back the value. */
static void
test_cookie_value_echoed_alone_is_redacted (void)
{
  MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  g_autoptr(MendFailure) failure = NULL;

  g_assert_true (mend_http_sender_set_header (sender, "Cookie", "theme=dark; sid=Jk8Hg7Fd6Sa5Lp4Oi3", NULL));
  failure = mend_failure_new_from_text ("API Error: 401 unknown session Jk8Hg7Fd6Sa5Lp4Oi3");
  g_assert_null (strstr (mend_failure_get_message (failure), "Jk8Hg7Fd6Sa5Lp4Oi3"));

  g_assert_finalize_object (sender);
}

/* An error body whose 8 kB shown are cut inside a key the sender
 * holds, after blanks the message drops: redacted before the cut, no
 * piece of the key is shown. */
#define K_CUT "Vb7Nm3Qw9Er1Ty5Ui2Op8CUTkey"

static void
test_error_body_cut_inside_a_key_shows_none_of_it (void)
{
  MendHttpSender *sender = mend_http_sender_new ("http://127.0.0.1:9/v1/messages");
  g_autoptr(GString) body = g_string_new (NULL);
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(MendFailure) failure = NULL;

  g_assert_true (mend_http_sender_set_header (sender, "x-api-key", K_CUT, NULL));
  for (guint i = 0; i < 2 * MEND_FAILURE_MAX_MESSAGE_BYTES - 10; i++)
    g_string_append_c (body, ' ');
  g_string_append (body, "key " K_CUT " is not valid");
  bytes = g_bytes_new (body->str, body->len);

  failure = mend_failure_new_from_http (401, NULL, bytes);
  g_test_message ("%s", mend_failure_get_message (failure));
  g_assert_null (strstr (mend_failure_get_message (failure), "Vb7Nm3"));

  g_assert_finalize_object (sender);
}

/* `env NAME=VALUE agent`, the usual way to give one command a variable:
 * the variable is named like a credential, as setenv () would take it. */
static void
test_argv_assignment_is_pinned (void)
{
  const char * const argv[] = {
    "/usr/bin/env", "UPSTREAM_AUTH_TOKEN=Mn3Bv5Cx7Zl9Kj2Hg4", "claude", "-p", NULL
  };
  g_autoptr(MendSecretSet) set = mend_secret_set_new ();
  g_autofree char *shown = NULL;

  mend_secret_set_pin_argv (set, argv);
  shown = mend_redact_secrets ("the agent said: bad token Mn3Bv5Cx7Zl9Kj2Hg4", -1);
  g_assert_null (strstr (shown, "Mn3Bv5Cx7Zl9Kj2Hg4"));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/AttackSecrets/header-name-error-is-redacted", test_header_name_error_is_redacted);
  g_test_add_func ("/Mend/AttackSecrets/overlapping-secrets-leave-nothing", test_overlapping_secrets_leave_nothing);
  g_test_add_func ("/Mend/AttackSecrets/cookie-value-echoed-alone-is-redacted",
                   test_cookie_value_echoed_alone_is_redacted);
  g_test_add_func ("/Mend/AttackSecrets/argv-assignment-is-pinned", test_argv_assignment_is_pinned);
  g_test_add_func ("/Mend/AttackSecrets/error-body-cut-inside-a-key-shows-none-of-it",
                   test_error_body_cut_inside_a_key_shows_none_of_it);

  return g_test_run ();
}
