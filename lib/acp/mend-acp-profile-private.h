/* mend-acp-profile-private.h — MendAcpProfile's internals for the ACP agent
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "mend-acp-profile.h"

G_BEGIN_DECLS

/* Whether @text starts with one of the profile's notice-prefixes: the
 * agent's own notice, not the model's output. */
gboolean            mend_acp_profile_is_notice               (MendAcpProfile      *self,
                                                              const char          *text);
/* Whether @text starts with one of the profile's error-prefixes. */
gboolean            mend_acp_profile_is_error                (MendAcpProfile      *self,
                                                              const char          *text);

G_END_DECLS
