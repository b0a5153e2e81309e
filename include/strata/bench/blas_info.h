#pragma once
// Which BLAS kernel this process runs, for benchmark output: both sides of a comparison must
// have run under the same one (OPENBLAS_CORETYPE changes OpenBLAS's choice).
#include <string>

namespace strata::bench {

// "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64, core Haswell
// (OPENBLAS_CORETYPE=Haswell)", or what is known when the library is not OpenBLAS.
std::string blas_description();

}  // namespace strata::bench
