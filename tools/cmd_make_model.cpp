// `zinc-rt make-model`: placeholder until model/make_model lands.
#include "tools/cli_common.h"

namespace zinc::tools {
void addMakeModelCommand(CLI::App&, const GlobalOptions&) {}
}  // namespace zinc::tools
