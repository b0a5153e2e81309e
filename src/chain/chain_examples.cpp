#include "strata/chain/chain_examples.h"

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/core/jsonl.h"
#include "strata/data/ambigmt.h"

namespace strata::chain {

namespace {

ChainData from_ambigmt(const std::filesystem::path& file) {
  ChainData data;
  for (AmbigMtSample& sample : read_ambigmt_tsv(file).samples) {
    ChainExample example;
    example.id = sample.id;
    example.source = std::move(sample.source);
    example.context = std::move(sample.context);
    example.reference = std::move(sample.reference);
    example.label = sample.label.value_or("");
    example.answer = example.label;
    example.type = std::string(ambiguity_type_name(sample.type));
    data.examples.push_back(std::move(example));
  }
  return data;
}

std::string optional_string(const JsonlReader& reader, const nlohmann::json& record, const char* field) {
  if (!record.contains(field) || record[field].is_null()) return "";
  if (record[field].is_number_integer()) return std::to_string(record[field].get<long long>());
  return reader.string_field(record, field);
}

ChainData from_jsonl(const std::filesystem::path& file, const std::string& language) {
  ChainData data;
  JsonlReader reader(file);
  nlohmann::json record;
  while (reader.next(record)) {
    ChainExample example;
    example.id = record.contains("id") ? optional_string(reader, record, "id") : fmt::format("line-{}", reader.line());
    example.source = reader.string_field(record, "source");
    example.context = optional_string(reader, record, "context");
    if (record.contains("reference")) {
      example.reference = reader.string_field(record, "reference");
    } else if (record.contains("targets")) {
      const nlohmann::json& targets = record["targets"];
      if (!targets.is_object()) throw reader.error("targets", "must be an object of language -> translation");
      if (!targets.contains(language)) {
        ++data.skipped_without_target;
        continue;
      }
      if (!targets[language].is_string()) throw reader.error("targets", fmt::format("'{}' must be a string", language));
      example.reference = targets[language].get<std::string>();
    } else {
      throw reader.error("reference", "missing: give \"reference\" or \"targets\"");
    }
    example.question = optional_string(reader, record, "question");
    example.answer = optional_string(reader, record, "answer");
    example.label = optional_string(reader, record, "label");
    example.type = optional_string(reader, record, "type");
    if (example.label.empty()) example.label = example.answer;
    data.examples.push_back(std::move(example));
  }
  return data;
}

}  // namespace

ChainData read_chain_examples(const std::filesystem::path& file, const std::string& language) {
  ChainData data = file.extension() == ".tsv" ? from_ambigmt(file) : from_jsonl(file, language);
  if (data.examples.empty())
    throw Error(fmt::format("{}: no examples{}", file.string(),
                            data.skipped_without_target
                                ? fmt::format(" ({} records have no '{}' target)", data.skipped_without_target, language)
                                : ""));
  return data;
}

}  // namespace strata::chain
