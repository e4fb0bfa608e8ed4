// The only file that includes LLVM: the AMDGPU MC disassembler and instruction printer, set up
// through the public TargetRegistry API (../shared/amd/TOOLCHAIN.md, "Decoding machine code").
#include <llvm/ADT/ArrayRef.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include <mutex>

#include "kfd/sim/isa/program.h"

namespace zinc::kfd::isa {

std::vector<DisassembledLine> disassemble(const std::string& target, const uint8_t* bytes, size_t size, uint64_t base) {
    static std::once_flag once;
    std::call_once(once, [] {
        llvm::InitializeAllTargetInfos();
        llvm::InitializeAllTargetMCs();
        llvm::InitializeAllDisassemblers();
    });
    const std::string tripleName = "amdgcn-amd-amdhsa";
    std::string error;
    const llvm::Target* t = llvm::TargetRegistry::lookupTarget(tripleName, error);
    if (!t) throw IsaError("LLVM has no AMDGPU target: " + error);
    const llvm::Triple triple(tripleName);
    std::unique_ptr<llvm::MCRegisterInfo> mri(t->createMCRegInfo(tripleName));
    llvm::MCTargetOptions options;
    std::unique_ptr<llvm::MCAsmInfo> mai(t->createMCAsmInfo(*mri, tripleName, options));
    std::unique_ptr<llvm::MCSubtargetInfo> sti(t->createMCSubtargetInfo(tripleName, target, ""));
    std::unique_ptr<llvm::MCInstrInfo> mii(t->createMCInstrInfo());
    if (!mri || !mai || !sti || !mii) throw IsaError("LLVM could not set up the AMDGPU MC layer for " + target);
    llvm::MCContext context(triple, mai.get(), mri.get(), sti.get());
    std::unique_ptr<llvm::MCDisassembler> dis(t->createMCDisassembler(*sti, context));
    std::unique_ptr<llvm::MCInstPrinter> printer(t->createMCInstPrinter(triple, 0, *mai, *mii, *mri));
    if (!dis || !printer) throw IsaError("LLVM has no AMDGPU disassembler for " + target);

    std::vector<DisassembledLine> lines;
    const llvm::ArrayRef<uint8_t> all(bytes, size);
    for (uint64_t at = 0; at < size;) {
        llvm::MCInst inst;
        uint64_t length = 0;
        DisassembledLine line;
        line.address = base + at;
        if (dis->getInstruction(inst, length, all.slice(at), base + at, llvm::nulls()) == llvm::MCDisassembler::Success && length) {
            std::string text;
            llvm::raw_string_ostream os(text);
            printer->printInst(&inst, base + at, "", *sti, os);
            os.flush();
            size_t b = text.find_first_not_of(" \t");
            line.text = b == std::string::npos ? "" : text.substr(b);
            line.size = uint32_t(length);
            at += length;
        } else {
            line.size = 0;
            at += 4;
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

}  // namespace zinc::kfd::isa
