#include "strata/recipes/hf_models.h"

#include <torch/torch.h>

#include <iterator>
#include <set>
#include <unistd.h>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/decode/generate.h"
#include "strata/models/causal_lm.h"
#include "strata/nn/safetensors_torch.h"
#include "strata/recipes/architectures.h"
#include "strata/recipes/designs.h"
#include "strata/train/checkpoint.h"
#include "strata/train/run_config.h"

namespace strata::recipes {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The files of a transformers tokenizer, whichever kind it is.
const char* const kTokenizerFiles[] = {"tokenizer.json",   "vocab.json",           "merges.txt",
                                       "spiece.model",     "vocab.txt",            "tokenizer_config.json",
                                       "special_tokens_map.json", "added_tokens.json"};

json read_json(const fs::path& file) {
  const json j = json::parse(read_file(file), nullptr, false);
  if (j.is_discarded()) throw Error(file.string() + ": malformed JSON");
  return j;
}

// model.safetensors, or the shards a model.safetensors.index.json names.
std::map<std::string, at::Tensor> read_hf_tensors(const fs::path& dir) {
  if (fs::exists(dir / "model.safetensors")) return load_tensors(dir / "model.safetensors");
  const fs::path index = dir / "model.safetensors.index.json";
  if (!fs::exists(index))
    throw Error(dir.string() + ": no model.safetensors or model.safetensors.index.json (PyTorch .bin files are "
                "not read: convert them with transformers' save_pretrained(safe_serialization=True))");
  const json root = read_json(index);
  const json map = root.is_object() && root.contains("weight_map") ? root.at("weight_map") : json();
  if (!map.is_object() || map.empty()) throw Error(index.string() + ": no \"weight_map\" object");
  std::set<std::string> shards;
  for (const auto& [name, file] : map.items()) {
    if (!file.is_string()) throw Error(index.string() + ": weight_map[\"" + name + "\"] is not a file name");
    shards.insert(file.get<std::string>());
  }
  std::map<std::string, at::Tensor> tensors;
  for (const std::string& shard : shards)
    for (auto& [name, tensor] : load_tensors(dir / shard)) tensors[name] = std::move(tensor);
  for (const auto& [name, file] : map.items())
    if (!tensors.contains(name)) throw Error(index.string() + ": tensor '" + name + "' is not in " + file.get<std::string>());
  return tensors;
}

// The run config of an imported model: every model.* key (so the run's config.toml can be
// the start of a tuning run's), and the decoding settings of generation_config.json.
Config imported_run_config(const models::ModelConfig& m, const std::vector<std::pair<std::string, json>>& decode) {
  json model = m.to_json();
  for (auto& [key, value] : model.items())
    if (value.is_array() || value.is_object()) value = value.dump();
  // Fields the tokenizer gives a run (its ids, the vocabulary size) are not run settings, and
  // the run schema declares only the ones a user sets.
  const ConfigSchema schema = run_schema();
  for (auto field = model.begin(); field != model.end();)
    field = schema.find("model." + field.key()) ? std::next(field) : model.erase(field);
  json root = {{"model", model}};
  for (const auto& [key, value] : decode) root["decode"][key.substr(std::string("decode.").size())] = value;
  Config config = Config::from_json(root, "imported config");
  config.validate(schema);
  return config;
}

// Copies the tokenizer files of `dir` into `into`; returns the tokenizer strata reads them as,
// or null when there are none. strata::Error when there are some and strata cannot read them.
std::unique_ptr<Tokenizer> copy_tokenizer(const fs::path& dir, const fs::path& into) {
  bool any = false;
  fs::create_directories(into);
  for (const char* name : kTokenizerFiles)
    if (fs::exists(dir / name)) {
      fs::copy_file(dir / name, into / name, fs::copy_options::overwrite_existing);
      any = any || std::string_view(name) != "tokenizer_config.json";
    }
  return any ? load_tokenizer(into) : nullptr;
}

}  // namespace

HfImportReport import_hf(const fs::path& dir, const fs::path& out, const models::HfImportOptions& options) {
  if (!fs::is_directory(dir)) throw Error(dir.string() + ": not a directory");
  if (fs::exists(out / "checkpoints")) throw Error(out.string() + " already holds a run; choose another --out");
  HfImportReport report;
  const fs::path config_file = dir / "config.json";
  report.model = models::hf_model_from_config(read_json(config_file), config_file.string(), options);
  const models::ModelConfig& config = report.model.config;
  // generation_config.json, or what older checkpoints keep in config.json.
  const fs::path generation_file = dir / "generation_config.json";
  const bool separate = fs::exists(generation_file);
  const std::vector<std::pair<std::string, json>> decode = models::decode_settings_from_generation_config(
      separate ? read_json(generation_file) : report.model.generation,
      (separate ? generation_file : config_file).string(), config.architecture == "seq2seq");
  Config run = imported_run_config(config, decode);

  const std::map<std::string, at::Tensor> hf_tensors = read_hf_tensors(dir);
  const std::string weights_source = (dir / "model.safetensors").string();
  models::check_config_against_tensors(report.model, hf_tensors, weights_source);
  const std::shared_ptr<torch::nn::Module> module = find_architecture(config.architecture).build(config);
  const train::NamedTensors expected = train::module_tensors(*module);
  const std::map<std::string, at::Tensor> weights =
      models::hf_weights_to_strata(report.model, hf_tensors, expected, weights_source);
  train::CheckpointContents contents;
  for (const auto& [name, like] : expected) contents.weights.emplace_back(name, weights.at(name));
  report.tensors = contents.weights.size();
  contents.model_config = config.to_json();
  contents.run_config = run.to_json();
  contents.trainer_state.extra["imported_from"] = fs::absolute(dir).string();
  contents.trainer_state.extra["hf_class"] = report.model.hf_class;

  const fs::path staging = out.parent_path().empty() ? fs::path(".tokenizer-" + std::to_string(::getpid()))
                                                     : out.parent_path() / (".tokenizer-" + std::to_string(::getpid()));
  try {
    if (const std::unique_ptr<Tokenizer> tokenizer = copy_tokenizer(dir, staging)) {
      report.tokenizer = tokenizer->kind();
      contents.tokenizer_dir = staging;
      // bart-large-cnn's tokenizer has 50,265 ids and its model 50,264 rows: the last id
      // (<mask>) cannot be fed, which summarising never does. Said, not refused.
      if (tokenizer->vocab_size() > config.vocab_size)
        report.warnings.push_back("the tokenizer has " + std::to_string(tokenizer->vocab_size()) +
                                  " ids, the model's vocabulary " + std::to_string(config.vocab_size) + ": ids from " +
                                  std::to_string(config.vocab_size) + " on cannot be fed to it");
    }
    fs::create_directories(out);
    report.checkpoint = train::checkpoint_dir(out, 0);
    train::save_checkpoint(report.checkpoint, contents);
    fs::remove_all(staging);
  } catch (...) {
    fs::remove_all(staging);
    throw;
  }
  train::mark_latest_checkpoint(out, 0);
  train::mark_best_checkpoint(out, 0);
  // config.toml starts a tuning run (--config RUN/config.toml --base RUN): its data reads the
  // imported tokenizer.
  if (!report.tokenizer.empty())
    run.apply_override("data.tokenizer=" + fs::absolute(report.checkpoint / "tokenizer").string());
  write_file_atomic(out / "config.toml", run.to_toml());
  return report;
}

bool is_hf_directory(const fs::path& path) {
  if (!fs::is_regular_file(path / "config.json") || fs::exists(path / "checkpoints") ||
      fs::exists(path / "trainer_state.json"))
    return false;
  const json config = json::parse(read_file(path / "config.json"), nullptr, false);
  return config.is_object() && config.contains("model_type");
}

LoadedModel load_hf_directory(const fs::path& dir, const LoadOptions& options) {
  const fs::path scratch = fs::temp_directory_path() / ("strata-hf-" + std::to_string(::getpid()));
  fs::remove_all(scratch);
  try {
    import_hf(dir, scratch);
    LoadedModel model = load_model(scratch, options);
    model.checkpoint = dir;
    fs::remove_all(scratch);
    return model;
  } catch (...) {
    fs::remove_all(scratch);
    throw;
  }
}

models::HfModel export_hf(const fs::path& run, const fs::path& out) {
  LoadedModel info = load_model(run, {.require_tokenizer = false});
  models::HfModel model = models::hf_model_of(info.config);
  const models::NamedTensorList weights = models::strata_weights_to_hf(model, train::module_tensors(*info.module));
  fs::create_directories(out);
  write_file_atomic(out / "config.json", models::hf_config_of(model).dump(2) + "\n");
  save_tensors(out / "model.safetensors", weights, {{"format", "pt"}});
  if (model.family != models::HfFamily::Bert) {
    const decode::GenerationOptions g = train::generation_options(info.run);
    json generation = {{"num_beams", g.beam_size},
                       {"do_sample", g.do_sample},
                       {"length_penalty", g.length_penalty},
                       {"no_repeat_ngram_size", g.no_repeat_ngram_size},
                       {"early_stopping", g.early_stopping},
                       {"max_new_tokens", g.max_length},
                       {"top_k", g.top_k},
                       {"top_p", g.top_p},
                       {"temperature", g.temperature},
                       {"eos_token_id", info.config.eos_id},
                       {"pad_token_id", info.config.pad_id}};
    if (info.config.architecture == "seq2seq") generation["decoder_start_token_id"] = info.config.decoder_start_id;
    if (g.forced_bos_id >= 0) generation["forced_bos_token_id"] = g.forced_bos_id;
    if (g.forced_eos) generation["forced_eos_token_id"] = info.config.eos_id;
    write_file_atomic(out / "generation_config.json", generation.dump(2) + "\n");
  }
  const fs::path tokenizer = info.checkpoint / "tokenizer";
  if (fs::is_directory(tokenizer))
    for (const auto& entry : fs::directory_iterator(tokenizer))
      write_file_atomic(out / entry.path().filename(), read_file(entry.path()));
  return model;
}

}  // namespace strata::recipes
