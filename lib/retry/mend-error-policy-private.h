/* mend-error-policy-private.h — MendErrorPolicy's preset for resuming subagents
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "mend-classifier-rules-private.h"
#include "mend-error-policy.h"
#include "mend-failure-private.h"

G_BEGIN_DECLS

/* The turn default of retry-after-max-ms: the horizon MendFailure:kind is
 * made with. */
#define MEND_ERROR_POLICY_DEFAULT_RETRY_AFTER_MAX_MS MEND_FAILURE_DEFAULT_RETRY_AFTER_MAX_MS

/* The bounds of a delay (a day: anything above is a mistake) and of the
 * retries, for the properties and the JSON loader alike. */
#define MEND_ERROR_POLICY_MAX_MS       86400000u
#define MEND_ERROR_POLICY_MAX_RETRIES  1000u

/* The subagent-resume defaults, applied over the policy's values (the
 * "resume" preset of the JSON loader, mend-error-policy-json.c). */
void mend_error_policy_apply_resume_preset (MendErrorPolicy *self);

/* The per-chat offset: a stable amount in [0, stagger-ms) derived from
 * @key (a chat's id), the same for the same key in every run. */
guint        mend_error_policy_get_stagger_for (MendErrorPolicy *self,
                                                const char      *key);

/* Seeds the jitter, so that a test sees the same delays every run. */
void         mend_error_policy_set_seed        (MendErrorPolicy *self,
                                                guint32          seed);

/* The app's rules (mend-error-policy-rules.c), NULL when it added none;
 * set replaces them (NULL for none) and takes a reference. */
MendRuleSet *mend_error_policy_get_rule_set (MendErrorPolicy *self);
void         mend_error_policy_set_rule_set (MendErrorPolicy *self,
                                             MendRuleSet     *rules);

/* What the app's rules make of @failure: TRUE, with the reason and what
 * decided (transfer full), when one of them matches it. The user's Stop
 * is never matched. */
gboolean     mend_error_policy_judge        (MendErrorPolicy  *self,
                                             MendFailure      *failure,
                                             MendReason       *reason,
                                             char            **rule);

/* The app's rules in a policy's JSON ("rules": [{"phrase", "reason",
 * "source"}]): read into a new set (NULL with @error naming the key when
 * malformed), and written. */
MendRuleSet *mend_error_policy_rules_from_json (JsonNode     *node,
                                                const char   *key,
                                                GError      **error);
void         mend_error_policy_rules_to_json   (MendRuleSet  *rules,
                                                JsonBuilder  *builder);

/* The keys of a schedule, in the order of the JSON's. */
typedef enum
{
  MEND_SCHEDULE_MAX_RETRIES   = 1 << 0,
  MEND_SCHEDULE_BASE_DELAY_MS = 1 << 1,
  MEND_SCHEDULE_MAX_DELAY_MS  = 1 << 2,
  MEND_SCHEDULE_MULTIPLIER    = 1 << 3,
  MEND_SCHEDULE_JITTER        = 1 << 4,
  MEND_SCHEDULE_JITTER_MS     = 1 << 5,
  MEND_SCHEDULE_DELAYS        = 1 << 6,
} MendScheduleKeys;

/* Schedules per reason (the JSON's "byReason"): a reason's own sets some
 * keys, and takes the others from the policy as it is when used. The retries allowed
 * after @failure: its reason's own maxRetries, or the policy's. */
guint            mend_error_policy_get_max_retries_for (MendErrorPolicy *self,
                                                        MendFailure     *failure);
/* A new policy whose schedule is @reason's (its own keys over the
 * policy's), with the keys it sets in @given; NULL when it has none. */
MendErrorPolicy *mend_error_policy_new_for_schedule    (MendErrorPolicy *self,
                                                        MendReason       reason,
                                                        guint           *given);
/* Makes the @given keys of @from's schedule @reason's own; NULL: @reason
 * follows the policy. */
void             mend_error_policy_adopt_schedule      (MendErrorPolicy *self,
                                                        MendReason       reason,
                                                        MendErrorPolicy *from,
                                                        guint            given);
/* Drops every reason's own schedule; @defaults: then puts back the
 * default ones (a rate limit's). */
void             mend_error_policy_clear_schedules     (MendErrorPolicy *self,
                                                        gboolean         defaults);

/* A usage limit's reset is waited for this much longer, at random: up
 * to a minute (none with jitter "none", as tests want). */
guint            mend_error_policy_reset_jitter        (MendErrorPolicy *self);

G_END_DECLS
