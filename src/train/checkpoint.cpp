#include "strata/train/checkpoint.h"

#include <torch/torch.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <set>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/safetensors.h"
#include "strata/nn/safetensors_torch.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kModelFile = "model.safetensors";
constexpr const char* kOptimizerFile = "optimizer.safetensors";
constexpr const char* kConfigFile = "config.json";
constexpr const char* kTrainerStateFile = "trainer_state.json";
constexpr const char* kTokenizerDir = "tokenizer";

std::string checkpoint_shape_string(at::IntArrayRef sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

// "a, b, c and 7 more"
std::string checkpoint_name_list(const std::vector<std::string>& names) {
  constexpr std::size_t kShown = 5;
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i)
    out.append(i == 0 ? "" : ", ").append(names[i]);
  if (names.size() > kShown) out.append(fmt::format(" and {} more", names.size() - kShown));
  return out;
}

// ------------------------------------------------------------------ files

Json read_json(const fs::path& path) {
  try {
    return Json::parse(read_file(path));
  } catch (const Json::exception& e) {
    throw error_at(path, 0, "", std::string("invalid JSON: ").append(e.what()));
  }
}

void write_json(const fs::path& path, const Json& json) {
  write_file_atomic(path, json.dump(2).append("\n"));
}

void fsync_path(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path.string() + ": cannot open to sync: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) throw Error(path.string() + ": fsync failed: " + std::strerror(saved));
}

void fsync_tree(const fs::path& dir) {
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file() || entry.is_directory()) fsync_path(entry.path());
  fsync_path(dir);
}

// "<dir><tag><pid>" beside dir.
fs::path sibling(const fs::path& dir, std::string_view tag) {
  std::string name = dir.filename().string();
  name.append(tag).append(std::to_string(::getpid()));
  return dir.parent_path() / name;
}

fs::path parent_or_dot(const fs::path& path) {
  return path.parent_path().empty() ? fs::path(".") : path.parent_path();
}

void write_contents(const fs::path& dir, const CheckpointContents& contents) {
  save_tensors(dir / kModelFile, contents.weights, {{"format", "pt"}});
  save_tensors(dir / kOptimizerFile, contents.optimizer_state,
               {{"step", std::to_string(contents.optimizer_step)}});
  write_json(dir / kConfigFile, Json{{"model", contents.model_config}, {"run", contents.run_config}});
  write_json(dir / kTrainerStateFile, trainer_state_json(contents.trainer_state));
  if (!contents.tokenizer_dir.empty()) {
    if (!fs::is_directory(contents.tokenizer_dir))
      throw Error(contents.tokenizer_dir.string() + ": tokenizer directory not found");
    fs::copy(contents.tokenizer_dir, dir / kTokenizerDir, fs::copy_options::recursive);
  }
}

// Renames the complete temp directory onto dir (see save_checkpoint in the header).
void install(const fs::path& temp, const fs::path& dir) {
  std::error_code ec, ignored;
  const fs::path old = sibling(dir, ".old-");
  const bool replacing = fs::exists(dir);
  if (replacing) {
    fs::remove_all(old, ignored);
    fs::rename(dir, old, ec);
    if (ec) {
      fs::remove_all(temp, ignored);
      throw Error(dir.string() + ": cannot move the previous checkpoint aside: " + ec.message());
    }
  }
  fs::rename(temp, dir, ec);
  if (ec) {
    if (replacing) fs::rename(old, dir, ignored);
    fs::remove_all(temp, ignored);
    throw Error(dir.string() + ": cannot rename the new checkpoint into place: " + ec.message());
  }
  fsync_path(parent_or_dot(dir));
  if (!replacing) return;
  fs::remove_all(old, ec);
  if (ec)
    throw Error(dir.string() + ": saved, but cannot remove the previous checkpoint " + old.string() +
                ": " + ec.message());
}

// ------------------------------------------------------------------ run directories

fs::path checkpoints_root(const fs::path& run_dir) { return run_dir / "checkpoints"; }

std::string step_name(std::int64_t step) { return fmt::format("step-{:08d}", step); }

std::optional<std::int64_t> parse_step_name(std::string_view name) {
  constexpr std::string_view kPrefix = "step-";
  if (!name.starts_with(kPrefix) || name.size() == kPrefix.size()) return std::nullopt;
  std::int64_t step = 0;
  const char* end = name.data() + name.size();
  const auto [ptr, ec] = std::from_chars(name.data() + kPrefix.size(), end, step);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return step;
}

void mark(const fs::path& run_dir, const char* pointer, std::int64_t step) {
  write_file_atomic(checkpoints_root(run_dir) / pointer, step_name(step) + "\n");
}

// The checkpoint name a pointer file holds, validated; nullopt without the file.
std::optional<std::string> read_pointer(const fs::path& run_dir, const char* pointer) {
  const fs::path file = checkpoints_root(run_dir) / pointer;
  if (!fs::exists(file)) return std::nullopt;
  std::string name = read_file(file);
  while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
  if (!parse_step_name(name))
    throw error_at(file, 1, "", fmt::format("expected a checkpoint name like step-00001234, got '{}'", name));
  return name;
}

std::optional<fs::path> find_marked(const fs::path& run_dir, const char* pointer) {
  const std::optional<std::string> name = read_pointer(run_dir, pointer);
  if (!name) return std::nullopt;
  const fs::path dir = checkpoints_root(run_dir) / *name;
  if (fs::is_directory(dir)) return dir;
  std::string message = fmt::format("names {}, which does not exist", *name);
  for (const fs::directory_entry& entry : fs::directory_iterator(checkpoints_root(run_dir)))
    if (entry.path().filename().string().starts_with(*name + ".old-"))
      message.append(" (an interrupted save left ")
          .append(entry.path().filename().string())
          .append(": rename it to ")
          .append(*name)
          .append(")");
  throw error_at(checkpoints_root(run_dir) / pointer, 0, "", message);
}

}  // namespace

NamedTensors module_tensors(const torch::nn::Module& module) {
  NamedTensors tensors;
  for (const auto& item : module.named_parameters()) tensors.emplace_back(item.key(), item.value());
  for (const auto& item : module.named_buffers()) tensors.emplace_back(item.key(), item.value());
  return tensors;
}

void save_checkpoint(const fs::path& target, const CheckpointContents& contents) {
  const fs::path dir = target.has_filename() ? target : target.parent_path();
  const fs::path temp = sibling(dir, ".tmp-");
  try {
    fs::remove_all(temp);
    fs::create_directories(temp);
    write_contents(temp, contents);
    fsync_tree(temp);
  } catch (const std::exception& e) {
    std::error_code ignored;
    fs::remove_all(temp, ignored);
    throw Error(dir.string() + ": cannot save checkpoint: " + e.what());
  }
  install(temp, dir);
}

Checkpoint load_checkpoint(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw Error(dir.string() + ": checkpoint directory not found");
  for (const char* name : {kModelFile, kOptimizerFile, kConfigFile, kTrainerStateFile})
    if (!fs::exists(dir / name)) throw Error((dir / name).string() + ": missing from the checkpoint");

  Checkpoint checkpoint;
  checkpoint.dir = dir;
  checkpoint.weights = load_tensors(dir / kModelFile);

  const fs::path optimizer_file = dir / kOptimizerFile;
  checkpoint.optimizer_state = load_tensors(optimizer_file);
  const SafetensorsFile optimizer(optimizer_file);
  const auto& metadata = optimizer.metadata();
  const auto step = metadata.find("step");
  if (step == metadata.end()) throw error_at(optimizer_file, 0, "__metadata__.step", "missing");
  const std::string& text = step->second;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), checkpoint.optimizer_step);
  if (ec != std::errc() || ptr != text.data() + text.size())
    throw error_at(optimizer_file, 0, "__metadata__.step", fmt::format("expected an integer, got '{}'", text));

  const fs::path config_file = dir / kConfigFile;
  const Json config = read_json(config_file);
  if (!config.is_object()) throw error_at(config_file, 0, "", "expected a JSON object");
  for (const char* key : {"model", "run"})
    if (!config.contains(key)) throw error_at(config_file, 0, key, "missing");
  checkpoint.model_config = config.at("model");
  checkpoint.run_config = config.at("run");

  const fs::path state_file = dir / kTrainerStateFile;
  checkpoint.trainer_state = trainer_state_from_json(read_json(state_file), state_file);

  if (fs::is_directory(dir / kTokenizerDir)) checkpoint.tokenizer_dir = dir / kTokenizerDir;
  return checkpoint;
}

void check_tensors_match(const NamedTensors& expected, const std::map<std::string, at::Tensor>& given,
                         const std::string& source) {
  std::set<std::string> expected_names;
  std::vector<std::string> missing, unexpected;
  for (const auto& [name, tensor] : expected) {
    expected_names.insert(name);
    if (!given.contains(name)) missing.push_back(name);
  }
  for (const auto& [name, tensor] : given)
    if (!expected_names.contains(name)) unexpected.push_back(name);
  if (!missing.empty() || !unexpected.empty()) {
    std::string message = source + ": tensors do not match the model";
    if (!missing.empty())
      message.append(fmt::format("; {} missing: {}", missing.size(), checkpoint_name_list(missing)));
    if (!unexpected.empty())
      message.append(fmt::format("; {} unexpected: {}", unexpected.size(), checkpoint_name_list(unexpected)));
    throw Error(message);
  }
  for (const auto& [name, tensor] : expected) {
    const at::Tensor& other = given.at(name);
    if (other.sizes() != tensor.sizes())
      throw Error(fmt::format("{}: tensor '{}' has shape {}, expected {}", source, name,
                              checkpoint_shape_string(other.sizes()), checkpoint_shape_string(tensor.sizes())));
  }
}

void load_weights_into(torch::nn::Module& module, const std::map<std::string, at::Tensor>& tensors,
                       const std::string& source_name, const std::set<std::string>& elsewhere) {
  NamedTensors targets = module_tensors(module);
  std::erase_if(targets, [&](const auto& named) { return elsewhere.contains(named.first); });
  check_tensors_match(targets, tensors, source_name);
  torch::NoGradGuard no_grad;
  for (const auto& [name, target] : targets) target.copy_(tensors.at(name));
}

fs::path checkpoint_dir(const fs::path& run_dir, std::int64_t step) {
  return checkpoints_root(run_dir) / step_name(step);
}

void mark_latest_checkpoint(const fs::path& run_dir, std::int64_t step) { mark(run_dir, "latest", step); }
void mark_best_checkpoint(const fs::path& run_dir, std::int64_t step) { mark(run_dir, "best", step); }

std::optional<fs::path> find_latest_checkpoint(const fs::path& run_dir) {
  return find_marked(run_dir, "latest");
}
std::optional<fs::path> find_best_checkpoint(const fs::path& run_dir) {
  return find_marked(run_dir, "best");
}

void prune_checkpoints(const fs::path& run_dir, std::int64_t keep_last) {
  if (keep_last < 0) throw Error("keep_last must not be negative");
  if (keep_last == 0 || !fs::is_directory(checkpoints_root(run_dir))) return;
  std::vector<std::pair<std::int64_t, fs::path>> checkpoints;
  for (const fs::directory_entry& entry : fs::directory_iterator(checkpoints_root(run_dir)))
    if (const auto step = parse_step_name(entry.path().filename().string()); step && entry.is_directory())
      checkpoints.emplace_back(*step, entry.path());
  std::sort(checkpoints.begin(), checkpoints.end(), std::greater<>());
  std::set<std::string> keep;
  for (const char* pointer : {"latest", "best"})
    if (const auto name = read_pointer(run_dir, pointer)) keep.insert(*name);
  for (std::size_t i = static_cast<std::size_t>(keep_last); i < checkpoints.size(); ++i)
    if (!keep.contains(checkpoints[i].second.filename().string())) fs::remove_all(checkpoints[i].second);
}

std::vector<std::string> recover_interrupted_saves(const fs::path& run_dir) {
  std::vector<std::string> done;
  if (!fs::is_directory(checkpoints_root(run_dir))) return done;
  for (const fs::directory_entry& entry : fs::directory_iterator(checkpoints_root(run_dir))) {
    const std::string name = entry.path().filename().string();
    for (const std::string_view tag : {".tmp-", ".old-"}) {
      const auto at = name.rfind(tag);
      if (at == std::string::npos) continue;
      const std::string pid_text = name.substr(at + tag.size());
      int pid = 0;
      const auto [end, ec] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
      if (ec != std::errc() || end != pid_text.data() + pid_text.size() || pid <= 0) continue;
      if (::kill(pid, 0) == 0 || errno == EPERM) continue;  // its process still runs: not ours to touch
      const fs::path checkpoint = entry.path().parent_path() / name.substr(0, at);
      if (tag == ".old-" && !fs::exists(checkpoint)) {
        // Killed between moving the previous checkpoint aside and installing the new one.
        fs::rename(entry.path(), checkpoint);
        done.push_back(fmt::format("restored {} from {} (process {} was killed replacing it)",
                                   checkpoint.filename().string(), name, pid));
      } else {
        fs::remove_all(entry.path());
        done.push_back(fmt::format("removed {}, left by a save that process {} did not finish", name, pid));
      }
    }
  }
  return done;
}

fs::path resolve_checkpoint(const fs::path& path) {
  if (fs::exists(path / "model.safetensors")) return path;
  // RUN/checkpoints/best or RUN/checkpoints/latest: the pointer file names the checkpoint.
  if (fs::is_regular_file(path) && path.parent_path().filename() == "checkpoints")
    for (const char* pointer : {"best", "latest"})
      if (path.filename() == pointer)
        if (auto marked = find_marked(path.parent_path().parent_path(), pointer)) return *marked;
  if (auto best = find_best_checkpoint(path)) return *best;
  if (auto latest = find_latest_checkpoint(path)) return *latest;
  throw Error(path.string() + ": not a model: expected a checkpoint directory (with model.safetensors) " +
              "or a run directory (with checkpoints/latest)");
}

}  // namespace strata::train
