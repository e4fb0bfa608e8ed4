#include "kernels/code_object.h"

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "kernels/msgpack.h"

namespace zinc::kernels {

namespace {

// ELF64 constants (System V gABI; AMDGPU values from LLVM AMDGPUUsage.rst).
constexpr uint8_t kElfClass64 = 2, kElfDataLsb = 1, kElfOsAbiAmdgpuHsa = 64;
constexpr uint16_t kEmAmdgpu = 224;
constexpr uint32_t kShtSymtab = 2, kShtStrtab = 3, kShtRela = 4, kShtNobits = 8, kShtNote = 7, kShtRel = 9, kShtDynsym = 11;
constexpr uint64_t kShfExecInstr = 4;
constexpr uint32_t kPtLoad = 1;
constexpr uint32_t kNtAmdgpuMetadata = 32;

struct Section {
    uint32_t name = 0, type = 0;
    uint64_t flags = 0, addr = 0, offset = 0, size = 0;
    uint32_t link = 0;
    uint64_t entsize = 0;
};

struct Symbol {
    std::string name;
    uint64_t value = 0, size = 0;
    uint16_t shndx = 0;
};

template <typename T>
T readLe(std::span<const uint8_t> b, uint64_t off) {
    T v;
    std::memcpy(&v, b.data() + off, sizeof(T));
    return v;  // the host is little endian, as the ELF data (checked in parse)
}

}  // namespace

uint32_t KernelDescriptor::kernargPtrSgpr() const {
    uint32_t s = 0;
    if (kernelCodeProperties & kd::kEnablePrivateSegmentBuffer) s += 4;
    if (kernelCodeProperties & kd::kEnableDispatchPtr) s += 2;
    if (kernelCodeProperties & kd::kEnableQueuePtr) s += 2;
    return s;
}

KernelDescriptor KernelDescriptor::decode(std::span<const uint8_t, 64> b) {
    KernelDescriptor d;
    const std::span<const uint8_t> s(b.data(), b.size());
    d.groupSegmentFixedSize = readLe<uint32_t>(s, 0);
    d.privateSegmentFixedSize = readLe<uint32_t>(s, 4);
    d.kernargSize = readLe<uint32_t>(s, 8);
    d.kernelCodeEntryByteOffset = readLe<int64_t>(s, 16);
    d.computePgmRsrc3 = readLe<uint32_t>(s, 44);
    d.computePgmRsrc1 = readLe<uint32_t>(s, 48);
    d.computePgmRsrc2 = readLe<uint32_t>(s, 52);
    d.kernelCodeProperties = readLe<uint16_t>(s, 56);
    d.kernargPreload = readLe<uint16_t>(s, 58);
    return d;
}

const KernelArg* KernelInfo::arg(std::string_view argName) const {
    for (const auto& a : args)
        if (a.name == argName) return &a;
    return nullptr;
}

size_t KernelInfo::explicitArgCount() const {
    return static_cast<size_t>(std::count_if(args.begin(), args.end(), [](const KernelArg& a) { return a.kind != ArgKind::Hidden; }));
}

std::string_view gfxTargetOfMach(uint32_t mach) {
    switch (mach) {
        case 0x41: return "gfx1100";
        case 0x42: return "gfx1101";
        case 0x43: return "gfx1102";
        case 0x44: return "gfx1103";
        case 0x48: return "gfx1200";
        case 0x4e: return "gfx1201";
        default: return "";
    }
}

class CodeObjectParser {
public:
    CodeObjectParser(CodeObject& co, const LaunchSupport& support) : co_(co), b_(co.bytes_), support_(support) {}

    void run() {
        header();
        sections();
        programHeaders();
        const MsgValue meta = metadata();
        symbols();
        refuseRelocations();
        kernels(meta);
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw CodeObjectError(fmt::format("code object {}: {}", co_.origin_, what));
    }
    // [off, off + size) lies inside the file (overflow-safe).
    void within(uint64_t off, uint64_t size, const std::string& what) const {
        if (off > b_.size() || size > b_.size() - off)
            fail(fmt::format("{} at offset {} size {} runs past the end of the file ({} bytes)", what, off, size, b_.size()));
    }

    void header() {
        if (b_.size() < 64) fail(fmt::format("truncated: {} bytes, an ELF64 header needs 64", b_.size()));
        if (std::memcmp(b_.data(), "\x7f" "ELF", 4) != 0) fail("bad magic: not an ELF file");
        if (b_[4] != kElfClass64) fail(fmt::format("ELF class {} is not ELF64", b_[4]));
        if (b_[5] != kElfDataLsb) fail("not little-endian ELF");
        if (b_[7] != kElfOsAbiAmdgpuHsa) fail(fmt::format("OS/ABI {} is not AMDGPU HSA (64)", b_[7]));
        if (b_[8] < 2 || b_[8] > 4) fail(fmt::format("ABI version {} is not code object v4-v6", b_[8]));
        const uint16_t machine = readLe<uint16_t>(b_, 18);
        if (machine != kEmAmdgpu) fail(fmt::format("machine {} is not EM_AMDGPU (224)", machine));
        co_.elfFlags_ = readLe<uint32_t>(b_, 48);
        phoff_ = readLe<uint64_t>(b_, 32);
        shoff_ = readLe<uint64_t>(b_, 40);
        const uint16_t phentsize = readLe<uint16_t>(b_, 54), shentsize = readLe<uint16_t>(b_, 58);
        phnum_ = readLe<uint16_t>(b_, 56);
        shnum_ = readLe<uint16_t>(b_, 60);
        shstrndx_ = readLe<uint16_t>(b_, 62);
        if (phnum_ && phentsize != 56) fail(fmt::format("program header entry size {} (expected 56)", phentsize));
        if (shnum_ && shentsize != 64) fail(fmt::format("section header entry size {} (expected 64)", shentsize));
        within(phoff_, uint64_t{phnum_} * 56, "program header table");
        within(shoff_, uint64_t{shnum_} * 64, "section header table");
        if (shnum_ == 0) fail("no section headers");
        if (shstrndx_ >= shnum_) fail(fmt::format("section name table index {} out of {} sections", shstrndx_, shnum_));
    }

    void sections() {
        for (uint32_t i = 0; i < shnum_; ++i) {
            const uint64_t h = shoff_ + uint64_t{i} * 64;
            Section s;
            s.name = readLe<uint32_t>(b_, h);
            s.type = readLe<uint32_t>(b_, h + 4);
            s.flags = readLe<uint64_t>(b_, h + 8);
            s.addr = readLe<uint64_t>(b_, h + 16);
            s.offset = readLe<uint64_t>(b_, h + 24);
            s.size = readLe<uint64_t>(b_, h + 32);
            s.link = readLe<uint32_t>(b_, h + 40);
            s.entsize = readLe<uint64_t>(b_, h + 56);
            if (s.type != kShtNobits && s.type != 0) within(s.offset, s.size, fmt::format("section {}", i));
            sections_.push_back(s);
        }
    }

    void programHeaders() {
        for (uint32_t i = 0; i < phnum_; ++i) {
            const uint64_t h = phoff_ + uint64_t{i} * 56;
            if (readLe<uint32_t>(b_, h) != kPtLoad) continue;
            LoadSegment seg;
            seg.flags = readLe<uint32_t>(b_, h + 4);
            seg.fileOffset = readLe<uint64_t>(b_, h + 8);
            seg.vaddr = readLe<uint64_t>(b_, h + 16);
            seg.fileSize = readLe<uint64_t>(b_, h + 32);
            seg.memSize = readLe<uint64_t>(b_, h + 40);
            within(seg.fileOffset, seg.fileSize, fmt::format("load segment {}", i));
            if (seg.fileSize > seg.memSize) fail(fmt::format("load segment {}: file size {} exceeds memory size {}", i, seg.fileSize, seg.memSize));
            if (seg.vaddr > (uint64_t{1} << 30) || seg.memSize > (uint64_t{1} << 30))
                fail(fmt::format("load segment {}: address 0x{:x} size {} is implausible", i, seg.vaddr, seg.memSize));
            co_.segments_.push_back(seg);
        }
        if (co_.segments_.empty()) fail("no loadable segment");
    }

    MsgValue metadata() {
        for (size_t i = 0; i < sections_.size(); ++i) {
            const Section& s = sections_[i];
            if (s.type != kShtNote) continue;
            uint64_t p = s.offset;
            const uint64_t end = s.offset + s.size;
            while (end - p >= 12) {
                const uint32_t namesz = readLe<uint32_t>(b_, p), descsz = readLe<uint32_t>(b_, p + 4),
                               type = readLe<uint32_t>(b_, p + 8);
                const uint64_t nameOff = p + 12;
                const uint64_t descOff = nameOff + ((uint64_t{namesz} + 3) & ~uint64_t{3});
                const uint64_t next = descOff + ((uint64_t{descsz} + 3) & ~uint64_t{3});
                if (descOff > end || descsz > end - descOff)
                    fail(fmt::format("note at offset {} (name size {}, desc size {}) runs past its section's end at {}", p, namesz, descsz, end));
                const std::string_view name(reinterpret_cast<const char*>(b_.data() + nameOff), namesz);
                if (type == kNtAmdgpuMetadata && name == std::string_view("AMDGPU\0", 7)) {
                    try {
                        return parseMsgpack(b_.subspan(descOff, descsz));
                    } catch (const MsgpackError& e) {
                        fail(fmt::format("NT_AMDGPU_METADATA note at offset {}: {}", descOff, e.what()));
                    }
                }
                if (next >= end) break;
                p = next;
            }
        }
        fail("no NT_AMDGPU_METADATA note");
    }

    void symbols() {
        const Section* tab = nullptr;
        for (uint32_t want : {kShtSymtab, kShtDynsym}) {
            for (const auto& s : sections_)
                if (s.type == want) { tab = &s; break; }
            if (tab) break;
        }
        if (!tab) fail("no symbol table");
        if (tab->entsize != 24) fail(fmt::format("symbol table entry size {} (expected 24)", tab->entsize));
        if (tab->link >= sections_.size()) fail(fmt::format("symbol table links to section {} of {}", tab->link, sections_.size()));
        const Section& str = sections_[tab->link];
        if (str.type != kShtStrtab) fail(fmt::format("symbol table links to section {} of type {}, not a string table", tab->link, str.type));
        for (uint64_t off = tab->offset; off + 24 <= tab->offset + tab->size; off += 24) {
            Symbol sym;
            const uint32_t nameOff = readLe<uint32_t>(b_, off);
            sym.shndx = readLe<uint16_t>(b_, off + 6);
            sym.value = readLe<uint64_t>(b_, off + 8);
            sym.size = readLe<uint64_t>(b_, off + 16);
            if (nameOff >= str.size) fail(fmt::format("symbol at offset {}: name offset {} past the string table ({} bytes)", off, nameOff, str.size));
            const char* begin = reinterpret_cast<const char*>(b_.data() + str.offset + nameOff);
            const void* nul = std::memchr(begin, 0, static_cast<size_t>(str.size - nameOff));
            if (!nul) fail(fmt::format("symbol at offset {}: name is not terminated", off));
            sym.name.assign(begin, static_cast<const char*>(nul));
            symbols_.push_back(std::move(sym));
        }
    }

    void refuseRelocations() const {
        for (const auto& s : sections_)
            if ((s.type == kShtRela || s.type == kShtRel) && s.size > 0)
                fail(fmt::format("has {} bytes of relocations, which this loader does not apply", s.size));
    }

    const Symbol* symbol(std::string_view name) const {
        for (const auto& s : symbols_)
            if (s.name == name) return &s;
        return nullptr;
    }

    static std::optional<uint32_t> u32(const MsgValue& map, std::string_view key) {
        const MsgValue* v = map.find(key);
        if (!v) return std::nullopt;
        const auto u = v->asUnsigned();
        if (!u || *u > 0xffffffffu) return std::nullopt;
        return static_cast<uint32_t>(*u);
    }
    std::string str(const MsgValue& map, std::string_view key) const {
        const MsgValue* v = map.find(key);
        return v && v->asString() ? std::string(*v->asString()) : std::string();
    }

    void kernels(const MsgValue& meta) {
        if (meta.kind != MsgValue::Kind::Map) fail("metadata is not a map");
        co_.targetTriple_ = str(meta, "amdhsa.target");
        const auto dash = co_.targetTriple_.rfind('-');
        co_.target_ = dash == std::string::npos ? "" : co_.targetTriple_.substr(dash + 1);
        if (co_.target_.rfind("gfx", 0) != 0) fail(fmt::format("metadata amdhsa.target '{}' names no gfx target", co_.targetTriple_));
        const std::string_view mach = gfxTargetOfMach(co_.elfFlags_ & 0xffu);
        // A target may carry feature suffixes (gfx1100:xnack-); compare the processor only.
        const std::string processor = co_.target_.substr(0, co_.target_.find(':'));
        if (!mach.empty() && mach != processor)
            fail(fmt::format("ELF flags say {} but the metadata says {}", mach, co_.target_));
        const MsgValue* list = meta.find("amdhsa.kernels");
        if (!list || list->kind != MsgValue::Kind::Array) fail("metadata has no amdhsa.kernels array");
        for (const auto& k : list->items) {
            KernelInfo info = kernel(k);
            // find() and findByEntry() (how the simulated CP finds what to run) need both unique.
            for (const KernelInfo& other : co_.kernels_) {
                if (other.name == info.name) fail(fmt::format("kernel '{}' is listed twice in amdhsa.kernels", info.name));
                if (other.entryAddress == info.entryAddress)
                    fail(fmt::format("kernels '{}' and '{}' have the same entry address 0x{:x} (descriptor '{}')", other.name,
                                     info.name, info.entryAddress, info.symbol));
            }
            co_.kernels_.push_back(std::move(info));
        }
    }

    KernelInfo kernel(const MsgValue& m) {
        if (m.kind != MsgValue::Kind::Map) fail("an amdhsa.kernels entry is not a map");
        KernelInfo k;
        k.name = str(m, ".name");
        if (k.name.empty()) fail("a kernel has no .name");
        k.symbol = str(m, ".symbol");
        auto need = [&](std::string_view key) {
            const auto v = u32(m, key);
            if (!v) fail(fmt::format("kernel '{}': metadata {} is missing or not an unsigned 32-bit integer", k.name, key));
            return *v;
        };
        k.kernargSegmentSize = need(".kernarg_segment_size");
        k.kernargSegmentAlign = need(".kernarg_segment_align");
        k.groupSegmentFixedSize = need(".group_segment_fixed_size");
        k.privateSegmentFixedSize = need(".private_segment_fixed_size");
        k.sgprCount = need(".sgpr_count");
        k.vgprCount = need(".vgpr_count");
        k.wavefrontSize = need(".wavefront_size");
        k.maxFlatWorkgroupSize = need(".max_flat_workgroup_size");
        if (const MsgValue* r = m.find(".reqd_workgroup_size")) {
            if (r->kind != MsgValue::Kind::Array || r->items.size() != 3) fail(fmt::format("kernel '{}': .reqd_workgroup_size is not 3 integers", k.name));
            for (size_t i = 0; i < 3; ++i) {
                const auto v = r->items[i].asUnsigned();
                if (!v || *v == 0 || *v > 1024) fail(fmt::format("kernel '{}': .reqd_workgroup_size[{}] is invalid", k.name, i));
                k.reqdWorkgroupSize[i] = static_cast<uint32_t>(*v);
            }
        }
        if (const MsgValue* d = m.find(".uses_dynamic_stack")) k.usesDynamicStack = d->kind == MsgValue::Kind::Bool && d->boolean;
        if (k.wavefrontSize != 32 && k.wavefrontSize != 64) fail(fmt::format("kernel '{}': wavefront size {}", k.name, k.wavefrontSize));
        args(m, k);
        descriptor(k);
        checkLaunchable(k);
        return k;
    }

    void args(const MsgValue& m, KernelInfo& k) {
        const MsgValue* list = m.find(".args");
        if (!list) return;
        if (list->kind != MsgValue::Kind::Array) fail(fmt::format("kernel '{}': .args is not an array", k.name));
        uint32_t end = 0;
        for (size_t i = 0; i < list->items.size(); ++i) {
            const MsgValue& a = list->items[i];
            if (a.kind != MsgValue::Kind::Map) fail(fmt::format("kernel '{}': argument {} is not a map", k.name, i));
            KernelArg arg;
            arg.name = str(a, ".name");
            arg.typeName = str(a, ".type_name");
            arg.valueKind = str(a, ".value_kind");
            arg.addressSpace = str(a, ".address_space");
            const auto off = u32(a, ".offset"), size = u32(a, ".size");
            if (!off || !size || arg.valueKind.empty())
                fail(fmt::format("kernel '{}': argument {} lacks .offset, .size or .value_kind", k.name, i));
            arg.offset = *off;
            arg.size = *size;
            if (uint64_t{arg.offset} + arg.size > k.kernargSegmentSize)
                fail(fmt::format("kernel '{}': argument {} at offset {} size {} ends past the kernarg segment ({} bytes)", k.name, i,
                                 arg.offset, arg.size, k.kernargSegmentSize));
            if (arg.offset < end) fail(fmt::format("kernel '{}': argument {} at offset {} overlaps the previous one", k.name, i, arg.offset));
            end = arg.offset + arg.size;
            if (arg.valueKind == "global_buffer") {
                arg.kind = ArgKind::GlobalBuffer;
                if (arg.size != 8) fail(fmt::format("kernel '{}': pointer argument {} has size {}", k.name, i, arg.size));
            } else if (arg.valueKind == "by_value") {
                arg.kind = ArgKind::ByValue;
            } else if (arg.valueKind.rfind("hidden_", 0) == 0) {
                arg.kind = ArgKind::Hidden;
            }
            k.args.push_back(std::move(arg));
        }
    }

    void descriptor(KernelInfo& k) {
        const Symbol* s = symbol(k.symbol);
        if (!s) fail(fmt::format("kernel '{}': descriptor symbol '{}' not in the symbol table", k.name, k.symbol));
        if (s->size != 64) fail(fmt::format("kernel '{}': descriptor '{}' is {} bytes, not 64", k.name, k.symbol, s->size));
        if (s->shndx == 0 || s->shndx >= sections_.size())
            fail(fmt::format("kernel '{}': descriptor '{}' is in section {} of {}", k.name, k.symbol, s->shndx, sections_.size()));
        const Section& sec = sections_[s->shndx];
        if (sec.type == kShtNobits || s->value < sec.addr || s->value - sec.addr > sec.size || sec.size - (s->value - sec.addr) < 64)
            fail(fmt::format("kernel '{}': descriptor at address 0x{:x} is outside its section", k.name, s->value));
        const uint64_t off = sec.offset + (s->value - sec.addr);
        within(off, 64, fmt::format("kernel '{}' descriptor", k.name));
        k.descriptor = KernelDescriptor::decode(std::span<const uint8_t, 64>(b_.data() + off, 64));
        k.descriptorAddress = s->value;
        const auto& d = k.descriptor;
        k.entryAddress = s->value + static_cast<uint64_t>(d.kernelCodeEntryByteOffset);
        if (k.entryAddress % 256 != 0) fail(fmt::format("kernel '{}': entry address 0x{:x} is not 256-byte aligned", k.name, k.entryAddress));
        bool inCode = false;
        for (const auto& c : sections_)
            if ((c.flags & kShfExecInstr) && k.entryAddress >= c.addr && k.entryAddress - c.addr < c.size) inCode = true;
        if (!inCode) fail(fmt::format("kernel '{}': entry address 0x{:x} is not in an executable section", k.name, k.entryAddress));
        if (d.kernargSize != k.kernargSegmentSize || d.groupSegmentFixedSize != k.groupSegmentFixedSize ||
            d.privateSegmentFixedSize != k.privateSegmentFixedSize)
            fail(fmt::format("kernel '{}': descriptor (kernarg {}, LDS {}, scratch {}) disagrees with the metadata ({}, {}, {})", k.name,
                             d.kernargSize, d.groupSegmentFixedSize, d.privateSegmentFixedSize, k.kernargSegmentSize,
                             k.groupSegmentFixedSize, k.privateSegmentFixedSize));
        if (d.wave32() != (k.wavefrontSize == 32))
            fail(fmt::format("kernel '{}': descriptor wave32 bit disagrees with wavefront size {}", k.name, k.wavefrontSize));
    }

    void checkLaunchable(const KernelInfo& k) const {
        for (const auto& a : k.args)
            if (a.kind == ArgKind::Hidden &&
                std::find(support_.hiddenArgs.begin(), support_.hiddenArgs.end(), a.valueKind) == support_.hiddenArgs.end())
                fail(fmt::format("kernel '{}' needs hidden argument {} (kernarg offset {}), which the launcher does not provide", k.name,
                                 a.valueKind, a.offset));
            else if (a.kind == ArgKind::Other)
                fail(fmt::format("kernel '{}': argument kind {} at offset {} cannot be launched", k.name, a.valueKind, a.offset));
        const auto& d = k.descriptor;
        if (k.usesDynamicStack || d.usesDynamicStack()) fail(fmt::format("kernel '{}' uses a dynamic stack, which the launcher cannot size", k.name));
        if (!support_.scratch && (k.privateSegmentFixedSize > 0 || d.scratchEnabled()))
            fail(fmt::format("kernel '{}' needs {} bytes of scratch per work-item, which the launcher does not set up", k.name,
                             k.privateSegmentFixedSize));
        const uint16_t unsupported = kd::kEnablePrivateSegmentBuffer | kd::kEnableDispatchPtr | kd::kEnableQueuePtr |
                                     kd::kEnableDispatchId | kd::kEnableFlatScratchInit | kd::kEnablePrivateSegmentSize;
        if (d.kernelCodeProperties & unsupported)
            fail(fmt::format("kernel '{}' asks for user SGPRs the launcher does not provide (kernel_code_properties 0x{:04x})", k.name,
                             d.kernelCodeProperties));
        if (k.kernargSegmentSize > 0 && !d.kernargPtrEnabled())
            fail(fmt::format("kernel '{}' has {} kernarg bytes but no kernarg segment pointer", k.name, k.kernargSegmentSize));
        if (d.kernargPtrEnabled() && d.userSgprCount() < d.kernargPtrSgpr() + 2)
            fail(fmt::format("kernel '{}': {} user SGPRs cannot hold the kernarg pointer", k.name, d.userSgprCount()));
    }

    CodeObject& co_;
    std::span<const uint8_t> b_;
    const LaunchSupport& support_;
    uint64_t phoff_ = 0, shoff_ = 0;
    uint32_t phnum_ = 0, shnum_ = 0, shstrndx_ = 0;
    std::vector<Section> sections_;
    std::vector<Symbol> symbols_;
};

CodeObject CodeObject::parse(std::span<const uint8_t> bytes, std::string_view origin, const LaunchSupport& support) {
    CodeObject co;
    co.origin_ = std::string(origin);
    co.bytes_.assign(bytes.begin(), bytes.end());
    CodeObjectParser(co, support).run();
    return co;
}

const KernelInfo* CodeObject::find(std::string_view name) const {
    for (const auto& k : kernels_)
        if (k.name == name) return &k;
    return nullptr;
}

const KernelInfo* CodeObject::findByEntry(uint64_t entryAddress) const {
    for (const auto& k : kernels_)
        if (k.entryAddress == entryAddress) return &k;
    return nullptr;
}

const KernelInfo& CodeObject::kernel(std::string_view name) const {
    if (const KernelInfo* k = find(name)) return *k;
    throw CodeObjectError(fmt::format("code object {} ({}) has no kernel '{}'", origin_, target_, name));
}

uint64_t CodeObject::imageSize() const {
    uint64_t end = 0;
    for (const auto& s : segments_) end = std::max(end, s.vaddr + s.memSize);
    return end;
}

std::vector<uint8_t> CodeObject::loadImage() const {
    std::vector<uint8_t> image(static_cast<size_t>(imageSize()), 0);
    for (const auto& s : segments_)
        std::memcpy(image.data() + s.vaddr, bytes_.data() + s.fileOffset, static_cast<size_t>(s.fileSize));
    return image;
}

}  // namespace zinc::kernels
