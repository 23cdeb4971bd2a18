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

G_END_DECLS
