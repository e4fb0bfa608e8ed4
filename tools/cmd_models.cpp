// `zinc-rt pull REPO[:FILE]`, `zinc-rt ls`, `zinc-rt rm NAME`: the model cache
// (tools/models/). Every command that takes a model takes a cached model's name too.
#include <fmt/format.h>

#include <filesystem>

#include "tools/cli_common.h"
#include "tools/models/model_cache.h"
#include "tools/models/pull.h"

namespace zinc::tools {

void addModelCommands(CLI::App& app, const GlobalOptions&) {
    auto ref = std::make_shared<std::string>();
    auto options = std::make_shared<models::PullOptions>();
    auto* pull = app.add_subcommand("pull", "download OWNER/REPO[:FILE] (a GGUF on Hugging Face) into the model cache");
    pull->add_option("repo", *ref, "OWNER/REPO, or OWNER/REPO:FILE.gguf (without FILE: the only .gguf, else the Q4_K_M one)")
        ->required();
    pull->add_option("--endpoint", options->endpoint, "the Hub to download from (env HF_ENDPOINT)")
        ->envname("HF_ENDPOINT")
        ->capture_default_str();
    pull->callback([ref, options] { models::pull(*ref, *options); });

    auto* ls = app.add_subcommand("ls", "list the models in the cache (names usable in place of a path)");
    ls->callback([] {
        const auto cached = models::listCached();
        if (cached.empty()) fmt::print(stderr, "no models in {} (zinc-rt pull OWNER/REPO)\n", models::cacheDir().string());
        for (const auto& m : cached) fmt::print("{}  {:.1f} MiB\n", m.name, static_cast<double>(m.bytes) / (1 << 20));
    });

    auto name = std::make_shared<std::string>();
    auto* rm = app.add_subcommand("rm", "remove a model from the cache");
    rm->add_option("name", *name, "the model's name (zinc-rt ls)")->required();
    rm->callback([name] {
        const models::CachedModel m = models::findCached(*name);
        std::filesystem::remove(m.path);
        std::error_code ignored;  // the OWNER/REPO folders go when empty
        std::filesystem::remove(m.path.parent_path(), ignored);
        std::filesystem::remove(m.path.parent_path().parent_path(), ignored);
        fmt::print(stderr, "removed {}\n", m.name);
    });
}

}  // namespace zinc::tools
