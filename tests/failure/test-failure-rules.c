/* test-failure-rules.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Pins the precedence MendFailure weighs error text by: a provider's code
 * outranks a wrapper's status, a catch-all code yields to its message's
 * words, a decisive fact outranks both, a tie goes to the reason that does
 * not retry; and what follows
 * from a server's hint: a rate limit that resets beyond the policy's
 * horizon is a limit. Texts are copied from public issue threads (the
 * corpus under tests/data/failures names each source).
 */

#include <string.h>

#include <libmend.h>

typedef struct
{
  const char      *text;
  MendReason       reason;
  MendFailureKind  kind;
} Case;

static void
check_texts (const Case *cases,
             gsize       n)
{
  for (gsize i = 0; i < n; i++)
    {
      MendFailure *failure = mend_failure_new_from_text (cases[i].text);

      if (mend_failure_get_reason (failure) != cases[i].reason)
        {
          g_autofree char *escaped = g_strescape (cases[i].text, NULL);

          g_test_message ("%s: %s, by %s", escaped,
                          mend_reason_to_nick (mend_failure_get_reason (failure)),
                          mend_failure_get_rule (failure));
        }
      g_assert_cmpstr (mend_reason_to_nick (mend_failure_get_reason (failure)), ==,
                       mend_reason_to_nick (cases[i].reason));
      g_assert_cmpstr (mend_failure_kind_to_nick (mend_failure_get_kind (failure)), ==,
                       mend_failure_kind_to_nick (cases[i].kind));
      g_assert_finalize_object (failure);
    }
}

static MendFailure *
failure_from_http (guint       status,
                   const char *header,
                   const char *value,
                   const char *body)
{
  g_autoptr(SoupMessageHeaders) headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  g_autoptr(GBytes) bytes = body ? g_bytes_new (body, strlen (body)) : NULL;

  if (header != NULL)
    soup_message_headers_append (headers, header, value);

  return mend_failure_new_from_http (status, headers, bytes);
}

static void
test_provider_code_outranks_wrapper_status (void)
{
  static const Case cases[] = {
    /* Claude Code's text with a proxy's 400 in front of Anthropic's type. */
    { "API Error: 400 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\","
      "\"message\":\"Overloaded\"}}",
      MEND_REASON_CAPACITY, MEND_FAILURE_TRANSIENT },
    /* A proxy's 500 around Anthropic's invalid_request_error. */
    { "500 {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
      "\"message\":\"prompt is too long: 203052 tokens > 200000 maximum\"}}",
      MEND_REASON_BAD_REQUEST, MEND_FAILURE_PERMANENT },
    /* OpenAI's code inside a 429 a chat UI printed. */
    { "ChatGPT error 429: {\n\"error\": {\n\"message\": \"You exceeded your current "
      "quota, please check your plan and billing details.\",\n\"type\": "
      "\"insufficient_quota\",\n\"param\": null,\n\"code\": \"insufficient_quota\"\n}\n}",
      MEND_REASON_BILLING, MEND_FAILURE_LIMIT },
  };
  g_autoptr(MendFailure) failed_event = NULL;

  check_texts (cases, G_N_ELEMENTS (cases));

  /* A response.failed event on a 200 stream. */
  failed_event = failure_from_http (200, NULL, NULL,
                                    "{\"type\":\"response.failed\",\"response\":{\"status\":\"failed\","
                                    "\"error\":{\"code\":\"server_is_overloaded\",\"message\":"
                                    "\"Our servers are currently overloaded. Please try again later.\"}}}");
  g_assert_cmpint (mend_failure_get_reason (failed_event), ==, MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_failure_get_kind (failed_event), ==, MEND_FAILURE_TRANSIENT);
  g_assert_nonnull (strstr (mend_failure_get_rule (failed_event), "server_is_overloaded"));
}

static void
test_provider_words_outrank_wrapper_status (void)
{
  static const Case cases[] = {
    { "sub-agent error: API error (400): Our servers are currently overloaded. "
      "Please try again later.",
      MEND_REASON_CAPACITY, MEND_FAILURE_TRANSIENT },
    { "Chat error: 502 Bedrock streaming failed: Model access is denied due to IAM "
      "user or service role is not authorized to perform the required AWS "
      "Marketplace actions",
      MEND_REASON_PERMISSION, MEND_FAILURE_PERMANENT },
    { "500 - Token limit (500,000 per day) exceeded. Used: 508,311 tokens. Sign up "
      "at g4f.dev/members.html for higher limits.",
      MEND_REASON_USAGE_LIMIT, MEND_FAILURE_LIMIT },
  };

  check_texts (cases, G_N_ELEMENTS (cases));
}

static void
test_catch_all_code_yields_to_its_message (void)
{
  static const Case cases[] = {
    { "Error: 400 {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
      "\"message\":\"Your credit balance is too low to access the Anthropic API. "
      "Please go to Plans & Billing to upgrade or purchase credits.\"}}",
      MEND_REASON_BILLING, MEND_FAILURE_LIMIT },
    { "litellm.BadRequestError: DeepseekException - {\"error\":{\"message\":"
      "\"Insufficient Balance\",\"type\":\"unknown_error\",\"param\":null,"
      "\"code\":\"invalid_request_error\"}}",
      MEND_REASON_BILLING, MEND_FAILURE_LIMIT },
    { "litellm.APIConnectionError: BedrockException - {\"message\":\"Model access "
      "is denied due to IAM user or service role is not authorized to perform "
      "the required AWS Marketplace actions. If you recently fixed this issue, "
      "try again after 5 minutes.\"}",
      MEND_REASON_PERMISSION, MEND_FAILURE_PERMANENT },
    { "Error code: 404 - {'error': {'message': 'model \"ollama\" not found, try "
      "pulling it first', 'type': 'api_error', 'param': None, 'code': None}}",
      MEND_REASON_BAD_REQUEST, MEND_FAILURE_PERMANENT },
  };

  check_texts (cases, G_N_ELEMENTS (cases));
}

static void
test_tie_goes_to_the_reason_that_does_not_retry (void)
{
  static const Case cases[] = {
    /* Per-minute and per-day quota ids in one Google body. */
    { "429 RESOURCE_EXHAUSTED. {'quotaId': 'GenerateRequestsPerMinutePerProjectPerModel-"
      "FreeTier'}, {'quotaId': 'GenerateRequestsPerDayPerProjectPerModel-FreeTier'}",
      MEND_REASON_USAGE_LIMIT, MEND_FAILURE_LIMIT },
    { "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 "
      "free model requests per day",
      MEND_REASON_USAGE_LIMIT, MEND_FAILURE_LIMIT },
    /* Only per-minute: a rate limit. */
    { "429 RESOURCE_EXHAUSTED. {'quotaId': 'GenerateContentInputTokensPerModelPerMinute-"
      "FreeTier'}",
      MEND_REASON_RATE_LIMIT, MEND_FAILURE_TRANSIENT },
  };

  check_texts (cases, G_N_ELEMENTS (cases));
}

/* Precedence by class: a limit or billing word in any language, a refused
 * credential, a region or verification refusal and a model that is gone
 * outrank a status and a wrapper's words; busy servers and "try again"
 * retry; a timeout outranks the transport word reporting it; aborts are
 * cancellations. Texts from the rules half of the corpus (the case ids
 * name their threads in tests/data/failures). */
static void
test_decisive_facts_outrank_status_and_wrappers (void)
{
  static const Case cases[] = {
    /* zhipu-g001: arrears, sent with a 429. */
    { "Error code: 429, with error text {\"error\":{\"code\":\"1113\",\"message\":"
      "\"您的账户已欠费，请充值后重试。\"}}",
      MEND_REASON_BILLING, MEND_FAILURE_LIMIT },
    /* dashscope-g001: Alibaba's Arrearage words over "Access denied" and a 400. */
    { "com.alibaba.dashscope.exception.ApiException: {\"statusCode\":400,\"message\":"
      "\"Access denied, please make sure your account is in good standing.\",\"code\":\"Arrearage\"}",
      MEND_REASON_BILLING, MEND_FAILURE_LIMIT },
    /* litellm-g013 */
    { "400 Budget has been exceeded! Team=99c74652-6e33-4dbd-93f3-5b545da15ade",
      MEND_REASON_BILLING, MEND_FAILURE_LIMIT },
    /* gemini-g001: a region refusal is permission, over FAILED_PRECONDITION. */
    { "400 FAILED_PRECONDITION. {'error': {'code': 400, 'message': 'User location is not "
      "supported for the API use.', 'status': 'FAILED_PRECONDITION'}}",
      MEND_REASON_PERMISSION, MEND_FAILURE_PERMANENT },
    /* openai-g014: a verification refusal, over BadRequestError and a 400. */
    { "openai.BadRequestError: Error code: 400 : {'error': {'message': 'Your organization must "
      "be verified to stream this model.', 'type': 'invalid_request_error', 'param': 'stream', "
      "'code': 'unsupported_value'}}",
      MEND_REASON_PERMISSION, MEND_FAILURE_PERMANENT },
    /* groq-g006: a gone model inside OpenAI's catch-all sentence. */
    { "An error occurred while processing your request. The model `llama3-groq-70b-8192-tool-use-preview` "
      "has been decommissioned and is no longer supported.",
      MEND_REASON_BAD_REQUEST, MEND_FAILURE_PERMANENT },
    /* openai-g015: a missing model, whatever "do not have access" inside it says. */
    { "openai.error.InvalidRequestError: The model `gtp-4` does not exist or you do not have access to it.",
      MEND_REASON_BAD_REQUEST, MEND_FAILURE_PERMANENT },
    /* azure-g006: a refused key is auth, over "Access denied". */
    { "Azure.RequestFailedException: Access denied due to invalid subscription key or wrong API "
      "endpoint.\n      Status: 401 (PermissionDenied)",
      MEND_REASON_AUTH, MEND_FAILURE_PERMANENT },
    /* ollama-g004 */
    { "Provider Ollama failed: server busy, please try again.  maximum pending requests exceeded",
      MEND_REASON_CAPACITY, MEND_FAILURE_TRANSIENT },
    /* go-net-http-g001 */
    { "http2: server sent GOAWAY and closed the connection; LastStreamID=0, ErrCode=NO_ERROR, debug=\"\"",
      MEND_REASON_TRANSPORT, MEND_FAILURE_TRANSIENT },
    /* undici-g007: the timeout behind "fetch failed". */
    { "fetch failed | Headers Timeout Error",
      MEND_REASON_TIMEOUT, MEND_FAILURE_TRANSIENT },
    /* cancellation-g004 */
    { "Error: This operation was aborted",
      MEND_REASON_CANCELLED, MEND_FAILURE_STOPPED },
    /* fireworks-g001: the longer words speak over "usage limit" inside them. */
    { "{'error': 'Too Many Requests', 'message': 'You have exceeded your usage limits. Please try "
      "again later or contact Fireworks to explore dedicated capacity.'}",
      MEND_REASON_RATE_LIMIT, MEND_FAILURE_TRANSIENT },
  };
  MendFailure *long_wait;

  check_texts (cases, G_N_ELEMENTS (cases));

  /* copilot-g009: a rate limit whose wait is beyond the turn's horizon. */
  long_wait = mend_failure_new_from_text ("Sorry, your request was rate-limited. Please wait 71 "
                                          "minutes before trying again.");
  g_assert_cmpint (mend_failure_get_reason (long_wait), ==, MEND_REASON_RATE_LIMIT);
  g_assert_cmpint (mend_failure_get_retry_after_ms (long_wait), ==, 71 * 60 * 1000);
  g_assert_cmpint (mend_failure_get_kind (long_wait), ==, MEND_FAILURE_LIMIT);
  g_assert_finalize_object (long_wait);
}

static void
test_request_larger_than_the_limit (void)
{
  static const Case cases[] = {
    { "Error code: 429 - {'error': {'message': 'Rate limit reached for model "
      "`llama3-70b-8192` in organization `org_01` on tokens per minute (TPM): "
      "Limit 7000, Used 0, Requested ~12903. Please try again in 50.597142857s.', "
      "'type': 'tokens', 'code': 'rate_limit_exceeded'}}",
      MEND_REASON_BAD_REQUEST, MEND_FAILURE_PERMANENT },
    { "429 Rate limit reached for gpt-4o in organization org-1 on tokens per min "
      "(TPM): Limit 30000, Used 29937, Requested 385. Please try again in 644ms.",
      MEND_REASON_RATE_LIMIT, MEND_FAILURE_TRANSIENT },
  };

  check_texts (cases, G_N_ELEMENTS (cases));
}

/* Groq's per-day bucket: a rate limit with a reset time. Within the resume
 * policy's hour it is a wait; beyond the turn policy's minute it is a limit. */
static void
test_rate_limit_beyond_the_horizon_is_a_limit (void)
{
  MendFailure *failure = mend_failure_new_from_text (
    "429 Rate limit reached for model `llama-3.3-70b-versatile` in organization "
    "`org_1` service tier `on_demand` on tokens per day (TPD): Limit 100000, Used "
    "97050, Requested 3619. Please try again in 9m38.016s.");
  MendErrorPolicy *turn = mend_error_policy_new ();
  MendErrorPolicy *resume = mend_error_policy_new_for_resume ();
  MendFailure *short_wait = mend_failure_new_from_text (
    "Rate limit reached for gpt-4 on tokens per min (TPM). Please try again in 9.816s.");

  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_RATE_LIMIT);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, 578016);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_LIMIT);
  g_assert_cmpint (mend_error_policy_classify (turn, failure), ==, MEND_FAILURE_LIMIT);
  g_assert_cmpint (mend_error_policy_classify (resume, failure), ==, MEND_FAILURE_TRANSIENT);

  g_assert_cmpint (mend_failure_get_retry_after_ms (short_wait), ==, 9816);
  g_assert_cmpint (mend_error_policy_classify (turn, short_wait), ==, MEND_FAILURE_TRANSIENT);

  g_assert_finalize_object (failure);
  g_assert_finalize_object (short_wait);
  g_assert_finalize_object (turn);
  g_assert_finalize_object (resume);
}

static void
test_refused_key_is_never_retried (void)
{
  MendFailure *auth = failure_from_http (401, "x-should-retry", "true",
                                         "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\","
                                         "\"message\":\"invalid x-api-key\"}}");
  MendFailure *permission = failure_from_http (403, "x-should-retry", "true", NULL);
  MendFailure *overloaded = failure_from_http (529, "x-should-retry", "true", NULL);

  g_assert_cmpint (mend_failure_get_kind (auth), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpint (mend_failure_get_kind (permission), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpint (mend_failure_get_kind (overloaded), ==, MEND_FAILURE_TRANSIENT);

  g_assert_finalize_object (auth);
  g_assert_finalize_object (permission);
  g_assert_finalize_object (overloaded);
}

static void
test_hints_are_read_from_bodies_and_wrapped_text (void)
{
  static const struct {
    const char *text;
    gint64      ms;
  } texts[] = {
    { "'Please retry in 25.465784708s.'", 25466 },
    { "Please try\nagain in 1.984999999s. Need more tokens?", 1985 },
    { "Your quota will reset after 2h52m39s.", 10359000 },
    { "\\\"@type\\\": \\\"type.googleapis.com/google.rpc.RetryInfo\\\",\\n "
      "\\\"retryDelay\\\": \\\"26s\\\"", 26000 },
    { "{\"ok\":false,\"error_code\":429,\"parameters\":{\"retry_after\":120}}", 120000 },
    /* A client's own running total is not the server's hint. */
    { "$metadata: {\"httpStatusCode\":429,\"attempts\":3,\"totalRetryDelay\":274}", -1 },
    { "Retrying in 20.387 second(s)...", 20387 },
  };
  MendFailure *body;

  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      MendFailure *failure = mend_failure_new_from_text (texts[i].text);

      g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, texts[i].ms);
      g_assert_finalize_object (failure);
    }

  /* Google's RetryInfo sits in the details, beside the message. */
  body = failure_from_http (429, NULL, NULL,
                            "{\"error\":{\"code\":429,\"message\":\"You exceeded your current quota.\","
                            "\"status\":\"RESOURCE_EXHAUSTED\",\"details\":[{\"@type\":"
                            "\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"26s\"}]}}");
  g_assert_cmpint (mend_failure_get_reason (body), ==, MEND_REASON_RATE_LIMIT);
  g_assert_cmpint (mend_failure_get_retry_after_ms (body), ==, 26000);
  g_assert_finalize_object (body);
}

static void
test_python_reprs_and_broken_json_count (void)
{
  static const Case cases[] = {
    { "API Error: Error code: 529 - {'type': 'error', 'error': {'type': "
      "'overloaded_error', 'message': 'Overloaded'}}",
      MEND_REASON_CAPACITY, MEND_FAILURE_TRANSIENT },
    /* A terminal's wrap left a raw newline inside a JSON string. */
    { "API Error: 401 {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"\n"
      "    message\":\"Invalid OAuth token. The provided token was not found or is\n"
      "    malformed.\"}}",
      MEND_REASON_AUTH, MEND_FAILURE_PERMANENT },
    { "Error invoking the model: ThrottlingException(properties: AWSBedrockRuntime."
      "ThrottlingException.Properties(message: Optional(\"Too many tokens, please "
      "wait before trying again.\")))",
      MEND_REASON_RATE_LIMIT, MEND_FAILURE_TRANSIENT },
  };

  check_texts (cases, G_N_ELEMENTS (cases));
}

static void
test_rule_says_what_decided (void)
{
  MendFailure *code = mend_failure_new_from_text (
    "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}");
  MendFailure *words = mend_failure_new_from_text (
    "Error: The socket connection was closed unexpectedly.");
  MendFailure *status = failure_from_http (503, NULL, NULL, NULL);
  MendFailure *unknown = mend_failure_new_from_text ("something went wrong");
  MendFailure *outranked = mend_failure_new_from_text (
    "sub-agent error: API error (400): Our servers are currently overloaded.");
  GError *error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "Socket I/O timed out");
  MendFailure *gerror = mend_failure_new_from_error (error);
  g_autofree char *property = NULL;

  g_assert_nonnull (strstr (mend_failure_get_rule (code), "overloaded_error"));
  g_assert_nonnull (strstr (mend_failure_get_rule (words), "connection was closed"));
  g_assert_nonnull (strstr (mend_failure_get_rule (status), "503"));
  g_assert_nonnull (strstr (mend_failure_get_rule (unknown), "fails closed"));
  g_assert_nonnull (strstr (mend_failure_get_rule (gerror), "g-io-error-quark"));
  /* It says what it outranked. */
  g_assert_nonnull (strstr (mend_failure_get_rule (outranked), "overloaded"));
  g_assert_nonnull (strstr (mend_failure_get_rule (outranked), "400"));

  g_object_get (code, "rule", &property, NULL);
  g_assert_cmpstr (property, ==, mend_failure_get_rule (code));

  g_error_free (error);
  g_assert_finalize_object (code);
  g_assert_finalize_object (words);
  g_assert_finalize_object (status);
  g_assert_finalize_object (unknown);
  g_assert_finalize_object (outranked);
  g_assert_finalize_object (gerror);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/Failure/precedence/provider-code-outranks-a-wrappers-status",
                   test_provider_code_outranks_wrapper_status);
  g_test_add_func ("/Mend/Failure/precedence/provider-words-outrank-a-wrappers-status",
                   test_provider_words_outrank_wrapper_status);
  g_test_add_func ("/Mend/Failure/precedence/catch-all-code-yields-to-its-message",
                   test_catch_all_code_yields_to_its_message);
  g_test_add_func ("/Mend/Failure/precedence/tie-goes-to-the-reason-that-does-not-retry",
                   test_tie_goes_to_the_reason_that_does_not_retry);
  g_test_add_func ("/Mend/Failure/precedence/decisive-facts-outrank-a-status-and-a-wrappers-words",
                   test_decisive_facts_outrank_status_and_wrappers);
  g_test_add_func ("/Mend/Failure/precedence/request-larger-than-the-whole-limit-is-a-bad-request",
                   test_request_larger_than_the_limit);
  g_test_add_func ("/Mend/Failure/rate-limit-beyond-the-horizon-is-a-limit",
                   test_rate_limit_beyond_the_horizon_is_a_limit);
  g_test_add_func ("/Mend/Failure/refused-key-is-never-retried-whatever-the-header-says",
                   test_refused_key_is_never_retried);
  g_test_add_func ("/Mend/Failure/hints/read-from-bodies-and-wrapped-text",
                   test_hints_are_read_from_bodies_and_wrapped_text);
  g_test_add_func ("/Mend/Failure/text/python-reprs-and-broken-json-count",
                   test_python_reprs_and_broken_json_count);
  g_test_add_func ("/Mend/Failure/rule-says-what-decided",
                   test_rule_says_what_decided);

  return g_test_run ();
}
