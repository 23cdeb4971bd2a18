/* mend-error-policy.h — MendErrorPolicy: which failures are retried, how often, after how long
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (MEND_INSIDE) && !defined (MEND_COMPILATION)
# error "Only <libmend.h> can be included directly."
#endif

#include <glib-object.h>

#include "mend-enums.h"
#include "mend-types.h"
#include "mend-version-macros.h"

G_BEGIN_DECLS

/**
 * MEND_ERROR_POLICY_MAX_RESET_WAITS:
 *
 * How many times a turn waits for a usage limit's reset
 * ([property@Mend.ErrorPolicy:continue-at-reset]) before it gives up.
 */
#define MEND_ERROR_POLICY_MAX_RESET_WAITS 3

#define MEND_TYPE_ERROR_POLICY (mend_error_policy_get_type ())

MEND_AVAILABLE_IN_0_2
G_DECLARE_DERIVABLE_TYPE (MendErrorPolicy, mend_error_policy, MEND, ERROR_POLICY, GObject)

/**
 * MendErrorPolicyClass:
 * @parent_class: the parent class
 * @classify: decides whether a failure is retried; the default reads the
 *   failure's reason, its `x-should-retry` and whether it was partial
 *
 * The class of an error policy. Override @classify to change what is
 * retried (`do_classify` in Python).
 */
struct _MendErrorPolicyClass
{
  GObjectClass parent_class;

  MendFailureKind (*classify) (MendErrorPolicy *self,
                               MendFailure     *failure);

  /*< private >*/
  gpointer _reserved[8];
};

MEND_AVAILABLE_IN_0_2
MendErrorPolicy  *mend_error_policy_new                   (void);
MEND_AVAILABLE_IN_0_2
MendErrorPolicy  *mend_error_policy_new_for_resume        (void);
MEND_AVAILABLE_IN_0_2
MendErrorPolicy  *mend_error_policy_new_from_json         (const char       *text,
                                                           GError          **error);
MEND_AVAILABLE_IN_0_2
MendErrorPolicy  *mend_error_policy_new_from_file         (const char       *path,
                                                           GError          **error);
MEND_AVAILABLE_IN_0_2
gboolean          mend_error_policy_update_from_json      (MendErrorPolicy  *self,
                                                           const char       *text,
                                                           GError          **error);
MEND_AVAILABLE_IN_0_2
char             *mend_error_policy_to_json               (MendErrorPolicy  *self);
MEND_AVAILABLE_IN_0_2
MendFailureKind   mend_error_policy_classify              (MendErrorPolicy  *self,
                                                           MendFailure      *failure);
MEND_AVAILABLE_IN_0_2
gint64            mend_error_policy_delay_for             (MendErrorPolicy  *self,
                                                           guint             retry,
                                                           MendFailure      *failure,
                                                           gboolean         *server_hint);
MEND_AVAILABLE_IN_0_2
gboolean          mend_error_policy_add_rule              (MendErrorPolicy  *self,
                                                           const char       *phrase,
                                                           MendReason        reason,
                                                           const char       *source,
                                                           GError          **error);
MEND_AVAILABLE_IN_0_2
void              mend_error_policy_clear_rules           (MendErrorPolicy  *self);
MEND_AVAILABLE_IN_0_2
guint             mend_error_policy_get_n_rules           (MendErrorPolicy  *self);
MEND_AVAILABLE_IN_0_2
MendReason        mend_error_policy_get_reason_for        (MendErrorPolicy  *self,
                                                           MendFailure      *failure);
MEND_AVAILABLE_IN_0_2
guint             mend_error_policy_get_max_retries       (MendErrorPolicy  *self);
MEND_AVAILABLE_IN_0_2
void              mend_error_policy_set_max_retries       (MendErrorPolicy  *self,
                                                           guint             max_retries);
MEND_AVAILABLE_IN_0_2
guint             mend_error_policy_get_base_delay_ms     (MendErrorPolicy  *self);
MEND_AVAILABLE_IN_0_2
void              mend_error_policy_set_base_delay_ms     (MendErrorPolicy  *self,
                                                           guint             base_delay_ms);
MEND_AVAILABLE_IN_0_2
guint             mend_error_policy_get_max_delay_ms      (MendErrorPolicy  *self);
MEND_AVAILABLE_IN_0_2
void              mend_error_policy_set_max_delay_ms      (MendErrorPolicy  *self,
                                                           guint             max_delay_ms);
MEND_AVAILABLE_IN_0_2
double            mend_error_policy_get_multiplier        (MendErrorPolicy  *self);
MEND_AVAILABLE_IN_0_2
void              mend_error_policy_set_multiplier        (MendErrorPolicy  *self,
                                                           double            multiplier);
MEND_AVAILABLE_IN_0_2
MendJitter        mend_error_policy_get_jitter            (MendErrorPolicy  *self);
MEND_AVAILABLE_IN_0_2
void              mend_error_policy_set_jitter            (MendErrorPolicy  *self,
                                                           MendJitter        jitter);
MEND_AVAILABLE_IN_0_2
guint             mend_error_policy_get_jitter_ms         (MendErrorPolicy  *self);
MEND_AVAILABLE_IN_0_2
void              mend_error_policy_set_jitter_ms         (MendErrorPolicy  *self,
                                                           guint             jitter_ms);
MEND_AVAILABLE_IN_0_2
const guint      *mend_error_policy_get_delays            (MendErrorPolicy  *self,
                                                           gsize            *n_delays);
MEND_AVAILABLE_IN_0_2
void              mend_error_policy_set_delays            (MendErrorPolicy  *self,
                                                           const guint      *delays,
                                                           gsize             n_delays);
MEND_AVAILABLE_IN_0_2
guint             mend_error_policy_get_retry_after_max_ms (MendErrorPolicy *self);
MEND_AVAILABLE_IN_0_2
void              mend_error_policy_set_retry_after_max_ms (MendErrorPolicy *self,
                                                            guint            retry_after_max_ms);
MEND_AVAILABLE_IN_0_2
guint             mend_error_policy_get_stagger_ms        (MendErrorPolicy  *self);
MEND_AVAILABLE_IN_0_2
void              mend_error_policy_set_stagger_ms        (MendErrorPolicy  *self,
                                                           guint             stagger_ms);
MEND_AVAILABLE_IN_0_2
gboolean          mend_error_policy_get_retry_partial     (MendErrorPolicy  *self);
MEND_AVAILABLE_IN_0_2
void              mend_error_policy_set_retry_partial     (MendErrorPolicy  *self,
                                                           gboolean          retry_partial);
MEND_AVAILABLE_IN_0_2
gboolean          mend_error_policy_get_continue_at_reset (MendErrorPolicy  *self);
MEND_AVAILABLE_IN_0_2
void              mend_error_policy_set_continue_at_reset (MendErrorPolicy  *self,
                                                           gboolean          continue_at_reset);

MEND_AVAILABLE_IN_0_2
gboolean          mend_error_policy_set_schedule_for_reason (MendErrorPolicy  *self,
                                                             MendReason        reason,
                                                             const char       *json,
                                                             GError          **error);
MEND_AVAILABLE_IN_0_2
char             *mend_error_policy_dup_schedule_for_reason (MendErrorPolicy  *self,
                                                             MendReason        reason);

G_END_DECLS
