# SPDX-License-Identifier: GPL-2.0-or-later
# The devices QEMU is built with by default (qemu_devices=dmalab; qemu_devices=default keeps
# QEMU's own set). Linked into QEMU's tree as configs/devices/x86_64-softmmu/dmalab.mak and
# read by its minikconf, which adds what these select (the ICH9 and PIIX chipsets, their ISA
# serial port, AHCI and IDE, USB UHCI, VT-d and dmalab's own devices).

# Boards: q35 for dmalab-vtd and the guest scenarios, pc for the qtests that check that
# dmalab-vtd refuses a machine without PCI Express.
CONFIG_Q35=y
CONFIG_I440FX=y

# The peer IOMMU (intel-iommu) and dmalab's devices.
CONFIG_VTD=y
CONFIG_DMALAB_IOAT=y
CONFIG_DMALAB_VTD=y
CONFIG_DMALAB_DSA=y

# What the scenarios put behind the IOMMU: PCI Express root ports, the NICs of the NIC
# scenarios, the guest image's disk, and the edu device of the qtests.
CONFIG_PCIE_PORT=y
CONFIG_E1000E_PCI_EXPRESS=y
CONFIG_IGB_PCI_EXPRESS=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_BLK=y
CONFIG_EDU=y

# Not used by dmalab's own tests, but what a kernel developer most often puts behind an
# IOMMU next to it.
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_SCSI=y
CONFIG_NVME_PCI=y
