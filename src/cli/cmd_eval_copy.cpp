#include "commands.h"

namespace strata::cli {

void register_eval_copy(CLI::App& eval) { (void)eval; }  // placeholder: being written this session

}  // namespace strata::cli
