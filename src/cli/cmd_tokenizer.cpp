#include "commands.h"

namespace strata::cli {

void register_tokenizer(CLI::App& app) { (void)app; }  // placeholder: being written this session

}  // namespace strata::cli
