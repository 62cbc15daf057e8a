// SPDX-License-Identifier: GPL-2.0-or-later
// dmalab's DMA race detector: a QEMU TCG plugin that checks every guest memory access
// against the descriptors a dmalab DMA model has in flight (race_table.h) and reports
//   - a write to a DMA source or destination while its descriptor is in flight;
//   - a read of a DMA destination before its completion was signalled.
// Each report names the vCPU, the guest PC, the instruction (QEMU's disassembler, Capstone
// for x86) and the descriptor; runner.py resolves the PC to a kernel symbol.
//
//   -plugin path/libdmalab-race.so,table=FILE,log=FILE
// with the same FILE as dmalab-ioat's race-table property. docs/race-detector.rst.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <tuple>

extern "C" {
#include <qemu-plugin.h>
QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;
}

#include "dmalab/race_table.h"

namespace
{

struct Insn {
    uint64_t pc;
    std::string disas;
};

DmalabRaceTable* table;
FILE* out;
std::mutex lock;                                    // reports
std::set<std::tuple<uint64_t, uint64_t, int>> seen; // (pc, descriptor, kind)
uint64_t reports;

enum Kind { kWriteSource, kWriteDestination, kReadDestination };
const char* const kKindNames[] = {"write-to-dma-source", "write-to-dma-destination",
                                  "read-of-dma-destination"};

bool inside(uint64_t addr, unsigned size, uint64_t start, uint64_t len)
{
    return addr < start + len && start < addr + size;
}

void report(unsigned vcpu, const Insn& insn, Kind kind, uint64_t addr, const DmalabRaceSlot& s)
{
    std::lock_guard<std::mutex> guard(lock);
    if (!seen.insert({insn.pc, s.desc, kind}).second)
        return;
    reports++;
    std::fprintf(out,
                 "race vcpu=%u pc=0x%" PRIx64 " kind=%s addr=0x%" PRIx64 " device=%u channel=%u "
                 "desc=0x%" PRIx64 " src=0x%" PRIx64 " dst=0x%" PRIx64 " len=%" PRIu64
                 " insn=\"%s\"\n",
                 vcpu, insn.pc, kKindNames[kind], addr, s.device, s.channel, s.desc, s.src, s.dst,
                 s.len, insn.disas.c_str());
    std::fflush(out);
}

void on_access(unsigned vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void* userdata)
{
    // The fast path: nothing in flight.
    if (!__atomic_load_n(&table->busy, __ATOMIC_ACQUIRE))
        return;
    struct qemu_plugin_hwaddr* hw = qemu_plugin_get_hwaddr(info, vaddr);
    if (!hw || qemu_plugin_hwaddr_is_io(hw))
        return;
    uint64_t addr = qemu_plugin_hwaddr_phys_addr(hw);
    unsigned size = 1u << qemu_plugin_mem_size_shift(info);
    bool store = qemu_plugin_mem_is_store(info);
    for (unsigned i = 0; i < DMALAB_RACE_SLOTS; i++) {
        const DmalabRaceSlot& live = table->slot[i];
        uint64_t seq = __atomic_load_n(&live.seq, __ATOMIC_ACQUIRE);
        if (seq & 1 || !__atomic_load_n(&live.busy, __ATOMIC_RELAXED))
            continue;
        DmalabRaceSlot s;
        std::memcpy(&s, &live, sizeof s);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&live.seq, __ATOMIC_RELAXED) != seq || !s.busy)
            continue; // changed under us: the descriptor moved on
        const Insn& insn = *static_cast<const Insn*>(userdata);
        if (store && inside(addr, size, s.src, s.len))
            report(vcpu, insn, kWriteSource, addr, s);
        else if (store && inside(addr, size, s.dst, s.len))
            report(vcpu, insn, kWriteDestination, addr, s);
        else if (!store && inside(addr, size, s.dst, s.len))
            report(vcpu, insn, kReadDestination, addr, s);
    }
}

void on_translate(qemu_plugin_id_t, struct qemu_plugin_tb* tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
        char* disas = qemu_plugin_insn_disas(insn);
        // Kept for the plugin's life: a translated block may run until QEMU exits.
        auto* data = new Insn{qemu_plugin_insn_vaddr(insn), disas ? disas : "?"};
        g_free(disas);
        qemu_plugin_register_vcpu_mem_cb(insn, on_access, QEMU_PLUGIN_CB_NO_REGS,
                                         QEMU_PLUGIN_MEM_RW, data);
    }
}

void on_exit(qemu_plugin_id_t, void*)
{
    std::fprintf(out, "races %" PRIu64 "\n", reports);
    std::fflush(out);
}

// The table file, created if the device has not created it yet.
DmalabRaceTable* map_table(const char* path)
{
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0)
        return nullptr;
    void* p = nullptr;
    if (ftruncate(fd, sizeof(DmalabRaceTable)) == 0)
        p = mmap(nullptr, sizeof(DmalabRaceTable), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? nullptr : static_cast<DmalabRaceTable*>(p);
}

} // namespace

extern "C" QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t*,
                                                      int argc, char** argv)
{
    const char* table_path = nullptr;
    const char* log_path = nullptr;
    for (int i = 0; i < argc; i++) {
        if (!std::strncmp(argv[i], "table=", 6))
            table_path = argv[i] + 6;
        else if (!std::strncmp(argv[i], "log=", 4))
            log_path = argv[i] + 4;
        else {
            std::fprintf(stderr, "dmalab-race: unknown argument '%s' (table=FILE,log=FILE)\n",
                         argv[i]);
            return 1;
        }
    }
    if (!table_path) {
        std::fprintf(stderr, "dmalab-race: table=FILE is required\n");
        return 1;
    }
    table = map_table(table_path);
    if (!table) {
        std::fprintf(stderr, "dmalab-race: cannot map %s: %s\n", table_path, std::strerror(errno));
        return 1;
    }
    out = log_path ? std::fopen(log_path, "w") : stderr;
    if (!out) {
        std::fprintf(stderr, "dmalab-race: cannot write %s: %s\n", log_path, std::strerror(errno));
        return 1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit, nullptr);
    return 0;
}
