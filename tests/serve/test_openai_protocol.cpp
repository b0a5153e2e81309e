// Requests of OpenAI's API parsed and checked as strata serve does, and the bodies it answers
// with: every refusal names the field, and the shapes are the ones OpenAI's clients read.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "strata/serve/openai_protocol.h"

namespace strata::serve {
namespace {

using nlohmann::json;

// The error a request body gets, or a failure when it is accepted.
ApiError refusal(const json& body, bool chat = false, RequestLimits limits = {}) {
  try {
    chat ? parse_chat_request(body, limits) : parse_completion_request(body, limits);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body.dump();
  return ApiError(0, "", "");
}

TEST(OpenAiProtocol, CompletionDefaultsFollowOpenAi) {
  const CompletionRequest r = parse_completion_request({{"model", "m"}, {"prompt", "hello"}}, {});
  EXPECT_FALSE(r.chat);
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.prompts, std::vector<std::string>{"hello"});
  EXPECT_EQ(r.max_tokens, 16);
  EXPECT_FALSE(r.max_tokens_given);
  EXPECT_DOUBLE_EQ(r.temperature, 1.0);
  EXPECT_DOUBLE_EQ(r.top_p, 1.0);
  EXPECT_EQ(r.n, 1);
  EXPECT_FALSE(r.seed.has_value());
  EXPECT_FALSE(r.stream);
}

TEST(OpenAiProtocol, CompletionFieldsAreRead) {
  const CompletionRequest r = parse_completion_request(
      {{"model", "m"}, {"prompt", {"a", "b"}}, {"max_tokens", 40}, {"temperature", 0}, {"top_p", 0.5}, {"top_k", 7},
       {"n", 3}, {"seed", 11}, {"stop", "\n"}, {"stream", true}, {"stream_options", {{"include_usage", true}}},
       {"user", "someone"}, {"logprobs", nullptr}, {"presence_penalty", 0}},
      {});
  EXPECT_EQ(r.prompts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r.max_tokens, 40);
  EXPECT_TRUE(r.max_tokens_given);
  EXPECT_DOUBLE_EQ(r.temperature, 0.0);
  EXPECT_DOUBLE_EQ(r.top_p, 0.5);
  EXPECT_EQ(r.top_k, 7);
  EXPECT_EQ(r.n, 3);
  EXPECT_EQ(r.seed, 11u);
  EXPECT_EQ(r.stop, std::vector<std::string>{"\n"});
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
}

TEST(OpenAiProtocol, BadFieldsAreRefusedByName) {
  const json ok = {{"model", "m"}, {"prompt", "p"}};
  const auto with = [&](const char* key, const json& value) {
    json body = ok;
    body[key] = value;
    return body;
  };
  EXPECT_EQ(refusal(json::array()).param, "");
  EXPECT_EQ(refusal({{"prompt", "p"}}).param, "model");
  EXPECT_EQ(refusal({{"prompt", "p"}}).code, "missing_required_parameter");
  EXPECT_EQ(refusal({{"model", "m"}}).param, "prompt");
  EXPECT_EQ(refusal(with("prompt", {1, 2, 3})).param, "prompt");  // token ids
  EXPECT_EQ(refusal(with("temperature", 2.5)).param, "temperature");
  EXPECT_EQ(refusal(with("temperature", "hot")).param, "temperature");
  EXPECT_EQ(refusal(with("top_p", 0)).param, "top_p");
  EXPECT_EQ(refusal(with("n", 0)).param, "n");
  EXPECT_EQ(refusal(with("n", 9)).param, "n");  // above RequestLimits::max_choices
  EXPECT_EQ(refusal(with("max_tokens", 1000)).param, "max_tokens");
  EXPECT_EQ(refusal(with("max_tokens", 1.5)).param, "max_tokens");
  EXPECT_EQ(refusal(with("stop", {"a", "b", "c", "d", "e"})).param, "stop");
  EXPECT_EQ(refusal(with("stop", "")).param, "stop");
  EXPECT_EQ(refusal(with("stream_options", {{"include_usage", true}})).param, "stream_options");
  const ApiError echo = refusal(with("echo", true));
  EXPECT_EQ(echo.status, 400);
  EXPECT_EQ(echo.type, "invalid_request_error");
  EXPECT_EQ(echo.code, "unsupported_parameter");
  EXPECT_EQ(refusal(with("logprobs", 5)).param, "logprobs");
  EXPECT_EQ(refusal(with("best_of", 3)).param, "best_of");
  EXPECT_EQ(refusal(with("frequency_penalty", 0.5)).param, "frequency_penalty");
  EXPECT_EQ(refusal(with("suffix", "x")).param, "suffix");
}

TEST(OpenAiProtocol, ChatMessagesBecomeOnePromptAndMaxTokensDefaultsToTheLimit) {
  RequestLimits limits;
  limits.max_output_tokens = 64;
  const CompletionRequest r = parse_chat_request(
      {{"model", "m"},
       {"messages",
        {{{"role", "system"}, {"content", "be brief"}},
         {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "list "}}, {{"type", "text"}, {"text", "files"}}}}}}}},
      limits);
  EXPECT_TRUE(r.chat);
  EXPECT_EQ(r.max_tokens, 64);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[1].content, "list files");
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_EQ(r.prompts[0], "system: be brief\nuser: list files\nassistant:");
  EXPECT_EQ(parse_chat_request({{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "x"}}}},
                                {"max_completion_tokens", 5}},
                               limits)
                .max_tokens,
            5);
}

TEST(OpenAiProtocol, BadChatMessagesAreRefusedByIndex) {
  EXPECT_EQ(refusal({{"model", "m"}, {"messages", json::array()}}, true).param, "messages");
  EXPECT_EQ(refusal({{"model", "m"}, {"messages", {{{"role", "tool"}, {"content", "x"}}}}}, true).param,
            "messages[0].role");
  EXPECT_EQ(refusal({{"model", "m"},
                     {"messages", {{{"role", "user"}, {"content", "x"}}, {{"role", "user"}, {"content", 3}}}}},
                    true)
                .param,
            "messages[1].content");
  EXPECT_EQ(refusal({{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "x"}}}}, {"tools", {{{"type", "function"}}}}},
                    true)
                .param,
            "tools");
}

TEST(OpenAiProtocol, ResponsesHaveOpenAisShape) {
  const json completion = completion_response("cmpl-1", 7, "m", {{"ab", "stop"}, {"cd", "length"}}, {3, 4});
  EXPECT_EQ(completion["object"], "text_completion");
  EXPECT_EQ(completion["choices"][1]["index"], 1);
  EXPECT_EQ(completion["choices"][1]["text"], "cd");
  EXPECT_EQ(completion["choices"][1]["finish_reason"], "length");
  EXPECT_EQ(completion["usage"]["total_tokens"], 7);
  const json chat = chat_response("chatcmpl-1", 7, "m", {{"hi", "stop"}}, {3, 1});
  EXPECT_EQ(chat["object"], "chat.completion");
  EXPECT_EQ(chat["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(chat["choices"][0]["message"]["content"], "hi");
  const json first = chat_chunk("c", 7, "m", 0, "assistant", "", std::nullopt);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"], (json{{"role", "assistant"}, {"content", ""}}));
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  const json last = chat_chunk("c", 7, "m", 0, std::nullopt, "", "stop");
  EXPECT_EQ(last["choices"][0]["delta"], json::object());
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(usage_chunk("c", 7, "m", false, {2, 5})["usage"]["completion_tokens"], 5);
  EXPECT_EQ(sse_event({{"a", 1}}), "data: {\"a\":1}\n\n");
  const json error = error_body(ApiError(404, "invalid_request_error", "no such model", "model", "model_not_found"));
  EXPECT_EQ(error["error"]["message"], "no such model");
  EXPECT_EQ(error["error"]["param"], "model");
  EXPECT_TRUE(error_body(ApiError(500, "server_error", "x"))["error"]["param"].is_null());
}

}  // namespace
}  // namespace strata::serve
