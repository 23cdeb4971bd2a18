/* mend-secret-set.c — the credentials one sender registered with the redactor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Two lists: the app's own credentials, pinned for the sender's life, and
 * a bounded ring of those seen in requests, which may change each time (a
 * session id, a signed header). However many of the second kind come,
 * the first kind stays registered.
 */

#include "config.h"

#include <string.h>

#include "mend-redact-private.h"
#include "mend-secret-set-private.h"

struct _MendSecretSet
{
  GPtrArray *pinned;    /* char *, each registered once */
  GPtrArray *rotating;  /* char *, oldest first, each registered once */
};

MendSecretSet *
mend_secret_set_new (void)
{
  MendSecretSet *set = g_new0 (MendSecretSet, 1);

  set->pinned = g_ptr_array_new_with_free_func (g_free);
  set->rotating = g_ptr_array_new_with_free_func (g_free);
  return set;
}

static void
forget_all (GPtrArray *values)
{
  for (guint i = 0; i < values->len; i++)
    mend_redact_remove_secret (g_ptr_array_index (values, i));
  g_ptr_array_unref (values);
}

void
mend_secret_set_free (MendSecretSet *set)
{
  if (set == NULL)
    return;

  forget_all (set->pinned);
  forget_all (set->rotating);
  g_free (set);
}

static gboolean
find (GPtrArray  *values,
      const char *value,
      guint      *index)
{
  for (guint i = 0; i < values->len; i++)
    if (g_str_equal (g_ptr_array_index (values, i), value))
      {
        if (index != NULL)
          *index = i;
        return TRUE;
      }
  return FALSE;
}

static gboolean
worth_keeping (const char *value)
{
  return value != NULL && strlen (value) >= MEND_REDACT_MIN_SECRET_BYTES;
}

/* "Bearer abc…": the token alone. */
static const char *
last_word (const char *value)
{
  const char *space = strrchr (value, ' ');

  return space != NULL && worth_keeping (space + 1) ? space + 1 : NULL;
}

static void
pin_one (MendSecretSet *set,
         const char    *value)
{
  guint i;

  if (!worth_keeping (value) || find (set->pinned, value, NULL))
    return;

  /* Already registered as a rotating one: it moves, still registered. */
  if (find (set->rotating, value, &i))
    {
      g_ptr_array_add (set->pinned, g_ptr_array_steal_index (set->rotating, i));
      return;
    }

  mend_redact_add_secret (value);
  g_ptr_array_add (set->pinned, g_strdup (value));
}

void
mend_secret_set_pin (MendSecretSet *set,
                     const char    *value)
{
  g_assert (set != NULL);

  if (!worth_keeping (value))
    return;
  if (last_word (value) != NULL)
    pin_one (set, last_word (value));
  pin_one (set, value);
}

static void
rotate_in (MendSecretSet *set,
           char          *value)
{
  /* Registered already (the caller's or the value's own registration). */
  if (set->rotating->len >= MEND_SECRET_SET_MAX_ROTATING)
    {
      mend_redact_remove_secret (g_ptr_array_index (set->rotating, 0));
      g_ptr_array_remove_index (set->rotating, 0);
    }
  g_ptr_array_add (set->rotating, value);
}

static void
unpin_one (MendSecretSet *set,
           const char    *value)
{
  guint i;

  if (find (set->pinned, value, &i))
    rotate_in (set, g_ptr_array_steal_index (set->pinned, i));
}

void
mend_secret_set_unpin (MendSecretSet *set,
                       const char    *value)
{
  g_assert (set != NULL);

  if (!worth_keeping (value))
    return;
  if (last_word (value) != NULL)
    unpin_one (set, last_word (value));
  unpin_one (set, value);
}

static void
add_rotating_one (MendSecretSet *set,
                  const char    *value)
{
  guint i;

  if (find (set->pinned, value, NULL))
    return;
  /* Seen again: the newest. */
  if (find (set->rotating, value, &i))
    {
      g_ptr_array_add (set->rotating, g_ptr_array_steal_index (set->rotating, i));
      return;
    }

  mend_redact_add_secret (value);
  rotate_in (set, g_strdup (value));
}

void
mend_secret_set_add_rotating (MendSecretSet *set,
                              const char    *value)
{
  g_assert (set != NULL);

  if (!worth_keeping (value))
    return;
  if (last_word (value) != NULL)
    add_rotating_one (set, last_word (value));
  add_rotating_one (set, value);
}

/* A value that is all digits is a number (a port, a limit), not taken
 * for a credential: blanking it would hide what a message says. */
static gboolean
is_number (const char *value)
{
  for (const char *p = value; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

/* The credential in "NAME=VALUE" (an environment's entry, `env`'s
 * argument, "--token=VALUE"): VALUE if NAME is named like a credential,
 * else %NULL. */
static const char *
credential_assignment (const char *text)
{
  const char *equals = strchr (text, '=');
  g_autofree char *name = NULL;

  if (equals == NULL || is_number (equals + 1))
    return NULL;
  name = g_strndup (text, equals - text);
  return mend_redact_is_credential_variable (name) ? equals + 1 : NULL;
}

static void
walk_environ (MendSecretSet      *set,
              const char * const *environ_,
              void              (*apply) (MendSecretSet *, const char *))
{
  for (guint i = 0; environ_ != NULL && environ_[i] != NULL; i++)
    {
      const char *value = credential_assignment (environ_[i]);

      if (value != NULL)
        apply (set, value);
    }
}

void
mend_secret_set_pin_environ (MendSecretSet      *set,
                             const char * const *environ_)
{
  walk_environ (set, environ_, mend_secret_set_pin);
}

void
mend_secret_set_unpin_environ (MendSecretSet      *set,
                               const char * const *environ_)
{
  walk_environ (set, environ_, mend_secret_set_unpin);
}

void
mend_secret_set_pin_argv (MendSecretSet      *set,
                          const char * const *argv)
{
  /* argv[0] is the program. */
  for (guint i = 1; argv != NULL && argv[i] != NULL; i++)
    {
      const char *arg = argv[i];
      const char *value = credential_assignment (arg);

      /* "--token=VALUE", or a variable given to `env NAME=VALUE agent`. */
      if (value != NULL)
        mend_secret_set_pin (set, value);
      /* "--token VALUE" */
      else if (arg[0] == '-' && strchr (arg, '=') == NULL &&
               mend_redact_is_credential_variable (arg) &&
               argv[i + 1] != NULL && argv[i + 1][0] != '-' && !is_number (argv[i + 1]))
        mend_secret_set_pin (set, argv[i + 1]);
    }
}

guint
mend_secret_set_get_n_pinned (MendSecretSet *set)
{
  return set->pinned->len;
}

guint
mend_secret_set_get_n_rotating (MendSecretSet *set)
{
  return set->rotating->len;
}
