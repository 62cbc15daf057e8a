/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-vtd: QEMU glue for the dmalab VT-d DMA-remapping model.
 *
 * Everything the unit does lives in the C++ model (vtd/); the glue only
 * connects it to QEMU: the register window at the q35 DMAR address, one IOMMU
 * memory region per PCI device whose translate calls the model, the interrupt
 * window whose writes the model remaps or passes on (and, with intremap=on,
 * the IOAPIC's and KVM's interrupts), virtual-clock timers, the ACPI DMAR
 * table, properties, counters, migration and trace points. This file has the
 * device; vtd-props.c its properties; vtd-host.c what the unit reaches in
 * QEMU and the address spaces; vtd-ir.c interrupt requests.
 *
 * Locking: translate may be called without the BQL (devices with iothreads),
 * so every call into the model is serialised by DmalabVtdState.lock. Nothing
 * called with the lock held reaches MMIO or another device: the model reads
 * its tables, queue and wait status from RAM only (dmalab_vtd_ram_range),
 * and the event messages it raises are queued and sent to the APIC after
 * the lock is dropped (DMALAB_VTD_LOCKED), or from a bottom half when the
 * caller does not hold the BQL. The model raises only messages aimed at the
 * interrupt range and refuses the rest (its "events-refused" counter). An
 * interrupt request the model remaps is delivered after the lock is dropped,
 * and so are interrupt entry cache invalidations to QEMU's listeners.
 */

#include "qemu/osdep.h"
#include "exec/address-spaces.h"
#include "hw/acpi/aml-build.h"
#include "hw/i386/acpi-common.h"
#include "hw/i386/x86-iommu.h"
#include "hw/pci/pci.h"
#include "hw/pci/pci_host.h"
#include "hw/pci-host/q35.h"
#include "hw/qdev-properties.h"
#include "hw/sysbus.h"
#include "migration/vmstate.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/error-report.h"
#include "qemu/main-loop.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qom/object.h"
#include "system/kvm.h"
#include "kvm/kvm_i386.h"
#include "../trace.h"

#include "dmalab/vtd_core.h"
#include "dmalab-vtd.h"
#include "../glue.h"
#include "vtd-internal.h"

OBJECT_DEFINE_SIMPLE_TYPE(DmalabVtdState, dmalab_vtd, DMALAB_VTD,
                          X86_IOMMU_DEVICE)

/* Registers. */

static uint64_t dmalab_vtd_read(void *opaque, hwaddr addr, unsigned size)
{
    DmalabVtdState *s = opaque;
    uint64_t value;

    DMALAB_VTD_LOCKED(s, value = dmalab_vtd_mmio_read(s->model, addr, size));
    return value;
}

static void dmalab_vtd_write(void *opaque, hwaddr addr, uint64_t value,
                             unsigned size)
{
    DmalabVtdState *s = opaque;

    DMALAB_VTD_LOCKED(s, dmalab_vtd_mmio_write(s->model, addr, value, size));
    dmalab_vtd_switch(s);
}

static const MemoryRegionOps dmalab_vtd_ops = {
    .read = dmalab_vtd_read,
    .write = dmalab_vtd_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /* The model checks sizes and alignment and reports what it refuses. */
    .impl = { .min_access_size = 1, .max_access_size = 8 },
    .valid = { .min_access_size = 1, .max_access_size = 8 },
};

static void dmalab_vtd_timer_cb(void *opaque)
{
    DmalabTimer *t = opaque;
    DmalabVtdState *s = t->dev;

    DMALAB_VTD_LOCKED(s, dmalab_vtd_timer(s->model, t->id));
    dmalab_vtd_switch(s);
}

/*
 * ACPI: a DMAR table with one unit that covers every PCI device (VT-d 8.1)
 * and, with intremap=on, remaps interrupts (flags bit 0; x2APIC not opted
 * out) and names the IOAPIC (a device scope, 8.3.1: Linux enables
 * interrupt remapping only when every IOAPIC is under a unit). The IOAPIC's
 * requester id is the one vtd-ir.c gives its messages.
 */
static void dmalab_vtd_build_acpi(X86IOMMUState *iommu, GArray *table_data,
                                  BIOSLinker *linker, const char *oem_id,
                                  const char *oem_table_id)
{
    DmalabVtdState *s = DMALAB_VTD(iommu);
    AcpiTable table = { .sig = "DMAR", .rev = 1, .oem_id = oem_id,
                        .oem_table_id = oem_table_id };
    static const uint8_t reserved[10];
    bool ir = x86_iommu_ir_supported(iommu);

    acpi_table_begin(&table, table_data);
    build_append_int_noprefix(table_data, s->cfg.aw_bits - 1, 1); /* HAW */
    build_append_int_noprefix(table_data, ir ? 1 : 0, 1); /* INTR_REMAP */
    g_array_append_vals(table_data, reserved, sizeof(reserved));
    /* DRHD: type 0, length, INCLUDE_PCI_ALL, segment 0, register base */
    build_append_int_noprefix(table_data, 0, 2);
    build_append_int_noprefix(table_data, ir ? 16 + 8 : 16, 2);
    build_append_int_noprefix(table_data, 1, 1);
    build_append_int_noprefix(table_data, 0, 1);
    build_append_int_noprefix(table_data, 0, 2);
    build_append_int_noprefix(table_data, DMALAB_VTD_BASE, 8);
    if (ir) {
        /* IOAPIC scope: type 3, length 8, enumeration id, bus, one path */
        build_append_int_noprefix(table_data, 3, 1);
        build_append_int_noprefix(table_data, 8, 1);
        build_append_int_noprefix(table_data, 0, 2);
        build_append_int_noprefix(table_data, ACPI_BUILD_IOAPIC_ID, 1);
        build_append_int_noprefix(table_data, Q35_PSEUDO_BUS_PLATFORM, 1);
        build_append_int_noprefix(table_data,
                                  PCI_SLOT(Q35_PSEUDO_DEVFN_IOAPIC), 1);
        build_append_int_noprefix(table_data,
                                  PCI_FUNC(Q35_PSEUDO_DEVFN_IOAPIC), 1);
    }
    if (iommu->dt_supported) {
        /*
         * ATSR: type 2, length 8, ALL_PORTS, segment 0. Linux enables ATS
         * on a device below a root port only where an ATSR covers that port.
         */
        build_append_int_noprefix(table_data, 2, 2);
        build_append_int_noprefix(table_data, 8, 2);
        build_append_int_noprefix(table_data, 1, 1);
        build_append_int_noprefix(table_data, 0, 1);
        build_append_int_noprefix(table_data, 0, 2);
    }
    acpi_table_end(linker, &table);
}

/* Life cycle. */

/*
 * What realize set up before the unit was connected to the machine: the
 * model, its timers and the bottom half. A realize that fails gives
 * them back here; so does unrealize, which also takes the register window
 * away. (The unit cannot be unplugged: the PCI bus keeps its address spaces.)
 */
static void dmalab_vtd_release(DmalabVtdState *s)
{
    dmalab_timers_free(&s->timers);
    if (s->msi_bh) {
        qemu_bh_delete(s->msi_bh);
        s->msi_bh = NULL;
    }
    if (s->model) {
        dmalab_vtd_free(s->model);
        s->model = NULL;
    }
}

static void dmalab_vtd_unrealize(DeviceState *dev)
{
    DmalabVtdState *s = DMALAB_VTD(dev);

    if (s->spaces) {
        memory_region_del_subregion(get_system_memory(), &s->regs);
    }
    dmalab_vtd_release(s);
}

static void dmalab_vtd_realize(DeviceState *dev, Error **errp)
{
    DmalabVtdState *s = DMALAB_VTD(dev);
    X86IOMMUState *x86 = X86_IOMMU_DEVICE(dev);
    Object *host = object_resolve_path_type("", "q35-pcihost", NULL);
    PCIBus *bus;
    DmalabVtdConfig cfg;
    DmalabHost h;
    const char *why;

    if (!host) {
        error_setg(errp, "dmalab-vtd needs the q35 machine (-M q35)");
        return;
    }
    s->cfg.ir = x86_iommu_ir_supported(x86);
    cfg = s->cfg;
    cfg.pt = x86->pt_supported;
    cfg.dt = x86->dt_supported;
    why = dmalab_vtd_check(&cfg);
    if (why) {
        error_setg(errp, "dmalab-vtd: %s", why);
        return;
    }
    /* KVM takes x2APIC destinations in MSI routes only with its x2APIC API. */
    if (cfg.ir && cfg.eim && kvm_irqchip_is_split() && !kvm_enable_x2apic()) {
        error_setg(errp, "dmalab-vtd: eim=on needs KVM's x2APIC API; use "
                   "eim=off");
        return;
    }

    s->msi_bh = qemu_bh_new_guarded(dmalab_vtd_send_pending, s,
                                    &dev->mem_reentrancy_guard);
    dmalab_timers_init(&s->timers, dmalab_vtd_timer_count(),
                       dmalab_vtd_timer_cb, s);
    dmalab_glue_host(&h, &dmalab_vtd_host_fns, s, &s->timers);
    s->model = dmalab_vtd_new(&cfg, &h, &why);
    if (!s->model) {
        error_setg(errp, "dmalab-vtd: %s", why ? why : "out of memory");
        dmalab_vtd_release(s);
        return;
    }
    if (!dmalab_plan_realize(&s->plan, errp)) {
        dmalab_vtd_release(s);
        return;
    }

    memory_region_init_io(&s->regs, OBJECT(s), &dmalab_vtd_ops, s,
                          "dmalab-vtd", DMALAB_VTD_REG_SIZE);
    memory_region_add_subregion(get_system_memory(), DMALAB_VTD_BASE,
                                &s->regs);
    bus = PCI_HOST_BRIDGE(host)->bus;
    dmalab_vtd_attach(s, bus);
    if (cfg.ir) {
        dmalab_vtd_ioapic_space(s);
    }
    dmalab_vtd_add_realized_props(OBJECT(s));
}

static void dmalab_vtd_reset_hold(Object *obj, ResetType type)
{
    DmalabVtdState *s = DMALAB_VTD(obj);

    if (s->model) {
        DMALAB_VTD_LOCKED(s, dmalab_vtd_reset(s->model));
        dmalab_vtd_switch(s);
    }
}

/* Migration: the unit's state as one buffer (glue.c carries it). */

static uint8_t *dmalab_vtd_state_save(void *dev, uint32_t *len)
{
    DmalabVtdState *s = DMALAB_VTD(dev);
    uint8_t *blob;

    DMALAB_VTD_LOCKED(s, blob = dmalab_vtd_save(s->model, len));
    return blob;
}

static bool dmalab_vtd_state_load(void *dev, const uint8_t *blob, uint32_t len)
{
    DmalabVtdState *s = DMALAB_VTD(dev);
    bool ok;

    DMALAB_VTD_LOCKED(s, ok = dmalab_vtd_load(s->model, blob, len));
    return ok;
}

static const DmalabStateOps dmalab_vtd_state_ops = {
    .save = dmalab_vtd_state_save,
    .load = dmalab_vtd_state_load,
};

/* After the unit's state (a field below): route DMA as it says. */
static int dmalab_vtd_post_load(void *opaque, int version_id)
{
    dmalab_vtd_switch(opaque);
    return 0;
}

static const VMStateDescription vmstate_dmalab_vtd = {
    .name = TYPE_DMALAB_VTD,
    .version_id = 1,
    .minimum_version_id = 1,
    .priority = MIG_PRI_IOMMU,
    .post_load = dmalab_vtd_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_DMALAB_STATE(state, DmalabVtdState),
        VMSTATE_END_OF_LIST(),
    },
};

static void dmalab_vtd_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    X86IOMMUClass *x86 = X86_IOMMU_DEVICE_CLASS(klass);

    x86->realize = dmalab_vtd_realize;
    dc->unrealize = dmalab_vtd_unrealize;
    x86->build_acpi_table = dmalab_vtd_build_acpi;
    x86->int_remap = dmalab_vtd_int_remap;
    dmalab_glue_class_init(klass, "dmalab VT-d DMA-remapping unit",
                           &vmstate_dmalab_vtd, dmalab_vtd_reset_hold);
    dc->hotpluggable = false;
    dc->user_creatable = true;
    dmalab_vtd_class_props(klass);
}

static void dmalab_vtd_init(Object *obj)
{
    DmalabVtdState *s = DMALAB_VTD(obj);

    qemu_mutex_init(&s->lock);
    dmalab_vtd_default_config(&s->cfg);
    /*
     * The x86 IOMMU base's "intremap" and "pt" set the unit's ir and pt at
     * realize; they start from the unit's defaults (intremap off: the base's
     * auto would turn it on under TCG).
     */
    X86_IOMMU_DEVICE(obj)->intr_supported = s->cfg.ir ? ON_OFF_AUTO_ON
                                                      : ON_OFF_AUTO_OFF;
    X86_IOMMU_DEVICE(obj)->pt_supported = s->cfg.pt;
    s->state.dev = obj;
    s->state.ops = &dmalab_vtd_state_ops;
    dmalab_vtd_add_props(obj);
}

static void dmalab_vtd_finalize(Object *obj)
{
    DmalabVtdState *s = DMALAB_VTD(obj);

    dmalab_plan_finalize(&s->plan);
    qemu_mutex_destroy(&s->lock);
}
