// SPDX-License-Identifier: GPL-2.0-or-later
// A VT-d unit in scalable mode on fake memory (rig.h's Rig), with Linux's layout of root,
// context, PASID directory and PASID tables (drivers/iommu/intel/pasid.c, 6.1 and 6.12), and
// the 256-bit queue with its PASID-based descriptors.
#pragma once

#include "rig.h"

namespace dmalab::vtd::testing
{

inline constexpr uint64_t ECAP_SMTS = field_mask(fields::ECAP, "SMTS");
inline constexpr uint64_t ECAP_SLTS = field_mask(fields::ECAP, "SLTS");
inline constexpr uint64_t ECAP_FLTS = field_mask(fields::ECAP, "FLTS");
inline constexpr uint64_t ECAP_SMPWCS = field_mask(fields::ECAP, "SMPWCS");
inline constexpr uint64_t CAP_FL1GP = field_mask(fields::CAP, "FL1GP");
static_assert(ECAP_SMTS == uint64_t{1} << 43 && ECAP_FLTS == uint64_t{1} << 47);

inline constexpr uint64_t SRE_LP = field_mask(smroot::LO, "LP");
inline constexpr uint64_t SRE_UP = field_mask(smroot::HI, "UP");
inline constexpr uint64_t SCE_P = field_mask(smctx::Q0, "P");
inline constexpr uint64_t SCE_PASIDE = field_mask(smctx::Q0, "PASIDE");
inline constexpr unsigned SCE_PDTS_SHIFT = field_lsb(smctx::Q0, "PDTS");
inline constexpr uint64_t PDE_P = field_mask(pasiddir::F, "P");
inline constexpr uint64_t PE_P = field_mask(pasid::Q0, "P");
inline constexpr uint64_t PE_FPD = field_mask(pasid::Q0, "FPD");
inline constexpr unsigned PE_AW_SHIFT = field_lsb(pasid::Q0, "AW");
inline constexpr unsigned PE_PGTT_SHIFT = field_lsb(pasid::Q0, "PGTT");
inline constexpr uint64_t PE_NXE = field_mask(pasid::Q2, "NXE");
inline constexpr uint64_t FL_P = field_mask(flpte::F, "P");
inline constexpr uint64_t FL_RW = field_mask(flpte::F, "RW");
inline constexpr uint64_t FL_US = field_mask(flpte::F, "US");
inline constexpr uint64_t FL_A = field_mask(flpte::F, "A");
inline constexpr uint64_t FL_D = field_mask(flpte::F, "D");
inline constexpr uint64_t FL_PS = field_mask(flpte::F, "PS");
inline constexpr uint64_t FL_XD = field_mask(flpte::F, "XD");
inline constexpr uint64_t QI_PC = static_cast<uint8_t>(DescType::PasidCache);
inline constexpr uint64_t QI_PIOTLB = static_cast<uint8_t>(DescType::PasidIotlb);
inline constexpr unsigned QI_PASID_SHIFT = field_lsb(qi::PC_LO, "PASID");
static_assert(field_lsb(qi::PIOTLB_LO, "PASID") == QI_PASID_SHIFT);

inline FaultReason SM(SmFault f)
{
    return sm(f);
}

inline Config sm_config(bool fs = true)
{
    Config c = costs(0, 0, 0);
    c.sm = true;
    c.fs = fs;
    return c;
}

// A unit in scalable mode, with Linux's layout: per device a context entry whose PASID
// directory (one page, PDTS 2) points at a table holding RID_PASID's entry.
class SmRig : public Rig
{
  public:
    explicit SmRig(Config c = sm_config()) : Rig(c) {}

    void set_sm_root()
    {
        root = alloc();
        w64(RTADDR, root | uint64_t{1} << RTADDR_TTM_SHIFT);
        command(G_SRTP);
    }
    // The context entry of `sid` and its PASID directory (2^(pdts+7) entries); the PASID
    // table entry's address.
    uint64_t device(uint16_t sid, uint32_t rid_pasid = 0, unsigned pdts = 2)
    {
        bool upper = sid & 0x80;
        uint64_t re_at = root + (sid >> 8) * 16 + (upper ? 8 : 0);
        uint64_t re = mem.get<uint64_t>(re_at);
        if (!(re & (upper ? SRE_UP : SRE_LP))) {
            re = alloc() | (upper ? SRE_UP : SRE_LP);
            mem.put<uint64_t>(re_at, re);
        }
        uint64_t ce = (re & ~uint64_t{0xfff}) + (sid & 0x7f) * 32;
        uint64_t dir = alloc();
        for (unsigned i = 1; pdts > 2 && i < (1u << (pdts - 2)); i++)
            alloc();
        mem.put<uint64_t>(ce, dir | uint64_t{pdts} << SCE_PDTS_SHIFT | SCE_P);
        mem.put<uint64_t>(ce + 8, rid_pasid);
        uint64_t table = alloc();
        mem.put<uint64_t>(dir + (rid_pasid >> 6) * 8, table | PDE_P);
        return table + (rid_pasid & 63) * 64;
    }
    void pasid_entry(uint64_t at, Pgtt pgtt, uint16_t did, uint64_t pgd, uint64_t extra0 = 0,
                     uint64_t extra2 = 0)
    {
        for (unsigned i = 0; i < 8; i++)
            mem.put<uint64_t>(at + 8 * i, 0);
        uint64_t q0 = uint64_t{static_cast<uint8_t>(pgtt)} << PE_PGTT_SHIFT | extra0 | PE_P;
        if (pgtt == Pgtt::SecondStage)
            q0 |= pgd | uint64_t{2} << PE_AW_SHIFT;
        else if (pgtt == Pgtt::PassThrough)
            q0 |= uint64_t{2} << PE_AW_SHIFT;
        mem.put<uint64_t>(at, q0);
        mem.put<uint64_t>(at + 8, did);
        mem.put<uint64_t>(at + 16, (pgtt == Pgtt::FirstStage ? pgd : 0) | extra2);
    }
    // One device on first-stage tables: TE on; the table's root.
    uint64_t fs_device(uint16_t sid = 0x0010, uint16_t did = 2, uint32_t rid_pasid = 0)
    {
        if (!root)
            set_sm_root();
        uint64_t pgd = alloc();
        pasid_entry(device(sid, rid_pasid), Pgtt::FirstStage, did, pgd);
        command(G_TE);
        return pgd;
    }
    // A first-stage mapping as Linux makes it: U/S and A everywhere, D where writable.
    uint64_t fs_map(uint64_t pgd, uint64_t iova, uint64_t pa, bool w = true,
                    unsigned leaf_level = 1, uint64_t leaf_flags = FL_US | FL_A, uint64_t up = 0)
    {
        uint64_t table = pgd;
        for (unsigned level = 4; level > leaf_level; level--) {
            uint64_t at = table + ((iova >> (12 + 9 * (level - 1))) & 511) * 8;
            uint64_t pte = mem.get<uint64_t>(at);
            if (!(pte & FL_P)) {
                pte = alloc() | FL_P | FL_RW | FL_US | FL_A | up;
                mem.put<uint64_t>(at, pte);
            }
            table = pte & ~uint64_t{0xfff} & ((uint64_t{1} << 52) - 1);
        }
        uint64_t at = table + ((iova >> (12 + 9 * (leaf_level - 1))) & 511) * 8;
        mem.put<uint64_t>(at, pa | FL_P | leaf_flags | (w ? FL_RW | FL_D : 0) |
                                  (leaf_level > 1 ? FL_PS : 0));
        return at;
    }
    // Linux's queue in scalable mode: IQA.DW and QS 1, 256-bit descriptors.
    void qi_enable_wide()
    {
        iq = alloc();
        alloc();
        w64(IQA, iq | IQA_DW | 1);
        w64(IQT, 0);
        command(G_QIE);
        tail = 0;
    }
    void submit_wide(std::initializer_list<std::pair<uint64_t, uint64_t>> descs, uint64_t upper = 0)
    {
        for (auto [lo, hi] : descs) {
            mem.put<uint64_t>(iq + tail * 32, lo);
            mem.put<uint64_t>(iq + tail * 32 + 8, hi);
            mem.put<uint64_t>(iq + tail * 32 + 16, upper);
            mem.put<uint64_t>(iq + tail * 32 + 24, 0);
            tail = (tail + 1) % 256;
        }
        w64(IQT, uint64_t{tail} << 5);
    }
    static std::pair<uint64_t, uint64_t> pc(unsigned g, uint16_t did, uint32_t pasid = 0)
    {
        return {uint64_t{pasid} << QI_PASID_SHIFT | uint64_t{did} << QI_DID_SHIFT |
                    uint64_t{g} << QI_G_SHIFT | QI_PC,
                0};
    }
    static std::pair<uint64_t, uint64_t> piotlb(uint16_t did, uint32_t pasid, uint64_t addr = 0,
                                                unsigned am = 0, bool page = true)
    {
        return {uint64_t{pasid} << QI_PASID_SHIFT | uint64_t{did} << QI_DID_SHIFT |
                    uint64_t{page ? 3u : 2u} << QI_G_SHIFT | QI_PIOTLB,
                page ? addr | am : 0};
    }
    FaultReason recorded(unsigned i = 0) { return record_reason(r64(FRCD + 16 * i + 8)); }
};

} // namespace dmalab::vtd::testing
