// `zinc-rt gguf FILE`: the metadata and tensor table of a GGUF file, after full validation.
#include <iostream>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_print.h"
#include "tools/cli_common.h"

namespace zinc::tools {

void addGgufCommand(CLI::App& app, const GlobalOptions&) {
    auto path = std::make_shared<std::string>();
    auto all = std::make_shared<bool>(false);
    auto* cmd = app.add_subcommand("gguf", "print a GGUF file's metadata and tensor table (validates it first)");
    cmd->add_option("file", *path, "GGUF file")->required();
    cmd->add_flag("--all", *all, "print every element of metadata arrays");
    cmd->callback([path, all] {
        auto file = model::GgufFile::open(*path);
        model::printGguf(*file, std::cout, *all);
    });
}

}  // namespace zinc::tools
