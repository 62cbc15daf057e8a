// SPDX-License-Identifier: GPL-2.0-or-later
// BAR 2's portals (DSA spec, "Portals", table "Supported Portal Operations"): a descriptor is
// one 64-byte store (MOVDIR64B, eight ascending 8-byte writes from QEMU) at any 64-byte slot
// of a WQ's MSI-X portal pages. Any other shape, and any store to a WQ that cannot take it,
// is dropped without a word to software; only a full dedicated WQ reports, in SWERR.

#include "rig.h"

namespace dmalab::dsa::testing
{
namespace
{

constexpr uint64_t kRec = 0x1000, kRec2 = 0x1100;

// A No-op that writes its record at `rec`: the cheapest descriptor that shows it ran.
Desc noop(uint64_t rec = kRec)
{
    Desc d(Opcode::Noop, kRecord);
    d.completion(rec);
    return d;
}

// One 64-byte store at BAR 2 offset `at`, as eight ascending 8-byte writes.
void store(Rig& r, uint32_t at, const Desc& d)
{
    for (unsigned i = 0; i < kDescriptorWords; i++)
        r.dev.portal_write(at + 8 * i, d.raw.word[i], 8);
}

uint32_t portal_of(unsigned wq, uint32_t page, unsigned slot = 0)
{
    return wq * DMALAB_DSA_WQ_PORTAL_STRIDE + page + 64 * slot;
}

uint32_t occupancy(Rig& r, unsigned wq)
{
    return static_cast<uint32_t>(WQCFG_OCCUPANCY.get(r.rd(r.wqcfg(wq, kWqStatus))));
}

bool swerr_valid(Rig& r)
{
    return r.rd(kSwerr, 8) & SWERR_VALID;
}

// What every ignored store leaves: nothing taken, no record, nothing in SWERR. Then a
// whole store to WQ 0's limited portal is taken as if nothing had happened.
void expect_ignored_then_taken(Rig& r, uint64_t rec)
{
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().submitted, 0u) << "no descriptor was taken";
    EXPECT_GT(r.dev.counters().dropped, 0u) << "the dropped counter says it was refused";
    EXPECT_EQ(r.record(rec).status, 0u) << "no completion record for what was ignored";
    EXPECT_FALSE(swerr_valid(r)) << "an ignored store is not a software error";
    EXPECT_EQ(r.rd(kIntcause) & INTC_SWERR, 0u);
    r.submit(0, noop(kRec2));
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().submitted, 1u) << "the next whole store is taken";
    EXPECT_EQ(r.record(kRec2).code(), Status::Success);
}

TEST(Portals, AStoreAtAnySlotOfTheLimitedMsixPortalIsTaken)
{
    // idxd walks the submission offset through the page 64 bytes at a time
    // (idxd_wq_portal_addr), so every slot must be the same portal.
    Rig r;
    r.bring_up();
    for (unsigned slot = 0; slot < 64; slot++) {
        r.fill(kRec, 0, 32);
        store(r, portal_of(0, DMALAB_DSA_PORTAL_LIMITED_MSIX, slot), noop());
        r.run_until_idle();
        EXPECT_EQ(r.record(kRec).code(), Status::Success) << "slot " << slot;
    }
    EXPECT_EQ(r.dev.counters().submitted, 64u);
    EXPECT_EQ(r.dev.counters().dropped, 0u);
}

TEST(Portals, AStoreAtAnySlotOfTheUnlimitedMsixPortalIsTaken)
{
    // DPDK submits through the unlimited MSI-X portal (idxd_pci.c).
    Rig r;
    r.bring_up();
    for (unsigned slot = 0; slot < 64; slot++) {
        r.fill(kRec, 0, 32);
        store(r, portal_of(0, DMALAB_DSA_PORTAL_UNLIMITED_MSIX, slot), noop());
        r.run_until_idle();
        EXPECT_EQ(r.record(kRec).code(), Status::Success) << "slot " << slot;
    }
    EXPECT_EQ(r.dev.counters().submitted, 64u);
    EXPECT_EQ(r.dev.counters().dropped, 0u);
}

TEST(Portals, FewerThanEightPiecesAreIgnored)
{
    Rig r;
    r.bring_up();
    const Desc d = noop();
    for (unsigned i = 0; i < kDescriptorWords - 1; i++)
        r.dev.portal_write(Rig::portal(0) + 8 * i, d.raw.word[i], 8);
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().submitted, 0u) << "seven pieces are not a descriptor";
    // The next store ends the unfinished one: that one is dropped, this one taken.
    r.submit(0, noop(kRec2));
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().submitted, 1u);
    EXPECT_EQ(r.dev.counters().dropped, 1u);
    EXPECT_EQ(r.record(kRec).status, 0u) << "the unfinished store never ran";
    EXPECT_EQ(r.record(kRec2).code(), Status::Success);
    EXPECT_FALSE(swerr_valid(r));
}

TEST(Portals, PiecesOutOfOrderAreIgnored)
{
    Rig r;
    r.bring_up();
    const Desc d = noop();
    for (unsigned i : {0u, 2u, 1u, 3u, 4u, 5u, 6u, 7u})
        r.dev.portal_write(Rig::portal(0) + 8 * i, d.raw.word[i], 8);
    expect_ignored_then_taken(r, kRec);
}

TEST(Portals, PiecesInDescendingOrderAreIgnored)
{
    Rig r;
    r.bring_up();
    const Desc d = noop();
    for (unsigned i = kDescriptorWords; i-- > 0;)
        r.dev.portal_write(Rig::portal(0) + 8 * i, d.raw.word[i], 8);
    // The last write (piece 0, at the slot's start) may open a store; the next one ends it.
    expect_ignored_then_taken(r, kRec);
}

TEST(Portals, FourBytePiecesAreIgnored)
{
    // A non-64-byte write to any portal is ignored (table "Supported Portal Operations").
    Rig r;
    r.bring_up();
    const Desc d = noop();
    for (unsigned i = 0; i < 2 * kDescriptorWords; i++)
        r.dev.portal_write(Rig::portal(0) + 4 * i,
                           static_cast<uint32_t>(d.raw.word[i / 2] >> (32 * (i % 2))), 4);
    expect_ignored_then_taken(r, kRec);
}

TEST(Portals, AStoreStartingOffA64ByteBoundaryIsIgnored)
{
    // Bits 5:0 of a portal address must be 0.
    Rig r;
    r.bring_up();
    store(r, Rig::portal(0) + 8, noop());
    expect_ignored_then_taken(r, kRec);
}

TEST(Portals, AStoreStartingInTheMiddleOfASlotIsIgnored)
{
    Rig r;
    r.bring_up();
    store(r, Rig::portal(0, 3) + 32, noop());
    expect_ignored_then_taken(r, kRec);
}

TEST(Portals, AStoreInterruptedByAWriteToAnotherSlotIsIgnored)
{
    Rig r;
    r.bring_up();
    const Desc d = noop();
    for (unsigned i = 0; i < 4; i++)
        r.dev.portal_write(Rig::portal(0) + 8 * i, d.raw.word[i], 8);
    r.dev.portal_write(Rig::portal(0, 5), 0, 8); // someone else's write, in between
    for (unsigned i = 4; i < kDescriptorWords; i++)
        r.dev.portal_write(Rig::portal(0) + 8 * i, d.raw.word[i], 8);
    expect_ignored_then_taken(r, kRec);
}

TEST(Portals, AStoreInterruptedByAWriteToAnotherWqIsIgnored)
{
    Rig r;
    r.bring_up();
    const Desc d = noop();
    for (unsigned i = 0; i < 6; i++)
        r.dev.portal_write(Rig::portal(0) + 8 * i, d.raw.word[i], 8);
    r.dev.portal_write(Rig::portal(1), 0, 8);
    for (unsigned i = 6; i < kDescriptorWords; i++)
        r.dev.portal_write(Rig::portal(0) + 8 * i, d.raw.word[i], 8);
    expect_ignored_then_taken(r, kRec);
}

TEST(Portals, AStoreToADisabledWqIsDroppedSilently)
{
    // MOVDIR64B to a WQ that is not enabled is discarded without notification (spec,
    // "Descriptor Submission").
    Rig r;
    r.configure();
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    r.ack();
    r.submit(0, noop());
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().submitted, 0u);
    EXPECT_EQ(r.dev.counters().dropped, 1u);
    EXPECT_EQ(r.record(kRec).status, 0u);
    EXPECT_FALSE(swerr_valid(r));
    EXPECT_EQ(occupancy(r, 0), 0u);
    ASSERT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    r.submit(0, noop(kRec2));
    r.run_until_idle();
    EXPECT_EQ(r.record(kRec2).code(), Status::Success) << "taken once the WQ is enabled";
}

TEST(Portals, AStoreToAWqOfADisabledDeviceIsDroppedSilently)
{
    Rig r;
    r.configure();
    r.submit(0, noop());
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().submitted, 0u);
    EXPECT_EQ(r.dev.counters().dropped, 1u);
    EXPECT_EQ(r.record(kRec).status, 0u);
    EXPECT_FALSE(swerr_valid(r));
}

TEST(Portals, AStoreToAWqThatWasDisabledIsDroppedAndANewEnableTakesAgain)
{
    Rig r;
    r.bring_up();
    ASSERT_EQ(r.run(Cmd::DisableWq, wq_operand(0)), CmdErr::Success);
    r.ack();
    r.submit(0, noop());
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().submitted, 0u);
    EXPECT_EQ(r.dev.counters().dropped, 1u);
    EXPECT_EQ(r.record(kRec).status, 0u);
    EXPECT_FALSE(swerr_valid(r));
    ASSERT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    r.submit(0, noop(kRec2));
    r.run_until_idle();
    EXPECT_EQ(r.record(kRec2).code(), Status::Success) << "taken once the WQ is enabled again";
}

TEST(Portals, AStoreToAnUnconfiguredWqIsDroppedSilently)
{
    Rig r;
    r.bring_up();
    r.submit(1, noop());
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().submitted, 0u);
    EXPECT_EQ(r.dev.counters().dropped, 1u);
    EXPECT_EQ(r.record(kRec).status, 0u);
    EXPECT_FALSE(swerr_valid(r));
}

TEST(Portals, AStoreToASharedWqIsDroppedSilently)
{
    // A shared WQ takes ENQCMD(S) only; a posted 64-byte write to it is ignored.
    Rig r;
    r.dev.set_pasid(true, true);
    r.group(0, 1, 1);
    r.wq(0, 16, 0 /* shared */, 8);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    r.ack();
    r.submit(0, noop());
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().submitted, 0u);
    EXPECT_EQ(r.dev.counters().dropped, 1u);
    EXPECT_EQ(r.record(kRec).status, 0u);
    EXPECT_FALSE(swerr_valid(r));
    EXPECT_EQ(occupancy(r, 0), 0u);
}

TEST(Portals, AStoreToEitherImsPortalIsDroppedSilently)
{
    // The device has no IMS (GENCAP.MAX_IMS_MULT 0): its IMS portals take nothing.
    for (uint32_t page :
         {uint32_t{DMALAB_DSA_PORTAL_UNLIMITED_IMS}, uint32_t{DMALAB_DSA_PORTAL_LIMITED_IMS}}) {
        Rig r;
        r.bring_up();
        store(r, portal_of(0, page), noop());
        r.run_until_idle();
        EXPECT_EQ(r.dev.counters().submitted, 0u) << "page 0x" << std::hex << page;
        EXPECT_EQ(r.dev.counters().dropped, 1u) << "page 0x" << std::hex << page;
        EXPECT_EQ(r.record(kRec).status, 0u) << "page 0x" << std::hex << page;
        EXPECT_FALSE(swerr_valid(r)) << "page 0x" << std::hex << page;
        r.submit(0, noop(kRec2));
        r.run_until_idle();
        EXPECT_EQ(r.record(kRec2).code(), Status::Success) << "the MSI-X portal still takes";
    }
}

TEST(Portals, AStoreToAFullDedicatedWqIsDroppedAndReportedInSwerr)
{
    // The one refused submission software hears of: SWERR with the WQ's index. 53h is
    // DSA 3.0's code (Table 5-7); see Status::DedicatedWqFull.
    Rig r(queued());
    r.group(0, 0b11, 1);
    r.wq(0, 16);
    r.wq(1, 4);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::EnableWq, 1), CmdErr::Success);
    r.ack();
    // Engines start from their timers, never inside the write: the WQ fills up.
    for (unsigned i = 0; i < 4; i++)
        r.submit(1, noop(kRec + 32 * i), i);
    EXPECT_FALSE(swerr_valid(r)) << "four fit a WQ of size 4";
    r.submit(1, noop(kRec2));
    EXPECT_EQ(r.dev.counters().submitted, 4u);
    EXPECT_EQ(r.dev.counters().dropped, 1u);
    const uint64_t w0 = r.rd(kSwerr, 8);
    EXPECT_TRUE(w0 & SWERR_VALID);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "ERROR"), 0x53u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "WQ_IDX_VALID"), 1u);
    EXPECT_EQ(field_of(w0, fields::SWERR0, "WQ_IDX"), 1u);
    EXPECT_EQ(r.dev.counters().swerrs, 1u);
    r.run_until_idle();
    for (unsigned i = 0; i < 4; i++)
        EXPECT_EQ(r.record(kRec + 32 * i).code(), Status::Success) << "descriptor " << i;
    EXPECT_EQ(r.record(kRec2).status, 0u) << "the dropped descriptor never ran";
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

TEST(Portals, AFullWqTakesAgainOnceAnEngineTookADescriptor)
{
    Config c = queued();
    c.step_descriptors = 1;
    Rig r(c);
    r.group(0, 1, 1);
    r.wq(0, 2);
    ASSERT_EQ(r.run(Cmd::EnableDevice), CmdErr::Success);
    ASSERT_EQ(r.run(Cmd::EnableWq, 0), CmdErr::Success);
    r.submit(0, noop(kRec));
    r.submit(0, noop(kRec + 32));
    r.step(); // the engine takes one
    r.submit(0, noop(kRec2));
    EXPECT_EQ(r.dev.counters().dropped, 0u) << "a slot was free again";
    EXPECT_FALSE(swerr_valid(r));
    r.run_until_idle();
    EXPECT_EQ(r.record(kRec2).code(), Status::Success);
}

TEST(Portals, ReadsOfPortalsReturnZero)
{
    Rig r;
    r.bring_up();
    r.submit(0, noop());
    for (uint32_t page :
         {uint32_t{DMALAB_DSA_PORTAL_UNLIMITED_MSIX}, uint32_t{DMALAB_DSA_PORTAL_LIMITED_MSIX},
          uint32_t{DMALAB_DSA_PORTAL_UNLIMITED_IMS}, uint32_t{DMALAB_DSA_PORTAL_LIMITED_IMS}})
        for (unsigned size : {1u, 2u, 4u, 8u})
            EXPECT_EQ(r.dev.portal_read(portal_of(0, page), size), 0u)
                << "page 0x" << std::hex << page << ", size " << std::dec << size;
    EXPECT_EQ(r.dev.portal_read(portal_of(3, DMALAB_DSA_PORTAL_LIMITED_MSIX, 7) + 8, 8), 0u);
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().submitted, 1u) << "reads change nothing";
    EXPECT_EQ(r.record(kRec).code(), Status::Success);
}

TEST(Portals, AReadBetweenPiecesDoesNotBreakTheStore)
{
    // A read is not a write: it neither completes nor interrupts a store. (QEMU delivers
    // MOVDIR64B under one hold of the BQL; a read in between is a guest of its own.)
    Rig r;
    r.bring_up();
    const Desc d = noop();
    for (unsigned i = 0; i < kDescriptorWords; i++) {
        r.dev.portal_write(Rig::portal(0) + 8 * i, d.raw.word[i], 8);
        EXPECT_EQ(r.dev.portal_read(Rig::portal(0), 8), 0u);
    }
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().submitted, 1u);
    EXPECT_EQ(r.record(kRec).code(), Status::Success);
}

TEST(Portals, APortalBeyondTheWqsIsIgnored)
{
    // BAR 2 is rounded up to a power of two: 5 WQs leave 3 WQs' worth of pages unowned.
    Config c;
    c.wqs = 5;
    Rig r(c);
    r.bring_up();
    ASSERT_GT(Dsa::portals_size(c), uint64_t{5} * DMALAB_DSA_WQ_PORTAL_STRIDE);
    for (unsigned wq = 5; wq < 8; wq++)
        store(r, portal_of(wq, DMALAB_DSA_PORTAL_LIMITED_MSIX), noop());
    r.run_until_idle();
    EXPECT_EQ(r.dev.counters().submitted, 0u);
    EXPECT_EQ(r.record(kRec).status, 0u);
    EXPECT_FALSE(swerr_valid(r));
    EXPECT_FALSE(r.log.guest_errors.empty()) << "the guest's mistake is logged";
    r.submit(0, noop(kRec2));
    r.run_until_idle();
    EXPECT_EQ(r.record(kRec2).code(), Status::Success);
    EXPECT_EQ(r.dev.invariant_violation(), nullptr);
}

TEST(Portals, OccupancyRisesWithSubmissionsAndFallsAsEnginesTakeThem)
{
    // WQCFG's OCCUPANCY (idxd's sysfs "occupancy", wq_occupancy_show). One descriptor per
    // engine step, so each step takes one.
    Config c = queued();
    c.step_descriptors = 1;
    Rig r(c);
    r.bring_up();
    EXPECT_EQ(occupancy(r, 0), 0u);
    for (unsigned i = 0; i < 3; i++) {
        r.submit(0, noop(kRec + 32 * i), i);
        EXPECT_EQ(occupancy(r, 0), i + 1) << "after submission " << i;
    }
    for (unsigned left = 3; left-- > 0;) {
        r.step();
        EXPECT_EQ(occupancy(r, 0), left) << "an engine took one";
    }
    r.run_until_idle();
    EXPECT_EQ(occupancy(r, 0), 0u);
    for (unsigned i = 0; i < 3; i++)
        EXPECT_EQ(r.record(kRec + 32 * i).code(), Status::Success);
}

TEST(Portals, AStoreMadeWhileTheDeviceCallsOutIsRefused)
{
    // A device window at the completion record: writing it, the device calls out, and the
    // window's handler (the device's own DMA reaching its BAR) tries a submission.
    Rig r;
    r.bring_up();
    constexpr uint64_t kWin = 0x8000;
    unsigned calls = 0;
    r.mem.add_window({kWin, 32, [&](uint64_t, const uint8_t*, size_t) {
                          calls++;
                          r.submit(0, noop(kRec2));
                      }});
    r.submit(0, noop(kWin));
    r.run_until_idle();
    EXPECT_GT(calls, 0u) << "the record went to the window";
    EXPECT_EQ(r.dev.counters().submitted, 1u) << "only the store from outside was taken";
    EXPECT_EQ(r.record(kRec2).status, 0u);
    EXPECT_FALSE(swerr_valid(r));
    r.submit(0, noop(kRec2));
    r.run_until_idle();
    EXPECT_EQ(r.record(kRec2).code(), Status::Success) << "a store from outside is taken again";
}

TEST(Portals, AnIdleEngineStartsInsideThePortalWrite)
{
    // sync_start (the default): the descriptor ran before the write returned, no timer
    // expiry in between; without it, the engine's timer runs it at the same virtual time.
    Rig r;
    r.bring_up();
    r.submit(0, noop());
    EXPECT_EQ(r.record(kRec).code(), Status::Success) << "done inside the write";
    Rig q(queued());
    q.bring_up();
    q.submit(0, noop());
    EXPECT_EQ(q.record(kRec).status, 0) << "only queued";
    const uint64_t at = q.timers.now;
    q.run_until_idle();
    EXPECT_EQ(q.record(kRec).code(), Status::Success);
    EXPECT_EQ(q.timers.now, at) << "from a timer at the same virtual time";
}

TEST(Portals, AnIdleEngineStartsInsideThePortalWriteOnAClockThatMoves)
{
    // On the host's clock two reads of the time inside one write differ; the write still
    // runs the idle engine's first step (it compared the two readings, and waited for its
    // timer whenever they differed).
    Rig r;
    r.bring_up();
    r.timers.tick = 1;
    r.submit(0, noop());
    EXPECT_EQ(r.record(kRec).code(), Status::Success) << "done inside the write";
}

TEST(Portals, ABusyEngineIsNotStartedAgainByAWrite)
{
    // The first write's descriptor holds the engine for 1 ms; the second waits its turn.
    Config c;
    c.latency_ns = 1000000;
    Rig r(c);
    r.bring_up();
    r.submit(0, noop(kRec));
    r.submit(0, noop(kRec + 32), 1);
    EXPECT_EQ(r.record(kRec).status, 0);
    EXPECT_EQ(occupancy(r, 0), 1u) << "the second is queued";
    r.run_until_idle();
    EXPECT_EQ(r.record(kRec + 32).code(), Status::Success);
    EXPECT_GE(r.timers.now, 2000000u) << "one after the other";
}

} // namespace
} // namespace dmalab::dsa::testing
