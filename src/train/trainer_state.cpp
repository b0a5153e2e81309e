#include "strata/train/trainer_state.h"

#include "strata/core/error.h"

namespace strata::train {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Json trainer_state_json(const TrainerState& state) {
  if (!state.extra.is_object()) throw Error("trainer state: extra must be a JSON object");
  Json json = state.extra;
  json["step"] = state.step;
  json["epoch"] = state.epoch;
  json["batch_in_epoch"] = state.batch_in_epoch;
  json["best_metric"] = state.best_metric ? Json(*state.best_metric) : Json(nullptr);
  json["best_step"] = state.best_step ? Json(*state.best_step) : Json(nullptr);
  json["seed"] = state.seed;
  return json;
}

namespace {

const Json& field(const Json& json, const char* key, const fs::path& file) {
  if (!json.contains(key)) throw error_at(file, 0, key, "missing");
  return json.at(key);
}

std::int64_t integer_field(const Json& json, const char* key, const fs::path& file) {
  const Json& value = field(json, key, file);
  if (!value.is_number_integer()) throw error_at(file, 0, key, "expected an integer");
  return value.get<std::int64_t>();
}

}  // namespace

TrainerState trainer_state_from_json(const Json& json, const fs::path& file) {
  if (!json.is_object()) throw error_at(file, 0, "", "expected a JSON object");
  TrainerState state;
  state.step = integer_field(json, "step", file);
  state.epoch = integer_field(json, "epoch", file);
  state.batch_in_epoch = integer_field(json, "batch_in_epoch", file);
  if (!field(json, "seed", file).is_number_unsigned())
    throw error_at(file, 0, "seed", "expected a non-negative integer");
  state.seed = json.at("seed").get<std::uint64_t>();
  const Json& best_metric = field(json, "best_metric", file);
  if (!best_metric.is_null() && !best_metric.is_number())
    throw error_at(file, 0, "best_metric", "expected a number or null");
  if (!best_metric.is_null()) state.best_metric = best_metric.get<double>();
  if (!field(json, "best_step", file).is_null())
    state.best_step = integer_field(json, "best_step", file);
  state.extra = json;
  for (const char* key : {"step", "epoch", "batch_in_epoch", "best_metric", "best_step", "seed"})
    state.extra.erase(key);
  return state;
}

}  // namespace strata::train
