/* fuzz-text.c: error texts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The whole input, as a C string, is read by mend_failure_new_from_text ().
 * Then a GError is made of it: byte 0 picks the domain (GIO, resolver,
 * TLS, libsoup's session, a file error or a domain of the app's own), byte
 * 1 the code, and the rest is the message; mend_failure_new_from_error ()
 * reads it.
 */

#include "fuzz-common.h"

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

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *text = fuzz_strndup (data, size);
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendFailure *failure;

  mend_error_policy_set_seed (policy, 7);

  failure = mend_failure_new_from_text (text);
  fuzz_check_failure (failure);
  fuzz_classify (policy, failure);
  g_assert_finalize_object (failure);

  if (size >= 2)
    {
      /* Codes beyond the enums too, as a newer GLib may send them. */
      int code = (int) data[1] - 8;
      GError *error = g_error_new_literal (pick_domain (data[0]), code, text + 2);
      const GError *kept;

      failure = mend_failure_new_from_error (error);
      fuzz_check_failure (failure);
      kept = mend_failure_get_error (failure);
      fuzz_check (kept != NULL && kept != error && g_error_matches (kept, error->domain, error->code) &&
                  g_strcmp0 (kept->message, error->message) == 0, "the error is not kept");
      fuzz_classify (policy, failure);
      g_assert_finalize_object (failure);
      g_error_free (error);
    }

  g_assert_finalize_object (policy);
  return 0;
}
