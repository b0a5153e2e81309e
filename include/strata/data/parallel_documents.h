#pragma once
// The example loaders read documents in batches and make each batch's examples on every core
// (tokenising dominates loading). This is that parallel pass: `make` runs once per document,
// results come back in document order, and an exception thrown by `make` (which must not
// leave an OpenMP region) is rethrown once the batch is done.
#include <cstddef>
#include <exception>
#include <filesystem>
#include <vector>

#include "strata/core/progress.h"
#include "strata/doc/dataset.h"
#include "strata/doc/document.h"

namespace strata {

inline constexpr std::size_t kDocumentBatch = 1024;  // documents read before each parallel pass

template <class Made, class Make>
std::vector<Made> make_in_parallel(const std::vector<Document>& documents, Progress& progress, const Make& make) {
  std::vector<Made> made(documents.size());
  std::exception_ptr failure;
#pragma omp parallel for schedule(dynamic, 4)
  for (std::size_t i = 0; i < documents.size(); ++i) {
    try {
      made[i] = make(documents[i]);
    } catch (...) {
#pragma omp critical
      if (!failure) failure = std::current_exception();
    }
    progress.add();
  }
  if (failure) std::rethrow_exception(failure);
  return made;
}

// Every document of a JSONL dataset (any shape DatasetReader knows) through `make` in parallel
// batches of kDocumentBatch, each result handed to `take` in document order; returns the number
// of documents read. Progress counts documents.
template <class Made, class Make, class Take>
std::size_t make_from_dataset(const std::filesystem::path& jsonl, Progress& progress, const Make& make,
                              const Take& take) {
  DatasetReader reader(jsonl);
  std::vector<Document> batch;
  std::size_t documents = 0;
  const auto flush = [&] {
    for (Made& made : make_in_parallel<Made>(batch, progress, make)) take(made);
    batch.clear();
  };
  Document document;
  while (reader.next(document)) {
    ++documents;
    batch.push_back(std::move(document));
    if (batch.size() == kDocumentBatch) flush();
  }
  flush();
  return documents;
}

}  // namespace strata
