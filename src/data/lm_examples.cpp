#include "strata/data/lm_examples.h"

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "strata/core/diagnostics.h"
#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/doc/dataset.h"
#include "strata/doc/parse.h"
#include "strata/text/tokenizer.h"

namespace strata {

namespace {

constexpr std::size_t kReadBatch = 1024;  // documents read before each parallel tokenization

void check_block_size(std::size_t block_size) {
  if (block_size < 2) throw Error("language-model data: block_size must be at least 2");
}

}  // namespace

LmBlocking parse_lm_blocking(std::string_view name) {
  if (name == "stream") return LmBlocking::kStream;
  if (name == "document") return LmBlocking::kDocument;
  if (name == "completion") return LmBlocking::kCompletion;
  throw Error(fmt::format("language-model blocks '{}': choose stream, document or completion", name));
}

std::size_t completion_start(std::string_view text) {
  std::size_t end = text.size();
  while (end > 0 && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' ')) --end;
  const std::size_t newline = text.rfind('\n', end == 0 ? 0 : end - 1);
  const std::size_t line = newline == std::string_view::npos ? 0 : newline + 1;
  const std::size_t colon = text.find(':', line);
  return colon == std::string_view::npos || colon >= end ? std::string_view::npos : colon + 1;
}

std::vector<std::vector<std::int32_t>> encode_lm_documents(std::span<const Document> documents,
                                                           const Tokenizer& tokenizer) {
  const std::int32_t eos = require_eos(tokenizer, "language-model data");
  std::vector<std::vector<std::int32_t>> encoded(documents.size());
  std::exception_ptr failure;  // an exception must not leave the parallel region
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t i = 0; i < documents.size(); ++i) {
    try {
      if (documents[i].empty()) continue;
      encoded[i] = tokenizer.encode(documents[i].text);
      encoded[i].push_back(eos);
    } catch (...) {
#pragma omp critical
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
  return encoded;
}

std::vector<std::int32_t> lm_token_stream(std::span<const Document> documents,
                                          const Tokenizer& tokenizer) {
  std::vector<std::int32_t> stream;
  for (const std::vector<std::int32_t>& document : encode_lm_documents(documents, tokenizer))
    stream.insert(stream.end(), document.begin(), document.end());
  return stream;
}

std::vector<std::vector<std::int32_t>> make_lm_chunks(std::span<const std::int32_t> stream,
                                                      std::size_t block_size) {
  check_block_size(block_size);
  std::vector<std::vector<std::int32_t>> chunks;
  for (std::size_t begin = 0; begin < stream.size(); begin += block_size) {
    const std::size_t end = std::min(stream.size(), begin + block_size);
    if (end - begin < 2) break;
    chunks.emplace_back(stream.begin() + begin, stream.begin() + end);
  }
  return chunks;
}

std::vector<std::vector<std::int32_t>> load_lm_chunks(
    const std::vector<std::filesystem::path>& inputs, const Tokenizer& tokenizer,
    std::size_t block_size, bool show_progress, LmBlocking blocking) {
  check_block_size(block_size);
  require_eos(tokenizer, "language-model data");
  if (inputs.empty()) throw Error("language-model data: no input files");
  Progress progress("documents", 0, "documents", !show_progress);
  std::vector<std::int32_t> stream;
  std::vector<std::vector<std::int32_t>> chunks;  // kDocument's and kCompletion's, made as documents arrive
  std::vector<Document> batch;
  std::size_t empty = 0;
  const auto flush = [&] {
    std::vector<std::vector<std::int32_t>> encoded = encode_lm_documents(batch, tokenizer);
    for (std::size_t i = 0; i < encoded.size(); ++i) {
      std::vector<std::int32_t>& document = encoded[i];
      if (blocking == LmBlocking::kStream) {
        stream.insert(stream.end(), document.begin(), document.end());
      } else if (blocking == LmBlocking::kDocument) {
        for (auto& chunk : make_lm_chunks(document, block_size)) chunks.push_back(std::move(chunk));
      } else {
        const std::string_view text = batch[i].text;
        const std::size_t cut = completion_start(text);
        if (cut == std::string_view::npos)
          throw Error(fmt::format("language-model data: document '{}': its last line has no 'Field:' before a "
                                  "completion (data.blocks = completion)",
                                  batch[i].title));
        const std::size_t prompt = std::min(tokenizer.encode(text.substr(0, cut)).size(), document.size());
        for (std::size_t t = 0; t < prompt; ++t) document[t] = as_prompt_token(document[t]);
        if (document.size() > block_size) document.erase(document.begin(), document.end() - block_size);
        if (document.size() >= 2) chunks.push_back(std::move(document));
      }
    }
    progress.add(batch.size());
    batch.clear();
  };
  const auto add = [&](Document document) {
    if (document.empty()) {
      ++empty;
      progress.add();
      return;
    }
    batch.push_back(std::move(document));
    if (batch.size() == kReadBatch) flush();
  };

  for (const std::filesystem::path& input : inputs) {
    if (detect_format(input, {}) == DocFormat::Jsonl) {
      DatasetReader reader(input);
      Document document;
      while (reader.next(document)) add(std::move(document));
    } else {
      add(read_document(input));
    }
  }
  flush();
  progress.finish();

  if (blocking == LmBlocking::kStream) chunks = make_lm_chunks(stream, block_size);
  if (chunks.empty())
    throw Error(fmt::format("{}: too little text for a block of 2 tokens",
                            inputs.size() == 1 ? inputs.front().string() : "the inputs"));
  if (empty > 0)
    warn(fmt::format("language-model data: skipped {} document{} with no text", empty,
                     empty == 1 ? "" : "s"));
  return chunks;
}

}  // namespace strata
