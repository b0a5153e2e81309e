#pragma once
// Where a run stands, as a checkpoint's trainer_state.json holds it. Needs no tensors: the fuzz
// and sanitizer builds read it too (fuzz/targets/checkpoint.cpp).
#include <cstdint>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

namespace strata::train {

struct TrainerState {
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  std::int64_t batch_in_epoch = 0;
  std::optional<double> best_metric;  // null in the file until a metric was recorded
  std::optional<std::int64_t> best_step;
  std::uint64_t seed = 0;
  nlohmann::json extra = nlohmann::json::object();  // further keys, written beside these
};

// trainer_state.json's object, and back (strata::Error naming `file` and the field).
nlohmann::json trainer_state_json(const TrainerState& state);
TrainerState trainer_state_from_json(const nlohmann::json& json, const std::filesystem::path& file);

}  // namespace strata::train
