#pragma once
// Responses kept on disk, so that a chain run that stopped (or one that adds a system or a
// corruption rate) asks no backend the same thing twice: a hosted API costs money and a local
// model minutes. The file is JSONL, one {"key", "backend", "response"} line per response,
// appended and flushed as each arrives; the key hashes the backend's identity and the whole
// call (prompt, max_tokens, temperature, seed, stop). A last line cut short by a crash is
// dropped with a warning on the next load; a damaged line elsewhere is an error naming it.
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

#include "strata/chain/chain_backend.h"

namespace strata::chain {

class ResponseCache : public ChainBackend {
 public:
  // `inner` must outlive the cache. The file is created when missing.
  ResponseCache(ChainBackend& inner, std::filesystem::path file);

  std::string complete(const CompletionCall& call) override;
  std::string identity() const override { return inner_.identity(); }

  std::size_t hits() const;
  std::size_t misses() const;

 private:
  std::string key_of(const CompletionCall& call) const;

  ChainBackend& inner_;
  std::filesystem::path file_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> responses_;
  std::ofstream out_;
  std::size_t hits_ = 0, misses_ = 0;
};

}  // namespace strata::chain
