/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-ioat: QEMU glue for the dmalab Intel I/OAT (Crystal Beach 3.x) DMA
 * engine model.
 *
 * Everything the device does lives in the C++ model (dmaengine/); this file
 * only connects it to QEMU: a PCI Express function with BAR0 and its MSI-X
 * table, MSI and INTx, PCI DMA (so an IOMMU in front of the device applies),
 * one virtual-clock timer per channel, properties, counters, migration and
 * trace points.
 */

#include "qemu/osdep.h"
#include <sys/mman.h>
#include "hw/pci/msi.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pcie.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "qom/object.h"
#include "system/dma.h"
#include "trace.h"

#include "dmalab/ioat_core.h"
#include "dmalab-vtd.h"
#include "glue.h"

#define TYPE_DMALAB_IOAT "dmalab-ioat"
OBJECT_DECLARE_SIMPLE_TYPE(DmalabIoatState, DMALAB_IOAT)

/* Capability layout in configuration space. */
#define DMALAB_IOAT_CAP_EXP 0x40
#define DMALAB_IOAT_CAP_MSI 0x80
#define DMALAB_IOAT_CAP_MSIX 0x90

/*
 * Linux's ioatdma gives up on a descriptor after its completion timeout (200
 * ms, completion_timeout in dma.c).
 */
#define DMALAB_IOAT_LINUX_TIMEOUT_NS (200 * SCALE_MS)

struct DmalabIoatState {
    PCIDevice parent_obj;

    MemoryRegion bar0;
    MemoryRegion regs;
    MemoryRegion fault_regs; /* the test-only fault doorbell */
    DmalabTimers timers;
    DmalabIoat *model;
    unsigned in_model; /* nesting of timer steps running the model */
    bool released;     /* unrealized while a step ran: free when it returns */
    bool intx_level;
    uint8_t *state_blob; /* the model's state, during migration */
    uint32_t state_len;

    /* properties */
    uint32_t channels;
    uint8_t xfercap;
    uint8_t cbver;
    uint16_t device_id;
    uint64_t step_bytes;
    uint32_t step_descriptors;
    uint64_t step_gap_ns;
    bool sync_start;
    uint64_t bandwidth;
    uint64_t latency_ns;
    uint64_t jitter_ns;
    uint64_t seed;
    char *fault_plan; /* path of the fault plan file; settable at run time */
    bool fault_doorbell;
    char *race_table;           /* file shared with the race detector plugin */
    DmalabRaceTable *race_map;
};

static bool dmalab_ioat_live(DmalabIoatState *s)
{
    return s->model && !s->released && qdev_is_realized(DEVICE(s));
}

static void dmalab_ioat_release(DmalabIoatState *s);

/*
 * Around every call into the model that can call back out (DMA, interrupts):
 * those may reach config space or the port above the device and reset or unplug
 * it. The model checks its state after every call out; the reference keeps the
 * object, and the deferred release keeps the model, until the call has
 * returned.
 */
static void dmalab_ioat_enter(DmalabIoatState *s)
{
    object_ref(OBJECT(s));
    s->in_model++;
}

static void dmalab_ioat_leave(DmalabIoatState *s)
{
    s->in_model--;
    if (s->released && !s->in_model) {
        dmalab_ioat_release(s);
    }
    object_unref(OBJECT(s));
}

static uint64_t dmalab_ioat_read(void *opaque, hwaddr addr, unsigned size)
{
    DmalabIoatState *s = opaque;
    uint64_t val = 0;

    if (s->model && !s->released) {
        val = dmalab_ioat_mmio_read(s->model, addr, size);
    }
    trace_dmalab_ioat_mmio_read(addr, size, val);
    return val;
}

static void dmalab_ioat_write(void *opaque, hwaddr addr, uint64_t val,
                              unsigned size)
{
    DmalabIoatState *s = opaque;

    trace_dmalab_ioat_mmio_write(addr, size, val);
    if (!s->model || s->released) {
        return;
    }
    /*
     * With sync-start, a doorbell write runs the channel's first step right
     * here.
     */
    dmalab_ioat_enter(s);
    dmalab_ioat_mmio_write(s->model, addr, val, size);
    dmalab_ioat_leave(s);
}

static const MemoryRegionOps dmalab_ioat_ops = {
    .read = dmalab_ioat_read,
    .write = dmalab_ioat_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /*
     * Linux reads CHANSTS with readq; the model handles any size and alignment.
     */
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};

/*
 * The fault doorbell (docs/faults.rst): test-only registers through which a
 * guest arms a fault plan's rules. Its accesses never call out of the model.
 */
static uint64_t dmalab_ioat_fault_read(void *opaque, hwaddr addr,
                                       unsigned size)
{
    DmalabIoatState *s = opaque;

    if (!s->model || s->released) {
        return 0;
    }
    return dmalab_ioat_doorbell_read(s->model, addr, size);
}

static void dmalab_ioat_fault_write(void *opaque, hwaddr addr, uint64_t val,
                                    unsigned size)
{
    DmalabIoatState *s = opaque;

    trace_dmalab_ioat_doorbell(addr, size, val);
    if (s->model && !s->released) {
        dmalab_ioat_doorbell_write(s->model, addr, val, size);
    }
}

static const MemoryRegionOps dmalab_ioat_fault_ops = {
    .read = dmalab_ioat_fault_read,
    .write = dmalab_ioat_fault_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true },
};

/* Host services the model calls back into. */

static DmalabDmaResult dmalab_ioat_result(MemTxResult r, uint64_t addr,
                                          size_t len)
{
    DmalabDmaResult out = { .error = DMALAB_DMA_OK, .done = len };

    if (r == MEMTX_OK) {
        return out;
    }
    /*
     * QEMU's IOMMUs fail a translation as an unassigned access: both are decode
     * errors.
     */
    out.error = (r & MEMTX_DECODE_ERROR) ? DMALAB_DMA_UNASSIGNED
                                         : DMALAB_DMA_TARGET_ERROR;
    out.fault_addr = addr;
    out.done = 0;
    return out;
}

static MemTxAttrs dmalab_ioat_attrs(DmalabIoatState *s)
{
    return (MemTxAttrs){ .requester_id = pci_requester_id(PCI_DEVICE(s)) };
}

static DmalabDmaResult host_dma_read(void *opaque, uint64_t addr, void *buf,
                                     size_t len, const DmalabMemAttrs *attrs)
{
    DmalabIoatState *s = opaque;
    MemTxResult r = MEMTX_ACCESS_ERROR;

    if (dmalab_ioat_live(s)) {
        r = pci_dma_rw(PCI_DEVICE(s), addr, buf, len, DMA_DIRECTION_TO_DEVICE,
                       dmalab_ioat_attrs(s));
    }
    if (r != MEMTX_OK) {
        trace_dmalab_ioat_dma_error(attrs->stream, addr, len, false, r);
    }
    return dmalab_ioat_result(r, addr, len);
}

static DmalabDmaResult host_dma_write(void *opaque, uint64_t addr,
                                      const void *buf, size_t len,
                                      const DmalabMemAttrs *attrs)
{
    DmalabIoatState *s = opaque;
    MemTxResult r = MEMTX_ACCESS_ERROR;

    if (dmalab_ioat_live(s)) {
        r = pci_dma_rw(PCI_DEVICE(s), addr, (void *)buf, len,
                       DMA_DIRECTION_FROM_DEVICE, dmalab_ioat_attrs(s));
    }
    if (r != MEMTX_OK) {
        trace_dmalab_ioat_dma_error(attrs->stream, addr, len, true, r);
    }
    return dmalab_ioat_result(r, addr, len);
}

static void *host_dma_map(void *opaque, uint64_t addr, size_t *len,
                          bool is_write, const DmalabMemAttrs *attrs)
{
    DmalabIoatState *s = opaque;
    DMADirection dir =
        is_write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE;
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    dma_addr_t plen = *len;
    uint64_t gpa, run = *len;
    ram_addr_t offset;
    void *p;

    if (!dmalab_ioat_live(s)) {
        return NULL;
    }
    /*
     * Behind dmalab-vtd the unit translates the whole piece in one call, each
     * page as it would one at a time, and the contiguous run it answers is
     * mapped in system memory: QEMU's memory API would otherwise ask the IOMMU
     * region for one 4 KiB page at a time. A first page that faults goes the
     * ordinary way (below, through the bounce path), which reports the error.
     */
    if (dmalab_vtd_dma_run(PCI_DEVICE(s), addr, is_write, &gpa, &run)) {
        if (!run) {
            return NULL;
        }
        as = &address_space_memory;
        addr = gpa;
        plen = run;
    }
    /*
     * dma_memory_map() translates each page once and hands out a bounce buffer,
     * without reporting failure, for anything that is not RAM (device memory,
     * unassigned ranges, IOMMU faults); for a read it would already have read
     * device registers into it. So only plain RAM is mapped: a bounce buffer is
     * given back untouched (memory_region_from_host knows guest RAM from it),
     * and the model moves that piece with pci_dma_rw, which reports the error.
     * Only the first page of a run pays a second translation.
     */
    if (!is_write) {
        MemoryRegion *mr;
        hwaddr xlat, l = 1;

        RCU_READ_LOCK_GUARD();
        mr = address_space_translate(as, addr, &xlat, &l, false,
                                     dmalab_ioat_attrs(s));
        if (!memory_access_is_direct(mr, false, dmalab_ioat_attrs(s))) {
            return NULL;
        }
    }
    p = dma_memory_map(as, addr, &plen, dir, dmalab_ioat_attrs(s));
    if (!p) {
        return NULL;
    }
    if (!memory_region_from_host(p, &offset)) {
        dma_memory_unmap(as, p, plen, dir, 0);
        return NULL;
    }
    *len = plen;
    return p;
}

static void host_dma_unmap(void *opaque, void *host, size_t len, bool is_write,
                           size_t accessed)
{
    DmalabIoatState *s = opaque;
    DMADirection dir =
        is_write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE;

    /* Only RAM is ever mapped (host_dma_map): any address space unmaps it. */
    dma_memory_unmap(pci_get_address_space(PCI_DEVICE(s)), host, len, dir,
                     accessed);
}

static void host_timer_arm(void *opaque, unsigned timer, uint64_t when_ns)
{
    DmalabIoatState *s = opaque;

    if (!s->released) {
        dmalab_timers_arm(&s->timers, timer, when_ns);
    }
}

static void host_timer_cancel(void *opaque, unsigned timer)
{
    DmalabIoatState *s = opaque;

    dmalab_timers_cancel(&s->timers, timer);
}

/*
 * Writes an interrupt message as the function's bus master, as QEMU's own
 * MSI path does, and says whether the memory system took it.  A message the
 * guest aimed at this device's registers (refused by QEMU's re-entrancy
 * guard) or at nothing is not a message delivered.
 */
static bool dmalab_ioat_deliver(PCIDevice *pdev, MSIMessage msg)
{
    MemTxAttrs attrs = { .requester_id = pci_requester_id(pdev) };
    MemTxResult r = MEMTX_OK;

    address_space_stl_le(&pdev->bus_master_as, msg.address, msg.data, attrs,
                         &r);
    return r == MEMTX_OK;
}

static bool host_notify(void *opaque, unsigned vector)
{
    DmalabIoatState *s = opaque;
    PCIDevice *pdev = PCI_DEVICE(s);
    bool sent = false;

    if (!dmalab_ioat_live(s)) {
        return false;
    }
    if (msix_enabled(pdev)) {
        if (vector >= s->channels) {
            vector = 0;
        }
        if (msix_is_masked(pdev, vector)) {
            /* Left pending in the PBA: not a message sent. */
            msix_notify(pdev, vector);
        } else {
            sent = dmalab_ioat_deliver(pdev, msix_get_message(pdev, vector));
        }
    } else if (msi_enabled(pdev)) {
        /*
         * One message: msi_notify() asserts on a vector the guest did not
         * enable.
         */
        vector = 0;
        if (msi_is_masked(pdev, 0)) {
            msi_notify(pdev, 0); /* sets the pending bit */
        } else {
            sent = dmalab_ioat_deliver(pdev, msi_get_message(pdev, 0));
        }
    }
    trace_dmalab_ioat_irq(vector, msix_enabled(pdev), sent);
    return sent;
}

/*
 * The INTx pin follows the model's level while neither MSI nor MSI-X is on:
 * a function with either enabled must not use INTx (PCI Local Bus 3.0,
 * 6.8.1.3 and 6.8.2.3), so enabling one lowers a line that was high, and
 * going back to INTx shows the level again.
 */
static void dmalab_ioat_update_intx(DmalabIoatState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    pci_set_irq(pdev, s->intx_level && !msix_enabled(pdev) &&
                !msi_enabled(pdev));
}

static bool host_set_level(void *opaque, bool asserted)
{
    DmalabIoatState *s = opaque;
    PCIDevice *pdev = PCI_DEVICE(s);
    bool rose;

    if (!dmalab_ioat_live(s)) {
        return false;
    }
    rose = asserted && !s->intx_level;
    s->intx_level = asserted;
    dmalab_ioat_update_intx(s);
    trace_dmalab_ioat_intx(asserted);
    return rose && !msix_enabled(pdev) && !msi_enabled(pdev) &&
           !(pci_get_word(pdev->config + PCI_COMMAND) &
             PCI_COMMAND_INTX_DISABLE);
}

static bool host_send_msi(void *opaque, uint64_t address, uint32_t data,
                          const DmalabMemAttrs *attrs)
{
    DmalabIoatState *s = opaque;
    MSIMessage msg = { .address = address, .data = data };

    if (!dmalab_ioat_live(s)) {
        return false;
    }
    return dmalab_ioat_deliver(PCI_DEVICE(s), msg);
}

/* Walks behind dmalab-vtd: the model adds them to its descriptors' time. */
static uint64_t host_dma_cost(void *opaque)
{
    return dmalab_vtd_dma_cost(PCI_DEVICE(opaque));
}

static void trace_decided(void *opaque, unsigned ch, uint64_t desc,
                          uint64_t len, uint64_t data_at, uint64_t done_at,
                          uint32_t fail)
{
    trace_dmalab_ioat_decided(ch, desc, len, data_at, done_at, fail);
}

static void trace_completed(void *opaque, unsigned ch, uint64_t desc,
                            uint64_t bytes)
{
    trace_dmalab_ioat_completed(ch, desc, bytes);
}

static void trace_halted(void *opaque, unsigned ch, uint32_t chanerr,
                         int dma_error, uint64_t fault_addr)
{
    trace_dmalab_ioat_halted(ch, chanerr, dma_error, fault_addr);
}

static void trace_stepped(void *opaque, unsigned ch, uint64_t bytes,
                          unsigned descs, uint64_t next_ns)
{
    trace_dmalab_ioat_step(ch, bytes, descs, next_ns);
}

static void trace_fault(void *opaque, const char *rule, const char *kind,
                        unsigned ch, uint64_t desc)
{
    trace_dmalab_ioat_fault(rule, kind, ch, desc);
}

static void dmalab_ioat_release(DmalabIoatState *s)
{
    if (s->race_map) {
        dmalab_ioat_set_race_table(s->model, NULL, 0);
        munmap(s->race_map, sizeof(*s->race_map));
        s->race_map = NULL;
    }

    dmalab_timers_free(&s->timers);
    dmalab_ioat_free(s->model);
    s->model = NULL;
}

static void dmalab_ioat_timer_cb(void *opaque)
{
    DmalabTimer *t = opaque;
    DmalabIoatState *s = t->dev;
    MemReentrancyGuard *guard = &DEVICE(s)->mem_reentrancy_guard;
    bool engaged = guard->engaged_in_io;

    /*
     * The step's DMA and interrupt messages may land on this device's own BAR:
     * QEMU's re-entrancy guard, engaged here as it is for MMIO, refuses that
     * access, and the model reports the failed DMA as a channel error.
     */
    dmalab_ioat_enter(s);
    guard->engaged_in_io = true;
    dmalab_ioat_timer(s->model, t->id);
    guard->engaged_in_io = engaged;
    dmalab_ioat_leave(s);
}

/* Counters, readable with qom-get. */

static void dmalab_ioat_get_stat(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);
    DmalabIoatStats st;
    uint64_t value = 0;

    if (s->model) {
        dmalab_ioat_stats(s->model, -1, &st);
        value = *(uint64_t *)((char *)&st + (uintptr_t)opaque);
    }
    visit_type_uint64(v, name, &value, errp);
}

/* Timing properties: settable before realize and at run time (qom-set). */

static void dmalab_ioat_get_timing(Object *obj, Visitor *v, const char *name,
                                   void *opaque, Error **errp)
{
    uint64_t *field = (uint64_t *)((char *)obj + (uintptr_t)opaque);

    visit_type_size(v, name, field, errp);
}

static void dmalab_ioat_set_timing_prop(Object *obj, Visitor *v,
                                        const char *name, void *opaque,
                                        Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);
    uint64_t *field = (uint64_t *)((char *)obj + (uintptr_t)opaque);
    uint64_t value;

    /*
     * A size, so that bandwidth=100M reads as it does for other QEMU
     * properties.
     */
    if (!visit_type_size(v, name, &value, errp)) {
        return;
    }
    if (s->model) {
        uint64_t old = *field;
        const char *why;

        *field = value;
        why = dmalab_ioat_set_timing(s->model, s->bandwidth, s->latency_ns,
                                     s->jitter_ns);
        if (why) {
            *field = old;
            error_setg(errp, "dmalab-ioat: %s", why);
            return;
        }
        trace_dmalab_ioat_timing(s->bandwidth, s->latency_ns, s->jitter_ns);
        return;
    }
    *field = value; /* checked at realize */
}

/*
 * The race detector's table (docs/race-detector.rst): a file this device and
 * the detector's TCG plugin both map, whichever creates it.
 */
static bool dmalab_ioat_map_race_table(DmalabIoatState *s, Error **errp)
{
    int fd = open(s->race_table, O_RDWR | O_CREAT, 0600);
    void *p;

    if (fd < 0 || ftruncate(fd, sizeof(*s->race_map)) < 0) {
        error_setg_errno(errp, errno, "dmalab-ioat: race-table %s",
                         s->race_table);
        if (fd >= 0) {
            close(fd);
        }
        return false;
    }
    p = mmap(NULL, sizeof(*s->race_map), PROT_READ | PROT_WRITE, MAP_SHARED,
             fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        error_setg_errno(errp, errno, "dmalab-ioat: race-table %s",
                         s->race_table);
        return false;
    }
    s->race_map = p;
    dmalab_ioat_set_race_table(s->model, s->race_map, 0);
    return true;
}

/* Fault plans: a file named at start-up, replaceable at run time (qom-set). */

static bool dmalab_ioat_apply_plan(DmalabIoatState *s, const char *path,
                                   Error **errp)
{
    g_autofree char *text = NULL;
    char *why;

    if (!dmalab_glue_read_plan("dmalab-ioat", path, &text, errp)) {
        return false;
    }
    why = dmalab_ioat_set_fault_plan(s->model, text, DEVICE(s)->id);
    if (why) {
        error_setg(errp, "dmalab-ioat: fault plan %s: %s", path, why);
        free(why);
        return false;
    }
    trace_dmalab_ioat_fault_plan(path ? path : "");
    return true;
}

static char *dmalab_ioat_get_plan(Object *obj, Error **errp)
{
    return g_strdup(DMALAB_IOAT(obj)->fault_plan ?: "");
}

static void dmalab_ioat_set_plan(Object *obj, const char *value, Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);

    /* Before realize the plan is read there; after, it replaces the old. */
    if (s->model && !dmalab_ioat_apply_plan(s, value, errp)) {
        return;
    }
    g_free(s->fault_plan);
    s->fault_plan = g_strdup(value);
}

static void dmalab_ioat_get_injected(Object *obj, Visitor *v, const char *name,
                                     void *opaque, Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);
    uint64_t value = s->model ? dmalab_ioat_faults_injected(s->model) : 0;

    visit_type_uint64(v, name, &value, errp);
}

static char *dmalab_ioat_get_fault_log(Object *obj, Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);

    return dmalab_glue_take_string(s->model ? dmalab_ioat_fault_log(s->model)
                                            : NULL);
}

static void dmalab_ioat_warn_timing(const DmalabIoatConfig *cfg)
{
    uint64_t longest = dmalab_ioat_longest_descriptor_ns(cfg);

    if (longest >= DMALAB_IOAT_LINUX_TIMEOUT_NS) {
        warn_report("dmalab-ioat: a descriptor may take %" PRIu64
                    " ms, longer than the 200 ms completion timeout of "
                    "Linux's ioatdma: it will reset channels "
                    "(see docs/ioat.rst)",
                    longest / SCALE_MS);
    }
}

static int dmalab_ioat_config_range(uint32_t addr, int len)
{
    return addr < DMALAB_IOAT_CFG_END &&
           addr + len > DMALAB_IOAT_CFG_CHANERR_INT;
}

static uint32_t dmalab_ioat_pci_config_read(PCIDevice *pdev, uint32_t addr,
                                            int len)
{
    DmalabIoatState *s = DMALAB_IOAT(pdev);

    if (s->model && addr >= DMALAB_IOAT_CFG_CHANERR_INT &&
        addr + len <= DMALAB_IOAT_CFG_END) {
        return dmalab_ioat_config_read(s->model,
                                       addr - DMALAB_IOAT_CFG_CHANERR_INT, len);
    }
    return pci_default_read_config(pdev, addr, len);
}

static void dmalab_ioat_pci_config_write(PCIDevice *pdev, uint32_t addr,
                                         uint32_t val, int len)
{
    DmalabIoatState *s = DMALAB_IOAT(pdev);

    if (dmalab_ioat_config_range(addr, len)) {
        if (s->model && addr >= DMALAB_IOAT_CFG_CHANERR_INT &&
            addr + len <= DMALAB_IOAT_CFG_END) {
            dmalab_ioat_config_write(
                s->model, addr - DMALAB_IOAT_CFG_CHANERR_INT, val, len);
        }
        return;
    }
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
    /* MSI or MSI-X enabled or disabled: the pin follows (or not). */
    dmalab_ioat_update_intx(s);
}

static void dmalab_ioat_realize(PCIDevice *pdev, Error **errp)
{
    DmalabIoatState *s = DMALAB_IOAT(pdev);
    DmalabIoatConfig cfg;
    const DmalabHost host = {
        .opaque = s,
        .dma_read = host_dma_read,
        .dma_write = host_dma_write,
        .dma_map = host_dma_map,
        .dma_unmap = host_dma_unmap,
        .now_ns = dmalab_glue_now,
        .timer_arm = host_timer_arm,
        .timer_cancel = host_timer_cancel,
        .notify = host_notify,
        .set_level = host_set_level,
        .send_msi = host_send_msi,
        .log = dmalab_glue_log,
        .dma_cost = host_dma_cost,
    };
    const DmalabIoatTrace trace = {
        .decided = trace_decided,
        .completed = trace_completed,
        .halted = trace_halted,
        .stepped = trace_stepped,
        .fault = trace_fault,
    };
    const char *why = NULL;
    unsigned i;

    if (!pci_bus_is_express(pci_get_bus(pdev))) {
        error_setg(
            errp,
            "dmalab-ioat is a PCI Express function and needs a PCI Express bus "
            "(-M q35): Linux's ioatdma reads CHANERR_INT in extended "
            "configuration "
            "space, which a conventional PCI bus cannot reach");
        return;
    }

    dmalab_ioat_default_config(&cfg);
    cfg.channels = s->channels;
    cfg.xfercap_log = s->xfercap;
    cfg.cbver = s->cbver;
    cfg.step_bytes = s->step_bytes;
    cfg.step_descriptors = s->step_descriptors;
    cfg.step_gap_ns = s->step_gap_ns;
    cfg.sync_start = s->sync_start;
    cfg.bandwidth = s->bandwidth;
    cfg.latency_ns = s->latency_ns;
    cfg.jitter_ns = s->jitter_ns;
    cfg.seed = s->seed;
    why = dmalab_ioat_check(&cfg);
    if (why) {
        error_setg(errp, "dmalab-ioat: %s", why);
        return;
    }
    dmalab_ioat_warn_timing(&cfg);

    pci_config_set_device_id(pdev->config, s->device_id);
    pci_config_set_interrupt_pin(pdev->config, 1);
    if (pcie_endpoint_cap_init(pdev, DMALAB_IOAT_CAP_EXP) < 0) {
        error_setg(errp, "dmalab-ioat: cannot add the PCI Express capability");
        return;
    }
    pcie_cap_flr_init(pdev);
    if (msi_init(pdev, DMALAB_IOAT_CAP_MSI, 1, true, false, errp) < 0) {
        pcie_cap_exit(pdev);
        return;
    }

    memory_region_init(&s->bar0, OBJECT(s), "dmalab-ioat-bar0",
                       DMALAB_IOAT_BAR0_SIZE);
    memory_region_init_io(&s->regs, OBJECT(s), &dmalab_ioat_ops, s,
                          "dmalab-ioat-regs", DMALAB_IOAT_REG_WINDOW);
    memory_region_add_subregion(&s->bar0, 0, &s->regs);
    pci_register_bar(
        pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY | PCI_BASE_ADDRESS_MEM_TYPE_64,
        &s->bar0);
    if (msix_init(pdev, s->channels, &s->bar0, 0, DMALAB_IOAT_MSIX_TABLE,
                  &s->bar0, 0, DMALAB_IOAT_MSIX_PBA, DMALAB_IOAT_CAP_MSIX,
                  errp)) {
        msi_uninit(pdev);
        pcie_cap_exit(pdev);
        return;
    }
    for (i = 0; i < s->channels; i++) {
        msix_vector_use(pdev, i);
    }
    if (s->fault_doorbell) {
        memory_region_init_io(&s->fault_regs, OBJECT(s), &dmalab_ioat_fault_ops,
                              s, "dmalab-ioat-fault-doorbell",
                              DMALAB_IOAT_FAULT_DOORBELL_SIZE);
        memory_region_add_subregion(&s->bar0, DMALAB_IOAT_FAULT_DOORBELL,
                                    &s->fault_regs);
    }

    dmalab_timers_init(&s->timers, dmalab_ioat_timer_count(&cfg),
                       dmalab_ioat_timer_cb, s);
    s->model = dmalab_ioat_new(&cfg, &host, &trace, &why);
    if (!s->model) {
        error_setg(errp, "dmalab-ioat: %s",
                   why ? why : "cannot create the model");
        dmalab_ioat_release(s);
        msix_uninit(pdev, &s->bar0, &s->bar0);
        msi_uninit(pdev);
        pcie_cap_exit(pdev);
        return;
    }
    s->released = false;
    if ((s->fault_plan && *s->fault_plan &&
         !dmalab_ioat_apply_plan(s, s->fault_plan, errp)) ||
        (s->race_table && !dmalab_ioat_map_race_table(s, errp))) {
        dmalab_ioat_release(s);
        msix_uninit(pdev, &s->bar0, &s->bar0);
        msi_uninit(pdev);
        pcie_cap_exit(pdev);
        return;
    }
}

static void dmalab_ioat_exit(PCIDevice *pdev)
{
    DmalabIoatState *s = DMALAB_IOAT(pdev);

    msix_uninit(pdev, &s->bar0, &s->bar0);
    msi_uninit(pdev);
    pcie_cap_exit(pdev);
    g_free(s->state_blob);
    s->state_blob = NULL;
    if (s->in_model) {
        /*
         * Unplugged by its own DMA: stop the model now, free it when the step
         * returns.
         */
        dmalab_ioat_reset(s->model);
        s->released = true;
        return;
    }
    dmalab_ioat_release(s);
}

static void dmalab_ioat_reset_hold(Object *obj, ResetType type)
{
    DmalabIoatState *s = DMALAB_IOAT(obj);

    /*
     * Cancels every pending step: the device is as new, whatever was in
     * progress.
     */
    if (s->model) {
        dmalab_ioat_reset(s->model);
    }
    s->intx_level = false;
    trace_dmalab_ioat_reset();
}

static int dmalab_ioat_pre_save(void *opaque)
{
    DmalabIoatState *s = opaque;

    g_free(s->state_blob);
    s->state_blob = dmalab_ioat_save(s->model, &s->state_len);
    return s->state_blob ? 0 : -ENOMEM;
}

static int dmalab_ioat_pre_load(void *opaque)
{
    DmalabIoatState *s = opaque;

    g_free(s->state_blob);
    s->state_blob = NULL;
    s->state_len = 0;
    return 0;
}

static int dmalab_ioat_post_load(void *opaque, int version_id)
{
    DmalabIoatState *s = opaque;
    bool ok = dmalab_ioat_load(s->model, s->state_blob, s->state_len);

    g_free(s->state_blob);
    s->state_blob = NULL;
    if (!ok) {
        error_report(
            "dmalab-ioat: the incoming device state is not valid for this "
            "configuration");
        return -EINVAL;
    }
    return 0;
}

static const VMStateDescription vmstate_dmalab_ioat = {
    .name = TYPE_DMALAB_IOAT,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = dmalab_ioat_pre_save,
    .pre_load = dmalab_ioat_pre_load,
    .post_load = dmalab_ioat_post_load,
    .fields =
        (const VMStateField[]){
            VMSTATE_PCI_DEVICE(parent_obj, DmalabIoatState),
            VMSTATE_MSIX(parent_obj, DmalabIoatState),
            VMSTATE_BOOL(intx_level, DmalabIoatState),
            VMSTATE_UINT32(state_len, DmalabIoatState),
            VMSTATE_VBUFFER_ALLOC_UINT32(state_blob, DmalabIoatState, 0, NULL,
                                         state_len),
            VMSTATE_END_OF_LIST(),
        },
};

static void dmalab_ioat_instance_init(Object *obj)
{
    static const struct {
        const char *name;
        size_t offset;
    } counters[] = {
        { "descriptors", offsetof(DmalabIoatStats, descriptors) },
        { "bytes", offsetof(DmalabIoatStats, bytes) },
        { "errors", offsetof(DmalabIoatStats, errors) },
        { "interrupts", offsetof(DmalabIoatStats, interrupts) },
    };
    static const struct {
        const char *name;
        size_t offset;
        const char *desc;
    } timing[] = {
        { "bandwidth", offsetof(DmalabIoatState, bandwidth),
          "bytes per second a channel moves (0: unlimited); settable at run "
          "time" },
        { "latency-ns", offsetof(DmalabIoatState, latency_ns),
          "added to every descriptor's completion time; settable at run time" },
        { "jitter-ns", offsetof(DmalabIoatState, jitter_ns),
          "uniform random extra completion time, drawn from seed; settable at "
          "run time" },
    };

    for (size_t i = 0; i < ARRAY_SIZE(counters); i++) {
        object_property_add(obj, counters[i].name, "uint64",
                            dmalab_ioat_get_stat, NULL, NULL,
                            (void *)(uintptr_t)counters[i].offset);
    }
    for (size_t i = 0; i < ARRAY_SIZE(timing); i++) {
        ObjectProperty *op;

        op = object_property_add(obj, timing[i].name, "size",
                                 dmalab_ioat_get_timing,
                                 dmalab_ioat_set_timing_prop, NULL,
                                 (void *)(uintptr_t)timing[i].offset);
        op->description = g_strdup(timing[i].desc);
    }
    object_property_add_str(obj, "fault-plan", dmalab_ioat_get_plan,
                            dmalab_ioat_set_plan);
    object_property_set_description(
        obj, "fault-plan",
        "JSON file of faults to inject (docs/faults.rst); settable at run time");
    object_property_add(obj, "faults-injected", "uint64",
                        dmalab_ioat_get_injected, NULL, NULL, NULL);
    object_property_add_str(obj, "fault-log", dmalab_ioat_get_fault_log, NULL);
}

static void dmalab_ioat_instance_finalize(Object *obj)
{
    g_free(DMALAB_IOAT(obj)->fault_plan);
}

static const Property dmalab_ioat_properties[] = {
    DEFINE_PROP_UINT32("channels", DmalabIoatState, channels, 4),
    DEFINE_PROP_UINT8("xfercap", DmalabIoatState, xfercap, 20),
    DEFINE_PROP_UINT8("cbver", DmalabIoatState, cbver, 0x33),
    DEFINE_PROP_UINT16("device-id", DmalabIoatState, device_id,
                       DMALAB_IOAT_DEVICE_SKX),
    DEFINE_PROP_SIZE("step-bytes", DmalabIoatState, step_bytes, 1 * MiB),
    DEFINE_PROP_UINT32("step-descriptors", DmalabIoatState, step_descriptors,
                       256),
    DEFINE_PROP_UINT64("step-gap-ns", DmalabIoatState, step_gap_ns, 1000),
    DEFINE_PROP_BOOL("sync-start", DmalabIoatState, sync_start, true),
    DEFINE_PROP_UINT64("seed", DmalabIoatState, seed, 0),
    DEFINE_PROP_BOOL("fault-doorbell", DmalabIoatState, fault_doorbell, false),
    DEFINE_PROP_STRING("race-table", DmalabIoatState, race_table),
};

static void dmalab_ioat_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    k->realize = dmalab_ioat_realize;
    k->exit = dmalab_ioat_exit;
    k->config_read = dmalab_ioat_pci_config_read;
    k->config_write = dmalab_ioat_pci_config_write;
    k->vendor_id = DMALAB_IOAT_VENDOR_INTEL;
    k->device_id = DMALAB_IOAT_DEVICE_SKX;
    k->class_id = PCI_CLASS_SYSTEM_OTHER;
    k->revision = DMALAB_IOAT_REVISION;
    rc->phases.hold = dmalab_ioat_reset_hold;
    dc->desc = "dmalab Intel I/OAT (Crystal Beach 3.x) DMA engine";
    dc->vmsd = &vmstate_dmalab_ioat;
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
    device_class_set_props(dc, dmalab_ioat_properties);
}

static const TypeInfo dmalab_ioat_info = {
    .name = TYPE_DMALAB_IOAT,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(DmalabIoatState),
    .instance_init = dmalab_ioat_instance_init,
    .instance_finalize = dmalab_ioat_instance_finalize,
    .class_init = dmalab_ioat_class_init,
    .interfaces =
        (InterfaceInfo[]){
            { INTERFACE_PCIE_DEVICE },
            {},
        },
};

static void dmalab_ioat_register_types(void)
{
    type_register_static(&dmalab_ioat_info);
}

type_init(dmalab_ioat_register_types)
