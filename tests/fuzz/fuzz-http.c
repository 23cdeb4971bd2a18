/* fuzz-http.c: HTTP header values and error bodies
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Input layout (see corpus/fuzz-http, made by make-seeds.py):
 *
 *   byte 0-1  the status, big-endian, modulo 1000
 *   byte 2    flags: which headers are present, and whether there are
 *             headers and a body at all
 *   then      up to three lines: the Retry-After, retry-after-ms and
 *             x-should-retry values (each only when its flag is set), and
 *             the rest is the body, as is
 *
 * A header value as libsoup hands it over holds no CR, LF or nul; those
 * become spaces. Retry-After dates are measured against a MendManualClock
 * (2025-11-30 10:53:20 UTC), so no real time is read.
 */

#include "fuzz-common.h"

#include "mend-error-policy-private.h"
#include "mend-failure-private.h"

#define WALL_START G_GINT64_CONSTANT (1764500000000000)

enum {
  HAS_RETRY_AFTER    = 1 << 0,
  HAS_RETRY_AFTER_MS = 1 << 1,
  HAS_SHOULD_RETRY   = 1 << 2,
  NO_HEADERS         = 1 << 3,
  NO_BODY            = 1 << 4,
  /* The header twice: libsoup joins the values with ", ". */
  REPEAT_RETRY_AFTER = 1 << 5,
};

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init (argc, argv);
  return 0;
}

/* The next line of the input, as a header value. */
static char *
take_value (const uint8_t **p,
            const uint8_t  *end)
{
  const uint8_t *newline = memchr (*p, '\n', end - *p);
  const uint8_t *stop = newline ? newline : end;
  char *value = g_malloc (stop - *p + 1);

  for (gsize i = 0; i < (gsize) (stop - *p); i++)
    value[i] = ((*p)[i] == '\r' || (*p)[i] == '\0') ? ' ' : (char) (*p)[i];
  value[stop - *p] = '\0';

  *p = newline ? newline + 1 : end;
  return value;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  const uint8_t *p = data;
  const uint8_t *end = data + size;
  SoupMessageHeaders *headers = NULL;
  GBytes *body = NULL;
  MendClock *clock;
  MendErrorPolicy *policy;
  MendFailure *failure;
  guint status;
  guint flags;

  if (size < 3)
    return 0;

  status = ((guint) data[0] << 8 | data[1]) % 1000;
  flags = data[2];
  p += 3;

  if (!(flags & NO_HEADERS))
    {
      static const struct {
        guint flag;
        const char *name;
      } names[] = {
        { HAS_RETRY_AFTER, "Retry-After" },
        { HAS_RETRY_AFTER_MS, "retry-after-ms" },
        { HAS_SHOULD_RETRY, "x-should-retry" },
      };

      headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
      soup_message_headers_append (headers, "Content-Type", "application/json");
      for (guint i = 0; i < G_N_ELEMENTS (names); i++)
        {
          if (flags & names[i].flag)
            {
              g_autofree char *value = take_value (&p, end);

              soup_message_headers_append (headers, names[i].name, value);
              if (i == 0 && (flags & REPEAT_RETRY_AFTER))
                soup_message_headers_append (headers, names[i].name, value);
            }
        }
    }

  if (!(flags & NO_BODY))
    body = g_bytes_new (p, end - p);

  clock = mend_manual_clock_new (WALL_START);
  failure = mend_failure_new_from_http_with_clock (status, headers, body, clock);
  fuzz_check_failure (failure);
  fuzz_check (mend_failure_get_status (failure) == status, "status %u read as %u",
              status, mend_failure_get_status (failure));

  policy = mend_error_policy_new ();
  mend_error_policy_set_seed (policy, 7);
  fuzz_classify (policy, failure);

  g_assert_finalize_object (failure);
  g_assert_finalize_object (policy);
  g_assert_finalize_object (clock);
  g_clear_pointer (&headers, soup_message_headers_unref);
  g_clear_pointer (&body, g_bytes_unref);

  return 0;
}
