// SPDX-License-Identifier: GPL-2.0-or-later
// dmalab's instruction profiler: a QEMU TCG plugin that counts the guest instructions each
// translation block runs inside windows the guest opens and closes itself with two marker
// instructions (docs/profile.rst):
//   xchg %bx,%bx  (66 87 db)  opens a window; %eax holds the window's id
//   xchg %cx,%cx  (66 87 c9)  closes it; %eax holds how many operations it covered
// Both leave every register and flag as it was, so they do nothing on hardware or without
// the plugin. Windows count the instructions of every vCPU. At exit the plugin writes, for
// each window id and each translation block start address, the block's executions and
// instructions inside windows of that id, and every window's total, to out=FILE.
//
//   -plugin path/libdmalab-profile.so,out=FILE[,count=tb|insn]
//
// count=tb (the default) adds a block's instruction count when the block starts, through a
// callback that runs only while a window is open; a block left early (an exception, or an
// MMIO access that -icount makes QEMU re-execute on its own) still counts whole.
// count=insn calls back on every instruction inside a window instead: exact, and slower.

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

extern "C" {
#include <qemu-plugin.h>
QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;
}

namespace
{

constexpr uint8_t kOpenMarker[] = {0x66, 0x87, 0xdb};  // xchg %bx,%bx
constexpr uint8_t kCloseMarker[] = {0x66, 0x87, 0xc9}; // xchg %cx,%cx
constexpr unsigned kMaxVcpus = 4096;
constexpr unsigned kChunkBits = 12;
constexpr uint32_t kChunk = 1u << kChunkBits;
constexpr uint32_t kMaxChunks = 1u << 12; // 16M translations
constexpr size_t kMaxIds = 4096;

struct Counts {
    uint64_t execs;
    uint64_t insns;
};

// One translation of a block; a start address translated again gets another.
struct Block {
    uint64_t vaddr;
    uint32_t slot; // its counters' index in every id's table
    uint32_t n;    // instructions
};

struct Marker {
    const Block* block;
    uint32_t index; // position in the block
    bool open;
};

// The counters of one window id, by block slot, in chunks allocated on first use.
struct Table {
    uint32_t id;
    std::atomic<Counts*> chunks[kMaxChunks];
};

struct Window {
    uint64_t seq;
    uint32_t id;
    unsigned vcpu;
    uint64_t ops;
    uint64_t insns;
    uint64_t execs;
};

bool count_insns; // count=insn
FILE* out;
struct qemu_plugin_scoreboard* active_board;
qemu_plugin_u64 active; // per vCPU: 1 while a window is open

std::mutex lock; // everything below but the atomics
std::mutex chunk_lock;
// Never destroyed: QEMU calls on_exit from its own atexit handler, which runs after the
// destructors of this library's globals.
std::vector<Block*>& blocks = *new std::vector<Block*>;
std::atomic<uint32_t> next_slot;
uint64_t blocks_dropped;
std::vector<Table*>& tables = *new std::vector<Table*>;
std::map<uint32_t, Table*>& table_of = *new std::map<uint32_t, Table*>;
std::vector<Window>& windows = *new std::vector<Window>;
std::atomic<Table*> current;
std::atomic<uint64_t> win_insns, win_execs;
uint64_t opens, closes, nested, stray, inexact, ids_dropped;
unsigned open_vcpu;
const Block* open_block;
// The block each vCPU last counted inside the current window.
std::atomic<const Block*> last_block[kMaxVcpus];
struct qemu_plugin_register* rax[kMaxVcpus];

Counts& counts(Table* t, uint32_t slot)
{
    std::atomic<Counts*>& c = t->chunks[slot >> kChunkBits];
    Counts* p = c.load(std::memory_order_acquire);
    if (!p) {
        std::lock_guard<std::mutex> guard(chunk_lock);
        p = c.load(std::memory_order_relaxed);
        if (!p) {
            p = new Counts[kChunk]();
            c.store(p, std::memory_order_release);
        }
    }
    return p[slot & (kChunk - 1)];
}

void add(uint64_t& field, uint64_t v)
{
    std::atomic_ref<uint64_t>(field).fetch_add(v, std::memory_order_relaxed);
}

// A block starts inside a window (count=tb), or (count=insn) one of its instructions runs.
void count(unsigned vcpu, const Block* b, uint64_t execs, uint64_t insns)
{
    Table* t = current.load(std::memory_order_acquire);
    if (!t)
        return; // closed meanwhile by another vCPU
    Counts& c = counts(t, b->slot);
    add(c.execs, execs);
    add(c.insns, insns);
    win_execs.fetch_add(execs, std::memory_order_relaxed);
    win_insns.fetch_add(insns, std::memory_order_relaxed);
    if (vcpu < kMaxVcpus)
        last_block[vcpu].store(b, std::memory_order_relaxed);
}

void on_block(unsigned vcpu, void* data)
{
    const Block* b = static_cast<const Block*>(data);
    count(vcpu, b, 1, b->n);
}

void on_first_insn(unsigned vcpu, void* data)
{
    count(vcpu, static_cast<const Block*>(data), 1, 1);
}

void on_insn(unsigned vcpu, void* data)
{
    count(vcpu, static_cast<const Block*>(data), 0, 1);
}

uint64_t read_rax(unsigned vcpu)
{
    if (vcpu >= kMaxVcpus || !rax[vcpu])
        return 0;
    GByteArray* buf = g_byte_array_new();
    uint64_t v = 0;
    int size = qemu_plugin_read_register(rax[vcpu], buf);
    if (size > 0)
        std::memcpy(&v, buf->data, std::min<size_t>(size, sizeof v)); // little-endian guest
    g_byte_array_free(buf, TRUE);
    return v;
}

void set_active(uint64_t v)
{
    for (int i = 0; i < qemu_plugin_num_vcpus(); i++)
        qemu_plugin_u64_set(active, i, v);
}

Table* table_for(uint32_t id)
{
    auto it = table_of.find(id);
    if (it != table_of.end())
        return it->second;
    if (tables.size() >= kMaxIds)
        return nullptr;
    Table* t = new Table{};
    t->id = id;
    tables.push_back(t);
    table_of[id] = t;
    return t;
}

// Under lock. count=tb: the marker's block started before the window did, so the
// instructions after the marker are added here.
void open_window(unsigned vcpu, const Marker& m, uint32_t id)
{
    opens++;
    if (current.load()) {
        nested++; // one window at a time: this open is ignored
        return;
    }
    Table* t = table_for(id);
    if (!t) {
        ids_dropped++;
        return;
    }
    for (int i = 0; i < qemu_plugin_num_vcpus() && i < int(kMaxVcpus); i++)
        last_block[i].store(nullptr, std::memory_order_relaxed);
    win_insns = 0;
    win_execs = 0;
    open_vcpu = vcpu;
    open_block = m.block;
    current.store(t, std::memory_order_release);
    if (!count_insns) {
        uint64_t tail = m.block->n - m.index - 1;
        add(counts(t, m.block->slot).insns, tail);
        win_insns += tail;
    }
    set_active(1);
}

// Under lock. count=tb: the instructions from the marker on were counted when its block
// started inside the window, or, when the window opened in this very block, by
// open_window; either way they are taken off again.
void close_window(unsigned vcpu, const Marker& m, uint64_t ops)
{
    closes++;
    Table* t = current.load();
    if (!t) {
        stray++;
        return;
    }
    set_active(0);
    current.store(nullptr, std::memory_order_release);
    if (!count_insns) {
        bool counted = vcpu < kMaxVcpus && last_block[vcpu].load() == m.block;
        bool opened_here = open_block == m.block && open_vcpu == vcpu;
        if (counted || opened_here) {
            uint64_t tail = m.block->n - m.index;
            add(counts(t, m.block->slot).insns, -tail);
            win_insns -= tail;
        } else {
            // Only when another vCPU opened the window while this one was inside a
            // block (MTTCG): this block's instructions before the marker are lost.
            inexact++;
        }
    }
    windows.push_back(
        Window{windows.size() + 1, t->id, vcpu, ops, win_insns.load(), win_execs.load()});
}

void on_marker(unsigned vcpu, void* data)
{
    const Marker& m = *static_cast<const Marker*>(data);
    uint64_t v = read_rax(vcpu);
    std::lock_guard<std::mutex> guard(lock);
    if (m.open)
        open_window(vcpu, m, static_cast<uint32_t>(v));
    else
        close_window(vcpu, m, v);
}

int marker_kind(struct qemu_plugin_insn* insn)
{
    if (qemu_plugin_insn_size(insn) != sizeof kOpenMarker)
        return 0;
    uint8_t bytes[sizeof kOpenMarker];
    if (qemu_plugin_insn_data(insn, bytes, sizeof bytes) != sizeof bytes)
        return 0;
    if (!std::memcmp(bytes, kOpenMarker, sizeof bytes))
        return 1;
    if (!std::memcmp(bytes, kCloseMarker, sizeof bytes))
        return 2;
    return 0;
}

void on_translate(qemu_plugin_id_t, struct qemu_plugin_tb* tb)
{
    size_t n = qemu_plugin_tb_n_insns(tb);
    uint32_t slot = next_slot.fetch_add(1, std::memory_order_relaxed);
    if (slot >= kMaxChunks * kChunk) {
        std::lock_guard<std::mutex> guard(lock);
        blocks_dropped++;
        return;
    }
    // Kept for the plugin's life: a translated block may run until QEMU exits.
    Block* b = new Block{qemu_plugin_tb_vaddr(tb), slot, static_cast<uint32_t>(n)};
    {
        std::lock_guard<std::mutex> guard(lock);
        blocks.push_back(b);
    }
    if (!count_insns)
        qemu_plugin_register_vcpu_tb_exec_cond_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS,
                                                  QEMU_PLUGIN_COND_NE, active, 0, b);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
        int kind = marker_kind(insn);
        if (kind) {
            auto* m = new Marker{b, static_cast<uint32_t>(i), kind == 1};
            qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker, QEMU_PLUGIN_CB_R_REGS, m);
        } else if (count_insns) {
            qemu_plugin_register_vcpu_insn_exec_cond_cb(insn, i == 0 ? on_first_insn : on_insn,
                                                        QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_COND_NE,
                                                        active, 0, b);
        }
    }
}

void on_vcpu_init(qemu_plugin_id_t, unsigned vcpu)
{
    if (vcpu >= kMaxVcpus)
        return;
    GArray* regs = qemu_plugin_get_registers();
    for (guint i = 0; regs && i < regs->len; i++) {
        auto& r = g_array_index(regs, qemu_plugin_reg_descriptor, i);
        if (!std::strcmp(r.name, "rax") || (!rax[vcpu] && !std::strcmp(r.name, "eax")))
            rax[vcpu] = r.handle;
    }
    if (regs)
        g_array_free(regs, TRUE);
}

void on_exit(qemu_plugin_id_t, void*)
{
    std::lock_guard<std::mutex> guard(lock);
    std::fprintf(out, "# dmalab-profile 1: guest instructions per translation block start "
                      "inside marked windows (docs/profile.rst)\n");
    std::fprintf(out, "count %s\n", count_insns ? "insn" : "tb");
    std::fprintf(out,
                 "summary windows=%zu opens=%" PRIu64 " closes=%" PRIu64 " nested=%" PRIu64
                 " stray=%" PRIu64 " unclosed=%d inexact=%" PRIu64 " ids=%zu ids_dropped=%" PRIu64
                 " blocks=%zu blocks_dropped=%" PRIu64 "\n",
                 windows.size(), opens, closes, nested, stray, current.load() ? 1 : 0, inexact,
                 tables.size(), ids_dropped, blocks.size(), blocks_dropped);
    for (const Window& w : windows)
        std::fprintf(out,
                     "window seq=%" PRIu64 " id=0x%08x vcpu=%u ops=%" PRIu64 " insns=%" PRIu64
                     " execs=%" PRIu64 "\n",
                     w.seq, w.id, w.vcpu, w.ops, w.insns, w.execs);
    for (Table* t : tables) {
        std::map<uint64_t, Counts> by_vaddr; // translations of one address together
        for (const Block* b : blocks) {
            Counts* chunk = t->chunks[b->slot >> kChunkBits].load();
            if (!chunk)
                continue;
            const Counts& c = chunk[b->slot & (kChunk - 1)];
            if (c.execs || c.insns) {
                Counts& sum = by_vaddr[b->vaddr];
                sum.execs += c.execs;
                sum.insns += c.insns;
            }
        }
        for (const auto& [vaddr, c] : by_vaddr)
            std::fprintf(out,
                         "tb id=0x%08x vaddr=0x%" PRIx64 " execs=%" PRIu64 " insns=%" PRIu64 "\n",
                         t->id, vaddr, c.execs, c.insns);
    }
    std::fflush(out);
}

} // namespace

extern "C" QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t*,
                                                      int argc, char** argv)
{
    const char* out_path = nullptr;
    for (int i = 0; i < argc; i++) {
        if (!std::strncmp(argv[i], "out=", 4))
            out_path = argv[i] + 4;
        else if (!std::strcmp(argv[i], "count=tb"))
            count_insns = false;
        else if (!std::strcmp(argv[i], "count=insn"))
            count_insns = true;
        else {
            std::fprintf(stderr, "dmalab-profile: unknown argument '%s' (out=FILE,count=tb|insn)\n",
                         argv[i]);
            return 1;
        }
    }
    if (!out_path) {
        std::fprintf(stderr, "dmalab-profile: out=FILE is required\n");
        return 1;
    }
    out = std::fopen(out_path, "w");
    if (!out) {
        std::fprintf(stderr, "dmalab-profile: cannot write %s: %s\n", out_path,
                     std::strerror(errno));
        return 1;
    }
    active_board = qemu_plugin_scoreboard_new(sizeof(uint64_t));
    active = qemu_plugin_scoreboard_u64(active_board);
    qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit, nullptr);
    return 0;
}
