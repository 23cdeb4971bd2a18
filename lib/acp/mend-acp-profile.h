/* mend-acp-profile.h — MendAcpProfile: what libmend knows of one ACP agent
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <glib-object.h>

#include "mend-version-macros.h"

G_BEGIN_DECLS

#define MEND_TYPE_ACP_PROFILE (mend_acp_profile_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (MendAcpProfile, mend_acp_profile, MEND, ACP_PROFILE, GObject)

MEND_AVAILABLE_IN_0_2
MendAcpProfile     *mend_acp_profile_new                     (const char          *name);
MEND_AVAILABLE_IN_0_2
MendAcpProfile     *mend_acp_profile_lookup                  (const char          *agent_name);
MEND_AVAILABLE_IN_0_2
const char         *mend_acp_profile_get_name                (MendAcpProfile      *self);
MEND_AVAILABLE_IN_0_2
gboolean            mend_acp_profile_get_keeps_failed_prompt (MendAcpProfile      *self);
MEND_AVAILABLE_IN_0_2
void                mend_acp_profile_set_keeps_failed_prompt (MendAcpProfile      *self,
                                                              gboolean             keeps);
MEND_AVAILABLE_IN_0_2
gboolean            mend_acp_profile_get_restreams_partial   (MendAcpProfile      *self);
MEND_AVAILABLE_IN_0_2
void                mend_acp_profile_set_restreams_partial   (MendAcpProfile      *self,
                                                              gboolean             restreams);
MEND_AVAILABLE_IN_0_2
const char * const *mend_acp_profile_get_notice_prefixes     (MendAcpProfile      *self);
MEND_AVAILABLE_IN_0_2
void                mend_acp_profile_set_notice_prefixes     (MendAcpProfile      *self,
                                                              const char * const  *prefixes);
MEND_AVAILABLE_IN_0_2
const char * const *mend_acp_profile_get_error_prefixes      (MendAcpProfile      *self);
MEND_AVAILABLE_IN_0_2
void                mend_acp_profile_set_error_prefixes      (MendAcpProfile      *self,
                                                              const char * const  *prefixes);

G_END_DECLS
