// strata: one binary, one subcommand per job. Each command registers itself in commands.h.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/core/memory_reuse.h"

int main(int argc, char** argv) {
  strata::keep_freed_memory();  // before any tensor is allocated
  CLI::App app{"strata: structure-aware, efficient Transformers for long documents"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "strata 0.1.0");
  strata::cli::register_all(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    strata::cli::run_selected(app);
  } catch (const strata::cli::ExitCode& e) {
    return e.code;
  } catch (const strata::Error& e) {
    std::fprintf(stderr, "strata: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "strata: internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}
