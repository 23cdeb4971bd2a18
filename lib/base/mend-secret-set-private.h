/* mend-secret-set-private.h — the credentials one sender registered with the redactor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* How many credentials seen in requests (a build-message handler's
 * headers, a request's Authorization) a sender keeps registered; past
 * that the oldest is let go. The credentials the app gave the sender
 * itself are pinned and never count against it. */
#define MEND_SECRET_SET_MAX_ROTATING 32

/* The values one sender registered with the redactor, registered for as
 * long as the set lives. A value with a scheme ("Bearer abc…") registers
 * its last word too: the token alone may be echoed. */
typedef struct _MendSecretSet MendSecretSet;

MendSecretSet *mend_secret_set_new          (void);
/* Lets every value go. */
void           mend_secret_set_free         (MendSecretSet *set);

/* A credential the app gave: registered until the set is freed, or
 * until mend_secret_set_unpin (). */
void           mend_secret_set_pin          (MendSecretSet *set,
                                             const char    *value);
/* The app took @value back (a header replaced, a variable unset): it
 * joins the rotating ones, so that an echo of it shortly after is still
 * caught. */
void           mend_secret_set_unpin        (MendSecretSet *set,
                                             const char    *value);
/* A credential seen in one request: registered among the last
 * MEND_SECRET_SET_MAX_ROTATING of them. A pinned value is not counted. */
void           mend_secret_set_add_rotating (MendSecretSet *set,
                                             const char    *value);

/* The credentials in `NAME=VALUE` strings (the values of variables named
 * like credentials: mend_redact_is_credential_variable ()), pinned or let
 * go. */
void           mend_secret_set_pin_environ   (MendSecretSet      *set,
                                              const char * const *environ_);
void           mend_secret_set_unpin_environ (MendSecretSet      *set,
                                              const char * const *environ_);
/* The credentials on a command line, pinned: the value of each flag named
 * like one ("--api-key VALUE", "--token=VALUE"), and of each `NAME=VALUE`
 * argument whose NAME is, as in an environment ("env API_TOKEN=VALUE
 * agent"). */
void           mend_secret_set_pin_argv      (MendSecretSet      *set,
                                              const char * const *argv);

/* For tests: how many values are pinned, and how many rotate. */
guint          mend_secret_set_get_n_pinned   (MendSecretSet *set);
guint          mend_secret_set_get_n_rotating (MendSecretSet *set);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (MendSecretSet, mend_secret_set_free)

G_END_DECLS
