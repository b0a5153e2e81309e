#include "strata/chain/response_cache.h"

#include <fmt/format.h>

#include <iostream>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/data/manpage_corpus.h"

namespace strata::chain {

ResponseCache::ResponseCache(ChainBackend& inner, std::filesystem::path file) : inner_(inner), file_(std::move(file)) {
  if (std::filesystem::exists(file_)) {
    const std::string text = read_file(file_);
    std::size_t start = 0, line = 0;
    while (start < text.size()) {
      ++line;
      const std::size_t end = text.find('\n', start);
      const bool last = end == std::string::npos;
      const std::string_view row(text.data() + start, (last ? text.size() : end) - start);
      start = last ? text.size() : end + 1;
      if (row.empty()) continue;
      const nlohmann::json entry = nlohmann::json::parse(row, nullptr, /*allow_exceptions=*/false);
      const bool good = entry.is_object() && entry.contains("key") && entry["key"].is_string() &&
                        entry.contains("response") && entry["response"].is_string();
      if (!good && last) {  // a write cut short: everything before it stands
        std::cerr << fmt::format("warning: {}:{}: an unfinished last line, dropped\n", file_.string(), line);
        break;
      }
      if (!good) throw error_at(file_, line, "key", "not a cache line {\"key\": ..., \"response\": ...}");
      responses_[entry["key"].get<std::string>()] = entry["response"].get<std::string>();
    }
    // Rewrite whole lines only, so that appending after a dropped half line stays well formed.
    if (!text.empty() && text.back() != '\n') {
      std::string kept;
      for (const auto& [key, response] : responses_)
        kept += nlohmann::json{{"key", key}, {"backend", inner_.identity()}, {"response", response}}.dump() + "\n";
      write_file_atomic(file_, kept);
    }
  }
  if (file_.has_parent_path()) std::filesystem::create_directories(file_.parent_path());
  out_.open(file_, std::ios::app | std::ios::binary);
  if (!out_) throw Error(fmt::format("{}: cannot open the response cache for writing", file_.string()));
}

std::string ResponseCache::key_of(const CompletionCall& call) const {
  const nlohmann::json described = {{"backend", inner_.identity()}, {"prompt", call.prompt},
                                    {"max_tokens", call.max_tokens}, {"temperature", call.temperature},
                                    {"seed", call.seed},           {"stop", call.stop}};
  return fmt::format("{:016x}", stable_hash(described.dump()));
}

std::string ResponseCache::complete(const CompletionCall& call) {
  const std::string key = key_of(call);
  {
    const std::lock_guard lock(mutex_);
    if (const auto found = responses_.find(key); found != responses_.end()) {
      ++hits_;
      return found->second;
    }
  }
  std::string response = inner_.complete(call);
  const std::lock_guard lock(mutex_);
  ++misses_;
  if (responses_.emplace(key, response).second) {
    out_ << nlohmann::json{{"key", key}, {"backend", inner_.identity()}, {"response", response}}.dump() << '\n';
    out_.flush();
    if (!out_) throw Error(fmt::format("{}: writing the response cache failed", file_.string()));
  }
  return response;
}

std::size_t ResponseCache::hits() const {
  const std::lock_guard lock(mutex_);
  return hits_;
}

std::size_t ResponseCache::misses() const {
  const std::lock_guard lock(mutex_);
  return misses_;
}

}  // namespace strata::chain
