// SPDX-License-Identifier: GPL-2.0-or-later
// What idxd reads before it configures anything (idxd_pci_probe, idxd_probe, idxd_read_caps,
// idxd_read_table_offsets), and the configurations the model refuses.

#include <string>

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

TEST(Capabilities, WhatIdxdReadsAtProbe)
{
    Rig r;
    EXPECT_EQ(r.rd(offset("VERSION")), 0x100u); // DEVICE_VERSION_1
    // idxd_device_init_reset: a reset without INT_REQ, polled on ACTIVE; a disabled device.
    EXPECT_EQ(r.state(), DeviceState::Disabled);
    r.issue(Cmd::ResetDevice, 0, false);
    EXPECT_FALSE(r.active());
    EXPECT_EQ(err_of(r.wait()), CmdErr::Success);
    EXPECT_TRUE(r.irq.raised.empty()) << "no interrupt was asked for";

    uint64_t gencap = r.rd(offset("GENCAP"), 8);
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "MAX_XFER_SHIFT"), 31u); // 2 GiB
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "MAX_BATCH_SHIFT"), 10u);
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "CONFIG"), 1u) << "idxd sets IDXD_FLAG_CONFIGURABLE";
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "CMDCAP"), 1u);
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "BLOCK_ON_FAULT"), 0u);
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "MAX_IMS_MULT"), 0u);
    // What the data path does: overlapping copies, CC on writes; no readback.
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "OVERLAP_COPY"), 1u);
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "CACHE_CTRL_MEM"), 1u);
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "CACHE_CTRL_CACHE"), 0u);
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "DEST_READBACK"), 0u);
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "DRAIN_READBACK"), 0u);
    // CMDCAP: commands 1 to 12; no interrupt handles by default, so idxd uses MSI-X indices.
    EXPECT_EQ(r.rd(offset("CMDCAP")), 0x1ffeu);

    uint64_t wqcap = r.rd(offset("WQCAP"), 8);
    EXPECT_EQ(field_of(wqcap, fields::WQCAP, "TOTAL_WQ_SIZE"), 128u);
    EXPECT_EQ(field_of(wqcap, fields::WQCAP, "NUM_WQS"), 8u);
    EXPECT_EQ(field_of(wqcap, fields::WQCAP, "WQCFG_SIZE"), 0u) << "32-byte WQCFG entries";
    EXPECT_EQ(field_of(wqcap, fields::WQCAP, "DEDICATED_MODE"), 1u);
    EXPECT_EQ(field_of(wqcap, fields::WQCAP, "SHARED_MODE"), 1u);
    EXPECT_EQ(field_of(wqcap, fields::WQCAP, "PRIORITY"), 1u);
    EXPECT_EQ(field_of(wqcap, fields::WQCAP, "OCCUPANCY"), 1u);

    uint64_t grpcap = r.rd(offset("GRPCAP"), 8);
    EXPECT_EQ(field_of(grpcap, fields::GRPCAP, "NUM_GROUPS"), 4u);
    EXPECT_EQ(field_of(grpcap, fields::GRPCAP, "TOTAL_RDBUFS"), 96u);
    EXPECT_EQ(field_of(r.rd(offset("ENGCAP"), 8), fields::ENGCAP, "NUM_ENGINES"), 4u);

    // OPCAP: every DSA 1.0 operation, the DIF ones (opcodes 12h-15h) and memmove among them
    // (idxd registers DMA_MEMCPY on it).
    EXPECT_EQ(r.rd(offset("OPCAP", 0), 8), 0x1003f03ffull);
    EXPECT_TRUE(r.rd(offset("OPCAP", 0), 8) & opcap_bit(Opcode::Memmove));
    for (unsigned i = 1; i < 4; i++)
        EXPECT_EQ(r.rd(offset("OPCAP") + 8 * i, 8), 0u);
    EXPECT_TRUE(r.log.guest_errors.empty());
}

TEST(Capabilities, TablesWhereOffsetsSays)
{
    Rig r;
    uint64_t lo = r.rd(offset("OFFSETS_LO"), 8);
    // idxd_read_table_offsets: each offset times IDXD_TABLE_MULT.
    uint32_t grpcfg =
        static_cast<uint32_t>(field_of(lo, fields::OFFSETS_LO, "GRPCFG")) * kTableUnit;
    uint32_t wqcfg = static_cast<uint32_t>(field_of(lo, fields::OFFSETS_LO, "WQCFG")) * kTableUnit;
    uint32_t perm =
        static_cast<uint32_t>(field_of(lo, fields::OFFSETS_LO, "MSIX_PERM")) * kTableUnit;
    EXPECT_EQ(grpcfg, r.layout.grpcfg);
    EXPECT_EQ(wqcfg, r.layout.wqcfg);
    EXPECT_EQ(perm, r.layout.msix_perm);
    EXPECT_EQ(field_of(lo, fields::OFFSETS_LO, "IMS"), 0u);
    EXPECT_EQ(r.rd(offset("OFFSETS_HI"), 8), 0u) << "no PERFMON: idxd registers no PMU";
    // Past the fixed registers, apart from each other, inside BAR 0.
    EXPECT_GE(perm, kRegWindow);
    EXPECT_GE(grpcfg, perm + 9 * kMsixPermStride);
    EXPECT_GE(wqcfg, grpcfg + 4 * kGrpcfgStride);
    EXPECT_LE(r.layout.end, uint32_t{DMALAB_DSA_BAR0_SIZE});
    EXPECT_GE(r.layout.end, wqcfg + 8 * kWqcfgStride);
    // A fresh WQ entry: disabled, its mode software's to set (MODE_SUPPORT).
    uint32_t status = static_cast<uint32_t>(r.rd(r.wqcfg(7, kWqStatus)));
    EXPECT_EQ(WQCFG_STATE.get(status), 0u);
    EXPECT_EQ(status, 1u << 29);
}

TEST(Capabilities, FollowTheConfiguration)
{
    Config c;
    c.wqs = 20;
    c.engines = 7;
    c.groups = 9;
    c.total_wq_size = 300;
    c.msix_vectors = 21;
    c.max_xfer_shift = 20;
    c.max_batch_shift = 5;
    c.read_buffers = 40;
    c.shared_mode = false;
    c.priority = false;
    c.block_on_fault = true;
    c.int_handles = true;
    c.opcap = opcap_bit(Opcode::Noop) | opcap_bit(Opcode::Memmove);
    ASSERT_EQ(Dsa::check(c), nullptr);
    Rig r(c);
    uint64_t gencap = r.rd(offset("GENCAP"), 8);
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "MAX_XFER_SHIFT"), 20u);
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "MAX_BATCH_SHIFT"), 5u);
    EXPECT_EQ(field_of(gencap, fields::GENCAP, "BLOCK_ON_FAULT"), 1u);
    uint64_t wqcap = r.rd(offset("WQCAP"), 8);
    EXPECT_EQ(field_of(wqcap, fields::WQCAP, "TOTAL_WQ_SIZE"), 300u);
    EXPECT_EQ(field_of(wqcap, fields::WQCAP, "NUM_WQS"), 20u);
    EXPECT_EQ(field_of(wqcap, fields::WQCAP, "SHARED_MODE"), 0u);
    EXPECT_EQ(field_of(wqcap, fields::WQCAP, "PRIORITY"), 0u);
    EXPECT_EQ(field_of(r.rd(offset("GRPCAP"), 8), fields::GRPCAP, "NUM_GROUPS"), 9u);
    EXPECT_EQ(field_of(r.rd(offset("GRPCAP"), 8), fields::GRPCAP, "TOTAL_RDBUFS"), 40u);
    EXPECT_EQ(r.rd(offset("ENGCAP"), 8), 7u);
    EXPECT_EQ(r.rd(offset("OPCAP", 0), 8), 0x9u);
    // idxd asks for handles only when CMDCAP has bit 13 (idxd_device_request_int_handle).
    EXPECT_EQ(r.rd(offset("CMDCAP")), 0x7ffeu);
    EXPECT_GE(r.layout.wqcfg, r.layout.grpcfg + 9 * kGrpcfgStride);
    EXPECT_EQ(r.dev.wq_count(), 20u);
}

TEST(Capabilities, UndecodedBytesReadAsZeroAndAreLogged)
{
    Rig r;
    for (uint32_t at : {uint32_t{0x04}, uint32_t{0xe0}, r.layout.end, uint32_t{0xfff8}}) {
        const size_t logged = r.log.guest_errors.size();
        EXPECT_EQ(r.rd(at, 8), 0u) << std::hex << at;
        r.wr(at, ~0ull, 8);
        EXPECT_EQ(r.rd(at, 8), 0u) << std::hex << at;
        EXPECT_EQ(r.log.guest_errors.size(), logged + 3) << std::hex << at;
    }
    // An access that straddles a register and a hole reads the register's bytes.
    EXPECT_EQ(r.rd(offset("VERSION"), 8), 0x100u);
}

TEST(Capabilities, AreReadOnly)
{
    Rig r;
    const uint32_t caps[] = {offset("VERSION"),    offset("GENCAP"), offset("WQCAP"),
                             offset("GRPCAP"),     offset("ENGCAP"), offset("OPCAP", 0),
                             offset("OFFSETS_LO"), offset("CMDCAP")};
    for (uint32_t at : caps) {
        uint64_t before = r.rd(at, 8);
        r.wr(at, ~0ull, 8);
        EXPECT_EQ(r.rd(at, 8), before) << std::hex << at;
    }
}

TEST(Capabilities, ConfigurationsTheModelRefuses)
{
    EXPECT_EQ(Dsa::check(Config{}), nullptr);
    // Each refused, with a reason that names the knob at fault.
    struct Bad {
        const char* says;
        void (*change)(Config&);
    };
    const Bad bad[] = {
        {"wqs must", [](Config& c) { c.wqs = 0; }},
        {"wqs must", [](Config& c) { c.wqs = 65; }},
        {"engines", [](Config& c) { c.engines = 0; }},
        {"engines", [](Config& c) { c.engines = 65; }},
        {"groups", [](Config& c) { c.groups = 0; }},
        {"groups", [](Config& c) { c.groups = 65; }},
        {"total-wq-size", [](Config& c) { c.total_wq_size = 0; }},
        {"total-wq-size", [](Config& c) { c.total_wq_size = 0x10000; }},
        {"msix-vectors", [](Config& c) { c.msix_vectors = 1; }},
        {"msix-vectors", [](Config& c) { c.msix_vectors = 10; }}, // more than wqs + 1
        {"max-xfer-shift", [](Config& c) { c.max_xfer_shift = 0; }},
        {"max-xfer-shift", [](Config& c) { c.max_xfer_shift = 32; }},
        {"max-batch-shift", [](Config& c) { c.max_batch_shift = 0; }},
        {"max-batch-shift", [](Config& c) { c.max_batch_shift = 16; }},
        {"dedicated or shared", [](Config& c) { c.dedicated_mode = c.shared_mode = false; }},
        {"opcap", [](Config& c) { c.opcap |= 1ull << 10; }}, // no opcode 0x0a in DSA 1.0
        {"command-ns", [](Config& c) { c.command_ns = kMaxCommandNs + 1; }},
        {"command-jitter-ns", [](Config& c) { c.command_jitter_ns = kMaxCommandNs + 1; }},
    };
    for (const Bad& b : bad) {
        Config c;
        b.change(c);
        const char* why = Dsa::check(c);
        ASSERT_NE(why, nullptr) << b.says;
        EXPECT_NE(std::string(why).find(b.says), std::string::npos) << why;
    }
    Config largest;
    largest.wqs = largest.groups = largest.engines = 64;
    largest.msix_vectors = 65;
    EXPECT_EQ(Dsa::check(largest), nullptr);
}

} // namespace
} // namespace dmalab::dsa::testing
