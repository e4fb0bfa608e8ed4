// `zinc-rt pm4 decode FILE [--gfx 11|12]`: a PM4 stream (raw little-endian dwords, e.g. an IB
// dumped by a kfd/umq run) printed packet by packet with every field and register by name. It
// follows nothing: an INDIRECT_BUFFER is printed, not entered. A corrupt stream prints the
// packets before the fault, then fails naming the dword offset and the packet.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "pm4/decoder.h"
#include "tools/cli_common.h"

namespace zinc::tools {
namespace {

std::vector<uint32_t> readDwords(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot open");
    const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() % 4 != 0)
        throw std::runtime_error(path + ": " + std::to_string(bytes.size()) +
                                 " bytes is not a whole number of dwords");
    std::vector<uint32_t> dwords(bytes.size() / 4);
    for (size_t i = 0; i < dwords.size(); ++i)
        dwords[i] = uint32_t{bytes[4 * i]} | uint32_t{bytes[4 * i + 1]} << 8 | uint32_t{bytes[4 * i + 2]} << 16 |
                    uint32_t{bytes[4 * i + 3]} << 24;
    return dwords;
}

}  // namespace

void addPm4Command(CLI::App& app, const GlobalOptions&) {
    auto* pm4 = app.add_subcommand("pm4", "PM4 command streams of gfx11/gfx12 compute queues");
    pm4->require_subcommand(1);
    auto path = std::make_shared<std::string>();
    auto gfx = std::make_shared<std::string>("gfx1100");
    auto* decode = pm4->add_subcommand("decode", "print a PM4 stream packet by packet, fields and registers by name");
    decode->add_option("file", *path, "raw little-endian dwords")->required();
    decode->add_option("--gfx", *gfx, "register and packet tables: gfx1100 or 11 (RDNA3), gfx1201 or 12 (RDNA4)")
        ->transform(gfxTarget())
        ->capture_default_str();
    decode->callback([path, gfx] {
        const pm4::Gfx which = *gfx == "gfx1201" ? pm4::Gfx::Gfx12 : pm4::Gfx::Gfx11;
        const std::vector<uint32_t> dwords = readDwords(*path);
        const pm4::Decoded decoded = pm4::decode(dwords, which);
        std::printf("%s: %zu dwords, %s\n", path->c_str(), dwords.size(), std::string(pm4::gfxName(which)).c_str());
        for (const pm4::DecodedPacket& p : decoded.packets) std::fputs(pm4::formatPacket(p, which).c_str(), stdout);
        if (decoded.error) throw std::runtime_error(*path + ": " + decoded.error->describe());
    });
}

}  // namespace zinc::tools
