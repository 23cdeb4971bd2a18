/* test-failure.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Pins MendFailure's default classification: reason, kind, status,
 * retry-after-ms and api-error-type for error shapes seen in the wild
 * (Anthropic, OpenAI and Google error bodies, Claude Code and Codex CLI
 * text, gateways, Node and GIO transport errors).
 */

#include <string.h>

#include <libmend.h>

#include "mend-failure-private.h"

/* ------------------------------------------------------------------------ */
/* Vectors                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct
{
  MendReason       reason;
  MendFailureKind  kind;
  guint            status;
  gint64           retry_after_ms;  /* -1: no hint */
  const char      *api_error_type;  /* NULL: none */
} Expect;

#define E(r, k, s, ms, api) \
  { MEND_REASON_##r, MEND_FAILURE_##k, s, ms, api }

typedef struct
{
  const char *text;
  Expect      expect;
} TextVector;

typedef struct
{
  const char *name;
  guint       status;
  const char *headers[7];       /* name, value pairs, NULL-terminated */
  const char *body;             /* NULL: no body */
  Expect      expect;
  const char *message_contains; /* NULL: not checked */
} HttpVector;

typedef enum
{
  DOMAIN_IO,
  DOMAIN_RESOLVER,
  DOMAIN_TLS,
  DOMAIN_SOUP,
  DOMAIN_AGENT,  /* a domain libmend does not know: read as text */
} Domain;

typedef struct
{
  Domain      domain;
  int         code;
  const char *message;
  Expect      expect;
} ErrorVector;

/* Anthropic API error bodies, as the API sends them. */
#define ANTHROPIC(type, msg) \
  "{\"type\":\"error\",\"error\":{\"type\":\"" type "\",\"message\":\"" msg "\"}}"

#define ANTHROPIC_OVERLOADED ANTHROPIC ("overloaded_error", "Overloaded")
#define ANTHROPIC_CREDIT \
  "Your credit balance is too low to access the Anthropic API. " \
  "Please go to Plans & Billing to upgrade or purchase credits."
#define ANTHROPIC_SPEND \
  "You have reached your specified API usage limits. " \
  "You will regain access on 2025-11-01 at 00:00 UTC."
#define PROMPT_TOO_LONG "prompt is too long: 210000 tokens > 200000 maximum"
#define GATEWAY_EXHAUSTED \
  "no non-exhausted claude accounts available; next account frees up in " \
  "47m (retry after 2820s) (error type server_error, HTTP 503)"

#define OPENAI_QUOTA \
  "{\"error\":{\"message\":\"You exceeded your current quota, please check " \
  "your plan and billing details. For more information on this error, read " \
  "the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.\"," \
  "\"type\":\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}"

#define OPENAI_TPM \
  "Rate limit reached for gpt-4o in organization org-x1y2z3 on tokens per " \
  "min (TPM): Limit 30000, Used 29500, Requested 1200. Please try again in " \
  "1.5s. Visit https://platform.openai.com/account/rate-limits to learn more."

#define GOOGLE_UNAVAILABLE \
  "{\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please try " \
  "again later.\",\"status\":\"UNAVAILABLE\"}}"

#define GOOGLE_KEY_INVALID \
  "{\"error\":{\"code\":400,\"message\":\"API key not valid. Please pass a " \
  "valid API key.\",\"status\":\"INVALID_ARGUMENT\"}}"

/* Claude Code, Codex, gateways and Anthropic errors as agent text. */
static const TextVector anthropic_text_vectors[] = {
  { "API Error: 529 " ANTHROPIC_OVERLOADED,
    E (CAPACITY, TRANSIENT, 529, -1, "overloaded_error") },
  { "529 " ANTHROPIC_OVERLOADED,
    E (CAPACITY, TRANSIENT, 529, -1, "overloaded_error") },
  { ANTHROPIC_OVERLOADED,
    E (CAPACITY, TRANSIENT, 0, -1, "overloaded_error") },
  { "API Error: 500 " ANTHROPIC ("api_error", "Internal server error"),
    E (SERVER, TRANSIENT, 500, -1, "api_error") },
  { "API Error: 500 " ANTHROPIC ("api_error", "Overloaded"),
    E (CAPACITY, TRANSIENT, 500, -1, "api_error") },
  { "API Error: 401 " ANTHROPIC ("authentication_error", "invalid x-api-key"),
    E (AUTH, PERMANENT, 401, -1, "authentication_error") },
  { "API Error: 401 " ANTHROPIC ("authentication_error",
                                 "OAuth token has expired. Please obtain a new "
                                 "token or refresh your existing token."),
    E (AUTH, PERMANENT, 401, -1, "authentication_error") },
  { "API Error: 403 " ANTHROPIC ("permission_error",
                                 "Your API key does not have permission to use "
                                 "the specified resource."),
    E (PERMISSION, PERMANENT, 403, -1, "permission_error") },
  { "API Error: 404 " ANTHROPIC ("not_found_error", "model: claude-opus-9"),
    E (BAD_REQUEST, PERMANENT, 404, -1, "not_found_error") },
  { "API Error: 413 " ANTHROPIC ("request_too_large",
                                 "Request exceeds the maximum allowed number of bytes."),
    E (BAD_REQUEST, PERMANENT, 413, -1, "request_too_large") },
  { "API Error: 400 " ANTHROPIC ("invalid_request_error", PROMPT_TOO_LONG),
    E (BAD_REQUEST, PERMANENT, 400, -1, "invalid_request_error") },
  { "API Error: 429 " ANTHROPIC ("rate_limit_error",
                                 "This request would exceed the rate limit for "
                                 "your organization of 40,000 input tokens per "
                                 "minute. For details, refer to: "
                                 "https://docs.anthropic.com/en/api/rate-limits. "
                                 "You can see the response headers for current "
                                 "usage. Please reduce the prompt length or the "
                                 "maximum tokens requested, or try again later."),
    E (RATE_LIMIT, TRANSIENT, 429, -1, "rate_limit_error") },
  { "API Error: 504 " ANTHROPIC ("timeout_error", "Request timed out"),
    E (TIMEOUT, TRANSIENT, 504, -1, "timeout_error") },
  { "API Error: Connection error.",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "API Error: Request timed out.",
    E (TIMEOUT, TRANSIENT, 0, -1, NULL) },
  { "Request timed out.",
    E (TIMEOUT, TRANSIENT, 0, -1, NULL) },
  { "Invalid API key · Please run /login",
    E (AUTH, PERMANENT, 0, -1, NULL) },
  { "invalid x-api-key",
    E (AUTH, PERMANENT, 0, -1, NULL) },
  { PROMPT_TOO_LONG,
    E (BAD_REQUEST, PERMANENT, 0, -1, NULL) },
  { "[Request interrupted by user]",
    E (CANCELLED, STOPPED, 0, -1, NULL) },
  /* The Anthropic SDK's APIUserAbortError. */
  { "Request was aborted.",
    E (CANCELLED, STOPPED, 0, -1, NULL) },
  { "The model returned an empty response.",
    E (EMPTY, TRANSIENT, 0, -1, NULL) },
  { "API Error: 503 " GATEWAY_EXHAUSTED,
    E (CAPACITY, TRANSIENT, 503, 2820000, NULL) },
  { "API Error: 503 {\"error\":{\"message\":\"no non-exhausted claude accounts "
    "available\",\"type\":\"server_error\"}}",
    E (CAPACITY, TRANSIENT, 503, -1, "server_error") },
  { "API Error: 503 upstream connect error or disconnect/reset before headers. "
    "reset reason: overflow",
    E (CAPACITY, TRANSIENT, 503, -1, NULL) },
  { "upstream connect error or disconnect/reset before headers. reset reason: "
    "connection failure",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 "
    "Bad Gateway</h1></center><hr><center>cloudflare</center></body></html>",
    E (SERVER, TRANSIENT, 502, -1, NULL) },
  { "504 Gateway Timeout",
    E (TIMEOUT, TRANSIENT, 504, -1, NULL) },
  { "Error: 408 Request Timeout",
    E (TIMEOUT, TRANSIENT, 408, -1, NULL) },
  { "503 Service Unavailable",
    E (CAPACITY, TRANSIENT, 503, -1, NULL) },
  { "Service Unavailable",
    E (CAPACITY, TRANSIENT, 0, -1, NULL) },
  { "Error: 401 Unauthorized",
    E (AUTH, PERMANENT, 401, -1, NULL) },
  { "429 Too Many Requests",
    E (RATE_LIMIT, TRANSIENT, 429, -1, NULL) },
  { "499 Client Closed Request",
    E (CANCELLED, STOPPED, 499, -1, NULL) },
};

/* OpenAI and Google error bodies and SDK messages, as agent text. */
static const TextVector openai_google_text_vectors[] = {
  { "{\"error\":{\"message\":\"Incorrect API key provided: sk-abc***xyz. You can "
    "find your API key at https://platform.openai.com/account/api-keys.\","
    "\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"invalid_api_key\"}}",
    E (AUTH, PERMANENT, 0, -1, "invalid_request_error") },
  { "{\"error\":{\"message\":\"This model's maximum context length is 128000 "
    "tokens. However, your messages resulted in 130000 tokens. Please reduce "
    "the length of the messages.\",\"type\":\"invalid_request_error\","
    "\"param\":\"messages\",\"code\":\"context_length_exceeded\"}}",
    E (BAD_REQUEST, PERMANENT, 0, -1, "invalid_request_error") },
  { "{\"error\":{\"message\":\"Rate limit reached for gpt-4 in organization "
    "org-x1y2z3 on tokens per min. Limit: 10000 / min. Please try again in "
    "6ms.\",\"type\":\"tokens\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}",
    E (RATE_LIMIT, TRANSIENT, 0, 6, "tokens") },
  { "{\"error\":{\"message\":\"The server had an error while processing your "
    "request. Sorry about that!\",\"type\":\"server_error\",\"param\":null,"
    "\"code\":null}}",
    E (SERVER, TRANSIENT, 0, -1, "server_error") },
  { "{\"error\":{\"message\":\"That model is currently overloaded with other "
    "requests. You can retry your request, or contact us through our help "
    "center at help.openai.com if the error persists.\",\"type\":\"server_error\","
    "\"param\":null,\"code\":null}}",
    E (CAPACITY, TRANSIENT, 0, -1, "server_error") },
  { "The engine is currently overloaded, please try again later",
    E (CAPACITY, TRANSIENT, 0, -1, NULL) },
  { OPENAI_TPM,
    E (RATE_LIMIT, TRANSIENT, 0, 1500, NULL) },
  /* Azure OpenAI: a per-minute rate limit; "quota" is only in the URL. */
  { "Requests to the ChatCompletions_Create Operation under Azure OpenAI API "
    "version 2024-02-01 have exceeded token rate limit of your current OpenAI "
    "S0 pricing tier. Please retry after 6 seconds. Please go here: "
    "https://aka.ms/oai/quotaincrease if you would like to further increase "
    "the default rate limit.",
    E (RATE_LIMIT, TRANSIENT, 0, 6000, NULL) },
  /* OpenAI free-tier RPM limit: a rate limit that mentions billing. */
  { "Rate limit reached for default-gpt-3.5-turbo in organization org-x1y2z3 "
    "on requests per min. Limit: 3 / min. Please try again in 20s. Contact us "
    "through our help center at help.openai.com if you continue to have "
    "issues. Please add a payment method to your account to increase your "
    "rate limit. Visit https://platform.openai.com/account/billing to add a "
    "payment method.",
    E (RATE_LIMIT, TRANSIENT, 0, 20000, NULL) },
  { GOOGLE_UNAVAILABLE,
    E (CAPACITY, TRANSIENT, 503, -1, "UNAVAILABLE") },
  { "{\"error\":{\"code\":429,\"message\":\"Resource exhausted. Please try again "
    "later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/"
    "docs/error-code-429 for more details.\",\"status\":\"RESOURCE_EXHAUSTED\"}}",
    E (RATE_LIMIT, TRANSIENT, 429, -1, "RESOURCE_EXHAUSTED") },
  { GOOGLE_KEY_INVALID,
    E (AUTH, PERMANENT, 400, -1, "INVALID_ARGUMENT") },
  { "Too Many Requests",
    E (RATE_LIMIT, TRANSIENT, 0, -1, NULL) },
};

/* Node (undici, net, dns) and curl-style transport errors. */
static const TextVector transport_text_vectors[] = {
  { "Connection error: ECONNRESET",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "fetch failed",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "TypeError: fetch failed",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "socket hang up",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "getaddrinfo EAI_AGAIN api.anthropic.com",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "connect ECONNREFUSED 127.0.0.1:8080",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "read ECONNRESET",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "write EPIPE",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "Error [ERR_STREAM_PREMATURE_CLOSE]: Premature close",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "SocketError: other side closed",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "Client network socket disconnected before secure TLS connection was "
    "established",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "connect ETIMEDOUT 160.79.104.10:443",
    E (TIMEOUT, TRANSIENT, 0, -1, NULL) },
  { "AbortError: The operation was aborted due to timeout",
    E (TIMEOUT, TRANSIENT, 0, -1, NULL) },
  { "curl: (56) Recv failure: Connection reset by peer",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  /* A name that does not resolve is not a blip. */
  { "getaddrinfo ENOTFOUND api.anthropic.con",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
};

/* Usage, quota, billing and spend limits, whatever else the text says. */
static const TextVector usage_text_vectors[] = {
  { "You've hit your usage limit · resets 3pm",
    E (USAGE_LIMIT, LIMIT, 0, -1, NULL) },
  { "Claude AI usage limit reached|1760000000",
    E (USAGE_LIMIT, LIMIT, 0, -1, NULL) },
  { "Claude usage limit reached. Your limit will reset at 3pm (Europe/Paris).",
    E (USAGE_LIMIT, LIMIT, 0, -1, NULL) },
  { "5-hour limit reached ∙ resets 3pm",
    E (USAGE_LIMIT, LIMIT, 0, -1, NULL) },
  { ANTHROPIC_CREDIT,
    E (BILLING, LIMIT, 0, -1, NULL) },
  { "API Error: 400 " ANTHROPIC ("invalid_request_error", ANTHROPIC_CREDIT),
    E (BILLING, LIMIT, 400, -1, "invalid_request_error") },
  /* Anthropic's spend limit arrives as a 429 rate_limit_error. */
  { "API Error: 429 " ANTHROPIC ("rate_limit_error", ANTHROPIC_SPEND),
    E (USAGE_LIMIT, LIMIT, 429, -1, "rate_limit_error") },
  { "Rate limit reached: you've hit your usage limit for Claude Pro.",
    E (USAGE_LIMIT, LIMIT, 0, -1, NULL) },
  { "429 You exceeded your current quota, please check your plan and billing "
    "details.",
    E (BILLING, LIMIT, 429, -1, NULL) },
  { OPENAI_QUOTA,
    E (BILLING, LIMIT, 0, -1, "insufficient_quota") },
  /* OpenRouter: a per-day allowance worded as a rate limit. */
  { "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 "
    "free model requests per day",
    E (USAGE_LIMIT, LIMIT, 0, -1, NULL) },
  /* Codex CLI; the wait is 2 days 3 hours 12 minutes. */
  { "You've hit your usage limit. Upgrade to Pro "
    "(https://openai.com/chatgpt/pricing) or try again in 2 days 3 hours 12 "
    "minutes.",
    E (USAGE_LIMIT, LIMIT, 0, G_GINT64_CONSTANT (184320000), NULL) },
};

/* A status inside text counts only as a whole number; nothing recognizable
 * fails closed. */
/* Classes, not phrases: a word of a family with its evidence close by. */
static const TextVector family_text_vectors[] = {
  { "Your prepaid credits are depleted.",
    E (BILLING, LIMIT, 0, -1, NULL) },
  { "You ran out of credits for this billing period",
    E (BILLING, LIMIT, 0, -1, NULL) },
  { "You have 0 messages left on the free plan",
    E (USAGE_LIMIT, LIMIT, 0, -1, NULL) },
  { "Error 429: the monthly token allowance of your team is used up",
    E (USAGE_LIMIT, LIMIT, 429, -1, NULL) },
  { "您的免费额度已用完",
    E (USAGE_LIMIT, LIMIT, 0, -1, NULL) },
  { "今日调用次数已达上限",
    E (USAGE_LIMIT, LIMIT, 0, -1, NULL) },
  /* The window decides between the limits. */
  { "Limit of 100 requests per minute exceeded",
    E (RATE_LIMIT, TRANSIENT, 0, -1, NULL) },
  { "Quota exceeded for metric requests, limit: 10. Please retry in 20s.",
    E (RATE_LIMIT, TRANSIENT, 0, 20000, NULL) },
  { "Daily request limit of 1000 reached",
    E (USAGE_LIMIT, LIMIT, 0, -1, NULL) },
  /* Auth, permission, a missing model. */
  { "Error: the API key has expired",
    E (AUTH, PERMANENT, 0, -1, NULL) },
  { "Your organization has been suspended for violating the usage policy",
    E (PERMISSION, PERMANENT, 0, -1, NULL) },
  { "This service is not available in your region",
    E (PERMISSION, PERMANENT, 0, -1, NULL) },
  { "API Error: 500 {\"error\":{\"type\":\"api_error\",\"message\":\"model 'gpt-x' not found\"}}",
    E (BAD_REQUEST, PERMANENT, 500, -1, "api_error") },
  /* A wrapper's catch-all yields to the detail inside it. */
  { "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32603,\"message\":\"Internal error\","
    "\"data\":\"unsupported option: temperature\"}}",
    E (BAD_REQUEST, PERMANENT, 0, -1, NULL) },
  { "Internal server error: invalid request",
    E (BAD_REQUEST, PERMANENT, 0, -1, NULL) },
  /* Empty answers and aborts in other words. */
  { "The assistant returned no content",
    E (EMPTY, TRANSIENT, 0, -1, NULL) },
  { "模型返回为空",
    E (EMPTY, TRANSIENT, 0, -1, NULL) },
  { "The request was aborted by the caller",
    E (CANCELLED, STOPPED, 0, -1, NULL) },
  { "请求已取消",
    E (CANCELLED, STOPPED, 0, -1, NULL) },
};

static const TextVector whole_number_text_vectors[] = {
  { "context used 15000 tokens",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  { "timeout after 5030ms",
    E (TIMEOUT, TRANSIENT, 0, -1, NULL) },
  { "Processed 1,503 items before the error",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  { "job 5000 failed",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  { "version 2.503 of the tool exited",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  { "error503",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  { "upstream said 503.",
    E (CAPACITY, TRANSIENT, 503, -1, NULL) },
  { "upstream returned 529, giving up",
    E (CAPACITY, TRANSIENT, 529, -1, NULL) },
  { "AxiosError: Request failed with status code 503",
    E (CAPACITY, TRANSIENT, 503, -1, NULL) },
  { "HTTP/1.1 503",
    E (CAPACITY, TRANSIENT, 503, -1, NULL) },
  { "status=529",
    E (CAPACITY, TRANSIENT, 529, -1, NULL) },
  { "something went wrong",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  { "   ",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  { "",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  { NULL,
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
};

static const TextVector case_text_vectors[] = {
  { "OVERLOADED",
    E (CAPACITY, TRANSIENT, 0, -1, NULL) },
  { "Overloaded",
    E (CAPACITY, TRANSIENT, 0, -1, NULL) },
  { "CONNECTION ERROR: econnreset",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { "YOU'VE HIT YOUR USAGE LIMIT",
    E (USAGE_LIMIT, LIMIT, 0, -1, NULL) },
  { "INVALID X-API-KEY",
    E (AUTH, PERMANENT, 0, -1, NULL) },
  { "Rate Limited, Try Again In 250MS",
    E (RATE_LIMIT, TRANSIENT, 0, 250, NULL) },
};

static const TextVector hint_text_vectors[] = {
  { "Overloaded (retry after 2820s)",
    E (CAPACITY, TRANSIENT, 0, 2820000, NULL) },
  { "Rate limit reached. Please try again in 1.5s.",
    E (RATE_LIMIT, TRANSIENT, 0, 1500, NULL) },
  { "rate limited, try again in 250ms",
    E (RATE_LIMIT, TRANSIENT, 0, 250, NULL) },
  { "Service Unavailable, retry in 2m",
    E (CAPACITY, TRANSIENT, 0, 120000, NULL) },
};

/* HTTP responses. */
static const HttpVector http_vectors[] = {
  { "503, no body", 503, { NULL }, NULL,
    E (CAPACITY, TRANSIENT, 503, -1, NULL), NULL },
  { "529 overloaded_error", 529, { NULL }, ANTHROPIC_OVERLOADED,
    E (CAPACITY, TRANSIENT, 529, -1, "overloaded_error"), "Overloaded" },
  { "429 rate_limit_error + Retry-After 7", 429, { "Retry-After", "7", NULL },
    ANTHROPIC ("rate_limit_error", "Number of request tokens has exceeded your "
               "per-minute rate limit"),
    E (RATE_LIMIT, TRANSIENT, 429, 7000, "rate_limit_error"), "per-minute" },
  { "429, no body", 429, { NULL }, NULL,
    E (RATE_LIMIT, TRANSIENT, 429, -1, NULL), NULL },
  { "408, no body", 408, { NULL }, NULL,
    E (TIMEOUT, TRANSIENT, 408, -1, NULL), NULL },
  { "504 HTML", 504, { NULL },
    "<html><head><title>504 Gateway Time-out</title></head></html>",
    E (TIMEOUT, TRANSIENT, 504, -1, NULL), "504 Gateway Time-out" },
  { "500 api_error", 500, { NULL }, ANTHROPIC ("api_error", "Internal server error"),
    E (SERVER, TRANSIENT, 500, -1, "api_error"), "Internal server error" },
  { "502 HTML", 502, { NULL },
    "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n</html>",
    E (SERVER, TRANSIENT, 502, -1, NULL), "502 Bad Gateway" },
  { "401 authentication_error", 401, { NULL },
    ANTHROPIC ("authentication_error", "invalid x-api-key"),
    E (AUTH, PERMANENT, 401, -1, "authentication_error"), "invalid x-api-key" },
  { "403 permission_error", 403, { NULL },
    ANTHROPIC ("permission_error", "Your API key does not have permission to use "
               "the specified resource."),
    E (PERMISSION, PERMANENT, 403, -1, "permission_error"), "permission" },
  { "400 prompt too long", 400, { NULL },
    ANTHROPIC ("invalid_request_error", PROMPT_TOO_LONG),
    E (BAD_REQUEST, PERMANENT, 400, -1, "invalid_request_error"), PROMPT_TOO_LONG },
  { "404 not_found_error", 404, { NULL },
    ANTHROPIC ("not_found_error", "model: claude-opus-9"),
    E (BAD_REQUEST, PERMANENT, 404, -1, "not_found_error"), NULL },
  { "404 plain text", 404, { NULL }, "Not Found",
    E (BAD_REQUEST, PERMANENT, 404, -1, NULL), "Not Found" },
  { "413 HTML from the edge", 413, { NULL },
    "<html><head><title>413 Request Entity Too Large</title></head></html>",
    E (BAD_REQUEST, PERMANENT, 413, -1, NULL), NULL },
  { "422 validation error", 422, { NULL },
    "{\"detail\":[{\"loc\":[\"body\",\"model\"],\"msg\":\"field required\","
    "\"type\":\"value_error.missing\"}]}",
    E (BAD_REQUEST, PERMANENT, 422, -1, NULL), NULL },
  { "402 OpenRouter insufficient credits", 402, { NULL },
    "{\"error\":{\"message\":\"Insufficient credits. Add more using "
    "https://openrouter.ai/credits\",\"code\":402}}",
    E (BILLING, LIMIT, 402, -1, NULL), "Insufficient credits" },
  { "499", 499, { NULL }, NULL,
    E (CANCELLED, STOPPED, 499, -1, NULL), NULL },
  { "409 conflict is retried as the SDKs do", 409, { NULL }, NULL,
    E (SERVER, TRANSIENT, 409, -1, NULL), NULL },
  { "520 Cloudflare unknown error", 520, { NULL }, NULL,
    E (SERVER, TRANSIENT, 520, -1, NULL), NULL },
  { "524 Cloudflare timeout", 524, { NULL }, NULL,
    E (TIMEOUT, TRANSIENT, 524, -1, NULL), NULL },
  { "500 saying overloaded_error", 500, { NULL }, ANTHROPIC_OVERLOADED,
    E (CAPACITY, TRANSIENT, 500, -1, "overloaded_error"), NULL },
  { "200 carrying an overloaded_error body", 200, { NULL }, ANTHROPIC_OVERLOADED,
    E (CAPACITY, TRANSIENT, 200, -1, "overloaded_error"), NULL },
  { "503 malformed JSON", 503, { NULL },
    "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_er",
    E (CAPACITY, TRANSIENT, 503, -1, NULL),
    "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_er" },
  { "503 Google UNAVAILABLE", 503, { NULL }, GOOGLE_UNAVAILABLE,
    E (CAPACITY, TRANSIENT, 503, -1, "UNAVAILABLE"), "overloaded" },
  { "503 gateway text with a retry hint", 503, { NULL }, GATEWAY_EXHAUSTED,
    E (CAPACITY, TRANSIENT, 503, 2820000, NULL), "no non-exhausted" },
  { "429 Vertex RESOURCE_EXHAUSTED", 429, { NULL },
    "{\"error\":{\"code\":429,\"message\":\"Resource exhausted. Please try "
    "again later.\",\"status\":\"RESOURCE_EXHAUSTED\"}}",
    E (RATE_LIMIT, TRANSIENT, 429, -1, "RESOURCE_EXHAUSTED"), NULL },
  /* Google words its per-minute quota like a plan's: without a per-day
   * quota id, gemini-cli (googleQuotaErrors.ts) retries a 429. */
  { "429 Gemini quota without quota details", 429, { NULL },
    "{\"error\":{\"code\":429,\"message\":\"You exceeded your current quota, "
    "please check your plan and billing details. For more information on this "
    "error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\","
    "\"status\":\"RESOURCE_EXHAUSTED\"}}",
    E (RATE_LIMIT, TRANSIENT, 429, -1, "RESOURCE_EXHAUSTED"), NULL },
  /* The same words as plain text with a wait, as the Gemini CLI passes
   * them over ACP (code 429); without the wait they are a usage limit
   * ("429 quota as plain text" below). */
  { "429 Gemini quota as text with a suggested retry", 429, { NULL },
    "You exceeded your current quota, please check your plan and billing details. "
    "For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n"
    "Suggested retry after 2s.",
    E (RATE_LIMIT, TRANSIENT, 429, 2000, NULL), "current quota" },
  { "429 OpenAI TPM, hint in the message", 429, { NULL },
    "{\"error\":{\"message\":\"" OPENAI_TPM "\",\"type\":\"tokens\","
    "\"param\":null,\"code\":\"rate_limit_exceeded\"}}",
    E (RATE_LIMIT, TRANSIENT, 429, 1500, "tokens"), NULL },
  { "400 Google API key not valid", 400, { NULL }, GOOGLE_KEY_INVALID,
    E (AUTH, PERMANENT, 400, -1, "INVALID_ARGUMENT"), "API key not valid" },
  { "200, empty body", 200, { NULL }, "",
    E (EMPTY, TRANSIENT, 200, -1, NULL), NULL },
  { "200, no body", 200, { NULL }, NULL,
    E (EMPTY, TRANSIENT, 200, -1, NULL), NULL },
  { "204", 204, { NULL }, NULL,
    E (EMPTY, TRANSIENT, 204, -1, NULL), NULL },
};

static const HttpVector http_usage_vectors[] = {
  { "429 OpenAI insufficient_quota", 429, { NULL }, OPENAI_QUOTA,
    E (BILLING, LIMIT, 429, -1, "insufficient_quota"), "current quota" },
  { "429 OpenAI insufficient_quota with x-should-retry true", 429,
    { "x-should-retry", "true", "Retry-After", "20", NULL }, OPENAI_QUOTA,
    E (BILLING, LIMIT, 429, 20000, "insufficient_quota"), NULL },
  { "429 Anthropic spend limit as rate_limit_error", 429, { NULL },
    ANTHROPIC ("rate_limit_error", ANTHROPIC_SPEND),
    E (USAGE_LIMIT, LIMIT, 429, -1, "rate_limit_error"), "usage limits" },
  { "429 quota as plain text", 429, { NULL },
    "You exceeded your current quota, please check your plan and billing details.",
    E (BILLING, LIMIT, 429, -1, NULL), "current quota" },
  { "400 credit balance too low", 400, { NULL },
    ANTHROPIC ("invalid_request_error", ANTHROPIC_CREDIT),
    E (BILLING, LIMIT, 400, -1, "invalid_request_error"), "credit balance" },
  { "402 billing_error", 402, { NULL },
    ANTHROPIC ("billing_error", "Your organization has an unpaid invoice."),
    E (BILLING, LIMIT, 402, -1, "billing_error"), NULL },
  { "402, no body", 402, { NULL }, NULL,
    E (BILLING, LIMIT, 402, -1, NULL), NULL },
};

static const HttpVector http_header_vectors[] = {
  { "400 with x-should-retry true", 400, { "x-should-retry", "true", NULL },
    ANTHROPIC ("invalid_request_error", "Request was malformed"),
    E (BAD_REQUEST, TRANSIENT, 400, -1, "invalid_request_error"), NULL },
  { "503 with x-should-retry false", 503, { "x-should-retry", "false", NULL },
    NULL,
    E (CAPACITY, PERMANENT, 503, -1, NULL), NULL },
  { "500 with x-should-retry false", 500, { "x-should-retry", "false", NULL },
    ANTHROPIC ("api_error", "Internal server error"),
    E (SERVER, PERMANENT, 500, -1, "api_error"), NULL },
  { "529 with x-should-retry true", 529, { "x-should-retry", "true", NULL },
    ANTHROPIC_OVERLOADED,
    E (CAPACITY, TRANSIENT, 529, -1, "overloaded_error"), NULL },
  { "429 retry-after-ms 1500", 429, { "retry-after-ms", "1500", NULL }, NULL,
    E (RATE_LIMIT, TRANSIENT, 429, 1500, NULL), NULL },
  { "503 Retry-After 7", 503, { "Retry-After", "7", NULL }, NULL,
    E (CAPACITY, TRANSIENT, 503, 7000, NULL), NULL },
  { "429 retry-after-ms wins over Retry-After", 429,
    { "Retry-After", "7", "retry-after-ms", "1500", NULL }, NULL,
    E (RATE_LIMIT, TRANSIENT, 429, 1500, NULL), NULL },
  { "429 retry-after-ms wins over a hint in the body", 429,
    { "retry-after-ms", "1500", NULL }, "Too many requests, retry after 9s",
    E (RATE_LIMIT, TRANSIENT, 429, 1500, NULL), NULL },
  { "503 Retry-After that is neither seconds nor a date", 503,
    { "Retry-After", "soon", NULL }, NULL,
    E (CAPACITY, TRANSIENT, 503, -1, NULL), NULL },
};

static const ErrorVector error_vectors[] = {
  { DOMAIN_IO, G_IO_ERROR_CANCELLED, "Operation was cancelled",
    E (CANCELLED, STOPPED, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_TIMED_OUT, "Socket I/O timed out",
    E (TIMEOUT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_CONNECTION_REFUSED,
    "Could not connect to api.anthropic.com: Connection refused",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_CONNECTION_CLOSED,
    "Error receiving data: Connection reset by peer",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_HOST_UNREACHABLE,
    "Could not connect to 160.79.104.10: No route to host",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_NETWORK_UNREACHABLE,
    "Could not connect to 160.79.104.10: Network is unreachable",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_PARTIAL_INPUT, "Unexpected end of stream",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_BROKEN_PIPE, "Error sending data: Broken pipe",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_PERMISSION_DENIED,
    "Error opening file /home/u/.claude/.credentials.json: Permission denied",
    E (PERMISSION, PERMANENT, 0, -1, NULL) },
  { DOMAIN_RESOLVER, G_RESOLVER_ERROR_TEMPORARY_FAILURE,
    "Error resolving “api.anthropic.com”: Temporary failure in name resolution",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_RESOLVER, G_RESOLVER_ERROR_NOT_FOUND,
    "Error resolving “api.anthropic.con”: Name or service not known",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  { DOMAIN_TLS, G_TLS_ERROR_EOF, "TLS connection closed unexpectedly",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_TLS, G_TLS_ERROR_BAD_CERTIFICATE, "Unacceptable TLS certificate",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  { DOMAIN_SOUP, SOUP_SESSION_ERROR_PARSING, "Could not parse HTTP response",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_SOUP, SOUP_SESSION_ERROR_TOO_MANY_REDIRECTS, "Too many redirects",
    E (BAD_REQUEST, PERMANENT, 0, -1, NULL) },
  /* A code that decides is read whatever the language of its text. */
  { DOMAIN_IO, G_IO_ERROR_PARTIAL_INPUT, "Die Verbindung wurde unerwartet beendet",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_TLS, G_TLS_ERROR_BAD_CERTIFICATE, "无法接受的 TLS 证书",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_PROXY_NEED_AUTH, "HTTP proxy authentication required",
    E (AUTH, PERMANENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_PROXY_AUTH_FAILED, "HTTP proxy authentication failed",
    E (AUTH, PERMANENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_PROXY_NOT_ALLOWED, "HTTP proxy connection not allowed",
    E (PERMISSION, PERMANENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_PROXY_FAILED, "HTTP proxy connection failed: 502",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_TLS, G_TLS_ERROR_CERTIFICATE_REQUIRED, "Server required TLS certificate",
    E (AUTH, PERMANENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_HOST_NOT_FOUND, "Host not found",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  /* G_IO_ERROR_FAILED is generic: libsoup's own HTTP/2 text decides, and
   * a translated text says nothing. */
  { DOMAIN_IO, G_IO_ERROR_FAILED, "HTTP/2 Error: ENHANCE_YOUR_CALM",
    E (TRANSPORT, TRANSIENT, 0, -1, NULL) },
  { DOMAIN_IO, G_IO_ERROR_FAILED, "Der Vorgang ist fehlgeschlagen",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
  { DOMAIN_AGENT, 1, "API Error: 529 " ANTHROPIC_OVERLOADED,
    E (CAPACITY, TRANSIENT, 529, -1, "overloaded_error") },
  { DOMAIN_AGENT, 2, "You've hit your usage limit · resets 3pm",
    E (USAGE_LIMIT, LIMIT, 0, -1, NULL) },
  { DOMAIN_AGENT, 3, "Connection error: ECONNRESET (retry after 3s)",
    E (TRANSPORT, TRANSIENT, 0, 3000, NULL) },
  { DOMAIN_AGENT, 4, "the agent exited with status 1",
    E (UNKNOWN, PERMANENT, 0, -1, NULL) },
};

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

static GQuark
agent_error_quark (void)
{
  return g_quark_from_static_string ("mend-test-agent-error");
}

static GQuark
domain_quark (Domain domain)
{
  switch (domain)
    {
    case DOMAIN_IO:
      return G_IO_ERROR;
    case DOMAIN_RESOLVER:
      return G_RESOLVER_ERROR;
    case DOMAIN_TLS:
      return G_TLS_ERROR;
    case DOMAIN_SOUP:
      return SOUP_SESSION_ERROR;
    case DOMAIN_AGENT:
    default:
      return agent_error_quark ();
    }
}

static const char *
nick_or_null (const char *nick)
{
  return nick != NULL ? nick : "(null)";
}

/* Checks every fact and the verdict; reports each mismatch with the vector's
 * label. Returns whether the failure matched. */
static gboolean
check_failure (MendFailure  *failure,
               const Expect *expect,
               const char   *constructor,
               const char   *label)
{
  MendReason reason = mend_failure_get_reason (failure);
  MendFailureKind kind = mend_failure_get_kind (failure);
  guint status = mend_failure_get_status (failure);
  gint64 retry_after_ms = mend_failure_get_retry_after_ms (failure);
  const char *api_error_type = mend_failure_get_api_error_type (failure);
  const char *message = mend_failure_get_message (failure);
  gboolean ok = TRUE;

  if (reason != expect->reason || kind != expect->kind)
    {
      g_test_message ("%s (%s): expected %s/%s, got %s/%s",
                      constructor, label,
                      nick_or_null (mend_reason_to_nick (expect->reason)),
                      nick_or_null (mend_failure_kind_to_nick (expect->kind)),
                      nick_or_null (mend_reason_to_nick (reason)),
                      nick_or_null (mend_failure_kind_to_nick (kind)));
      ok = FALSE;
    }

  if (status != expect->status)
    {
      g_test_message ("%s (%s): expected status %u, got %u",
                      constructor, label, expect->status, status);
      ok = FALSE;
    }

  if (retry_after_ms != expect->retry_after_ms)
    {
      g_test_message ("%s (%s): expected retry-after-ms %" G_GINT64_FORMAT
                      ", got %" G_GINT64_FORMAT,
                      constructor, label, expect->retry_after_ms, retry_after_ms);
      ok = FALSE;
    }

  if (g_strcmp0 (api_error_type, expect->api_error_type) != 0)
    {
      g_test_message ("%s (%s): expected api-error-type %s, got %s",
                      constructor, label,
                      nick_or_null (expect->api_error_type),
                      nick_or_null (api_error_type));
      ok = FALSE;
    }

  /* Whatever came in, the message is bounded, valid UTF-8 text. */
  if (message == NULL || *message == '\0' ||
      strlen (message) > MEND_FAILURE_MAX_MESSAGE_BYTES ||
      !g_utf8_validate (message, -1, NULL))
    {
      g_test_message ("%s (%s): bad message %s",
                      constructor, label, nick_or_null (message));
      ok = FALSE;
    }

  /* The default policy's verdict is a function of the facts. */
  if (mend_failure_get_partial (failure))
    {
      g_test_message ("%s (%s): a new failure must not be partial",
                      constructor, label);
      ok = FALSE;
    }

  return ok;
}

static void
run_text_vectors (const TextVector *vectors,
                  gsize             n_vectors)
{
  guint n_bad = 0;

  for (gsize i = 0; i < n_vectors; i++)
    {
      const TextVector *v = &vectors[i];
      MendFailure *failure = mend_failure_new_from_text (v->text);

      g_assert_nonnull (failure);
      if (!check_failure (failure, &v->expect, "new_from_text",
                          v->text != NULL ? v->text : "NULL"))
        n_bad++;
      g_assert_finalize_object (failure);
    }

  if (n_bad > 0)
    g_test_fail_printf ("%u of %" G_GSIZE_FORMAT " text vectors failed; "
                        "see the messages above", n_bad, n_vectors);
}

#define RUN_TEXT_VECTORS(table) run_text_vectors (table, G_N_ELEMENTS (table))

static MendFailure *
failure_from_http_vector (const HttpVector *v,
                          MendClock        *clock)
{
  g_autoptr(SoupMessageHeaders) headers = NULL;
  g_autoptr(GBytes) body = NULL;

  headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  for (guint i = 0; v->headers[i] != NULL; i += 2)
    soup_message_headers_append (headers, v->headers[i], v->headers[i + 1]);

  if (v->body != NULL)
    body = g_bytes_new_static (v->body, strlen (v->body));

  if (clock != NULL)
    return mend_failure_new_from_http_with_clock (v->status, headers, body, clock);

  return mend_failure_new_from_http (v->status, headers, body);
}

static void
run_http_vectors (const HttpVector *vectors,
                  gsize             n_vectors)
{
  guint n_bad = 0;

  for (gsize i = 0; i < n_vectors; i++)
    {
      const HttpVector *v = &vectors[i];
      MendClock *clock = mend_manual_clock_new (G_GINT64_CONSTANT (1760000000) * G_USEC_PER_SEC);
      MendFailure *failure = failure_from_http_vector (v, clock);
      gboolean ok;

      g_assert_nonnull (failure);
      ok = check_failure (failure, &v->expect, "new_from_http_at", v->name);

      if (v->message_contains != NULL &&
          strstr (mend_failure_get_message (failure), v->message_contains) == NULL)
        {
          g_test_message ("new_from_http_at (%s): message \"%s\" lacks \"%s\"",
                          v->name, mend_failure_get_message (failure),
                          v->message_contains);
          ok = FALSE;
        }

      g_assert_null (mend_failure_get_error (failure));
      if (!ok)
        n_bad++;
      g_assert_finalize_object (failure);
      g_assert_finalize_object (clock);

      /* The same response through the default clock reads the same facts
       * (none of these vectors has a Retry-After date). */
      failure = failure_from_http_vector (v, NULL);
      if (!check_failure (failure, &v->expect, "new_from_http", v->name))
        n_bad++;
      g_assert_finalize_object (failure);
    }

  if (n_bad > 0)
    g_test_fail_printf ("%u HTTP vector checks of %" G_GSIZE_FORMAT " vectors "
                        "failed; see the messages above", n_bad, n_vectors);
}

#define RUN_HTTP_VECTORS(table) run_http_vectors (table, G_N_ELEMENTS (table))

/* ------------------------------------------------------------------------ */
/* Tests: text                                                              */
/* ------------------------------------------------------------------------ */

static void
test_text_anthropic_and_claude_code (void)
{
  RUN_TEXT_VECTORS (anthropic_text_vectors);
}

static void
test_text_openai_and_google (void)
{
  RUN_TEXT_VECTORS (openai_google_text_vectors);
}

static void
test_text_transport_errors_are_transient (void)
{
  RUN_TEXT_VECTORS (transport_text_vectors);
}

static void
test_text_status_counts_only_as_whole_number (void)
{
  RUN_TEXT_VECTORS (whole_number_text_vectors);
}

static void
test_text_matching_is_case_insensitive (void)
{
  RUN_TEXT_VECTORS (case_text_vectors);
}

static void
test_text_retry_hints (void)
{
  RUN_TEXT_VECTORS (hint_text_vectors);
}

static void
test_text_keeps_the_text_as_message (void)
{
  static const char *texts[] = {
    "Connection error: ECONNRESET",
    "API Error: 529 " ANTHROPIC_OVERLOADED,
    "You've hit your usage limit · resets 3pm",
  };

  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      MendFailure *failure = mend_failure_new_from_text (texts[i]);

      g_assert_cmpstr (mend_failure_get_message (failure), ==, texts[i]);
      g_assert_null (mend_failure_get_error (failure));
      g_assert_false (mend_failure_get_should_retry (failure, NULL));
      g_assert_finalize_object (failure);
    }
}

static void
test_unknown_text_fails_closed (void)
{
  static const char *texts[] = {
    NULL, "", "   ", "\n", "something went wrong", "Error", "null", "{}",
    "{\"error\":{}}", "{\"type\":\"error\",\"error\":{\"type\":\"brand_new_error\","
    "\"message\":\"never seen before\"}}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      MendFailure *failure = mend_failure_new_from_text (texts[i]);
      const char *label = texts[i] != NULL ? texts[i] : "NULL";

      g_test_message ("vector: %s", label);
      g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_UNKNOWN);
      g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
      g_assert_nonnull (mend_failure_get_message (failure));
      g_assert_true (g_utf8_validate (mend_failure_get_message (failure), -1, NULL));
      g_assert_finalize_object (failure);
    }
}

/* ------------------------------------------------------------------------ */
/* Tests: usage limits                                                      */
/* ------------------------------------------------------------------------ */

static void
test_word_families_with_their_evidence (void)
{
  RUN_TEXT_VECTORS (family_text_vectors);
}

static void
test_usage_limit_is_never_transient (void)
{
  RUN_TEXT_VECTORS (usage_text_vectors);
  RUN_HTTP_VECTORS (http_usage_vectors);
}

/* ------------------------------------------------------------------------ */
/* Tests: HTTP                                                              */
/* ------------------------------------------------------------------------ */

static void
test_http_status_and_body (void)
{
  RUN_HTTP_VECTORS (http_vectors);
}

static void
test_http_headers_win_over_status (void)
{
  static const struct {
    guint       vector;
    gboolean    said;
    gboolean    should_retry;
  } said[] = {
    { 0, TRUE, TRUE },
    { 1, TRUE, FALSE },
    { 2, TRUE, FALSE },
    { 3, TRUE, TRUE },
    { 4, FALSE, FALSE },
  };

  RUN_HTTP_VECTORS (http_header_vectors);

  for (guint i = 0; i < G_N_ELEMENTS (said); i++)
    {
      const HttpVector *v = &http_header_vectors[said[i].vector];
      MendFailure *failure = failure_from_http_vector (v, NULL);
      gboolean should_retry = !said[i].should_retry;

      g_test_message ("vector: %s", v->name);
      g_assert_cmpint (mend_failure_get_should_retry (failure, &should_retry), ==,
                       said[i].said);
      g_assert_cmpint (should_retry, ==, said[i].should_retry);
      g_assert_finalize_object (failure);
    }
}

static void
test_http_retry_after_date_uses_the_clock (void)
{
  const gint64 wall_s = G_GINT64_CONSTANT (1760000000);
  MendClock *clock = mend_manual_clock_new (wall_s * G_USEC_PER_SEC);
  g_autoptr(SoupMessageHeaders) headers = NULL;
  g_autoptr(GDateTime) later = g_date_time_new_from_unix_utc (wall_s + 30);
  g_autoptr(GDateTime) earlier = g_date_time_new_from_unix_utc (wall_s - 30);
  g_autofree char *later_text = soup_date_time_to_string (later, SOUP_DATE_HTTP);
  g_autofree char *earlier_text = soup_date_time_to_string (earlier, SOUP_DATE_HTTP);
  MendFailure *failure;

  g_test_message ("Retry-After: %s", later_text);

  headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  soup_message_headers_replace (headers, "Retry-After", later_text);
  failure = mend_failure_new_from_http_with_clock (503, headers, NULL, clock);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_failure_get_status (failure), ==, 503);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, 30000);
  g_assert_finalize_object (failure);

  /* Time moves on the clock, not on the wall. */
  mend_manual_clock_advance (MEND_MANUAL_CLOCK (clock), 10000);
  failure = mend_failure_new_from_http_with_clock (429, headers, NULL, clock);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_RATE_LIMIT);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, 20000);
  g_assert_finalize_object (failure);

  /* A date already past means now. */
  soup_message_headers_replace (headers, "Retry-After", earlier_text);
  failure = mend_failure_new_from_http_with_clock (503, headers, NULL, clock);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, 0);
  g_assert_finalize_object (failure);

  /* retry-after-ms still wins over a date. */
  soup_message_headers_replace (headers, "Retry-After", later_text);
  soup_message_headers_replace (headers, "retry-after-ms", "1500");
  failure = mend_failure_new_from_http_with_clock (529, headers, NULL, clock);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, 1500);
  g_assert_finalize_object (failure);

  g_assert_finalize_object (clock);
}

/* A date is read against the response's Date header, not this clock. */
static void
test_http_retry_after_date_reads_the_date_header (void)
{
  const gint64 wall_s = G_GINT64_CONSTANT (1760000000);
  static const gint64 skews[] = { -7200, 7200, 0 };
  MendClock *clock = mend_manual_clock_new (wall_s * G_USEC_PER_SEC);
  g_autoptr(SoupMessageHeaders) headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  MendFailure *failure;

  for (guint i = 0; i < G_N_ELEMENTS (skews); i++)
    {
      g_autoptr(GDateTime) server_now = g_date_time_new_from_unix_utc (wall_s + skews[i]);
      g_autoptr(GDateTime) retry_at = g_date_time_new_from_unix_utc (wall_s + skews[i] + 5);
      g_autoptr(GDateTime) far_at = g_date_time_new_from_unix_utc (wall_s + skews[i] + 7200);
      g_autofree char *server_now_text = soup_date_time_to_string (server_now, SOUP_DATE_HTTP);
      g_autofree char *retry_at_text = soup_date_time_to_string (retry_at, SOUP_DATE_HTTP);
      g_autofree char *far_at_text = soup_date_time_to_string (far_at, SOUP_DATE_HTTP);

      g_test_message ("Date: %s, Retry-After: %s", server_now_text, retry_at_text);
      soup_message_headers_replace (headers, "Date", server_now_text);
      soup_message_headers_replace (headers, "Retry-After", retry_at_text);
      failure = mend_failure_new_from_http_with_clock (429, headers, NULL, clock);
      g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, 5000);
      g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
      g_assert_finalize_object (failure);

      /* Two hours by the server's own clock is a reset to show. */
      soup_message_headers_replace (headers, "Retry-After", far_at_text);
      failure = mend_failure_new_from_http_with_clock (429, headers, NULL, clock);
      g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, 7200000);
      g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_LIMIT);
      g_assert_finalize_object (failure);
    }

  /* A Date that is not a date: this clock, as without one. */
  {
    g_autoptr(GDateTime) retry_at = g_date_time_new_from_unix_utc (wall_s + 5);
    g_autofree char *retry_at_text = soup_date_time_to_string (retry_at, SOUP_DATE_HTTP);

    soup_message_headers_replace (headers, "Date", "yesterday");
    soup_message_headers_replace (headers, "Retry-After", retry_at_text);
    failure = mend_failure_new_from_http_with_clock (503, headers, NULL, clock);
    g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, 5000);
    g_assert_finalize_object (failure);
  }

  g_assert_finalize_object (clock);
}

/* Without a Date header, a date further than the horizon from this clock
 * is taken for this clock's error: no hint, and not a limit. */
static void
test_http_retry_after_date_past_the_horizon_is_no_hint (void)
{
  const gint64 wall_s = G_GINT64_CONSTANT (1760000000);
  MendClock *clock = mend_manual_clock_new (wall_s * G_USEC_PER_SEC);
  g_autoptr(SoupMessageHeaders) headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
  g_autoptr(GDateTime) edge = g_date_time_new_from_unix_utc (wall_s + 60);
  g_autoptr(GDateTime) past_edge = g_date_time_new_from_unix_utc (wall_s + 61);
  g_autoptr(GDateTime) far = g_date_time_new_from_unix_utc (wall_s + 7205);
  g_autofree char *edge_text = soup_date_time_to_string (edge, SOUP_DATE_HTTP);
  g_autofree char *past_edge_text = soup_date_time_to_string (past_edge, SOUP_DATE_HTTP);
  g_autofree char *far_text = soup_date_time_to_string (far, SOUP_DATE_HTTP);
  MendErrorPolicy *policy = mend_error_policy_new ();
  MendFailure *failure;

  soup_message_headers_replace (headers, "Retry-After", edge_text);
  failure = mend_failure_new_from_http_with_clock (429, headers, NULL, clock);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, 60000);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_finalize_object (failure);

  soup_message_headers_replace (headers, "Retry-After", past_edge_text);
  failure = mend_failure_new_from_http_with_clock (429, headers, NULL, clock);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, -1);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_finalize_object (failure);

  soup_message_headers_replace (headers, "Retry-After", far_text);
  failure = mend_failure_new_from_http_with_clock (429, headers, NULL, clock);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_RATE_LIMIT);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, -1);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (mend_error_policy_classify (policy, failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_finalize_object (failure);

  /* Seconds are the server's word whatever the clocks say. */
  soup_message_headers_replace (headers, "Retry-After", "7205");
  failure = mend_failure_new_from_http_with_clock (429, headers, NULL, clock);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, 7205000);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_LIMIT);
  g_assert_finalize_object (failure);

  g_assert_finalize_object (policy);
  g_assert_finalize_object (clock);
}

static void
test_http_malformed_body_keeps_raw_text (void)
{
  static const char raw[] = "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_er";
  g_autoptr(GBytes) body = g_bytes_new_static (raw, strlen (raw));
  MendFailure *failure = mend_failure_new_from_http (503, NULL, body);

  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_nonnull (strstr (mend_failure_get_message (failure), raw));
  g_assert_null (mend_failure_get_api_error_type (failure));
  g_assert_finalize_object (failure);
}

/* ------------------------------------------------------------------------ */
/* Tests: GError                                                            */
/* ------------------------------------------------------------------------ */

static void
test_error_domains_and_codes (void)
{
  guint n_bad = 0;

  for (guint i = 0; i < G_N_ELEMENTS (error_vectors); i++)
    {
      const ErrorVector *v = &error_vectors[i];
      g_autoptr(GError) error = g_error_new_literal (domain_quark (v->domain),
                                                     v->code, v->message);
      g_autofree char *label = g_strdup_printf ("%s %d: %s",
                                                g_quark_to_string (error->domain),
                                                v->code, v->message);
      MendFailure *failure = mend_failure_new_from_error (error);
      const GError *kept;

      g_assert_nonnull (failure);
      if (!check_failure (failure, &v->expect, "new_from_error", label))
        n_bad++;

      kept = mend_failure_get_error (failure);
      g_assert_nonnull (kept);
      g_assert_true (kept != error);
      g_assert_error ((GError *) kept, error->domain, error->code);
      g_assert_cmpstr (kept->message, ==, v->message);
      g_assert_finalize_object (failure);
    }

  if (n_bad > 0)
    g_test_fail_printf ("%u of %u GError vectors failed; see the messages above",
                        n_bad, (guint) G_N_ELEMENTS (error_vectors));
}

/* ------------------------------------------------------------------------ */
/* Tests: empty response, stop                                              */
/* ------------------------------------------------------------------------ */

static void
test_empty_response_is_retried (void)
{
  MendFailure *failure = mend_failure_new_empty_response ();
  const Expect expect = E (EMPTY, TRANSIENT, 0, -1, NULL);

  g_assert_true (check_failure (failure, &expect, "new_empty_response", "-"));
  g_assert_null (mend_failure_get_error (failure));
  g_assert_finalize_object (failure);
}

static void
test_stopped_is_never_an_error (void)
{
  MendFailure *failure = mend_failure_new_stopped ();
  const Expect expect = E (CANCELLED, STOPPED, 0, -1, NULL);

  g_assert_true (check_failure (failure, &expect, "new_stopped", "-"));
  g_assert_null (mend_failure_get_error (failure));
  g_assert_finalize_object (failure);
}

/* ------------------------------------------------------------------------ */
/* Tests: message                                                           */
/* ------------------------------------------------------------------------ */

static void
assert_capped (const char *message)
{
  gsize len;

  g_assert_nonnull (message);
  len = strlen (message);
  g_assert_cmpuint (len, <=, MEND_FAILURE_MAX_MESSAGE_BYTES);
  g_assert_true (g_utf8_validate (message, -1, NULL));
  g_assert_true (g_str_has_suffix (message, "…"));
  /* Cut near the cap, not far short of it. */
  g_assert_cmpuint (len, >=, MEND_FAILURE_MAX_MESSAGE_BYTES - 8);
}

static void
test_message_is_capped_at_a_character_boundary (void)
{
  GString *text = g_string_new ("API Error: 503 ");
  g_autofree char *ascii = g_strnfill (10000, 'a');
  g_autofree char *long_text = NULL;
  g_autoptr(GBytes) body = NULL;
  MendFailure *failure;

  /* Two-byte characters from an odd offset, so that the cap falls inside
   * one of them. */
  while (text->len < 9998)
    g_string_append (text, "é");
  while (text->len < 10000)
    g_string_append_c (text, '!');
  g_assert_cmpuint (text->len, ==, 10000);
  long_text = g_string_free (text, FALSE);

  failure = mend_failure_new_from_text (long_text);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_CAPACITY);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  assert_capped (mend_failure_get_message (failure));
  g_assert_true (g_str_has_prefix (mend_failure_get_message (failure), "API Error: 503 é"));
  g_assert_finalize_object (failure);

  failure = mend_failure_new_from_text (ascii);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_UNKNOWN);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  assert_capped (mend_failure_get_message (failure));
  g_assert_finalize_object (failure);

  /* The same through an HTTP body that is not JSON. */
  body = g_bytes_new_static (long_text + strlen ("API Error: 503 "),
                             strlen (long_text) - strlen ("API Error: 503 "));
  failure = mend_failure_new_from_http (503, NULL, body);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_CAPACITY);
  assert_capped (mend_failure_get_message (failure));
  g_assert_finalize_object (failure);

  /* From an odd offset, where the body's text is cut inside a character:
   * still its text, not the status's name. */
  g_clear_pointer (&body, g_bytes_unref);
  body = g_bytes_new_static (long_text + strlen ("API Error: 503"),
                             strlen (long_text) - strlen ("API Error: 503"));
  failure = mend_failure_new_from_http (503, NULL, body);
  assert_capped (mend_failure_get_message (failure));
  g_assert_true (g_str_has_prefix (mend_failure_get_message (failure), "HTTP 503: é"));
  g_assert_finalize_object (failure);
}

static void
test_message_is_valid_utf8_from_invalid_input (void)
{
  static const char invalid_text[] = "Connection error: \xff\xfe ECONNRESET \xc3";
  static const char invalid_body[] = "<html>\xff\xfe 502 Bad Gateway \xe2\x80</html>";
  g_autoptr(GError) error = g_error_new_literal (G_IO_ERROR,
                                                 G_IO_ERROR_CONNECTION_CLOSED,
                                                 "Error receiving data: \xff\xfe");
  g_autoptr(GBytes) body = g_bytes_new_static (invalid_body, strlen (invalid_body));
  MendFailure *failure;

  failure = mend_failure_new_from_text (invalid_text);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_TRANSPORT);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_true (g_utf8_validate (mend_failure_get_message (failure), -1, NULL));
  g_assert_nonnull (strstr (mend_failure_get_message (failure), "ECONNRESET"));
  g_assert_finalize_object (failure);

  failure = mend_failure_new_from_http (502, NULL, body);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_SERVER);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_true (g_utf8_validate (mend_failure_get_message (failure), -1, NULL));
  g_assert_finalize_object (failure);

  failure = mend_failure_new_from_error (error);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_TRANSPORT);
  g_assert_true (g_utf8_validate (mend_failure_get_message (failure), -1, NULL));
  g_assert_finalize_object (failure);
}

/* ------------------------------------------------------------------------ */
/* Tests: properties, coverage                                              */
/* ------------------------------------------------------------------------ */

static void
test_properties_match_getters (void)
{
  g_autoptr(GError) error = g_error_new_literal (agent_error_quark (), 7,
                                                 "API Error: 529 " ANTHROPIC_OVERLOADED
                                                 " (retry after 12s)");
  MendFailure *failure = mend_failure_new_from_error (error);
  MendFailureKind kind;
  MendReason reason;
  guint status;
  gint64 retry_after_ms;
  g_autofree char *message = NULL;
  g_autofree char *api_error_type = NULL;
  gboolean partial = TRUE;
  g_autoptr(GError) kept = NULL;

  g_object_get (failure,
                "kind", &kind,
                "reason", &reason,
                "status", &status,
                "retry-after-ms", &retry_after_ms,
                "message", &message,
                "api-error-type", &api_error_type,
                "partial", &partial,
                "error", &kept,
                NULL);

  g_assert_cmpint (kind, ==, MEND_FAILURE_TRANSIENT);
  g_assert_cmpint (reason, ==, MEND_REASON_CAPACITY);
  g_assert_cmpuint (status, ==, 529);
  g_assert_cmpint (retry_after_ms, ==, 12000);
  g_assert_cmpstr (message, ==, error->message);
  g_assert_cmpstr (api_error_type, ==, "overloaded_error");
  g_assert_false (partial);
  g_assert_error (kept, agent_error_quark (), 7);
  g_assert_cmpstr (kept->message, ==, error->message);

  g_assert_cmpint (kind, ==, mend_failure_get_kind (failure));
  g_assert_cmpint (reason, ==, mend_failure_get_reason (failure));
  g_assert_cmpuint (status, ==, mend_failure_get_status (failure));
  g_assert_cmpint (retry_after_ms, ==, mend_failure_get_retry_after_ms (failure));
  g_assert_cmpstr (message, ==, mend_failure_get_message (failure));
  g_assert_cmpstr (api_error_type, ==, mend_failure_get_api_error_type (failure));
  g_assert_cmpint (partial, ==, mend_failure_get_partial (failure));

  g_assert_finalize_object (failure);
}

/* The facts are construct-only: an app or a test may make a failure of
 * its own, kept like the constructors keep theirs, and nothing changes it
 * afterwards; :kind is read from the facts once. */
static void
test_facts_are_construct_only (void)
{
  static const char *facts[] = {
    "reason", "status", "retry-after-ms", "message", "error", "api-error-type", "partial", "rule",
  };
  g_autoptr(GTypeClass) type_class = g_type_class_ref (MEND_TYPE_FAILURE);
  GObjectClass *klass = G_OBJECT_CLASS (type_class);
  g_autoptr(GError) error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_FAILED,
                                                 "denied for sk-ant-api03-SEEDEDheaderKEY0123456789");
  g_autofree char *long_text = g_strnfill (MEND_FAILURE_MAX_MESSAGE_BYTES * 2, 'x');
  GParamSpec *kind = g_object_class_find_property (klass, "kind");
  MendFailure *failure;

  for (gsize i = 0; i < G_N_ELEMENTS (facts); i++)
    {
      GParamSpec *pspec = g_object_class_find_property (klass, facts[i]);

      g_assert_nonnull (pspec);
      g_assert_true (pspec->flags & G_PARAM_CONSTRUCT_ONLY);
      g_assert_true (pspec->flags & G_PARAM_WRITABLE);
    }
  g_assert_false (kind->flags & G_PARAM_WRITABLE);

  /* A rate limit within the horizon waits; one beyond it is a limit;
   * after output was seen it is not retried. */
  failure = g_object_new (MEND_TYPE_FAILURE, "reason", MEND_REASON_RATE_LIMIT,
                          "retry-after-ms", (gint64) 2000, NULL);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_TRANSIENT);
  g_assert_finalize_object (failure);
  failure = g_object_new (MEND_TYPE_FAILURE, "reason", MEND_REASON_RATE_LIMIT,
                          "retry-after-ms", (gint64) 30 * 60 * 1000, NULL);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_LIMIT);
  g_assert_finalize_object (failure);
  failure = g_object_new (MEND_TYPE_FAILURE, "reason", MEND_REASON_CAPACITY, "partial", TRUE, NULL);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_true (mend_failure_get_partial (failure));
  g_assert_finalize_object (failure);
  failure = g_object_new (MEND_TYPE_FAILURE, NULL);
  g_assert_cmpint (mend_failure_get_reason (failure), ==, MEND_REASON_UNKNOWN);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_cmpint (mend_failure_get_retry_after_ms (failure), ==, -1);
  g_assert_finalize_object (failure);

  /* Text and errors given as properties are redacted and cut as the
   * constructors' are. */
  failure = g_object_new (MEND_TYPE_FAILURE,
                          "reason", MEND_REASON_AUTH,
                          "message", error->message,
                          "error", error,
                          "api-error-type", "sk-ant-api03-SEEDEDheaderKEY0123456789",
                          NULL);
  g_assert_null (strstr (mend_failure_get_message (failure), "SEEDED"));
  g_assert_null (strstr (mend_failure_get_error (failure)->message, "SEEDED"));
  g_assert_null (strstr (mend_failure_get_api_error_type (failure), "SEEDED"));
  g_assert_nonnull (strstr (error->message, "SEEDED"));
  g_assert_error ((GError *) mend_failure_get_error (failure), G_IO_ERROR, G_IO_ERROR_FAILED);
  g_assert_cmpint (mend_failure_get_kind (failure), ==, MEND_FAILURE_PERMANENT);
  g_assert_finalize_object (failure);
  failure = g_object_new (MEND_TYPE_FAILURE, "message", long_text, NULL);
  g_assert_cmpuint (strlen (mend_failure_get_message (failure)), <=, MEND_FAILURE_MAX_MESSAGE_BYTES);
  g_assert_true (g_str_has_suffix (mend_failure_get_message (failure), "…"));
  g_assert_finalize_object (failure);
}

static void
test_nicks (void)
{
  static const char *reasons[] = {
    "capacity", "rate-limit", "transport", "timeout", "empty", "server", "auth",
    "permission", "bad-request", "usage-limit", "billing", "cancelled", "unknown",
  };
  static const char *kinds[] = { "transient", "permanent", "limit", "stopped" };

  G_STATIC_ASSERT (G_N_ELEMENTS (reasons) == MEND_REASON_UNKNOWN + 1);
  G_STATIC_ASSERT (G_N_ELEMENTS (kinds) == MEND_FAILURE_STOPPED + 1);

  for (guint i = 0; i < G_N_ELEMENTS (reasons); i++)
    g_assert_cmpstr (mend_reason_to_nick ((MendReason) i), ==, reasons[i]);
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    g_assert_cmpstr (mend_failure_kind_to_nick ((MendFailureKind) i), ==, kinds[i]);
}

static void
count_expect (const Expect *expect,
              guint        *reasons,
              guint        *kinds)
{
  reasons[expect->reason]++;
  kinds[expect->kind]++;
}

static guint
count_text_table (const TextVector *vectors,
                  gsize             n,
                  guint            *reasons,
                  guint            *kinds)
{
  for (gsize i = 0; i < n; i++)
    count_expect (&vectors[i].expect, reasons, kinds);
  return n;
}

static guint
count_http_table (const HttpVector *vectors,
                  gsize             n,
                  guint            *reasons,
                  guint            *kinds)
{
  for (gsize i = 0; i < n; i++)
    count_expect (&vectors[i].expect, reasons, kinds);
  return n;
}

#define COUNT_TEXT(t) count_text_table (t, G_N_ELEMENTS (t), reasons, kinds)
#define COUNT_HTTP(t) count_http_table (t, G_N_ELEMENTS (t), reasons, kinds)

static void
test_tables_cover_every_reason_and_kind (void)
{
  guint reasons[MEND_REASON_UNKNOWN + 1] = { 0 };
  guint kinds[MEND_FAILURE_STOPPED + 1] = { 0 };
  guint n = 0;

  n += COUNT_TEXT (anthropic_text_vectors);
  n += COUNT_TEXT (openai_google_text_vectors);
  n += COUNT_TEXT (transport_text_vectors);
  n += COUNT_TEXT (usage_text_vectors);
  n += COUNT_TEXT (family_text_vectors);
  n += COUNT_TEXT (whole_number_text_vectors);
  n += COUNT_TEXT (case_text_vectors);
  n += COUNT_TEXT (hint_text_vectors);
  n += COUNT_HTTP (http_vectors);
  n += COUNT_HTTP (http_usage_vectors);
  n += COUNT_HTTP (http_header_vectors);
  for (guint i = 0; i < G_N_ELEMENTS (error_vectors); i++, n++)
    count_expect (&error_vectors[i].expect, reasons, kinds);

  g_test_message ("%u vectors", n);
  g_assert_cmpuint (n, >=, 90);

  for (guint i = 0; i < G_N_ELEMENTS (reasons); i++)
    {
      g_test_message ("%s: %u vectors", mend_reason_to_nick ((MendReason) i), reasons[i]);
      g_assert_cmpuint (reasons[i], >, 0);
    }
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      g_test_message ("%s: %u vectors",
                      mend_failure_kind_to_nick ((MendFailureKind) i), kinds[i]);
      g_assert_cmpuint (kinds[i], >, 0);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/Mend/Failure/tables-cover-every-reason-and-kind",
                   test_tables_cover_every_reason_and_kind);
  g_test_add_func ("/Mend/Failure/nicks-are-the-json-names", test_nicks);
  g_test_add_func ("/Mend/Failure/text/anthropic-and-claude-code-errors",
                   test_text_anthropic_and_claude_code);
  g_test_add_func ("/Mend/Failure/text/openai-and-google-errors",
                   test_text_openai_and_google);
  g_test_add_func ("/Mend/Failure/text/transport-errors-are-transient",
                   test_text_transport_errors_are_transient);
  g_test_add_func ("/Mend/Failure/text/status-counts-only-as-whole-number",
                   test_text_status_counts_only_as_whole_number);
  g_test_add_func ("/Mend/Failure/text/matching-is-case-insensitive",
                   test_text_matching_is_case_insensitive);
  g_test_add_func ("/Mend/Failure/text/retry-hints-become-retry-after-ms",
                   test_text_retry_hints);
  g_test_add_func ("/Mend/Failure/text/keeps-the-text-as-message",
                   test_text_keeps_the_text_as_message);
  g_test_add_func ("/Mend/Failure/text/unknown-fails-closed",
                   test_unknown_text_fails_closed);
  g_test_add_func ("/Mend/Failure/text/word-families-decide-with-their-evidence",
                   test_word_families_with_their_evidence);
  g_test_add_func ("/Mend/Failure/usage-limit-is-never-transient",
                   test_usage_limit_is_never_transient);
  g_test_add_func ("/Mend/Failure/http/status-and-body-decide-the-reason",
                   test_http_status_and_body);
  g_test_add_func ("/Mend/Failure/http/headers-win-over-status",
                   test_http_headers_win_over_status);
  g_test_add_func ("/Mend/Failure/http/retry-after-date-uses-the-clock",
                   test_http_retry_after_date_uses_the_clock);
  g_test_add_func ("/Mend/Failure/http/retry-after-date-reads-the-date-header",
                   test_http_retry_after_date_reads_the_date_header);
  g_test_add_func ("/Mend/Failure/http/retry-after-date-past-the-horizon-without-date-is-no-hint",
                   test_http_retry_after_date_past_the_horizon_is_no_hint);
  g_test_add_func ("/Mend/Failure/http/malformed-body-keeps-raw-text",
                   test_http_malformed_body_keeps_raw_text);
  g_test_add_func ("/Mend/Failure/error/domains-and-codes",
                   test_error_domains_and_codes);
  g_test_add_func ("/Mend/Failure/empty-response-is-retried",
                   test_empty_response_is_retried);
  g_test_add_func ("/Mend/Failure/stopped-is-never-an-error",
                   test_stopped_is_never_an_error);
  g_test_add_func ("/Mend/Failure/message/capped-at-a-character-boundary",
                   test_message_is_capped_at_a_character_boundary);
  g_test_add_func ("/Mend/Failure/message/valid-utf8-from-invalid-input",
                   test_message_is_valid_utf8_from_invalid_input);
  g_test_add_func ("/Mend/Failure/facts-are-construct-only", test_facts_are_construct_only);
  g_test_add_func ("/Mend/Failure/properties-match-getters",
                   test_properties_match_getters);

  return g_test_run ();
}
