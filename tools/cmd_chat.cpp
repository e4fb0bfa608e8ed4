// `zinc-rt chat`: placeholder until chat templates land.
#include "tools/cli_common.h"

namespace zinc::tools {
void addChatCommand(CLI::App&, const GlobalOptions&) {}
}  // namespace zinc::tools
