#include "tools/models/model_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace zinc::tools::models {
namespace fs = std::filesystem;

fs::path cacheDir() {
    if (const char* dir = std::getenv("ZINC_MODELS"); dir && *dir) return dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "zinc-rt" / "models";
    const char* home = std::getenv("HOME");
    if (!home || !*home) throw std::runtime_error("no model cache: set ZINC_MODELS, XDG_CACHE_HOME or HOME");
    return fs::path(home) / ".cache" / "zinc-rt" / "models";
}

std::vector<CachedModel> listCached() {
    std::vector<CachedModel> out;
    const fs::path root = cacheDir();
    std::error_code ec;
    if (!fs::is_directory(root, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file() || it->path().extension() != ".gguf" || it.depth() != 2) continue;
        const fs::path rel = fs::relative(it->path(), root);
        auto part = rel.begin();
        const std::string owner = (part++)->string(), repo = (part++)->string(), file = part->string();
        out.push_back({fmt::format("{}/{}:{}", owner, repo, file), it->path(), static_cast<uint64_t>(it->file_size())});
    }
    std::sort(out.begin(), out.end(), [](const CachedModel& a, const CachedModel& b) { return a.name < b.name; });
    return out;
}

CachedModel findCached(const std::string& ref) {
    const std::vector<CachedModel> cached = listCached();
    std::vector<const CachedModel*> matches;
    for (const CachedModel& m : cached) {
        const std::string repo = m.name.substr(0, m.name.find(':'));
        const std::string file = m.path.filename().string();
        if (m.name == ref) return m;
        if (repo == ref || file == ref || m.path.stem().string() == ref) matches.push_back(&m);
    }
    if (matches.size() == 1) return *matches[0];
    if (matches.empty())
        throw std::runtime_error(fmt::format("'{}' is neither a file nor a cached model (`zinc-rt ls` lists them in {}, "
                                             "`zinc-rt pull REPO` fetches one)",
                                             ref, cacheDir().string()));
    std::vector<std::string> names;
    for (const CachedModel* m : matches) names.push_back(m->name);
    throw std::runtime_error(fmt::format("'{}' names {} cached models: {}; give the whole name", ref, names.size(), fmt::join(names, ", ")));
}

fs::path resolveModel(const std::string& ref) {
    std::error_code ec;
    if (fs::exists(ref, ec)) return ref;
    const bool looksLikeAFile = ref.ends_with(".gguf") && ref.find(':') == std::string::npos;
    if (looksLikeAFile) {
        // A missing file keeps the loader's own error unless the cache has it by that name.
        for (const CachedModel& m : listCached())
            if (m.path.filename() == ref) return findCached(ref).path;
        return ref;
    }
    return findCached(ref).path;
}

}  // namespace zinc::tools::models
