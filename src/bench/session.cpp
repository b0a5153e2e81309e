#include "strata/bench/session.h"

#include <cstdio>

#include <fmt/format.h>

#include "strata/bench/cpu_ceiling.h"
#include "strata/bench/cpu_load.h"
#include "strata/core/error.h"
#include "strata/core/files.h"

namespace strata::bench {

Session::Session(std::string benchmark, std::vector<std::string> command, RunOptions options, double busy_cores)
    : benchmark_(std::move(benchmark)),
      command_(std::move(command)), options_(std::move(options)), busy_cores_(busy_cores) {
  for (const std::string& word : command_) name_ += (name_.empty() ? "" : " ") + word;
  if (name_.rfind("strata ", 0) == 0) name_.erase(0, 7);
  others_before_ = idle_probe(1.0);
}

void Session::print_load() const {
  std::printf("CPU: %s\n", describe(this_cpu()).c_str());
  std::printf("other processes' CPU use before the start: %.2f cores (load average %s)%s\n", others_before_,
              load_average().c_str(), others_before_ > busy_cores_ ? "  -- machine busy: timings may be noisy" : "");
  std::fflush(stdout);
}

void Session::measure(const std::vector<std::string>& cases, const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string& name = cases[i];
    if (!options_.quiet) std::fprintf(stderr, "%s: [%zu/%zu] %s ...\n", name_.c_str(), i + 1, cases.size(), name.c_str());
    CaseMeasurement& m = cases_[name] = run_case_in_child(command_, name, args);
    if (!options_.quiet && m.result.contains("median_ms"))
      std::fprintf(stderr, "%s: [%zu/%zu] %s %.1f ms\n", name_.c_str(), i + 1, cases.size(), name.c_str(),
                   m.result["median_ms"].get<double>());
  }
}

const CaseMeasurement& Session::operator[](const std::string& name) const {
  const auto it = cases_.find(name);
  if (it == cases_.end()) throw Error(fmt::format("{}: no case '{}' was measured", name_, name));
  return it->second;
}

double Session::median_ms(const std::string& name) const { return result(name)["median_ms"].get<double>(); }

double Session::ratio(const std::string& name, const std::string& reference) const {
  return median_ms(name) / median_ms(reference);
}

void Session::check_noisy(const std::string& name, const nlohmann::ordered_json& timing) {
  if (timing.value("busy_rounds_included", false)) noisy_.push_back(name);
}

void Session::print_noisy() const {
  if (noisy_.empty()) return;
  std::string names;
  for (const std::string& name : noisy_) names += (names.empty() ? "" : ", ") + name;
  std::printf("noisy: other processes used the CPU in most rounds of %s; rerun on a quiet machine\n", names.c_str());
}

nlohmann::ordered_json Session::case_json(const std::string& name, const std::string& label) const {
  const CaseMeasurement& m = (*this)[name];
  nlohmann::ordered_json entry{{"label", label}};
  entry.update(m.result);
  entry["peak_rss_mb"] = m.maxrss_mb;
  entry["rss_growth_mb"] = m.growth_mb;
  return entry;
}

void Session::write_json(const nlohmann::ordered_json& settings, const nlohmann::ordered_json& findings,
                         nlohmann::ordered_json cases) const {
  if (options_.json.empty()) return;
  nlohmann::ordered_json result{{"benchmark", benchmark_}};
  if (!settings.empty()) result.update(settings);
  result.update(nlohmann::ordered_json{{"threads", options_.threads},
                                       {"rounds", options_.rounds},
                                       {"quick", options_.quick},
                                       {"cpu", describe(this_cpu())},
                                       {"other_processes_cores_before", others_before_},
                                       {"busy_threshold_cores", busy_cores_}});
  if (!findings.empty()) result.update(findings);
  result["cases"] = std::move(cases);
  write_file_atomic(options_.json, result.dump(2) + "\n");
  std::printf("results: %s\n", options_.json.c_str());
}

}  // namespace strata::bench
