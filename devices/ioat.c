/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmalab-ioat: QEMU glue for the dmalab Intel I/OAT (Crystal Beach 3.x) DMA engine model.
 *
 * Everything the device does lives in the C++ model (dmaengine/); this file only connects it
 * to QEMU: BAR0 and its MSI-X table, PCI DMA (so an IOMMU in front of the device applies), a
 * virtual-clock timer for the model's scheduled steps, properties, counters and trace points.
 */

#include "qemu/osdep.h"
#include "hw/pci/msix.h"
#include "hw/pci/pci_device.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "qapi/error.h"
#include "qapi/visitor.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "qom/object.h"
#include "trace.h"

#include "dmalab/ioat_core.h"

#define TYPE_DMALAB_IOAT "dmalab-ioat"
OBJECT_DECLARE_SIMPLE_TYPE(DmalabIoatState, DMALAB_IOAT)

#define DMALAB_IOAT_BAR0_SIZE 0x4000
#define DMALAB_IOAT_MSIX_TABLE 0x1000
#define DMALAB_IOAT_MSIX_PBA 0x1800

struct DmalabIoatState {
    PCIDevice parent_obj;

    MemoryRegion bar0;
    MemoryRegion regs;
    QEMUTimer* step_timer;
    DmalabIoat* model;

    /* properties */
    uint32_t channels;
    uint8_t xfercap;
    uint8_t cbver;
    uint16_t device_id;
    uint64_t step_bytes;
    uint32_t step_descriptors;
    uint64_t bandwidth;
    uint64_t latency_ns;
};

static uint64_t dmalab_ioat_read(void* opaque, hwaddr addr, unsigned size)
{
    DmalabIoatState* s = opaque;
    uint64_t val = dmalab_ioat_mmio_read(s->model, addr, size);

    trace_dmalab_ioat_mmio_read(addr, size, val);
    return val;
}

static void dmalab_ioat_write(void* opaque, hwaddr addr, uint64_t val, unsigned size)
{
    DmalabIoatState* s = opaque;

    trace_dmalab_ioat_mmio_write(addr, size, val);
    dmalab_ioat_mmio_write(s->model, addr, val, size);
}

static const MemoryRegionOps dmalab_ioat_ops = {
    .read = dmalab_ioat_read,
    .write = dmalab_ioat_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    /* Linux reads CHANSTS with readq; the model handles any size and alignment. */
    .valid = {.min_access_size = 1, .max_access_size = 8, .unaligned = true},
    .impl = {.min_access_size = 1, .max_access_size = 8, .unaligned = true},
};

/* Host services the model calls back into. */

static bool host_dma_read(void* opaque, uint64_t addr, void* buf, size_t len)
{
    DmalabIoatState* s = opaque;
    bool ok = pci_dma_read(PCI_DEVICE(s), addr, buf, len) == MEMTX_OK;

    if (!ok) {
        trace_dmalab_ioat_dma_error(addr, len, false);
    }
    return ok;
}

static bool host_dma_write(void* opaque, uint64_t addr, const void* buf, size_t len)
{
    DmalabIoatState* s = opaque;
    bool ok = pci_dma_write(PCI_DEVICE(s), addr, buf, len) == MEMTX_OK;

    if (!ok) {
        trace_dmalab_ioat_dma_error(addr, len, true);
    }
    return ok;
}

static void* host_dma_map(void* opaque, uint64_t addr, size_t* len, bool is_write)
{
    PCIDevice* pdev = PCI_DEVICE(opaque);
    DMADirection dir = is_write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE;
    dma_addr_t plen = *len;
    void* p;

    /*
     * dma_memory_map() hands out a bounce buffer, without reporting failure, for ranges that
     * are not RAM, unassigned ones and IOMMU faults included. Only map what is valid; the
     * model falls back to pci_dma_read/write otherwise, which do report errors.
     */
    if (!dma_memory_valid(pci_get_address_space(pdev), addr, plen, dir, MEMTXATTRS_UNSPECIFIED)) {
        return NULL;
    }
    p = pci_dma_map(pdev, addr, &plen, dir);
    if (p) {
        *len = plen;
    }
    return p;
}

static void host_dma_unmap(void* opaque, void* host, size_t len, bool is_write, size_t accessed)
{
    DMADirection dir = is_write ? DMA_DIRECTION_FROM_DEVICE : DMA_DIRECTION_TO_DEVICE;

    pci_dma_unmap(PCI_DEVICE(opaque), host, len, dir, accessed);
}

static uint64_t host_now_ns(void* opaque)
{
    return qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
}

static void host_schedule_at(void* opaque, uint64_t when_ns)
{
    DmalabIoatState* s = opaque;

    timer_mod_anticipate_ns(s->step_timer, when_ns);
}

static void host_raise_irq(void* opaque, unsigned vector)
{
    PCIDevice* pdev = PCI_DEVICE(opaque);
    bool msix = msix_enabled(pdev);

    trace_dmalab_ioat_irq(vector, msix);
    if (msix) {
        msix_notify(pdev, vector);
    }
}

static void dmalab_ioat_step(void* opaque)
{
    DmalabIoatState* s = opaque;

    trace_dmalab_ioat_step();
    dmalab_ioat_run(s->model);
}

/* Read-only counters, readable with qom-get. */

static void dmalab_ioat_get_stat(Object* obj, Visitor* v, const char* name, void* opaque,
                                 Error** errp)
{
    DmalabIoatState* s = DMALAB_IOAT(obj);
    DmalabIoatStats st;
    uint64_t value = 0;

    if (s->model) {
        dmalab_ioat_stats(s->model, -1, &st);
        value = *(uint64_t*)((char*)&st + (uintptr_t)opaque);
    }
    visit_type_uint64(v, name, &value, errp);
}

static void dmalab_ioat_realize(PCIDevice* pdev, Error** errp)
{
    DmalabIoatState* s = DMALAB_IOAT(pdev);
    DmalabIoatConfig cfg;
    const DmalabIoatHost host = {
        .opaque = s,
        .dma_read = host_dma_read,
        .dma_write = host_dma_write,
        .dma_map = host_dma_map,
        .dma_unmap = host_dma_unmap,
        .now_ns = host_now_ns,
        .schedule_at = host_schedule_at,
        .raise_irq = host_raise_irq,
    };
    const char* why = NULL;
    unsigned i;

    dmalab_ioat_default_config(&cfg);
    cfg.channels = s->channels;
    cfg.xfercap_log = s->xfercap;
    cfg.cbver = s->cbver;
    cfg.step_bytes = s->step_bytes;
    cfg.step_descriptors = s->step_descriptors;
    cfg.bandwidth = s->bandwidth;
    cfg.latency_ns = s->latency_ns;
    s->model = dmalab_ioat_new(&cfg, &host, &why);
    if (!s->model) {
        error_setg(errp, "dmalab-ioat: %s", why ? why : "cannot create the model");
        return;
    }

    pci_config_set_device_id(pdev->config, s->device_id);
    s->step_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, dmalab_ioat_step, s);

    memory_region_init(&s->bar0, OBJECT(s), "dmalab-ioat-bar0", DMALAB_IOAT_BAR0_SIZE);
    memory_region_init_io(&s->regs, OBJECT(s), &dmalab_ioat_ops, s, "dmalab-ioat-regs",
                          dmalab_ioat_register_window());
    memory_region_add_subregion(&s->bar0, 0, &s->regs);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY | PCI_BASE_ADDRESS_MEM_TYPE_64,
                     &s->bar0);

    if (msix_init(pdev, s->channels, &s->bar0, 0, DMALAB_IOAT_MSIX_TABLE, &s->bar0, 0,
                  DMALAB_IOAT_MSIX_PBA, 0, errp)) {
        return;
    }
    for (i = 0; i < s->channels; i++) {
        msix_vector_use(pdev, i);
    }
}

static void dmalab_ioat_exit(PCIDevice* pdev)
{
    DmalabIoatState* s = DMALAB_IOAT(pdev);

    msix_uninit(pdev, &s->bar0, &s->bar0);
    if (s->step_timer) {
        timer_free(s->step_timer);
        s->step_timer = NULL;
    }
    dmalab_ioat_free(s->model);
    s->model = NULL;
}

static void dmalab_ioat_reset_hold(Object* obj, ResetType type)
{
    DmalabIoatState* s = DMALAB_IOAT(obj);

    if (s->step_timer) {
        timer_del(s->step_timer);
    }
    if (s->model) {
        dmalab_ioat_reset(s->model);
    }
}

static void dmalab_ioat_instance_init(Object* obj)
{
    static const struct {
        const char* name;
        size_t offset;
    } counters[] = {
        {"descriptors", offsetof(DmalabIoatStats, descriptors)},
        {"bytes", offsetof(DmalabIoatStats, bytes)},
        {"errors", offsetof(DmalabIoatStats, errors)},
        {"interrupts", offsetof(DmalabIoatStats, interrupts)},
    };

    for (size_t i = 0; i < ARRAY_SIZE(counters); i++) {
        object_property_add(obj, counters[i].name, "uint64", dmalab_ioat_get_stat, NULL, NULL,
                            (void*)(uintptr_t)counters[i].offset);
    }
}

static const Property dmalab_ioat_properties[] = {
    DEFINE_PROP_UINT32("channels", DmalabIoatState, channels, 4),
    DEFINE_PROP_UINT8("xfercap", DmalabIoatState, xfercap, 20),
    DEFINE_PROP_UINT8("cbver", DmalabIoatState, cbver, 0x33),
    DEFINE_PROP_UINT16("device-id", DmalabIoatState, device_id, 0x2021),
    DEFINE_PROP_SIZE("step-bytes", DmalabIoatState, step_bytes, 1 * MiB),
    DEFINE_PROP_UINT32("step-descriptors", DmalabIoatState, step_descriptors, 256),
    DEFINE_PROP_SIZE("bandwidth", DmalabIoatState, bandwidth, 0),
    DEFINE_PROP_UINT64("latency-ns", DmalabIoatState, latency_ns, 0),
};

static const VMStateDescription vmstate_dmalab_ioat = {
    .name = TYPE_DMALAB_IOAT,
    /* The model's channel state is not serialised yet. */
    .unmigratable = 1,
};

static void dmalab_ioat_class_init(ObjectClass* klass, void* data)
{
    DeviceClass* dc = DEVICE_CLASS(klass);
    PCIDeviceClass* k = PCI_DEVICE_CLASS(klass);
    ResettableClass* rc = RESETTABLE_CLASS(klass);

    k->realize = dmalab_ioat_realize;
    k->exit = dmalab_ioat_exit;
    k->vendor_id = PCI_VENDOR_ID_INTEL;
    k->device_id = 0x2021;
    k->class_id = PCI_CLASS_SYSTEM_OTHER;
    k->revision = 0x04;
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
    .class_init = dmalab_ioat_class_init,
    .interfaces =
        (InterfaceInfo[]){
            {INTERFACE_CONVENTIONAL_PCI_DEVICE},
            {},
        },
};

static void dmalab_ioat_register_types(void)
{
    type_register_static(&dmalab_ioat_info);
}

type_init(dmalab_ioat_register_types)
