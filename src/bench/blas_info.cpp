#include "strata/bench/blas_info.h"

#include <dlfcn.h>

#include <cstdlib>

namespace strata::bench {

std::string blas_description() {
  // OpenBLAS's own queries, when the BLAS loaded into this process is OpenBLAS.
  using Query = char* (*)();
  const auto config = reinterpret_cast<Query>(::dlsym(RTLD_DEFAULT, "openblas_get_config"));
  const auto core = reinterpret_cast<Query>(::dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  std::string text = config ? config() : "a BLAS that is not OpenBLAS (or not loaded yet)";
  if (core) text += std::string(", core ") + core();
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  text += forced ? std::string(" (OPENBLAS_CORETYPE=") + forced + ")" : " (OPENBLAS_CORETYPE unset)";
  return text;
}

}  // namespace strata::bench
